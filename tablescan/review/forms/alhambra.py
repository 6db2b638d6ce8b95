"""Alhambra on the review screen: a palace grid, cells ``"x,y"``, values ``"fountain"``, ``"garden:NS"`` or ``""``."""

from __future__ import annotations

import re
from typing import Any

from scoring.alhambra import BUILDING_TYPES, CURRENCIES, MAX_PLAYERS, PlayerScore, tile_by_id
from scoring.alhambra.palace import FOUNTAIN, SIDES
from scoring.errors import StateError
from tablescan.review.forms import ReviewForm, cell_text, copy_json, int_in, number, pair_key

MIN_PLAYERS = 2  # with two, Dirk plays along as a third party
LAST_ROUND = 3
MARKET_SIZE = 4
MAX_RESERVE = 20
MAX_DIRK_ENTRY = 20
MAX_SCORE_ENTRY = 999
MAX_MONEY_ENTRY = 200
BOARD_REACH = 20  # how far from the fountain the page's arrow keys go
FOUNTAIN_MARK = "◎"
NEW_MARKET_TILE = {"currency": CURRENCIES[0], "type": "garden", "walls": ""}

_CELL = re.compile(r"^(-?\d{1,2}),(-?\d{1,2})$")


def _tile(at: list[int], value: str) -> dict | None:
    if value == FOUNTAIN:
        return {"at": at, "tile": FOUNTAIN}
    if not value:
        return None
    kind, _, walls = value.partition(":")
    return {"at": at, "type": kind, "walls": walls}


def _tile_text(tile: Any) -> str:
    """Return a scanned tile (text, FORMATS.md object or catalogue id) as a stored value."""
    if isinstance(tile, str):
        return tile.lower()
    if not isinstance(tile, dict):
        return ""
    if tile.get("tile") == FOUNTAIN or tile.get("type") == FOUNTAIN:
        return FOUNTAIN
    if "tile_id" in tile:
        try:
            known = tile_by_id(tile["tile_id"])
        except StateError:
            return ""
        return f"{known.type}:{known.walls}"
    if tile.get("type") in BUILDING_TYPES:
        return f"{tile['type']}:{tile.get('walls', '')}"
    return ""


