"""Boards as the review screen edits them: named cells with text values, turned into FORMATS.md documents.

A cell name is ``"row,col"`` for Sagrada, ``"x,y"`` for Alhambra and ``"colour:points"`` for Splendor.
Values are ``"B4"`` / ``"."`` (Sagrada), ``"fountain"`` / ``"garden:NS"`` / ``""`` (Alhambra) and a card
count (Splendor). This module only reshapes; the scoring cores do all the scoring.
"""

from __future__ import annotations

import re
from typing import Any

from scoring.data import load_data
from scoring.errors import StateError

SAGRADA_ROWS, SAGRADA_COLS = 4, 5
SAGRADA_COLORS = "RYGBP"
COLOR_NAMES = ("red", "yellow", "green", "blue", "purple")
PUBLIC_OBJECTIVES = (
    "row-color-variety",
    "column-color-variety",
    "row-shade-variety",
    "column-shade-variety",
    "light-shades",
    "medium-shades",
    "deep-shades",
    "shade-variety",
    "color-variety",
    "color-diagonals",
)
ALHAMBRA_TYPES = ("pavilion", "seraglio", "arcades", "chambers", "garden", "tower")
CURRENCIES = ("denar", "dirham", "ducat", "florin")
SPLENDOR_COLORS = ("white", "blue", "green", "red", "black")
SPLENDOR_POINTS = (0, 1, 2, 3, 4, 5)

_SAGRADA_CELL = re.compile(r"^([0-3]),([0-4])$")
_ALHAMBRA_CELL = re.compile(r"^(-?\d{1,2}),(-?\d{1,2})$")
_DIE = re.compile(r"^[RYGBP][1-6]$")


def pattern_names() -> list[str]:
    """Return the Sagrada window pattern names, as in the data file."""
    return [pattern["name"] for pattern in load_data("sagrada", "patterns")["patterns"]]


def pattern_grid(name: str | None) -> list[str] | None:
    """Return a pattern's 4 restriction rows, or None for no/unknown pattern."""
    for pattern in load_data("sagrada", "patterns")["patterns"]:
        if pattern["name"] == name:
            return pattern["grid"]
    return None


def options() -> dict:
    """Return the choices the game page offers (objective ids, patterns, colours, tile types)."""
    return {
        "public_objectives": list(PUBLIC_OBJECTIVES),
        "colors": list(COLOR_NAMES),
        "patterns": [{"name": p["name"], "difficulty": p["difficulty"], "grid": p["grid"]} for p in load_data("sagrada", "patterns")["patterns"]],
        "tile_types": list(ALHAMBRA_TYPES),
        "currencies": list(CURRENCIES),
        "splendor_colors": list(SPLENDOR_COLORS),
        "nobles": [
            {"id": n["id"], "label": " ".join(f"{count} {colour}" for colour, count in n["requires"].items() if count)}
            for n in load_data("splendor", "cards")["nobles"]
        ],
        "splendor_points": list(SPLENDOR_POINTS),
    }


def default_settings(game: str, player_count: int) -> dict:
    """Return a new game's settings."""
    if game == "sagrada":
        # the FORMATS.md example's three cards; a solo game reveals two
        chosen = ["row-color-variety", "light-shades", "color-diagonals"]
        settings: dict[str, Any] = {"public_objectives": chosen[:2] if player_count == 1 else chosen}
        if player_count == 1:
            settings["solo"] = {"private_objectives": ["red", "blue"], "round_track_sum": 0}
        return settings
    if game == "alhambra":
        settings = {"scoring_round": 1, "market": []}
        if player_count == 2:
            settings["dirk"] = {kind: 0 for kind in ALHAMBRA_TYPES}
        return settings
    return {}


def default_fields(game: str, position: int) -> dict:
    """Return a new player's fields."""
    if game == "sagrada":
        return {"private_objective": COLOR_NAMES[position % len(COLOR_NAMES)], "favor_tokens": 0, "pattern": None}
    if game == "alhambra":
        return {"score_before": 0, "money": {currency: 0 for currency in CURRENCIES}, "reserve": []}
    return {"nobles": 0, "reserved": 0}


