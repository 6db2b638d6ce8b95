"""One game as the review page shows it: stored board, FORMATS.md document, the core's report, standings."""

from __future__ import annotations

import logging
from typing import Any

from scoring.errors import TableError
from scoring.registry import GAMES
from tablescan.review.board import build_document, options, pattern_grid
from tablescan.review.db import Store
from tablescan.review.scanning import scanner_games

log = logging.getLogger("tablescan.review")


def _cell_key(cell: Any) -> str:
    return ",".join(str(int(part)) for part in cell) if isinstance(cell, (list, tuple)) else str(cell)


def _issues(issues: list, player_count: int) -> list[list[dict]]:
    per_player: list[list[dict]] = [[] for _ in range(player_count)]
    for issue in issues:
        entry = {
            "rule": issue.rule,
            "detail": issue.detail,
            "cells": [_cell_key(cell) for cell in issue.cells],
            "explained_by": list(issue.explained_by),
        }
        targets = range(player_count) if issue.player is None else [issue.player]
        for index in targets:
            if 0 <= index < player_count:
                per_player[index].append(entry)
    return per_player


def _evidence(scored: Any) -> dict[str, dict]:
    """Return, per player name, what earned the points: objective units (Sagrada), the longest wall (Alhambra).

    Read from the core's report object where it offers it; anything missing is simply left out.
    """
    evidence: dict[str, dict] = {}
    for player in getattr(scored, "players", ()) or ():
        entry: dict = {}
        public = getattr(player, "public", None)
        if public:
            entry["objectives"] = [
                {
                    "id": getattr(objective, "id", ""),
                    "points": getattr(objective, "points", 0),
                    "note": getattr(objective, "note", ""),
                    "units": [
                        {"label": getattr(unit, "label", ""), "cells": [_cell_key(cell) for cell in getattr(unit, "cells", ())]}
                        for unit in getattr(objective, "units", ())
                    ],
                }
                for objective in public
            ]
            private = getattr(player, "private", None)
            if private is not None:
                entry["objectives"].append(
                    {
                        "id": f"private ({getattr(player, 'private_color', '')})",
                        "points": getattr(private, "points", 0),
                        "note": getattr(private, "note", ""),
                        "units": [
                            {"label": getattr(u, "label", ""), "cells": [_cell_key(c) for c in getattr(u, "cells", ())]}
                            for u in getattr(private, "units", ())
                        ],
                    }
                )
        wall = getattr(player, "wall", None)
        if wall:
            entry["wall"] = [{"cell": _cell_key(cell), "side": side} for cell, side in wall]
        evidence[getattr(player, "name", "")] = entry
    return evidence


def _score(entry: dict) -> Any:
    return entry.get("total", entry.get("prestige"))


def _count(value: Any) -> Any:
    return len(value) if isinstance(value, list) else value


def _tie_note(game: str, ahead: dict, behind: dict, later_listed: bool) -> tuple[str, bool]:
    """Explain why ``ahead`` ranks over ``behind`` on equal score; return (note, shared)."""
    if game == "sagrada":
        a, b = ahead.get("breakdown") or {}, behind.get("breakdown") or {}
        if a.get("private") != b.get("private"):
            return f"ahead of {behind['name']} on private objective points ({a.get('private')} vs {b.get('private')})", False
        if a.get("favor_tokens") != b.get("favor_tokens"):
            return f"ahead of {behind['name']} on unused favor tokens ({a.get('favor_tokens')} vs {b.get('favor_tokens')})", False
        if later_listed:
            return f"tied with {behind['name']}", True
        return f"ahead of {behind['name']}: took the final round's last turn later", False
    if game == "splendor":
        a, b = _count(ahead.get("cards")), _count(behind.get("cards"))
        if a != b:
            return f"ahead of {behind['name']}: fewer development cards ({a} vs {b})", False
        return f"shares the place with {behind['name']} (same prestige and card count)", True
    return f"tied with {behind['name']} on points", True


def standings(game: str, report: dict) -> list[dict]:
    """Return the ranking as rows of place, name, score and a note explaining any tie-break."""
    by_name = {entry.get("name"): entry for entry in report.get("players") or []}
    order = [by_name[name] for name in report.get("ranking") or [] if name in by_name]
    names = [entry.get("name") for entry in report.get("players") or []]
    rows: list[dict] = []
    for index, entry in enumerate(order):
        place, note = index + 1, ""
        if index > 0 and _score(order[index - 1]) == _score(entry):
            ahead = order[index - 1]
            later = names.index(ahead["name"]) > names.index(entry["name"]) if entry["name"] in names else False
            text, shared = _tie_note(game, ahead, entry, later)
            rows[-1]["note"] = (rows[-1]["note"] + "; " if rows[-1]["note"] else "") + text
            if shared:
                place = rows[-1]["place"]
        rows.append({"place": place, "name": entry.get("name"), "score": _score(entry), "note": note})
    return rows


def _photo(record: Any) -> dict | None:
    if record is None:
        return None
    return {
        "url": f"/photos/{record.sha256}",
        "sha256": record.sha256,
        "name": record.original_name,
        "width_px": record.width_px,
        "height_px": record.height_px,
    }


def game_view(store: Store, game_id: int) -> dict:
    """Return everything the game page shows, as JSON-ready data (the page's ``.json`` twin).

    Raises:
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    players = store.players(game_id)
    spec = GAMES[game["game"]]
    document = build_document(game["game"], game["settings"], players)
    report = text = error = None
    issues: list = []
    evidence: dict[str, dict] = {}
    tie_breaks: list[str] = []
    try:
        state = spec.parse(document)
        issues = list(spec.validate(state))
        scored = spec.score(state)
        report, text = scored.to_json(), scored.to_text()
        evidence = _evidence(scored)
        tie_breaks = [str(line) for line in getattr(scored, "tie_breaks", ()) or ()]
    except TableError as failure:
        error = str(failure)
    except Exception as failure:  # a core bug must not lock the table out of its game: show it, log it
        log.exception("scoring game %s failed", game_id)
        error = f"the {spec.title} scoring core failed ({failure.__class__.__name__}: {failure}); this is a bug, please report it"
    per_player = _issues(issues, len(players))
    reports = {entry.get("name"): entry for entry in (report or {}).get("players") or []}
    return {
        "id": game["id"],
        "game": game["game"],
        "title": spec.title,
        "name": game["name"],
        "settings": game["settings"],
        "created_at": game["created_at"],
        "updated_at": game["updated_at"],
        "players": [
            {
                "id": player["id"],
                "position": player["position"],
                "name": player["name"],
                "fields": player["fields"],
                "cells": player["readings"],
                "photo": _photo(player["photo"]),
                "corners": player["corners"],
                "model": player["model"],
                "issues": per_player[index],
                "pattern_grid": pattern_grid(player["fields"].get("pattern")) if game["game"] == "sagrada" else None,
                "report": reports.get(player["name"]),
                "evidence": evidence.get(player["name"], {}),
            }
            for index, player in enumerate(players)
        ],
        "document": document,
        "report": report,
        "text": text,
        "error": error,
        "standings": standings(game["game"], report) if report else [],
        "tie_breaks": tie_breaks,
        "rounds": store.rounds(game_id),
        "scanner": game["game"] in scanner_games(),
        "options": options(),
    }
