"""Splendor scoring core: tableau state, prestige, the tie-break and deck and noble checks.

A player's tableau holds the purchased development cards (each gives one bonus colour and
0-5 prestige points), the nobles that visited (3 points each) and up to three reserved cards,
which never score. The document format is the Splendor section of FORMATS.md.

Modules: ``cards`` (the deck and nobles), ``state`` (tableaux and the table), ``rules``
(``validate``), ``score`` (the report) and ``generate`` (random legal games); their public
names are re-exported here.

>>> state = SplendorState.from_json({"game": "splendor", "players": [
...     {"name": "Ana", "cards": [{"id": "L3-red-2"}, {"bonus": "white", "points": 1}], "nobles": 2},
...     {"name": "Bo", "cards": [{"bonus": "blue", "points": 5}], "nobles": 0}]})
>>> report = score(state)
>>> [(p.name, p.prestige) for p in report.players], report.winner, report.game_over
([('Ana', 11), ('Bo', 5)], None, False)
"""

from __future__ import annotations

from scoring.game import Game
from scoring.splendor.cards import (
    CARDS,
    COLORS,
    DECK,
    LEVELS,
    MAX_CARD_POINTS,
    MAX_NOBLES,
    MAX_PLAYERS,
    MAX_RESERVED,
    NOBLE_POINTS,
    NOBLES,
    WINNING_PRESTIGE,
    Card,
    Noble,
)
from scoring.splendor.generate import generate
from scoring.splendor.rules import validate
from scoring.splendor.score import PlayerScore, SplendorReport, score
from scoring.splendor.state import SplendorPlayer, SplendorState

__all__ = [
    "CARDS",
    "COLORS",
    "Card",
    "DECK",
    "GAME",
    "LEVELS",
    "MAX_CARD_POINTS",
    "MAX_NOBLES",
    "MAX_PLAYERS",
    "MAX_RESERVED",
    "NOBLES",
    "NOBLE_POINTS",
    "Noble",
    "PlayerScore",
    "SplendorPlayer",
    "SplendorReport",
    "SplendorState",
    "WINNING_PRESTIGE",
    "generate",
    "score",
    "validate",
]

GAME: Game[SplendorState, SplendorReport] = Game(
    id="splendor",
    title="Splendor",
    parse=SplendorState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