def blank_cells(game: str) -> dict[str, str]:
    """Return a new player's board: an empty window, a lone fountain, no cards."""
    if game == "sagrada":
        return {f"{r},{c}": "." for r in range(SAGRADA_ROWS) for c in range(SAGRADA_COLS)}
    if game == "alhambra":
        return {"0,0": "fountain"}
    return {}


def normalize_cell(game: str, cell: Any, value: Any) -> tuple[str, str]:
    """Check one cell edit and return it in stored form.

    >>> normalize_cell("alhambra", "1,-2", "Garden:sn")
    ('1,-2', 'garden:NS')
    >>> normalize_cell("sagrada", "0,4", "b4")
    ('0,4', 'B4')

    Raises:
        StateError: an unknown cell name or a value the game has no such thing as.
    """
    if not isinstance(cell, str):
        raise StateError(f"cell: expected a cell name text, got {cell!r}")
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise StateError(f"cells[{cell!r}]: expected a text value, got {value!r}")
    text = str(value).strip()
    if game == "sagrada":
        if not _SAGRADA_CELL.match(cell):
            raise StateError(f"cell {cell!r}: expected 'row,col' with row 0-3 and col 0-4")
        text = text.upper()
        if text in ("", "."):
            return cell, "."
        if not _DIE.match(text):
            raise StateError(f"cells[{cell!r}]: expected a die like 'B4' (colour RYGBP, value 1-6) or '.', got {value!r}")
        return cell, text
    if game == "alhambra":
        if not _ALHAMBRA_CELL.match(cell):
            raise StateError(f"cell {cell!r}: expected 'x,y' integer grid coordinates")
        x, y = (int(part) for part in cell.split(","))
        text = text.lower()
        if text in ("", "."):
            return f"{x},{y}", ""
        if text == "fountain":
            return f"{x},{y}", "fountain"
        kind, _, walls = text.partition(":")
        if kind not in ALHAMBRA_TYPES:
            raise StateError(f"cells[{cell!r}]: expected fountain, empty or one of {', '.join(ALHAMBRA_TYPES)}; got {kind!r}")
        walls = walls.upper()
        if any(side not in "NESW" for side in walls) or len(set(walls)) != len(walls):
            raise StateError(f"cells[{cell!r}]: walls must be distinct sides of NESW, got {walls!r}")
        return f"{x},{y}", f"{kind}:{''.join(side for side in 'NESW' if side in walls)}"
    colour, _, points = cell.partition(":")
    if colour not in SPLENDOR_COLORS or not points.isdigit() or int(points) not in SPLENDOR_POINTS:
        raise StateError(f"cell {cell!r}: expected 'colour:points' with a colour of {', '.join(SPLENDOR_COLORS)} and points 0-5")
    if not text.isdigit() or int(text) > 40:
        raise StateError(f"cells[{cell!r}]: expected a card count 0-40, got {value!r}")
    return cell, str(int(text))


def _alhambra_tile(at: list[int], value: str) -> dict | None:
    if value == "fountain":
        return {"at": at, "tile": "fountain"}
    if not value:
        return None
    kind, _, walls = value.partition(":")
    return {"at": at, "type": kind, "walls": walls}


def _number(value: Any, default: int = 0) -> Any:
    return default if value is None or value == "" else value


def player_document(game: str, player: dict, player_count: int) -> dict:
    """Return one player's FORMATS.md entry from stored fields and readings (no scan block)."""
    fields = player["fields"]
    cells = {reading["cell"]: reading["value"] for reading in player["readings"]}
    doc: dict[str, Any] = {"name": player["name"]}
    if game == "sagrada":
        doc["window"] = [
            " ".join(cells.get(f"{r},{c}", ".") for c in range(SAGRADA_COLS)) for r in range(SAGRADA_ROWS)
        ]
        if fields.get("pattern"):
            doc["pattern"] = fields["pattern"]
        if player_count == 1:
            doc["favor_tokens"] = 0
        else:
            doc["private_objective"] = fields.get("private_objective")
            doc["favor_tokens"] = _number(fields.get("favor_tokens"))
    elif game == "alhambra":
        palace = []
        for cell, value in cells.items():
            x, y = (int(part) for part in cell.split(","))
            tile = _alhambra_tile([x, y], value)
            if tile is not None:
                palace.append(tile)
        palace.sort(key=lambda tile: (tile["at"][1], tile["at"][0]))
        doc["palace"] = palace
        doc["reserve"] = [
            {"type": kind, "walls": walls}
            for kind, _, walls in (str(item).partition(":") for item in fields.get("reserve") or [])
        ]
        doc["score_before"] = _number(fields.get("score_before"))
    else:
        cards = []
        for colour in SPLENDOR_COLORS:
            for points in SPLENDOR_POINTS:
                count = int(cells.get(f"{colour}:{points}", "0") or 0)
                cards.extend({"bonus": colour, "points": points} for _ in range(count))
        doc["cards"] = cards
        doc["nobles"] = _number(fields.get("nobles"))
        doc["reserved"] = _number(fields.get("reserved"))
    return doc


