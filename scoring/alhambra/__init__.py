"""Alhambra scoring core: board state, validation, majorities, walls, market awards and ranking.

The document format is the Alhambra section of FORMATS.md. Palace geometry (tiles, walls,
legality, the longest wall, random legal palaces) lives in ``scoring.alhambra.palace`` and is
re-exported here.

>>> doc = {"game": "alhambra", "scoring_round": 1, "players": [
...     {"name": "Ana", "palace": [{"at": [0, 0], "tile": "fountain"},
...                                {"at": [1, 0], "type": "garden", "walls": "N"}]},
...     {"name": "Bo", "palace": [{"at": [0, 0], "tile": "fountain"}]}]}
>>> report = score(AlhambraState.from_json(doc))
>>> report.to_json()["players"][0]["majorities"], report.to_json()["players"][0]["longest_wall"]
({'garden': 5}, 1)
>>> report.to_json()["ranking"]
['Ana', 'Bo']
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field as dataclass_field
from typing import Any

from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str, fail, field
from scoring.game import Game
from scoring.issue import Issue
from scoring.alhambra.palace import (
    BUILDING_TYPES,
    CATALOGUE,
    FOUNTAIN,
    FOUNTAIN_TILE,
    LEGAL_WALLS,
    Cell,
    Segment,
    Tile,
    catalogue_counts,
    cell_text,
    generate_palace,
    longest_wall,
    palace_text,
    tile_by_id,
    validate_palace,
    walls_problem,
)

__all__ = [
    "BUILDING_TYPES",
    "CATALOGUE",
    "CURRENCIES",
    "GAME",
    "LEGAL_WALLS",
    "AlhambraPlayer",
    "AlhambraReport",
    "AlhambraState",
    "Tile",
    "generate",
    "generate_palace",
    "longest_wall",
    "market_awards",
    "palace_map",
    "palace_text",
    "place_points",
    "rank_majorities",
    "score",
    "validate",
    "validate_palace",
]

CURRENCIES = ("denar", "dirham", "ducat", "florin")
MAX_PLAYERS = 6
DIRK = "Dirk"


# --------------------------------------------------------------------------------------- state


@dataclass(frozen=True)
class AlhambraPlayer:
    """One player's palace (cell -> tile), reserve, earlier points and money.

    ``palace`` may be given as a mapping or as ``(cell, tile)`` pairs; it is stored as a tuple
    of pairs in reading order (by y, then x). ``money`` is ``None`` or an amount for every currency.

    >>> player = AlhambraPlayer("Ana", {(1, 0): Tile("garden", "N"), (0, 0): Tile("fountain")})
    >>> [cell for cell, _ in player.palace]
    [(0, 0), (1, 0)]
    >>> print(player)
    Ana
    +---+===+
    | F  Gar|
    +---+---+

    Raises:
        StateError: an empty name, a repeated cell, not exactly one fountain, a fountain in
            the reserve, a negative score or money.
    """

    name: str
    palace: tuple[tuple[Cell, Tile], ...]
    reserve: tuple[Tile, ...] = ()
    score_before: int = 0
    money: Mapping[str, int] | None = None

    def __str__(self) -> str:
        return f"{self.name}\n{palace_text(dict(self.palace))}"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise StateError(f"name: expected a non-empty string, got {describe(self.name)}")
        pairs = list(self.palace.items()) if isinstance(self.palace, Mapping) else list(self.palace)
        cells = [cell for cell, _ in pairs]
        if len(set(cells)) != len(cells):
            raise StateError(f"{self.name}: palace: a cell holds two tiles")
        fountains = sum(tile.type == FOUNTAIN for _, tile in pairs)
        if fountains != 1:
            raise StateError(f"{self.name}: palace: expected exactly one fountain, got {fountains}")
        object.__setattr__(self, "palace", tuple(sorted(pairs, key=lambda pair: (pair[0][1], pair[0][0]))))
        object.__setattr__(self, "reserve", tuple(self.reserve))
        if any(tile.type == FOUNTAIN for tile in self.reserve):
            raise StateError(f"{self.name}: reserve: a fountain cannot be kept in the reserve")
        if isinstance(self.score_before, bool) or not isinstance(self.score_before, int) or self.score_before < 0:
            raise StateError(f"{self.name}: score_before: expected an integer >= 0, got {describe(self.score_before)}")
        if self.money is not None:
            money = {currency: self.money.get(currency, 0) for currency in CURRENCIES}
            unknown = set(self.money) - set(CURRENCIES)
            if unknown or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in money.values()):
                raise StateError(f"{self.name}: money: expected amounts >= 0 of {', '.join(CURRENCIES)}")
            object.__setattr__(self, "money", money)


def palace_map(player: AlhambraPlayer) -> dict[Cell, Tile]:
    """Return the player's palace as a dict from cell ``(x, y)`` to ``Tile``.

    >>> palace_map(AlhambraPlayer("Ana", [((0, 0), Tile("fountain"))]))
    {(0, 0): Tile(type='fountain', walls='', tile_id=None, price=None)}
    """
    return dict(player.palace)


@dataclass(frozen=True)
class AlhambraState:
    """A whole Alhambra board at a scoring: the round, the players, Dirk (2 players) and the market.

    ``dirk`` is ``None`` or a count for every building type; ``market`` is ``None`` or
    ``(currency, tile)`` pairs (final scoring only).

    Raises:
        StateError: a round other than 1-3, 1-6 players required, repeated names, Dirk in a
            game that is not 2-player, a market before the final scoring.
    """

    scoring_round: int
    players: tuple[AlhambraPlayer, ...]
    dirk: Mapping[str, int] | None = None
    market: tuple[tuple[str, Tile], ...] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.scoring_round, bool) or self.scoring_round not in (1, 2, 3):
            raise StateError(f"scoring_round: expected an integer 1-3, got {describe(self.scoring_round)}")
        object.__setattr__(self, "players", tuple(self.players))
        if not 1 <= len(self.players) <= MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} players, got {len(self.players)}")
        names = [player.name for player in self.players]
        if len(set(names)) != len(names) or DIRK in names and self.dirk is not None:
            raise StateError(f"players: names must differ from each other (and from {DIRK!r} when he plays)")
        if self.dirk is not None:
            if len(self.players) != 2:
                raise StateError(f"dirk: Dirk plays only in a 2-player game, got {len(self.players)} players")
            dirk = {kind: self.dirk.get(kind, 0) for kind in BUILDING_TYPES}
            if set(self.dirk) - set(BUILDING_TYPES) or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in dirk.values()
            ):
                raise StateError(f"dirk: expected counts >= 0 of {', '.join(BUILDING_TYPES)}")
            object.__setattr__(self, "dirk", dirk)
        if self.market is not None:
            object.__setattr__(self, "market", tuple(self.market))
            if self.scoring_round != 3:
                raise StateError(
                    f"market: market tiles are awarded at the final scoring only (scoring_round 3), "
                    f"got scoring_round {self.scoring_round}"
                )
            for currency, tile in self.market:
                if currency not in CURRENCIES or tile.type == FOUNTAIN:
                    raise StateError(f"market: expected (currency, building tile) pairs, got ({currency!r}, {tile})")

    def __str__(self) -> str:
        return f"Alhambra, scoring round {self.scoring_round}\n\n" + "\n\n".join(map(str, self.players))

    @classmethod
    def from_json(cls, doc: Any) -> AlhambraState:
        """Parse a FORMATS.md Alhambra document.

        >>> AlhambraState.from_json({"game": "alhambra", "scoring_round": 4, "players": []})
        Traceback (most recent call last):
        ...
        scoring.errors.StateError: scoring_round: expected an integer 1-3, got 4

        Raises:
            StateError: naming the JSON path of the first thing that is wrong.
        """
        expect_object(doc, "")
        expect_str(field(doc, "game", ""), "game", ("alhambra",))
        scoring_round = expect_int(field(doc, "scoring_round", ""), "scoring_round", low=1, high=3)
        items = expect_list(field(doc, "players", ""), "players", min_length=1)
        if len(items) > MAX_PLAYERS:
            raise fail("players", f"expected 1-{MAX_PLAYERS} players, got {len(items)}")
        players = []
        for index, item in enumerate(items):
            player = _parse_player(item, child("players", index))
            for earlier, other in enumerate(players):
                if other.name == player.name:
                    raise fail(child(child("players", index), "name"), f"{player.name!r} is already players[{earlier}]")
            players.append(player)
        dirk = _parse_counts(doc.get("dirk"), "dirk", BUILDING_TYPES)
        if dirk is not None:
            if len(players) != 2:
                raise fail("dirk", f"Dirk plays only in a 2-player game, got {len(players)} players")
            for index, player in enumerate(players):
                if player.name == DIRK:
                    raise fail(child(child("players", index), "name"), f"{DIRK!r} is Dirk's name in this game")
        market = None
        if doc.get("market") is not None:
            entries = expect_list(doc["market"], "market")
            if scoring_round != 3:
                raise fail(
                    "market",
                    "market tiles are awarded at the final scoring only (scoring_round 3), "
                    f"got scoring_round {scoring_round}",
                )
            market = []
            for index, entry in enumerate(entries):
                path = child("market", index)
                expect_object(entry, path)
                currency = expect_str(field(entry, "currency", path), child(path, "currency"), CURRENCIES)
                market.append((currency, _parse_tile(entry, path, allow_fountain=False)))
        return cls(scoring_round, tuple(players), dirk, None if market is None else tuple(market))

    def to_json(self) -> dict:
        """Return the FORMATS.md document; ``AlhambraState.from_json`` reads it back equal.

        >>> state = AlhambraState(1, (AlhambraPlayer("Ana", {(0, 0): Tile("fountain")}),))
        >>> state.to_json()["players"][0]["palace"], AlhambraState.from_json(state.to_json()) == state
        ([{'at': [0, 0], 'tile': 'fountain'}], True)
        """
        doc: dict = {
            "game": "alhambra",
            "scoring_round": self.scoring_round,
            "players": [_player_json(player) for player in self.players],
        }
        if self.dirk is not None:
            doc["dirk"] = dict(self.dirk)
        if self.market is not None:
            doc["market"] = [{"currency": currency, **_tile_json(tile)} for currency, tile in self.market]
        return doc


def _parse_player(doc: Any, path: str) -> AlhambraPlayer:
    expect_object(doc, path)
    name = expect_str(field(doc, "name", path), child(path, "name"))
    if not name.strip():
        raise fail(child(path, "name"), "expected a non-empty name")
    palace_path = child(path, "palace")
    items = expect_list(field(doc, "palace", path), palace_path, min_length=1)
    holder: dict[Cell, int] = {}
    pairs = []
    fountain_at = None
    for index, item in enumerate(items):
        item_path = child(palace_path, index)
        expect_object(item, item_path)
        at_path = child(item_path, "at")
        at = expect_list(field(item, "at", item_path), at_path, 2)
        cell = (expect_int(at[0], child(at_path, 0)), expect_int(at[1], child(at_path, 1)))
        tile = _parse_tile(item, item_path, allow_fountain=True)
        if cell in holder:
            raise fail(at_path, f"cell [{cell[0]}, {cell[1]}] already holds palace[{holder[cell]}]; one tile per cell")
        holder[cell] = index
        if tile.type == FOUNTAIN:
            if fountain_at is not None:
                raise fail(item_path, f"a second fountain (palace[{fountain_at}] is one); a palace has exactly one")
            fountain_at = index
        pairs.append((cell, tile))
    if fountain_at is None:
        raise fail(palace_path, 'no fountain; exactly one tile must be {"at": [x, y], "tile": "fountain"}')
    reserve_path = child(path, "reserve")
    reserve = tuple(
        _parse_tile(item, child(reserve_path, index), allow_fountain=False)
        for index, item in enumerate(expect_list(field(doc, "reserve", path, []), reserve_path))
    )
    score_before = expect_int(field(doc, "score_before", path, 0), child(path, "score_before"), low=0)
    money = _parse_counts(doc.get("money"), child(path, "money"), CURRENCIES)
    return AlhambraPlayer(name, tuple(pairs), reserve, score_before, money)


def _parse_tile(item: Any, path: str, *, allow_fountain: bool) -> Tile:
    expect_object(item, path)
    marker = item.get("tile")
    kind = item.get("type")
    if marker is not None or kind == FOUNTAIN:
        key = "tile" if marker is not None else "type"
        if (marker if marker is not None else kind) != FOUNTAIN:
            raise fail(
                child(path, "tile"), f"expected 'fountain' (buildings use type and walls), got {describe(marker)}"
            )
        if not allow_fountain:
            raise fail(child(path, key), "a fountain stands only in a palace")
        return FOUNTAIN_TILE
    if item.get("tile_id") is not None:
        tile = tile_by_id_at(item["tile_id"], child(path, "tile_id"))
        for key, value in (("type", tile.type), ("walls", tile.walls)):
            if item.get(key) is not None and item[key] != value:
                raise fail(
                    child(path, key),
                    f"tile {tile.tile_id} is a {tile.type} with walls {tile.walls!r}, got {describe(item[key])}",
                )
        return tile
    kind = expect_str(field(item, "type", path), child(path, "type"), BUILDING_TYPES)
    walls = field(item, "walls", path)
    problem = walls_problem(walls)
    if problem:
        raise fail(child(path, "walls"), problem)
    return Tile(kind, walls)


def tile_by_id_at(tile_id: Any, path: str) -> Tile:
    """Return the catalogue tile ``tile_id``, reading it at JSON ``path``.

    >>> str(tile_by_id_at(44, "players[0].palace[1].tile_id"))
    'tower NEW #44'

    Raises:
        StateError: naming ``path`` when there is no such tile.
    """
    expect_int(tile_id, path, low=1, high=len(CATALOGUE))
    return tile_by_id(tile_id)


def _parse_counts(value: Any, path: str, names: tuple[str, ...]) -> dict[str, int] | None:
    if value is None:
        return None
    expect_object(value, path)
    for key in value:
        if key not in names:
            raise fail(child(path, key), f"expected one of {', '.join(names)}; got {describe(key)}")
    return {name: expect_int(value.get(name, 0), child(path, name), low=0) for name in names}


def _tile_json(tile: Tile) -> dict:
    if tile.type == FOUNTAIN:
        return {"tile": FOUNTAIN}
    doc: dict = {"type": tile.type, "walls": tile.walls}
    if tile.tile_id is not None:
        doc["tile_id"] = tile.tile_id
    return doc


def _player_json(player: AlhambraPlayer) -> dict:
    doc: dict = {
        "name": player.name,
        "palace": [{"at": [x, y], **_tile_json(tile)} for (x, y), tile in player.palace],
        "reserve": [_tile_json(tile) for tile in player.reserve],
        "score_before": player.score_before,
    }
    if player.money is not None:
        doc["money"] = dict(player.money)
    return doc


# ----------------------------------------------------------------------------------- validation


def validate(state: AlhambraState) -> list[Issue]:
    """Return every rule break of every palace, plus tiles used more often than the game has them.

    ``Issue.player`` is the player's index; ``tile-overused`` counts a (type, walls) pair over
    all palaces and reserves; ``no-such-tile`` flags a pair the game does not have at all.

    >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain"), (1, 0): Tile("tower", "NEW")})
    >>> bo = AlhambraPlayer("Bo", {(0, 0): Tile("fountain")}, reserve=[Tile("tower", "NEW")])
    >>> [(issue.rule, issue.player) for issue in validate(AlhambraState(1, (ana, bo)))]
    [('wall-faces-open-side', 0), ('unreachable', 0), ('tile-overused', 0), ('tile-overused', 1)]
    """
    issues = []
    for index, player in enumerate(state.players):
        for issue in validate_palace(palace_map(player)):
            issues.append(Issue(issue.rule, issue.detail, issue.cells, index, issue.explained_by))
    issues.extend(_overuse(state))
    return sorted(issues, key=lambda issue: issue.player)


def _overuse(state: AlhambraState) -> list[Issue]:
    # (type, walls) -> player index -> ([palace cells], reserve count)
    uses: dict[tuple[str, str], dict[int, tuple[list[Cell], list[int]]]] = {}
    for index, player in enumerate(state.players):
        for cell, tile in player.palace:
            if tile.type != FOUNTAIN:
                uses.setdefault(tile.kind, {}).setdefault(index, ([], [0]))[0].append(cell)
        for tile in player.reserve:
            uses.setdefault(tile.kind, {}).setdefault(index, ([], [0]))[1][0] += 1
    held = catalogue_counts()
    issues = []
    for kind, by_player in uses.items():
        total = sum(len(cells) + reserved[0] for cells, reserved in by_player.values())
        have = held.get(kind, 0)
        if total <= have:
            continue
        name = f"{kind[0]} with walls {kind[1]!r}"
        where = "; ".join(
            f"{state.players[index].name}: " + ", ".join(
                [cell_text(cell) for cell in cells] + ([f"{reserved[0]} in reserve"] if reserved[0] else [])
            )
            for index, (cells, reserved) in sorted(by_player.items())
        )
        for index, (cells, _) in sorted(by_player.items()):
            if have == 0:
                detail = f"the game has no {name} (a misread tile?); used at {where}"
                issues.append(Issue("no-such-tile", detail, tuple(cells), index))
            else:
                detail = f"{name} used {total} times, the game has {have}: {where}"
                issues.append(Issue("tile-overused", detail, tuple(cells), index))
    return issues


# -------------------------------------------------------------------------------------- scoring


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


def rank_majorities(counts: list[Mapping[str, int]], scoring_round: int) -> list[dict[str, Standing]]:
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
    def majorities(self) -> dict[str, int]:
        """Points per building type, only the types that score."""
        return {kind: s.points for kind, s in self.standings.items() if s.points > 0}


@dataclass(frozen=True)
class AlhambraReport:
    """The result of one scoring: per player, Dirk, market awards and the ranking."""

    scoring_round: int
    players: tuple[PlayerScore, ...]
    dirk_counts: dict[str, int] | None = None
    dirk_standings: dict[str, Standing] | None = None
    market_awards: tuple[tuple[str, Tile, str | None], ...] | None = None
    ranking: tuple[str, ...] = dataclass_field(default=())

    @property
    def dirk_points(self) -> dict[str, int] | None:
        """Dirk's points per scoring type, or ``None`` without Dirk."""
        if self.dirk_standings is None:
            return None
        return {kind: s.points for kind, s in self.dirk_standings.items() if s.points > 0}

    def to_json(self) -> dict:
        """Return the FORMATS.md Alhambra output document.

        >>> ana = AlhambraPlayer("Ana", {(0, 0): Tile("fountain")})
        >>> list(score(AlhambraState(1, (ana,))).to_json())
        ['game', 'scoring_round', 'players', 'ranking']
        """
        doc: dict = {
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
                {"currency": currency, "type": tile.type, "walls": tile.walls, "to": to}
                for currency, tile, to in self.market_awards
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


# ----------------------------------------------------------------------------------- generation

_NAMES = ("Ana", "Bo", "Chen", "Dana", "Emre", "Femi")
_DEFAULT_SIZE = {1: 5, 2: 11, 3: 17}


_GAME_ATTEMPTS = 20  # whole games drawn before giving up (5-6 players of 10 tiles use nearly every tile)


def generate(
    rng: random.Random, players: int = 2, size: int | None = None, scoring_round: int = 3, dirk: bool | None = None
) -> AlhambraState:
    """Return a random legal game: one palace per player grown from one shared tile set.

    ``size`` is the number of building tiles per palace (default by round, capped so the 54
    tiles suffice); a tile or two may wait in each reserve. Round 3 adds money and a market;
    2-player games get Dirk unless ``dirk`` is False. ``validate`` finds nothing in the result.

    >>> state = generate(random.Random(1), players=3, scoring_round=2)
    >>> len(state.players), validate(state)
    (3, [])

    Raises:
        StateError: for 1-6 players not given, or palaces too big for the tile set.
    """
    if isinstance(players, bool) or not isinstance(players, int) or not 1 <= players <= MAX_PLAYERS:
        raise StateError(f"players: expected an integer 1-{MAX_PLAYERS}, got {describe(players)}")
    if isinstance(scoring_round, bool) or scoring_round not in (1, 2, 3):
        raise StateError(f"scoring_round: expected an integer 1-3, got {describe(scoring_round)}")
    if size is None:
        size = min(_DEFAULT_SIZE[scoring_round], (len(CATALOGUE) - len(CURRENCIES)) // players)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= len(CATALOGUE) // players:
        raise StateError(
            f"size: expected an integer 0-{len(CATALOGUE) // players} for {players} players, got {describe(size)}"
        )
    for attempt in range(_GAME_ATTEMPTS):  # the last palaces grow from what the first left: start over if they cannot
        used: set[int] = set()
        try:
            palaces = [generate_palace(rng, size, used) for _ in range(players)]
            break
        except StateError:
            if attempt == _GAME_ATTEMPTS - 1:
                raise
    left = [tile for tile in CATALOGUE if tile.tile_id not in used]
    rng.shuffle(left)
    market = None
    if scoring_round == 3:
        market = tuple((currency, left.pop()) for currency in CURRENCIES if left)
    members = []
    for index, palace in enumerate(palaces):
        reserve = tuple(left.pop() for _ in range(min(len(left), rng.randint(0, 2))))
        money = {currency: rng.randint(0, 12) for currency in CURRENCIES} if scoring_round == 3 else None
        before = 0 if scoring_round == 1 else rng.randint(5, 30) * (scoring_round - 1)
        members.append(AlhambraPlayer(_NAMES[index], palace, reserve, before, money))
    with_dirk = players == 2 if dirk is None else dirk
    dirk_counts = {kind: rng.randint(0, 2 * scoring_round) for kind in BUILDING_TYPES} if with_dirk else None
    return AlhambraState(scoring_round, tuple(members), dirk_counts, market)


GAME = Game(
    id="alhambra",
    title="Alhambra",
    parse=AlhambraState.from_json,
    validate=validate,
    score=score,
    generate=generate,
)
