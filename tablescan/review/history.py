"""The review store's undo history: each change to a game as the difference it made, undone and redone.

A change is captured as two snapshots of what it may touch (the game's name and settings, players'
names, fields and presence, cells, recorded rounds), kept as their difference: for every value that
changed, ``[old, new]``, where a value is ``[x]`` or ``[]`` for "not there" (a key not set, a cell or
round not stored). Undo writes the old
values back, redo the new ones; values the change did not touch are left alone, so a later scan's
pattern or another phone's edit of another field stays. Cell values written back are logged as
corrections like any other, so the correction log stays the history of each cell.
All functions work inside the caller's transaction.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

Scope = dict[str, Any]  # {"game": bool, "players": [ids], "cells": {player id: [cells]}, "rounds": [numbers]}
GAME_COLUMNS = ("name", "settings")


def _present(value: Any) -> list:
    return [] if value is None else [value]


def capture(conn: sqlite3.Connection, game_id: int, scope: Scope) -> dict:
    """Return the current values of what ``scope`` names, as plain JSON data."""
    snapshot: dict[str, Any] = {}
    if scope.get("game"):
        row = conn.execute("SELECT name, settings FROM games WHERE id = ?", (game_id,)).fetchone()
        snapshot["game"] = {"name": row["name"], "settings": json.loads(row["settings"] or "{}")}
    players = {}
    for player_id in scope.get("players") or []:
        row = conn.execute("SELECT name, fields, removed_at FROM players WHERE id = ?", (player_id,)).fetchone()
        if row is not None:
            players[str(player_id)] = {"name": row["name"], "fields": json.loads(row["fields"] or "{}"), "removed_at": row["removed_at"]}
    snapshot["players"] = players
    cells: dict[str, dict] = {}
    for player_id, names in (scope.get("cells") or {}).items():
        held = cells.setdefault(str(player_id), {})
        for cell in names:
            row = conn.execute("SELECT value, source FROM readings WHERE player_id = ? AND cell = ?", (player_id, cell)).fetchone()
            held[cell] = None if row is None else {"value": row["value"], "source": row["source"]}
    snapshot["cells"] = cells
    rounds = {}
    for number in scope.get("rounds") or []:
        row = conn.execute("SELECT report, created_at FROM rounds WHERE game_id = ? AND round = ?", (game_id, number)).fetchone()
        rounds[str(number)] = None if row is None else {"report": row["report"], "created_at": row["created_at"]}
    snapshot["rounds"] = rounds
    return snapshot


def _pairs(before: dict, after: dict) -> dict:
    """``{key: [[old] or [], [new] or []]}`` for each key whose value differs."""
    keys = list(dict.fromkeys([*before, *after]))
    return {
        key: [[before[key]] if key in before else [], [after[key]] if key in after else []]
        for key in keys
        if before.get(key) != after.get(key) or (key in before) != (key in after)
    }


def difference(before: dict, after: dict) -> dict:
    """Return what changed between two snapshots of one scope (empty when nothing did).

    >>> difference({"game": {"name": "A", "settings": {"x": 1}}}, {"game": {"name": "B", "settings": {"x": 1}}})
    {'game': {'name': [['A'], ['B']]}}
    """
    diff: dict[str, Any] = {}
    if "game" in before:
        game: dict[str, Any] = {}
        if before["game"]["name"] != after["game"]["name"]:
            game["name"] = [[before["game"]["name"]], [after["game"]["name"]]]
        settings = _pairs(before["game"]["settings"], after["game"]["settings"])
        if settings:
            game["settings"] = settings
        if game:
            diff["game"] = game
    players = {}
    for player_id, old in (before.get("players") or {}).items():
        new = after["players"].get(player_id)
        if new is None:
            continue
        change: dict[str, Any] = {}
        for key in ("name", "removed_at"):
            if old[key] != new[key]:
                change[key] = [[old[key]], [new[key]]]
        fields = _pairs(old["fields"], new["fields"])
        if fields:
            change["fields"] = fields
        if change:
            players[player_id] = change
    if players:
        diff["players"] = players
    cells = {}
    for player_id, old_cells in (before.get("cells") or {}).items():
        changed = {
            cell: [_present(value), _present(after["cells"][player_id][cell])]
            for cell, value in old_cells.items()
            if value != after["cells"][player_id][cell]
        }
        if changed:
            cells[player_id] = changed
    if cells:
        diff["cells"] = cells
    rounds = {number: [_present(old), _present(after["rounds"][number])] for number, old in (before.get("rounds") or {}).items()}
    rounds = {number: pair for number, pair in rounds.items() if pair[0] != pair[1]}
    if rounds:
        diff["rounds"] = rounds
    return diff


def _merged(current: dict, pairs: dict, side: int) -> dict:
    merged = dict(current)
    for key, pair in pairs.items():
        if pair[side]:
            merged[key] = pair[side][0]
        else:
            merged.pop(key, None)
    return merged


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def apply(conn: sqlite3.Connection, game_id: int, diff: dict, side: int, stamp: str) -> None:
    """Write one side of a difference back: ``side`` 0 restores the old values (undo), 1 the new (redo)."""
    game = diff.get("game") or {}
    if "name" in game:
        conn.execute("UPDATE games SET name = ? WHERE id = ?", (game["name"][side][0], game_id))
    if "settings" in game:
        row = conn.execute("SELECT settings FROM games WHERE id = ?", (game_id,)).fetchone()
        settings = _merged(json.loads(row["settings"] or "{}"), game["settings"], side)
        conn.execute("UPDATE games SET settings = ? WHERE id = ?", (_dumps(settings), game_id))
    for player_id, change in (diff.get("players") or {}).items():
        if "name" in change:
            conn.execute("UPDATE players SET name = ? WHERE id = ?", (change["name"][side][0], int(player_id)))
        if "removed_at" in change:
            value = change["removed_at"][side]
            conn.execute("UPDATE players SET removed_at = ? WHERE id = ?", (value[0] if value else None, int(player_id)))
        if "fields" in change:
            row = conn.execute("SELECT fields FROM players WHERE id = ?", (int(player_id),)).fetchone()
            fields = _merged(json.loads(row["fields"] or "{}"), change["fields"], side)
            conn.execute("UPDATE players SET fields = ? WHERE id = ?", (_dumps(fields), int(player_id)))
    for player_id, changed in (diff.get("cells") or {}).items():
        for cell, pair in changed.items():
            _write_cell(conn, int(player_id), cell, pair[side][0] if pair[side] else None, stamp)
    for number, pair in (diff.get("rounds") or {}).items():
        if pair[side]:
            kept = pair[side][0]
            conn.execute(
                "INSERT OR REPLACE INTO rounds (game_id, round, report, created_at) VALUES (?, ?, ?, ?)",
                (game_id, int(number), kept["report"], kept["created_at"]),
            )
        else:
            conn.execute("DELETE FROM rounds WHERE game_id = ? AND round = ?", (game_id, int(number)))


def _write_cell(conn: sqlite3.Connection, player_id: int, cell: str, target: dict | None, stamp: str) -> None:
    """Set one cell back to ``target`` (value and source; None: no reading), logging the change as a correction."""
    row = conn.execute("SELECT * FROM readings WHERE player_id = ? AND cell = ?", (player_id, cell)).fetchone()
    old = None if row is None else row["value"]
    new = None if target is None else target["value"]
    if old != new and new is not None:
        player = conn.execute("SELECT photo_id, model FROM players WHERE id = ?", (player_id,)).fetchone()
        conn.execute(
            "INSERT INTO corrections (player_id, cell, old_value, new_value, model, photo_id, polygon, confidence, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                player_id,
                cell,
                old,
                new,
                player["model"],
                player["photo_id"],
                None if row is None else row["polygon"],
                None if row is None else row["confidence"],
                stamp,
            ),
        )
    if target is None:
        conn.execute("DELETE FROM readings WHERE player_id = ? AND cell = ?", (player_id, cell))
    elif row is None:
        conn.execute(
            "INSERT INTO readings (player_id, cell, value, source, updated_at) VALUES (?, ?, ?, ?, ?)",
            (player_id, cell, target["value"], target["source"], stamp),
        )
    else:
        conn.execute(
            "UPDATE readings SET value = ?, source = ?, updated_at = ? WHERE player_id = ? AND cell = ?",
            (target["value"], target["source"], stamp, player_id, cell),
        )


def record(conn: sqlite3.Connection, game_id: int, label: str, before: dict, after: dict, stamp: str, player_id: int | None = None) -> bool:
    """Keep a change (unless it changed nothing) as the newest to undo; what was undone before it can no longer be redone.

    ``player_id`` names the board whose cells it changed (a new scan of that board makes it stale).
    Returns whether anything was kept.
    """
    diff = difference(before, after)
    if not diff:
        return False
    conn.execute("UPDATE changes SET state = 'dropped' WHERE game_id = ? AND state = 'undone'", (game_id,))
    conn.execute(
        "INSERT INTO changes (game_id, player_id, label, diff, state, created_at) VALUES (?, ?, ?, ?, 'done', ?)",
        (game_id, player_id, label, _dumps(diff), stamp),
    )
    return True


def next_undo(conn: sqlite3.Connection, game_id: int) -> sqlite3.Row | None:
    """The newest change still in effect."""
    return conn.execute("SELECT * FROM changes WHERE game_id = ? AND state = 'done' ORDER BY id DESC LIMIT 1", (game_id,)).fetchone()


def next_redo(conn: sqlite3.Connection, game_id: int) -> sqlite3.Row | None:
    """The change undone last."""
    return conn.execute(
        "SELECT * FROM changes WHERE game_id = ? AND state = 'undone' ORDER BY undone_at DESC, id ASC LIMIT 1", (game_id,)
    ).fetchone()


def stale_cells(conn: sqlite3.Connection, player_id: int) -> None:
    """A new reading of the player's board replaced its cells: earlier cell changes no longer undo or redo."""
    conn.execute("UPDATE changes SET state = 'stale' WHERE player_id = ? AND state IN ('done', 'undone')", (player_id,))
