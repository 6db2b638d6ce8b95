"""Sagrada scoring core: state, placement checks, scoring, ranking, solo play and generation.

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

import random
from dataclasses import dataclass, field
from typing import Any

from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str
from scoring.game import Game
from scoring.issue import Issue
from scoring.sagrada.identification import identify_patterns, pattern_log_likelihood
from scoring.sagrada.objectives import OBJECTIVES, Objective, PublicObjective, Unit, private_points
from scoring.sagrada.window import (
    COLOR_LETTERS,
    COLOR_NAMES,
    COLORS,
    COLS,
    DICE_PER_COLOR,
    PATTERNS,
    PRINTS,
    ROWS,
    RULES,
    TOOLS,
    Cell,
    Die,
    Pattern,
    Tool,
    Window,
    cell_name,
    check_window,
    dice_of,
    empty_window,
    generate_window,
    parse_cell,
    parse_window,
    pattern_named,
    short_place,
    tools_explaining,
    window_rows,
    window_violations,
)

__all__ = [
    "COLORS", "COLOR_NAMES", "COLOR_LETTERS", "ROWS", "COLS", "PRINTS", "RULES", "DICE_PER_COLOR",
    "Die", "Window", "Cell", "Pattern", "PATTERNS", "Tool", "TOOLS", "OBJECTIVES", "PublicObjective",
    "Objective", "Unit", "parse_cell", "cell_name", "parse_window", "window_rows", "empty_window",
    "dice_of", "pattern_named", "tools_explaining", "window_violations", "identify_patterns",
    "pattern_log_likelihood", "generate_window", "private_points", "SagradaPlayer", "SoloSetup",
    "SagradaState", "PlayerScore", "SagradaReport", "validate", "score", "generate", "GAME",
]

PUBLIC_COUNT = 3
SOLO_PUBLIC_COUNT = 2
MAX_PLAYERS = 4
EMPTY_PENALTY = 1
SOLO_EMPTY_PENALTY = 3
MAX_FAVOR_TOKENS = 6  # the hardest patterns give 6; unused tokens never exceed what the pattern gave
ROUND_TRACK_MAX = 240  # 10 rounds x at most 4 leftover dice x 6 pips
COLOR_CHOICES = tuple(COLOR_NAMES.values())


def _color_name(value: Any, where: str) -> str:
    """Return a private objective colour name; a colour letter is accepted and named."""
    if isinstance(value, str) and value in COLOR_NAMES:
        return COLOR_NAMES[value]
    return expect_str(value, where, COLOR_CHOICES)


@dataclass(frozen=True)
class SagradaPlayer:
    """One player's finished window and what they hold.

    ``pattern`` may be given as a name and is stored as the ``Pattern``; ``private_objective``
    is a colour name (``"red"``; a letter like ``"R"`` is accepted), ``None`` in a solo game or
    when not known yet (it then scores 0, with a report warning).

    >>> SagradaPlayer("Ana", empty_window(), "Virtus", "red", 2).pattern.difficulty
    5

    Raises:
        StateError: on a bad field; the message starts with the field's name.
    """

    name: str
    window: Window
    pattern: Pattern | None = None
    private_objective: str | None = None
    favor_tokens: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise StateError(f"name: expected a non-empty string, got {describe(self.name)}")
        check_window(self.window, "window")
        if self.pattern is not None:
            object.__setattr__(self, "pattern", pattern_named(self.pattern, "pattern"))
        if self.private_objective is not None:
            object.__setattr__(self, "private_objective", _color_name(self.private_objective, "private_objective"))
        high = self.pattern.difficulty if self.pattern is not None else MAX_FAVOR_TOKENS
        try:
            expect_int(self.favor_tokens, "favor_tokens", low=0, high=high)
        except StateError as error:
            if self.pattern is not None and isinstance(self.favor_tokens, int) and self.favor_tokens > high:
                raise StateError(
                    f"favor_tokens: expected 0-{high} (pattern {self.pattern.name} gives {high} tokens), "
                    f"got {self.favor_tokens}"
                ) from None
            raise error from None

    def __str__(self) -> str:
        return "\n".join([f"{self.name}:"] + [f"  {row}" for row in window_rows(self.window)])

    @classmethod
    def from_json(cls, doc: Any, path: str = "player") -> SagradaPlayer:
        """Return the player a FORMATS.md player object describes.

        >>> SagradaPlayer.from_json({"name": "Bo", "window": ["R7"]}, "players[1]")
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players[1].window: expected 4 rows (top row first), got 1

        Raises:
            StateError: naming the JSON path below ``path``.
        """
        expect_object(doc, path)
        if "window" not in doc:
            raise StateError(f"{child(path, 'window')}: missing required key")
        window = parse_window(doc["window"], child(path, "window"))
        try:
            return cls(
                name=doc.get("name"),
                window=window,
                pattern=doc.get("pattern"),
                private_objective=doc.get("private_objective"),
                favor_tokens=doc["favor_tokens"] if doc.get("favor_tokens") is not None else 0,
            )
        except StateError as error:
            message = str(error)
            if message.startswith("name: expected") and "name" not in doc:
                message = "name: missing required key"
            raise StateError(f"{path}.{message}") from None

    def to_json(self, solo: bool = False) -> dict:
        """Return the FORMATS.md player object (no favor tokens in a solo game).

        >>> SagradaPlayer("Bo", empty_window(), None, "blue", 1).to_json()["favor_tokens"]
        1
        """
        doc: dict[str, Any] = {"name": self.name, "window": window_rows(self.window)}
        if self.pattern is not None:
            doc["pattern"] = self.pattern.name
        if self.private_objective is not None:
            doc["private_objective"] = self.private_objective
        if not solo or self.favor_tokens:
            doc["favor_tokens"] = self.favor_tokens
        return doc


@dataclass(frozen=True)
class SoloSetup:
    """The solo game's extras: two private objective colours and the round track's sum.

    >>> SoloSetup(("red", "blue"), 34).round_track_sum
    34

    Raises:
        StateError: on bad colours or a sum outside 0-240; the message starts with the field.
    """

    private_objectives: tuple[str, ...]
    round_track_sum: int

    def __post_init__(self) -> None:
        colors = self.private_objectives
        if not isinstance(colors, (tuple, list)) or len(colors) != 2:
            got = describe(list(colors)) if isinstance(colors, tuple) else describe(colors)
            raise StateError(f"private_objectives: expected 2 colour names, got {got}")
        names = tuple(_color_name(color, f"private_objectives[{i}]") for i, color in enumerate(colors))
        if names[0] == names[1]:
            raise StateError(f"private_objectives[1]: expected a colour other than {names[0]!r}, got it twice")
        object.__setattr__(self, "private_objectives", names)
        expect_int(self.round_track_sum, "round_track_sum", low=0, high=ROUND_TRACK_MAX)

    @classmethod
    def from_json(cls, doc: Any, path: str = "solo") -> SoloSetup:
        """Return the solo block of a FORMATS.md document.

        >>> SoloSetup.from_json({"private_objectives": ["red", "red"], "round_track_sum": 30})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: solo.private_objectives[1]: expected a colour other than 'red', got it twice

        Raises:
            StateError: naming the JSON path below ``path``.
        """
        expect_object(doc, path)
        for key in ("private_objectives", "round_track_sum"):
            if doc.get(key) is None:
                raise StateError(f"{child(path, key)}: missing required key")
        colors = expect_list(doc["private_objectives"], child(path, "private_objectives"), 2)
        try:
            return cls(tuple(colors), doc["round_track_sum"])
        except StateError as error:
            raise StateError(f"{path}.{error}") from None

    def to_json(self) -> dict:
        """Return the FORMATS.md solo block.

        >>> SoloSetup(("R", "blue"), 30).to_json()
        {'private_objectives': ['red', 'blue'], 'round_track_sum': 30}
        """
        return {"private_objectives": list(self.private_objectives), "round_track_sum": self.round_track_sum}


@dataclass(frozen=True)
class SagradaState:
    """A finished Sagrada game: public objective ids, players in final-round turn order, solo extras.

    >>> state = SagradaState.from_json(SAMPLE)
    >>> [p.name for p in state.players], state.public_objectives[0]
    (['Ana', 'Bo'], 'row-color-variety')

    Raises:
        StateError: on an impossible game; the message starts with the JSON path.
    """

    public_objectives: tuple[str, ...]
    players: tuple[SagradaPlayer, ...]
    solo: SoloSetup | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "public_objectives", tuple(self.public_objectives))
        object.__setattr__(self, "players", tuple(self.players))
        self._check_players()
        self._check_objectives()

    def _check_players(self) -> None:
        players = self.players
        if not players:
            raise StateError("players: expected 1-4 players, got none")
        if len(players) > MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(players)}")
        for i, player in enumerate(players):
            if not isinstance(player, SagradaPlayer):
                raise StateError(f"players[{i}]: expected a SagradaPlayer, got {type(player).__name__}")
        if self.solo is not None and not isinstance(self.solo, SoloSetup):
            raise StateError(f"solo: expected a SoloSetup, got {type(self.solo).__name__}")
        if self.solo is not None and len(players) != 1:
            raise StateError(f"solo: the solo variant has exactly 1 player, got {len(players)}")
        seen: dict[str, int] = {}
        for i, player in enumerate(players):
            if player.name in seen:
                first = seen[player.name]
                raise StateError(f"players[{i}].name: duplicate name {player.name!r} (also players[{first}])")
            seen[player.name] = i
        if self.solo is not None:
            player = players[0]
            if player.private_objective is not None:
                raise StateError(
                    "players[0].private_objective: a solo player has none; the two colours go in "
                    "solo.private_objectives"
                )
            if player.favor_tokens != 0:
                raise StateError(
                    f"players[0].favor_tokens: the solo game uses no favor tokens, got {player.favor_tokens}"
                )
            return

    def warnings(self) -> list[str]:
        """Return what is missing or doubtful but scoreable, one line each.

        >>> SagradaState(("light-shades",), (SagradaPlayer("Ana", empty_window()),)).warnings()[0]
        'public_objectives: 1 of 3 cards given; the missing ones score nothing'
        """
        notes = []
        wanted = SOLO_PUBLIC_COUNT if self.solo is not None else PUBLIC_COUNT
        if len(self.public_objectives) < wanted:
            given = len(self.public_objectives)
            notes.append(f"public_objectives: {given} of {wanted} cards given; the missing ones score nothing")
        if self.solo is None and len(self.players) == 1:
            notes.append('players: one player and no "solo" block: scored by the multiplayer rules')
        colors: dict[str, int] = {}
        patterns: dict[str, int] = {}
        for i, player in enumerate(self.players):
            if self.solo is None and player.private_objective is None:
                notes.append(f"players[{i}].private_objective: not given; scored 0")
            elif player.private_objective in colors:
                notes.append(
                    f"players[{i}].private_objective: {player.private_objective!r} is also "
                    f"players[{colors[player.private_objective]}]'s, yet each colour's card exists once"
                )
            elif player.private_objective is not None:
                colors[player.private_objective] = i
            if player.pattern is not None and player.pattern.name in patterns:
                first = patterns[player.pattern.name]
                notes.append(
                    f"players[{i}].pattern: {player.pattern.name!r} is also players[{first}]'s, "
                    "yet each pattern card exists once"
                )
            elif player.pattern is not None:
                patterns[player.pattern.name] = i
        return notes

    def _check_objectives(self) -> None:
        wanted = SOLO_PUBLIC_COUNT if self.solo is not None else PUBLIC_COUNT
        game = "the solo game" if self.solo is not None else "a multiplayer game"
        if len(self.public_objectives) > wanted:
            raise StateError(
                f"public_objectives: expected at most {wanted} ids ({game} reveals {wanted} cards), "
                f"got {len(self.public_objectives)}"
            )
        for i, objective in enumerate(self.public_objectives):
            expect_str(objective, f"public_objectives[{i}]", tuple(OBJECTIVES))
            if objective in self.public_objectives[:i]:
                raise StateError(f"public_objectives[{i}]: duplicate objective {objective!r}")

    @classmethod
    def from_json(cls, doc: Any) -> SagradaState:
        """Return the state a FORMATS.md Sagrada document describes; inverse of ``to_json``.

        Unknown keys (e.g. a scan's ``scan`` objects) are ignored.

        >>> SagradaState.from_json({"game": "sagrada", "public_objectives": [], "players": []})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: players: expected 1-4 players, got none

        Raises:
            StateError: naming the JSON path and what was expected.
        """
        expect_object(doc, "")
        if "game" in doc and doc["game"] != "sagrada":
            raise StateError(f"game: expected 'sagrada', got {describe(doc['game'])}")
        for key in ("public_objectives", "players"):
            if doc.get(key) is None:
                raise StateError(f"{key}: missing required key")
        objectives = expect_list(doc["public_objectives"], "public_objectives")
        for i, objective in enumerate(objectives):
            expect_str(objective, f"public_objectives[{i}]", tuple(OBJECTIVES))
        players_doc = expect_list(doc["players"], "players")
        if len(players_doc) > MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(players_doc)}")
        players = tuple(SagradaPlayer.from_json(p, f"players[{i}]") for i, p in enumerate(players_doc))
        solo = SoloSetup.from_json(doc["solo"]) if doc.get("solo") is not None else None
        return cls(tuple(objectives), players, solo)

    def to_json(self) -> dict:
        """Return the FORMATS.md document; inverse of ``from_json``.

        >>> SagradaState.from_json(SAMPLE).to_json() == SAMPLE
        True
        """
        doc: dict[str, Any] = {
            "game": "sagrada",
            "public_objectives": list(self.public_objectives),
            "players": [player.to_json(self.solo is not None) for player in self.players],
        }
        if self.solo is not None:
            doc["solo"] = self.solo.to_json()
        return doc

    def __str__(self) -> str:
        return "\n".join(str(player) for player in self.players)


def validate(state: SagradaState) -> list[Issue]:
    """Return every player's placement-rule breaks (``Issue.player`` is the player's index).

    >>> validate(SagradaState.from_json(SAMPLE))
    []
    """
    issues = []
    for index, player in enumerate(state.players):
        for issue in window_violations(player.window, player.pattern):
            issues.append(Issue(issue.rule, issue.detail, issue.cells, index, issue.explained_by))
    return issues


# ---------------------------------------------------------------- scoring


@dataclass(frozen=True)
class PlayerScore:
    """One player's points, with the evidence behind each line of the breakdown."""

    name: str
    public: tuple[Objective, ...]
    private: Objective
    private_color: str | None
    private_options: tuple[Objective, ...]
    favor_tokens: int
    empty_cells: tuple[Cell, ...]
    empty_points: int
    violations: tuple[Issue, ...]
    window: Window = field(repr=False, default=())

    @property
    def total(self) -> int:
        """The player's score: public + private + favor tokens + empty-cell penalty.

        >>> score(SagradaState.from_json(SAMPLE)).players[1].total
        -4
        """
        return sum(o.points for o in self.public) + self.private.points + self.favor_tokens + self.empty_points

    def breakdown(self) -> dict:
        """Return the FORMATS.md ``breakdown`` object.

        >>> score(SagradaState.from_json(SAMPLE)).players[1].breakdown()["empty_cells"]
        -15
        """
        return {
            "public": {o.id: o.points for o in self.public},
            "private": self.private.points,
            "favor_tokens": self.favor_tokens,
            "empty_cells": self.empty_points,
        }

    def to_json(self) -> dict:
        """Return the FORMATS.md per-player report.

        >>> list(score(SagradaState.from_json(SAMPLE)).players[0].to_json())
        ['name', 'total', 'breakdown', 'violations']
        """
        return {
            "name": self.name,
            "total": self.total,
            "breakdown": self.breakdown(),
            "violations": [violation_json(issue) for issue in self.violations],
        }


