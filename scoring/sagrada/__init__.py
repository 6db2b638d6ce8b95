"""Sagrada scoring core: state, placement checks, scoring, ranking, solo play and generation.

Modules: ``window`` (dice, cells, the window grid), ``cards`` (pattern and tool cards),
``state`` (the game and its JSON form), ``rules`` (placement checks, ``validate``),
``objectives``, ``score`` (the report), ``generate`` (random legal windows and games) and
``identification`` (which pattern card a window was built on); their public names are
re-exported here.

The board state follows FORMATS.md (Sagrada section). Official rules applied:

- a game has 1-4 players; the official game reveals 3 public objectives (2 in the solo game),
  so more than 3 (2) or a repeated id is an error;
- the solo game has 1 player, 2 private objective colours (the better one counts), no favor
  tokens, -3 per empty cell, and is won when the total beats (is greater than) the round
  track's sum;
- unused favor tokens never exceed the pattern's difficulty (the tokens it gave), nor 6
  when the pattern is not given.

Wrong information is a ``StateError``; missing information is not, because a scan's output
(one photo per player, no cards entered yet) must score as it stands (FORMATS.md). Fewer
public objectives than the game reveals, a missing private objective (scored 0), one player
without a ``solo`` block (scored by the multiplayer rules), and two players holding the same
private colour or pattern card (one card each exists) are listed as report ``warnings``.

``window_violations`` reports placement-rule breaks as ``Issue``s (never errors): the scanner
uses them to spot misreads, the review screen to show them.

>>> state = SagradaState.from_json(SAMPLE)
>>> report = score(state)
>>> report.to_json()["players"][0]["total"], report.winner
(13, 'Ana')
"""

from __future__ import annotations

from scoring.game import Game
from scoring.sagrada.cards import PATTERNS, TOOLS, Pattern, Tool, pattern_named, print_allows, tools_explaining
from scoring.sagrada.generate import PLAYER_NAMES, generate, generate_window
from scoring.sagrada.identification import identify_patterns, pattern_log_likelihood
from scoring.sagrada.objectives import OBJECTIVES, Objective, PublicObjective, Unit, private_points
from scoring.sagrada.rules import RULES, validate, window_violations
from scoring.sagrada.score import PlayerScore, SagradaReport, score, violation_json
from scoring.sagrada.state import (
    COLOR_CHOICES,
    EMPTY_PENALTY,
    MAX_FAVOR_TOKENS,
    MAX_PLAYERS,
    PUBLIC_COUNT,
    ROUND_TRACK_MAX,
    SAMPLE,
    SOLO_EMPTY_PENALTY,
    SOLO_PUBLIC_COUNT,
    SagradaPlayer,
    SagradaState,
    SoloSetup,
)
from scoring.sagrada.window import (
    COLOR_LETTERS,
    COLOR_NAMES,
    COLORS,
    COLS,
    DICE_PER_COLOR,
    PRINTS,
    ROWS,
    Cell,
    Die,
    Window,
    cell_name,
    dice_of,
    empty_window,
    parse_cell,
    parse_window,
    window_rows,
)

__all__ = [
    "COLORS",
    "COLOR_NAMES",
    "COLOR_LETTERS",
    "ROWS",
    "COLS",
    "PRINTS",
    "RULES",
    "DICE_PER_COLOR",
    "Die",
    "Window",
    "Cell",
    "Pattern",
    "PATTERNS",
    "Tool",
    "TOOLS",
    "OBJECTIVES",
    "PublicObjective",
    "Objective",
    "Unit",
    "parse_cell",
    "cell_name",
    "parse_window",
    "window_rows",
    "empty_window",
    "dice_of",
    "pattern_named",
    "tools_explaining",
    "window_violations",
    "identify_patterns",
    "pattern_log_likelihood",
    "generate_window",
    "private_points",
    "SagradaPlayer",
    "SoloSetup",
    "SagradaState",
    "PlayerScore",
    "SagradaReport",
    "validate",
    "score",
    "generate",
    "GAME",
    "COLOR_CHOICES",
    "EMPTY_PENALTY",
    "MAX_FAVOR_TOKENS",
    "MAX_PLAYERS",
    "PUBLIC_COUNT",
    "ROUND_TRACK_MAX",
    "SAMPLE",
    "SOLO_EMPTY_PENALTY",
    "SOLO_PUBLIC_COUNT",
    "PLAYER_NAMES",
    "violation_json",
    "print_allows",
]

GAME: Game[SagradaState, SagradaReport] = Game(
    id="sagrada",
    title="Sagrada",
    parse=SagradaState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
