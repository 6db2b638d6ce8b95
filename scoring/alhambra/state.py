"""Alhambra game state: players (palace, reserve, money), Dirk and the market, with ``from_json``/``to_json``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.alhambra.palace import (
    BUILDING_TYPES,
    CATALOGUE,
    FOUNTAIN,
    FOUNTAIN_TILE,
    Cell,
    Tile,
    palace_text,
    tile_by_id,
    walls_problem,
)
from scoring.errors import StateError
from scoring.fields import child, describe, expect_int, expect_list, expect_object, expect_str, fail, field

CURRENCIES = ("denar", "dirham", "ducat", "florin")
MAX_PLAYERS = 6
DIRK = "Dirk"


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
            if set(self.dirk) - set(BUILDING_TYPES) or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in dirk.values()):
                raise StateError(f"dirk: expected counts >= 0 of {', '.join(BUILDING_TYPES)}")
            object.__setattr__(self, "dirk", dirk)
        if self.market is not None:
            object.__setattr__(self, "market", tuple(self.market))
            if self.scoring_round != 3:
                raise StateError(
                    f"market: market tiles are awarded at the final scoring only (scoring_round 3), got scoring_round {self.scoring_round}"
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
        players: list[AlhambraPlayer] = []
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
                    f"market tiles are awarded at the final scoring only (scoring_round 3), got scoring_round {scoring_round}",
                )
            market = []
            for index, entry in enumerate(entries):
                path = child("market", index)
                expect_object(entry, path)
                currency = expect_str(field(entry, "currency", path), child(path, "currency"), CURRENCIES)
                market.append((currency, _parse_tile(entry, path, allow_fountain=False)))
        return cls(scoring_round, tuple(players), dirk, None if market is None else tuple(market))

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md document; ``AlhambraState.from_json`` reads it back equal.

        >>> state = AlhambraState(1, (AlhambraPlayer("Ana", {(0, 0): Tile("fountain")}),))
        >>> state.to_json()["players"][0]["palace"], AlhambraState.from_json(state.to_json()) == state
        ([{'at': [0, 0], 'tile': 'fountain'}], True)
        """
        doc: dict[str, Any] = {
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
            raise fail(child(path, "tile"), f"expected 'fountain' (buildings use type and walls), got {describe(marker)}")
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


def _tile_json(tile: Tile) -> dict[str, Any]:
    if tile.type == FOUNTAIN:
        return {"tile": FOUNTAIN}
    doc: dict[str, Any] = {"type": tile.type, "walls": tile.walls}
    if tile.tile_id is not None:
        doc["tile_id"] = tile.tile_id
    return doc


def _player_json(player: AlhambraPlayer) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": player.name,
        "palace": [{"at": [x, y], **_tile_json(tile)} for (x, y), tile in player.palace],
        "reserve": [_tile_json(tile) for tile in player.reserve],
        "score_before": player.score_before,
    }
    if player.money is not None:
        doc["money"] = dict(player.money)
    return doc