def violation_json(issue: Issue) -> dict:
    """Return the report form of a placement issue: ``cell`` (its first cell), ``cells``, ``rule``, ...

    >>> violation_json(Issue("isolated-die", "x", ((1, 2),), 0, ("Cork-backed Straightedge",)))["cell"]
    [1, 2]
    """
    return {
        "cell": list(issue.cells[0]) if issue.cells else None,
        "cells": [list(cell) for cell in issue.cells],
        "rule": issue.rule,
        "detail": issue.detail,
        "explained_by": list(issue.explained_by),
    }


@dataclass(frozen=True)
class SagradaReport:
    """The scored game: players in listed order, ranking, winner and (solo) the target."""

    public_objectives: tuple[str, ...]
    players: tuple[PlayerScore, ...]
    ranking: tuple[str, ...]
    winner: str | None
    tie_breaks: tuple[str, ...] = ()
    solo_target: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def solo_won(self) -> bool | None:
        """Whether the solo player beat the round track (``None`` in a multiplayer game).

        >>> score(SagradaState.from_json(SAMPLE)).solo_won is None
        True
        """
        if self.solo_target is None:
            return None
        return self.players[0].total > self.solo_target

    def to_json(self) -> dict:
        """Return the FORMATS.md score report.

        >>> score(SagradaState.from_json(SAMPLE)).to_json()["ranking"]
        ['Ana', 'Bo']
        """
        doc: dict[str, Any] = {
            "game": "sagrada",
            "players": [player.to_json() for player in self.players],
            "ranking": list(self.ranking),
            "winner": self.winner,
        }
        if self.solo_target is not None:
            doc["solo"] = {"target": self.solo_target, "won": self.solo_won}
        if self.warnings:
            doc["warnings"] = list(self.warnings)
        return doc

    def to_text(self) -> str:
        """Return a report a player can check by eye: per objective, what earned the points.

        >>> print(score(SagradaState.from_json(SAMPLE)).to_text().splitlines()[-1])
        Winner: Ana
        """
        titles = ", ".join(OBJECTIVES[o].title for o in self.public_objectives) or "none given"
        count = len(self.players)
        mode = "solo game" if self.solo_target is not None else f"{count} player{'s' if count != 1 else ''}"
        lines = [
            f"Sagrada, {mode}. Public objectives: {titles}.",
            "Rows and columns are numbered from 1 at the top-left (r2c3 = row 2, column 3).",
        ]
        lines.extend(f"Warning: {note}" for note in self.warnings)
        for player in self.players:
            lines.append("")
            lines.extend(_player_text(player, self.solo_target is not None))
        lines.append("")
        if self.solo_target is not None:
            player = self.players[0]
            verdict = "won" if self.solo_won else "lost"
            relation = ">" if self.solo_won else "<="
            lines.append(
                f"Solo: {player.total} {relation} round track sum {self.solo_target}: {player.name} {verdict}."
            )
        else:
            scores = {p.name: p.total for p in self.players}
            places = (f"{i + 1}. {name} {scores[name]}" for i, name in enumerate(self.ranking))
            lines.append("Ranking: " + ", ".join(places))
            lines.extend(f"  tie: {text}" for text in self.tie_breaks)
            lines.append(f"Winner: {self.winner}")
        return "\n".join(lines)


