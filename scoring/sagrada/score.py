"""Sagrada scoring: per-player breakdowns with their evidence, ranking with tie-breaks, solo result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scoring.issue import Issue
from scoring.report import Evidence, check_ranking
from scoring.sagrada.objectives import OBJECTIVES, Objective, PublicObjective, private_points
from scoring.sagrada.rules import validate
from scoring.sagrada.state import (  # noqa: F401  (SAMPLE: the doctests' game)
    EMPTY_PENALTY,
    SAMPLE,
    SOLO_EMPTY_PENALTY,
    SagradaState,
)
from scoring.sagrada.window import COLS, ROWS, Cell, Window, short_place, window_rows

__all__ = ["PlayerScore", "SagradaReport", "score", "violation_json"]


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

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """The public objectives' results, then the private one's, each with its units and cells.

        >>> [(line.id, line.points) for line in score(SagradaState.from_json(SAMPLE)).players[0].evidence][-2:]
        [('color-diagonals', 4), ('private-red', 7)]
        """
        return (*self.public, self.private)

    def breakdown(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
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


def violation_json(issue: Issue) -> dict[str, Any]:
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

    def __post_init__(self) -> None:
        check_ranking(self.players, self.ranking, self.tie_breaks)

    @property
    def solo_won(self) -> bool | None:
        """Whether the solo player beat the round track (``None`` in a multiplayer game).

        >>> score(SagradaState.from_json(SAMPLE)).solo_won is None
        True
        """
        if self.solo_target is None:
            return None
        return self.players[0].total > self.solo_target

    def to_json(self) -> dict[str, Any]:
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
            lines.append(f"Solo: {player.total} {relation} round track sum {self.solo_target}: {player.name} {verdict}.")
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
        f"{unit.label}: " + ", ".join(f"{window[r][c]} {short_place((r, c))}" for r, c in unit.cells) for unit in objective.units
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
        colors = state.solo.private_objectives if state.solo is not None else (player.private_objective,)
        options = tuple(private_points(player.window, color) if color is not None else Objective("private", 0, ()) for color in colors)
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
    if state.solo is not None:
        target = state.solo.round_track_sum
        winner = scores[0].name if scores[0].total > target else None
        return SagradaReport(state.public_objectives, tuple(scores), ranking, winner, (), target, warnings)
    ties = tuple(_tie_text(scores[a], scores[b]) for a, b in zip(order, order[1:]) if scores[a].total == scores[b].total)
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
