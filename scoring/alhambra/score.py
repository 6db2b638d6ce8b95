"""Alhambra scoring: majorities (with Dirk), longest walls, market awards, totals and the ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from scoring.alhambra.palace import (
    BUILDING_TYPES,
    FOUNTAIN,
    Cell,
    Segment,
    Tile,
    cell_text,
    longest_wall,
    palace_text,
)
from scoring.alhambra.rules import validate
from scoring.alhambra.state import DIRK, AlhambraPlayer, AlhambraState, palace_map
from scoring.errors import StateError
from scoring.fields import describe
from scoring.issue import Issue
from scoring.report import Evidence, Unit, check_ranking


def place_points(scoring_round: int, kind: str) -> tuple[int, ...]:
    """Return the points for first, second, ... place of a building type in a scoring round.

    >>> place_points(1, "pavilion"), place_points(2, "garden"), place_points(3, "tower")
    ((1,), (12, 5), (21, 13, 6))

    Raises:
        StateError: for a round other than 1-3 or an unknown building type.
    """
    if kind not in BUILDING_TYPES:
        raise StateError(f"type: expected one of {', '.join(BUILDING_TYPES)}, got {describe(kind)}")
    if isinstance(scoring_round, bool) or scoring_round not in (1, 2, 3):
        raise StateError(f"scoring_round: expected an integer 1-3, got {describe(scoring_round)}")
    bonus = BUILDING_TYPES.index(kind)
    return tuple(base + bonus for base in _PLACE_BASE[scoring_round])


# Points of the first building type (pavilion) per place; each later type in BUILDING_TYPES adds 1.
_PLACE_BASE = {1: (1,), 2: (8, 1), 3: (16, 8, 1)}


@dataclass(frozen=True)
class Standing:
    """Where one party stands in one building type: place (1 = first), how many share it, points."""

    place: int
    tied: int
    points: int

    def label(self) -> str:
        """Return ``'1st'``, ``'=2nd'`` (shared) and so on.

        >>> Standing(2, 2, 4).label(), Standing(11, 1, 0).label()
        ('=2nd', '11th')
        """
        suffix = "th" if 10 <= self.place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(self.place % 10, "th")
        return ("=" if self.tied > 1 else "") + f"{self.place}{suffix}"


def rank_majorities(counts: Sequence[Mapping[str, int]], scoring_round: int) -> list[dict[str, Standing]]:
    """Place every party (players, then Dirk) in every building type and share out the points.

    Tied parties add up the points of the places they occupy and share them rounded down; the
    places are used up (two tied firsts in round 2 leave no second). Nobody places with none.

    >>> standings = rank_majorities([{"garden": 2}, {"garden": 2}, {"garden": 1}], 2)
    >>> [s["garden"].points for s in standings], standings[2]["garden"].label()
    ([8, 8, 0], '3rd')

    Raises:
        StateError: for a round other than 1-3.
    """
    standings: list[dict[str, Standing]] = [{} for _ in counts]
    for kind in BUILDING_TYPES:
        points = place_points(scoring_round, kind)
        having = sorted({party.get(kind, 0) for party in counts if party.get(kind, 0) > 0}, reverse=True)
        taken = 0
        for amount in having:
            group = [index for index, party in enumerate(counts) if party.get(kind, 0) == amount]
            share = sum(points[taken : taken + len(group)]) // len(group)
            for index in group:
                standings[index][kind] = Standing(taken + 1, len(group), share)
            taken += len(group)
    return standings


@dataclass(frozen=True)
class PlayerScore:
    """One player's round: counts, standing per type, wall, points and rule breaks."""

    name: str
    counts: dict[str, int]
    standings: dict[str, Standing]
    wall_length: int
    wall: tuple[Segment, ...]
    score_before: int
    round_points: int
    total: int
    issues: tuple[Issue, ...]
    palace: tuple[tuple[Cell, Tile], ...] = ()

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """Each scoring building type (its tiles' cells) and then the longest wall (one unit per segment).

        >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NE")})
        >>> [(line.id, line.points, line.note, line.cells) for line in score(AlhambraState(1, (ana,))).players[0].evidence]
        [('tower', 6, '1st', ((1, 0),)), ('longest-wall', 2, '', ((1, 0),))]
        """
        lines = [
            Evidence(
                kind,
                standing.points,
                (Unit(kind, tuple(cell for cell, tile in self.palace if tile.type == kind)),),
                standing.label(),
            )
            for kind, standing in self.standings.items()
            if standing.points > 0
        ]
        segments = tuple(Unit(f"{cell_text(cell)} {side}", (cell,)) for cell, side in self.wall)
        lines.append(Evidence("longest-wall", self.wall_length, segments))
        return tuple(lines)

    @property
    def majorities(self) -> dict[str, int]:
        """Points per building type, only the types that score.

        >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("garden")})
        >>> score(AlhambraState(1, (ana,))).players[0].majorities
        {'garden': 5}
        """
        return {kind: s.points for kind, s in self.standings.items() if s.points > 0}