def _player_text(player: PlayerScore, solo: bool) -> list[str]:
    lines = [f"{player.name}: {player.total} points"]
    lines.extend(f"    {row}" for row in window_rows(player.window))
    width = max(len(OBJECTIVES[o.id].title) for o in player.public) if player.public else 10
    width = max(width, 22)
    for objective in player.public:
        card = OBJECTIVES[objective.id]
        evidence = _objective_evidence(card, objective, player.window)
        lines.append(f"  {card.title:<{width}} {objective.points:>4}  {evidence}")
    private_label = f"Private ({player.private_color or 'not given'})"
    private_units = " + ".join(unit.label for unit in player.private.units)
    private_units = private_units or ("no dice of that colour" if player.private_color else "")
    lines.append(f"  {private_label:<{width}} {player.private.points:>4}  {private_units}".rstrip())
    if solo and len(player.private_options) == 2:
        other = next(o for o in player.private_options if o is not player.private)
        lines.append(f"  {'':<{width}}       (the better of two; {other.id.removeprefix('private-')}: {other.points})")
    if not solo:
        lines.append(f"  {'Favor tokens':<{width}} {player.favor_tokens:>4}  unused tokens, 1 point each")
    per_cell = SOLO_EMPTY_PENALTY if solo else EMPTY_PENALTY
    where = " ".join(short_place(cell) for cell in player.empty_cells) or "none"
    lines.append(f"  {'Empty cells':<{width}} {player.empty_points:>4}  -{per_cell} each: {where}")
    lines.append(f"  {'Total':<{width}} {player.total:>4}")
    if player.violations:
        lines.append("  Placement problems:")
        for issue in player.violations:
            tools = f" (possible with {', '.join(issue.explained_by)})" if issue.explained_by else ""
            lines.append(f"    - {issue.rule}: {issue.detail}{tools}")
    else:
        lines.append("  Placement: no rule broken")
    return lines