def build_document(game: str, settings: dict, players: list[dict]) -> dict:
    """Return the whole game's FORMATS.md document, ready for ``GAMES[game].parse``."""
    doc: dict[str, Any] = {"game": game}
    count = len(players)
    entries = [player_document(game, player, count) for player in players]
    if game == "sagrada":
        doc["public_objectives"] = list(settings.get("public_objectives") or [])
        if count == 1:
            doc["solo"] = dict(settings.get("solo") or {"private_objectives": ["red", "blue"], "round_track_sum": 0})
    elif game == "alhambra":
        round_number = settings.get("scoring_round", 1)
        doc["scoring_round"] = round_number
        if count == 2 and settings.get("dirk"):
            doc["dirk"] = dict(settings["dirk"])
        market = settings.get("market") or []
        if round_number == 3 and market:
            doc["market"] = [dict(tile) for tile in market]
            for entry, player in zip(entries, players):
                entry["money"] = dict(player["fields"].get("money") or {})
    doc["players"] = entries
    return doc


def _cell_key(game: str, cell: Any) -> str | None:
    if game in ("sagrada", "alhambra") and isinstance(cell, (list, tuple)) and len(cell) == 2:
        return f"{int(cell[0])},{int(cell[1])}"
    if isinstance(cell, str):
        return cell
    return None


def _tile_text(tile: Any) -> str:
    if isinstance(tile, str):
        return tile.lower()
    if not isinstance(tile, dict):
        return ""
    if tile.get("tile") == "fountain" or tile.get("type") == "fountain":
        return "fountain"
    if "tile_id" in tile:
        for known in load_data("alhambra", "tiles")["tiles"]:
            if known["id"] == tile["tile_id"]:
                return f"{known['type']}:{known['walls']}"
        return ""
    if tile.get("type") in ALHAMBRA_TYPES:
        return f"{tile['type']}:{tile.get('walls', '')}"
    return ""


def readings_from_scan(game: str, player_doc: dict) -> list[dict]:
    """Turn a scanned player entry (with its ``scan`` block) into readings: cell, value, confidence, polygon."""
    values: dict[str, str] = {}
    if game == "sagrada":
        for r, row in enumerate(player_doc.get("window") or []):
            for c, die in enumerate(str(row).split()):
                values[f"{r},{c}"] = die
    elif game == "alhambra":
        for tile in player_doc.get("palace") or []:
            key = _cell_key(game, tile.get("at")) if isinstance(tile, dict) else None
            if key is not None:
                values[key] = _tile_text(tile)
    else:
        counts: dict[str, int] = {}
        for card in player_doc.get("cards") or []:
            if isinstance(card, dict) and card.get("bonus") in SPLENDOR_COLORS:
                key = f"{card['bonus']}:{int(card.get('points', 0))}"
                counts[key] = counts.get(key, 0) + 1
        values = {key: str(count) for key, count in counts.items()}
    readings: dict[str, dict] = {key: {"cell": key, "value": value} for key, value in values.items()}
    for cell in (player_doc.get("scan") or {}).get("cells") or []:
        key = _cell_key(game, cell.get("cell"))
        if key is None:
            continue
        reading = readings.setdefault(key, {"cell": key, "value": _tile_text(cell.get("value")) if game == "alhambra" else str(cell.get("value") or ".")})
        reading["confidence"] = cell.get("confidence")
        reading["polygon"] = cell.get("polygon")
    if game == "alhambra":
        for reading in readings.values():
            if reading["value"] in (".", "empty", "none"):
                reading["value"] = ""
    return list(readings.values())