@dataclass(frozen=True)
class AlhambraReport:
    """The result of one scoring: per player, Dirk, market awards and the ranking.

    ``tie_breaks`` is always empty: Alhambra breaks no tie, tied players share the place
    (``to_text`` marks them with ``=``).
    """

    scoring_round: int
    players: tuple[PlayerScore, ...]
    dirk_counts: dict[str, int] | None = None
    dirk_standings: dict[str, Standing] | None = None
    market_awards: tuple[tuple[str, Tile, str | None], ...] | None = None
    ranking: tuple[str, ...] = dataclass_field(default=())
    tie_breaks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_ranking(self.players, self.ranking, self.tie_breaks)

    @property
    def dirk_points(self) -> dict[str, int] | None:
        """Dirk's points per scoring type, or ``None`` without Dirk.

        >>> ana, bo = (AlhambraPlayer(name, {(0, 0): Tile("fountain")}) for name in ("Ana", "Bo"))
        >>> score(AlhambraState(1, (ana, bo), dirk={"tower": 1})).dirk_points
        {'tower': 6}
        """
        if self.dirk_standings is None:
            return None
        return {kind: s.points for kind, s in self.dirk_standings.items() if s.points > 0}

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md Alhambra output document.

        >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain")})
        >>> list(score(AlhambraState(1, (ana,))).to_json())
        ['game', 'scoring_round', 'players', 'ranking']
        """
        doc: dict[str, Any] = {
            "game": "alhambra",
            "scoring_round": self.scoring_round,
            "players": [
                {
                    "name": player.name,
                    "counts": dict(player.counts),
                    "majorities": player.majorities,
                    "longest_wall": player.wall_length,
                    "round_points": player.round_points,
                    "total": player.total,
                    "violations": [
                        {"rule": issue.rule, "detail": issue.detail, "cells": [list(cell) for cell in issue.cells]}
                        for issue in player.issues
                    ],
                }
                for player in self.players
            ],
        }
        if self.dirk_points is not None:
            doc["dirk"] = {"majorities": self.dirk_points, "round_points": sum(self.dirk_points.values())}
        if self.market_awards is not None:
            doc["market_awards"] = [
                {"currency": currency, "type": tile.type, "walls": tile.walls, "to": to} for currency, tile, to in self.market_awards
            ]
        doc["ranking"] = list(self.ranking)
        return doc

    def to_text(self) -> str:
        """Return a readable table per player, Dirk, the market awards and the ranking.

        >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NE")})
        >>> print(score(AlhambraState(1, (ana,))).to_text().splitlines()[-1])
           1. Ana 8
        """
        final = " (final scoring)" if self.scoring_round == 3 else ""
        places = len(place_points(self.scoring_round, BUILDING_TYPES[0]))
        lines = [
            f"Alhambra, scoring round {self.scoring_round}{final}: "
            f"places 1-{places} score per building type; the wall scores 1 per segment",
            "Palaces are drawn north up: = and # are walls, - and | open edges; wall segments",
            "are named by tile (x, y), x east and y south, and side.",
            "",
        ]
        for player in self.players:
            left = min(x for (x, _), _ in player.palace)
            top = min(y for (_, y), _ in player.palace)
            lines.append(f"{player.name}   (drawing from cell {cell_text((left, top))} at the top left)")
            lines += ["  " + row for row in palace_text(dict(player.palace)).splitlines()]
            lines += _party_table("", player.counts, player.standings)
            lines.append(f"  {'longest wall':<13}{player.wall_length:>5}  {player.wall_length:>7}")
            if player.wall:
                lines += _wrap("    along ", [f"{cell_text(cell)} {side}" for cell, side in player.wall])
            lines.append(f"  {'round':<13}{'':>5}  {player.round_points:>7}")
            lines.append(f"  {'total':<13}{'':>5}  {player.total:>7}   ({player.score_before} before this round)")
            if player.issues:
                lines.append(f"  violations ({len(player.issues)}):")
                lines += [f"    {issue.rule}: {issue.detail}" for issue in player.issues]
            else:
                lines.append("  violations: none")
            lines.append("")
        if self.dirk_counts is not None and self.dirk_standings is not None:
            title = f"{DIRK} (neutral player, 2-player game; no wall, not ranked)"
            lines += _party_table(title, self.dirk_counts, self.dirk_standings)
            lines.append(f"  {'round':<13}{'':>5}  {sum((self.dirk_points or {}).values()):>7}")
            lines.append("")
        if self.market_awards is not None:
            lines.append("Market awards (most money of the currency; a tie or no money: nobody):")
            for currency, tile, to in self.market_awards:
                lines.append(f"  {currency:<7} {tile.type} walls {tile.walls or '-'}: {to or 'nobody'}")
            lines.append("")
        totals = {player.name: player.total for player in self.players}
        lines.append("Ranking by total (tied players share a place, marked '='):")
        for name in self.ranking:
            place = 1 + sum(total > totals[name] for total in totals.values())
            tied = sum(total == totals[name] for total in totals.values()) > 1
            lines.append(f"  {'=' if tied else ' '}{place}. {name} {totals[name]}")
        return "\n".join(lines)


def _party_table(title: str, counts: Mapping[str, int], standings: Mapping[str, Standing]) -> list[str]:
    lines = [title] if title else []
    lines.append(f"  {'building':<13}{'count':>5}  {'points':>7}   place")
    for kind in BUILDING_TYPES:
        standing = standings.get(kind)
        place = standing.label() if standing else "-"
        points = standing.points if standing else 0
        lines.append(f"  {kind:<13}{counts.get(kind, 0):>5}  {points:>7}   {place}")
    return lines


def _wrap(prefix: str, words: list[str], width: int = 78) -> list[str]:
    indent = " " * len(prefix)
    lines, line, fresh = [], prefix, True
    for word in words:
        piece = word if fresh else ", " + word
        if len(line) + len(piece) > width and not fresh:
            lines.append(line + ",")
            line, piece = indent, word
        line += piece
        fresh = False
    lines.append(line)
    return lines


def building_counts(player: AlhambraPlayer) -> dict[str, int]:
    """Count the buildings standing in the palace (the reserve never counts).

    >>> building_counts(AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower")},
    ...                                  reserve=[Tile("garden")]))["tower"]
    1
    """
    counts = dict.fromkeys(BUILDING_TYPES, 0)
    for _, tile in player.palace:
        if tile.type != FOUNTAIN:
            counts[tile.type] += 1
    return counts


def market_awards(state: AlhambraState) -> list[tuple[str, Tile, str | None]]:
    """Give each market tile to the one player with the most money of its currency (else nobody).

    >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain")}, money={"denar": 5})
    >>> bo = AlhambraPlayer("Bo", {(0, 0): Tile("fountain")}, money={"denar": 5, "ducat": 1})
    >>> market = (("denar", Tile("tower")), ("ducat", Tile("garden")))
    >>> [to for _, _, to in market_awards(AlhambraState(3, (ana, bo), market=market))]
    [None, 'Bo']
    """
    awards = []
    for currency, tile in state.market or ():
        amounts = [(player.money or {}).get(currency, 0) for player in state.players]
        most = max(amounts)
        to = None
        if most > 0 and amounts.count(most) == 1:
            to = state.players[amounts.index(most)].name
        awards.append((currency, tile, to))
    return awards


def score(state: AlhambraState) -> AlhambraReport:
    """Score the round: majorities (with Dirk), longest walls, totals, violations, market and ranking.

    >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NE")}, score_before=3)
    >>> report = score(AlhambraState(2, (ana,)))
    >>> report.players[0].majorities, report.players[0].wall_length, report.players[0].total
    ({'tower': 13}, 2, 18)
    """
    counts = [building_counts(player) for player in state.players]
    parties = counts + ([dict(state.dirk)] if state.dirk is not None else [])
    standings = rank_majorities(parties, state.scoring_round)
    issues = validate(state)
    players = []
    for index, player in enumerate(state.players):
        length, wall = longest_wall(palace_map(player))
        points = sum(s.points for s in standings[index].values()) + length
        players.append(
            PlayerScore(
                player.name,
                counts[index],
                standings[index],
                length,
                tuple(wall),
                player.score_before,
                points,
                player.score_before + points,
                tuple(issue for issue in issues if issue.player == index),
                player.palace,
            )
        )
    ranking = tuple(p.name for p in sorted(players, key=lambda p: -p.total))
    return AlhambraReport(
        state.scoring_round,
        tuple(players),
        dict(state.dirk) if state.dirk is not None else None,
        standings[-1] if state.dirk is not None else None,
        tuple(market_awards(state)) if state.market is not None else None,
        ranking,
    )