def _objective_evidence(card: PublicObjective, objective: Objective, window: Window) -> str:
    count = len(objective.units)
    if card.id == "color-diagonals":
        dice = ", ".join(unit.label for unit in objective.units) or "none"
        return f"{count} dice x {card.per_unit}: {dice}"
    if card.id.startswith(("row-", "column-")):
        lines = ", ".join(unit.label for unit in objective.units) or "none"
        note = f" ({objective.note})" if objective.note else ""
        return f"{count} x {card.per_unit}: {lines}{note}"
    plural = "set" if count == 1 else "sets"
    head = f"{count} {plural} x {card.per_unit} ({objective.note})"
    sets = "; ".join(
        f"{unit.label}: " + ", ".join(f"{window[r][c]} {short_place((r, c))}" for r, c in unit.cells)
        for unit in objective.units
    )
    return f"{head}: {sets}" if sets else head


def score(state: SagradaState) -> SagradaReport:
    """Score a finished game: breakdowns, violations, ranking with tie-breaks, solo result.

    >>> report = score(SagradaState.from_json(SAMPLE))
    >>> report.ranking, report.players[0].breakdown()["public"]
    (('Ana', 'Bo'), {'row-color-variety': 6, 'light-shades': 4, 'color-diagonals': 4})
    """
    solo = state.solo is not None
    issues = validate(state)
    warnings = tuple(state.warnings())
    scores = []
    for index, player in enumerate(state.players):
        public = tuple(OBJECTIVES[o].score(player.window) for o in state.public_objectives)
        colors = state.solo.private_objectives if solo else (player.private_objective,)
        options = tuple(
            private_points(player.window, color) if color is not None else Objective("private", 0, ())
            for color in colors
        )
        best = max(range(len(options)), key=lambda i: (options[i].points, -i))
        empty = tuple((r, c) for r in range(ROWS) for c in range(COLS) if player.window[r][c] is None)
        penalty = SOLO_EMPTY_PENALTY if solo else EMPTY_PENALTY
        scores.append(
            PlayerScore(
                name=player.name,
                public=public,
                private=options[best],
                private_color=colors[best],
                private_options=options,
                favor_tokens=0 if solo else player.favor_tokens,
                empty_cells=empty,
                empty_points=-penalty * len(empty),
                violations=tuple(issue for issue in issues if issue.player == index),
                window=player.window,
            )
        )
    order = sorted(range(len(scores)), key=lambda i: _rank_key(scores[i], i))
    ranking = tuple(scores[i].name for i in order)
    if solo:
        target = state.solo.round_track_sum
        winner = scores[0].name if scores[0].total > target else None
        return SagradaReport(state.public_objectives, tuple(scores), ranking, winner, (), target, warnings)
    ties = tuple(
        _tie_text(scores[a], scores[b]) for a, b in zip(order, order[1:]) if scores[a].total == scores[b].total
    )
    return SagradaReport(state.public_objectives, tuple(scores), ranking, ranking[0], ties, None, warnings)


