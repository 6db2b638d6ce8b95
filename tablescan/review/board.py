"""Boards as the review screen edits them: named cells with text values, turned into FORMATS.md documents.

How a game names its cells and values is its review form's business (``tablescan/review/forms/``):
``"row,col"`` / ``"B4"`` for Sagrada, ``"x,y"`` / ``"garden:NS"`` for Alhambra, ``"colour:points"`` /
a card count for Splendor. This module only reshapes; the scoring cores do all the scoring.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scoring.errors import StateError
from tablescan.games import game_entry

ALTERNATIVES = 2  # the second and third readings of a cell


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
    return game_entry(game).form.normalize_cell(cell, str(value).strip(), value)


def player_document(game: str, player: dict, player_count: int) -> dict:
    """Return one player's FORMATS.md entry from stored fields and readings (no scan block)."""
    cells = {reading["cell"]: reading["value"] for reading in player["readings"]}
    return {"name": player["name"], **game_entry(game).form.player_document(player, cells, player_count)}


def build_document(game: str, settings: dict, players: list[dict]) -> dict:
    """Return the whole game's FORMATS.md document, ready for ``GAMES[game].rules.parse``."""
    doc: dict[str, Any] = {"game": game}
    entries = [player_document(game, player, len(players)) for player in players]
    game_entry(game).form.settle_document(doc, settings, players, entries)
    doc["players"] = entries
    return doc


def readings_from_scan(game: str, player_doc: dict, cells: Sequence[Any] = ()) -> list[dict]:
    """Turn a scanned player entry (with its ``scan`` block) into readings: cell, value, confidence, polygon.

    ``cells`` are the scan's ``scanner.reading.CellReading``s: a reading whose cell lists ``alternatives``
    takes the next ``ALTERNATIVES`` of them (stored values, most likely first) for the picker to offer first.
    """
    form = game_entry(game).form
    readings: dict[str, dict] = {key: {"cell": key, "value": value} for key, value in form.scanned_values(player_doc).items()}
    for cell in (player_doc.get("scan") or {}).get("cells") or []:
        key = form.scan_cell_key(cell.get("cell"))
        if key is None:
            continue
        reading = readings.setdefault(key, {"cell": key, "value": form.scan_cell_value(cell.get("value"))})
        reading["confidence"] = cell.get("confidence")
        reading["polygon"] = cell.get("polygon")
    for read in cells:
        key = form.scan_cell_key(list(read.cell))
        if key in readings and read.alternatives:
            shown = form.finish_readings([{"cell": key, "value": form.scan_cell_value(value)} for value, _ in read.alternatives])
            offered = [r["value"] for r in shown if r["value"] != readings[key]["value"]]
            readings[key]["alternatives"] = list(dict.fromkeys(offered))[:ALTERNATIVES]
    return form.finish_readings(list(readings.values()))