class AlhambraForm(ReviewForm):
    """Settings: scoring round, Dirk's buildings (2 players), the market; fields: score, money, reserve."""

    cell_names = "x,y"
    several_scorings = True
    last_round = LAST_ROUND
    shortcuts = (
        (f"1–{len(BUILDING_TYPES)}", ", ".join(BUILDING_TYPES)),
        ("F", FOUNTAIN),
        (" ".join(SIDES), "toggle a wall"),
        (". Del ⌫", "empty"),
        ("arrows", "move"),
        ("Esc", "close the picker"),
    )
    scan_flags = ("--round",)

    def check_player_count(self, count: int) -> None:
        if count < MIN_PLAYERS:
            raise StateError(f"players: Alhambra needs {MIN_PLAYERS}-{MAX_PLAYERS} players (with 2, Dirk plays along)")

    def constants(self) -> dict[str, Any]:
        return {
            "types": list(BUILDING_TYPES),
            "short": {**{kind: kind[:3].capitalize() for kind in BUILDING_TYPES}, FOUNTAIN: FOUNTAIN_MARK},
            "fountain": FOUNTAIN,
            "sides": SIDES,
            "reach": BOARD_REACH,
            "market_size": MARKET_SIZE,
            "market_tile": dict(NEW_MARKET_TILE),
            "max_dirk": MAX_DIRK_ENTRY,
            "max_score_before": MAX_SCORE_ENTRY,
            "max_money": MAX_MONEY_ENTRY,
        }

    def options(self) -> dict[str, Any]:
        return {"tile_types": list(BUILDING_TYPES), "currencies": list(CURRENCIES)}

    def default_settings(self, player_count: int) -> dict[str, Any]:
        settings: dict[str, Any] = {"scoring_round": 1, "market": []}
        if player_count == 2:
            settings["dirk"] = {kind: None for kind in BUILDING_TYPES}  # "not set" until the players count them
        return settings

    def unset_settings(self, settings: dict, player_count: int) -> list[str]:
        dirk = settings.get("dirk")
        if player_count == 2 and isinstance(dirk, dict) and any(dirk.get(kind) is None for kind in BUILDING_TYPES):
            return ["Dirk's buildings are not set"]
        return []

    def board_entered(self, cells: dict[str, str]) -> bool:
        return any(value not in ("", FOUNTAIN) for value in cells.values())

    def labels(self) -> dict[str, str]:
        return {
            **{kind: kind.capitalize() for kind in BUILDING_TYPES},
            "counts": "Buildings",
            "majorities": "Majority points",
            "longest_wall": "Longest wall",
            "round_points": "This scoring",
            "score_before": "Points before",
        }

    def default_fields(self, position: int) -> dict[str, Any]:
        # points before this scoring: none in the first; from a later one on, recorded rounds carry them (else "not set")
        return {"score_before": None, "money": {currency: 0 for currency in CURRENCIES}, "reserve": []}

    def unset(self, player: dict, player_count: int, settings: dict | None = None) -> list[str]:
        later = (settings or {}).get("scoring_round", 1) > 1
        return ["points before this scoring are not set"] if later and player["fields"].get("score_before") in (None, "") else []

    def blank_cells(self) -> dict[str, str]:
        return {"0,0": FOUNTAIN}

    def normalize_cell(self, cell: str, text: str, value: Any) -> tuple[str, str]:
        if not _CELL.match(cell):
            raise StateError(f"cell {cell!r}: expected 'x,y' integer grid coordinates")
        x, y = (int(part) for part in cell.split(","))
        text = text.lower()
        if text in ("", "."):
            return f"{x},{y}", ""
        if text == FOUNTAIN:
            return f"{x},{y}", FOUNTAIN
        kind, _, walls = text.partition(":")
        if kind not in BUILDING_TYPES:
            raise StateError(f"cells[{cell!r}]: expected fountain, empty or one of {', '.join(BUILDING_TYPES)}; got {kind!r}")
        walls = walls.upper()
        if any(side not in SIDES for side in walls) or len(set(walls)) != len(walls):
            raise StateError(f"cells[{cell!r}]: walls must be distinct sides of {SIDES}, got {walls!r}")
        return f"{x},{y}", f"{kind}:{''.join(side for side in SIDES if side in walls)}"

    def _building(self, text: str) -> str:
        """Return a tile text (``"garden:sn"``) in stored form, checked as a cell value."""
        return self.normalize_cell("0,0", text.strip(), text)[1]

    def clean_settings(self, settings: dict, change: dict, player_count: int) -> dict:
        settings = copy_json(settings)
        if "scoring_round" in change:
            settings["scoring_round"] = int_in(change["scoring_round"], "settings.scoring_round", 1, LAST_ROUND)
        if "dirk" in change and player_count == 2:
            dirk = change["dirk"]
            if not isinstance(dirk, dict):
                raise StateError("settings.dirk: expected counts per building type")
            before = settings.get("dirk") or {}
            # a type the change leaves out keeps its count: one field's edit never clears another's
            settings["dirk"] = {
                kind: before.get(kind)
                if kind not in dirk
                else None
                if dirk[kind] in (None, "")
                else int_in(dirk[kind], f"settings.dirk.{kind}", 0, MAX_DIRK_ENTRY)
                for kind in BUILDING_TYPES
            }
        if "market" in change:
            market = change["market"]
            if not isinstance(market, list) or len(market) > MARKET_SIZE:
                raise StateError(f"settings.market: expected up to {MARKET_SIZE} tiles")
            tiles = []
            for index, tile in enumerate(market):
                path = f"settings.market[{index}]"
                if not isinstance(tile, dict) or tile.get("currency") not in CURRENCIES or tile.get("type") not in BUILDING_TYPES:
                    raise StateError(f"{path}: expected currency ({', '.join(CURRENCIES)}), type and walls")
                stored = self._building(f"{tile['type']}:{tile.get('walls', '')}")
                tiles.append({"currency": tile["currency"], "type": tile["type"], "walls": stored.partition(":")[2]})
            settings["market"] = tiles
        return settings

    def clean_fields(self, fields: dict, change: dict) -> dict:
        fields = copy_json(fields)
        if "score_before" in change:
            before = change["score_before"]
            unset = before is None or (isinstance(before, str) and not before.strip())
            fields["score_before"] = None if unset else int_in(before, "fields.score_before", 0, MAX_SCORE_ENTRY)
        if "reserve" in change:
            reserve = change["reserve"]
            items = reserve.replace(";", ",").split(",") if isinstance(reserve, str) else reserve
            if not isinstance(items, list) or len(items) > MAX_RESERVE:
                raise StateError("fields.reserve: expected tiles like 'garden:N, tower:ES'")
            tiles = []
            for index, item in enumerate(str(i).strip() for i in items):
                if not item:
                    continue
                value = self._building(item)
                if value in ("", FOUNTAIN):
                    raise StateError(f"fields.reserve[{index}]: expected a building tile like 'garden:N', got {item!r}")
                tiles.append(value)
            fields["reserve"] = tiles
        if "money" in change:
            money = change["money"]
            if not isinstance(money, dict):
                raise StateError("fields.money: expected an amount per currency")
            fields["money"] = {c: int_in(money.get(c, 0), f"fields.money.{c}", 0, MAX_MONEY_ENTRY) for c in CURRENCIES}
        return fields

    def player_document(self, player: dict, cells: dict[str, str], player_count: int) -> dict:
        fields = player["fields"]
        palace = []
        for cell, value in cells.items():
            x, y = (int(part) for part in cell.split(","))
            tile = _tile([x, y], value)
            if tile is not None:
                palace.append(tile)
        palace.sort(key=lambda tile: (tile["at"][1], tile["at"][0]))
        return {
            "palace": palace,
            "reserve": [
                {"type": kind, "walls": walls} for kind, _, walls in (str(item).partition(":") for item in fields.get("reserve") or [])
            ],
            "score_before": number(fields.get("score_before")),
        }

    def settle_document(self, doc: dict, settings: dict, players: list[dict], entries: list[dict]) -> None:
        round_number = settings.get("scoring_round", 1)
        doc["scoring_round"] = round_number
        if len(players) == 2 and settings.get("dirk"):
            doc["dirk"] = {kind: number(count) for kind, count in settings["dirk"].items()}  # unset counts: see unset_settings
        market = settings.get("market") or []
        if round_number == LAST_ROUND and market:
            doc["market"] = [dict(tile) for tile in market]
            for entry, player in zip(entries, players):
                entry["money"] = dict(player["fields"].get("money") or {})

    def scanned_values(self, player_doc: dict) -> dict[str, str]:
        values: dict[str, str] = {}
        for tile in player_doc.get("palace") or []:
            key = pair_key(tile.get("at")) if isinstance(tile, dict) else None
            if key is not None:
                values[key] = _tile_text(tile)
        return values

    def scan_cell_key(self, cell: Any) -> str | None:
        return pair_key(cell)

    def scan_cell_value(self, value: Any) -> str:
        return _tile_text(value)

    def finish_readings(self, readings: list[dict]) -> list[dict]:
        for reading in readings:
            if reading["value"] in (".", "empty", "none"):
                reading["value"] = ""
        return readings

    def evidence(self, player: PlayerScore) -> dict:
        if not player.wall:
            return {}
        return {"wall": [{"cell": cell_text(cell), "side": side} for cell, side in player.wall]}


FORM = AlhambraForm()