def _rank_key(player: PlayerScore, index: int) -> tuple[int, int, int, int]:
    """Higher total, then private points, then unused tokens; then the one listed earliest."""
    return (-player.total, -player.private.points, -player.favor_tokens, index)


def _tie_text(first: PlayerScore, second: PlayerScore) -> str:
    head = f"{first.name} and {second.name} both have {first.total}; {first.name} ranks higher on"
    if first.private.points != second.private.points:
        return f"{head} private objective points ({first.private.points} vs {second.private.points})"
    if first.favor_tokens != second.favor_tokens:
        return f"{head} unused favor tokens ({first.favor_tokens} vs {second.favor_tokens})"
    return f"{head} turn order (listed earlier: took the final round's last turn later)"


# ---------------------------------------------------------------- generation

PLAYER_NAMES = ("Ana", "Bo", "Cyd", "Dev")


def generate(
    rng: random.Random,
    players: int = 3,
    *,
    empty: int | None = None,
    patterns: bool = True,
) -> SagradaState:
    """Return a random finished game whose windows break no placement rule.

    ``players`` 1 gives a solo game. ``empty`` fixes each window's empty cells (default: a
    random 0-3, mostly 0). Colours respect the bag (18 dice each); patterns, private
    objectives and public objectives are distinct as in a real game.

    >>> state = generate(random.Random(7), players=4)
    >>> len(state.players), validate(state)
    (4, [])

    Raises:
        ValueError: when ``players`` is not 1-4, ``empty`` not 0-20, or no game can be dealt from the bag.
    """
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
        raise ValueError(f"players: expected 1-{MAX_PLAYERS}, got {players!r}")
    solo = players == 1
    objectives = tuple(rng.sample(sorted(OBJECTIVES), SOLO_PUBLIC_COUNT if solo else PUBLIC_COUNT))
    cards = rng.sample(sorted(PATTERNS), players) if patterns else [None] * players
    colors = rng.sample(COLOR_CHOICES, 2 if solo else players)
    for attempt in range(20):  # the bag can run dry for late players: deal every window again
        supply = {color: DICE_PER_COLOR for color in COLORS}
        made = []
        try:
            for index in range(players):
                pattern = PATTERNS[cards[index]] if cards[index] is not None else None
                holes = empty if empty is not None else rng.choice((0, 0, 0, 0, 1, 1, 2, 3))
                window = generate_window(rng, pattern, holes, supply)
                tokens = 0 if solo else rng.randint(0, pattern.difficulty if pattern is not None else 4)
                made.append(SagradaPlayer(PLAYER_NAMES[index], window, pattern, None if solo else colors[index], tokens))
            break
        except ValueError:
            if attempt == 19:
                raise
    setup = SoloSetup(tuple(colors), rng.randint(15, 60)) if solo else None
    return SagradaState(objectives, tuple(made), setup)


SAMPLE = {
    "game": "sagrada",
    "public_objectives": ["row-color-variety", "light-shades", "color-diagonals"],
    "players": [
        {
            "name": "Ana",
            "window": ["B4 Y3 G6 R1 P2", "G2 P5 B1 G4 R6", ". . . . .", ". . . . ."],
            "private_objective": "red",
            "favor_tokens": 2,
        },
        {
            "name": "Bo",
            "window": [". . . . .", ". . . . .", "Y1 B2 R3 G4 P5", ". . . . ."],
            "private_objective": "blue",
            "favor_tokens": 1,
        },
    ],
}

GAME = Game(
    id="sagrada",
    title="Sagrada",
    parse=SagradaState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
