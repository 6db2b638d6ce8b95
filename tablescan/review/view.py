"""One game as the review page shows it: stored board, FORMATS.md document, the core's report, standings."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from scoring.errors import TableError
from tablescan.games import GAMES, GameEntry, review_options
from tablescan.review import scanning
from tablescan.review.board import build_document
from tablescan.review.db import Store
from tablescan.review.forms import ReviewForm, cell_text

log = logging.getLogger("tablescan.review")


def _issues(issues: list, player_count: int) -> list[list[dict]]:
    per_player: list[list[dict]] = [[] for _ in range(player_count)]
    for issue in issues:
        entry = {
            "rule": issue.rule,
            "detail": issue.detail,
            "cells": [cell_text(cell) for cell in issue.cells],
            "explained_by": list(issue.explained_by),
        }
        targets = range(player_count) if issue.player is None else [issue.player]
        for index in targets:
            if 0 <= index < player_count:
                per_player[index].append(entry)
    return per_player


def standings(form: ReviewForm, scored: Any, report: dict) -> list[dict]:
    """Return the ranking as rows of place, name, score and a note explaining any tie-break.

    ``scored`` is the core's typed report, ``report`` its ``to_json()``; the form words the tie-breaks.
    """
    by_name = {entry.get("name"): entry for entry in report.get("players") or []}
    order = [by_name[name] for name in report.get("ranking") or [] if name in by_name]
    rows: list[dict] = []
    for index, entry in enumerate(order):
        place, score = index + 1, entry.get(form.score_key)
        if index > 0 and rows[-1]["score"] == score:
            text, shared = form.tie_note(scored, order[index - 1]["name"], entry["name"])
            rows[-1]["note"] = (rows[-1]["note"] + "; " if rows[-1]["note"] else "") + text
            if shared:
                place = rows[-1]["place"]
        rows.append({"place": place, "name": entry.get("name"), "score": score, "note": ""})
    return rows


def scan_review(player: dict) -> dict | None:
    """Return the scanner's verdict on the player's board photo, with how many cells the players corrected since.

    >>> scan_review({"review": {"needed": True, "reasons": ["cell r1c2 read B4 at 41%"]}, "readings": [{"source": "corrected"}]})
    {'needed': True, 'reasons': ['cell r1c2 read B4 at 41%'], 'corrected': 1}
    """
    review = player.get("review")
    if review is None:
        return None
    corrected = sum(1 for reading in player["readings"] if reading.get("source") == "corrected")
    return {"needed": bool(review.get("needed")), "reasons": list(review.get("reasons") or []), "corrected": corrected}


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


@dataclass(frozen=True)
class ScoredGame:
    """What the scoring core made of a game's document, as the page shows it.

    ``report`` and ``text`` are None when the document does not score; ``error`` then says why.

    Raises:
        ValueError: ``issues`` does not hold one list per player.
    """

    player_count: int
    issues: tuple[list[dict], ...]
    report: dict | None = None
    text: str | None = None
    error: str | None = None
    evidence: dict[str, dict] = field(default_factory=dict)
    standings: list[dict] = field(default_factory=list)
    tie_breaks: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.issues) != self.player_count:
            raise ValueError(f"issues: expected one list per player ({self.player_count}), got {len(self.issues)}")


def score_game(entry: GameEntry, game_id: int, document: dict, player_count: int) -> ScoredGame:
    """Parse, validate and score ``document`` with the game's rules; a failure becomes the page's ``error``."""
    rules, form = entry.rules, entry.form
    issues: list = []
    try:
        state = rules.parse(document)
        issues = list(rules.validate(state))
        scored = rules.score(state)
        report = scored.to_json()
        return ScoredGame(
            player_count,
            tuple(_issues(issues, player_count)),
            report=report,
            text=scored.to_text(),
            evidence={player.name: form.evidence(player) for player in scored.players},
            standings=standings(form, scored, report),
            tie_breaks=form.tie_breaks(scored),
        )
    except TableError as failure:
        error = str(failure)
    except Exception:  # a core bug must not lock the table out of its game: show it, log it
        log.exception("scoring game %s failed", game_id)
        # the players get what happened in words; the exception and its traceback go to the server log
        error = f"the {rules.title} scoring core failed on this game (details are in the server log); this is a bug, please report it"
    return ScoredGame(player_count, tuple(_issues(issues, player_count)), error=error)


def board_entered(form: ReviewForm, player: dict) -> bool:
    """Whether anybody entered the player's board: a photo, or a cell beyond a new player's blank board."""
    return player["photo"] is not None or form.board_entered({r["cell"]: r["value"] for r in player["readings"]})


def unset_values(form: ReviewForm, settings: dict, players: list[dict]) -> list[str]:
    """Return what decides a score and nobody entered, the game's settings first, then player by player:
    ``"the public objectives are not set"``, ``"Bo's board is not entered"``, ``"Bo's private objective is not set"``."""
    missing = list(form.unset_settings(settings, len(players)))
    for player in players:
        if not board_entered(form, player):  # a blank board would score (Sagrada: -20) and rank
            missing.append(f"{player['name']}'s board is not entered")
        missing.extend(f"{player['name']}'s {what}" for what in form.unset(player, len(players), settings))
    return missing


def game_view(store: Store, game_id: int) -> dict:
    """Return everything the game page shows, as JSON-ready data (the page's ``.json`` twin).

    Raises:
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    players = store.players(game_id)
    entry = GAMES[game["game"]]
    document = build_document(game["game"], game["settings"], players)
    scored = score_game(entry, game_id, document, len(players))
    incomplete = unset_values(entry.form, game["settings"], players)
    reports = {item.get("name"): item for item in (scored.report or {}).get("players") or []}
    return {
        "id": game["id"],
        "game": game["game"],
        "title": entry.title,
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
                "review": scan_review(player),
                "entered": board_entered(entry.form, player),
                "issues": scored.issues[index],
                "pattern_grid": entry.form.pattern_grid(player["fields"]),
                "report": reports.get(player["name"]),
                "evidence": scored.evidence.get(player["name"], {}),
            }
            for index, player in enumerate(players)
        ],
        "document": document,
        "report": scored.report,
        "text": scored.text,
        "error": scored.error,
        # a value nobody set would rank the table on a guess: the standings say what is missing instead
        "standings": [] if incomplete else scored.standings,
        "incomplete": incomplete,
        "tie_breaks": [] if incomplete else scored.tie_breaks,
        "rounds": store.rounds(game_id),
        "history": store.undo_state(game_id),
        "removed_players": [{"id": p["id"], "name": p["name"]} for p in store.removed_players(game_id)],
        "scanner": game["game"] in scanning.scanner_games(),
        "form": entry.form.screen(),
        "options": review_options(),
    }


def game_result(store: Store, game_id: int) -> dict:
    """Return how a game stands, for the games list: its winners (or leaders) with their score, or why none
    (``text`` short, ``detail`` what is missing or wrong).

    ``state`` is ``"winner"`` (the game is decided), ``"leading"`` (scored in rounds, not all recorded),
    ``"incomplete"`` (a value that decides the score is not set) or ``"error"`` (the boards do not score).

    Raises:
        NotFoundError: no such game.
    """
    game = store.game(game_id)
    players = store.players(game_id)
    entry = GAMES[game["game"]]
    scored = score_game(entry, game_id, build_document(game["game"], game["settings"], players), len(players))
    incomplete = unset_values(entry.form, game["settings"], players)
    if scored.report is None:
        return {"state": "error", "names": [], "score": None, "text": "cannot score yet", "detail": scored.error or ""}
    if incomplete:
        return {"state": "incomplete", "names": [], "score": None, "text": "incomplete", "detail": "; ".join(incomplete)}
    top = [row for row in scored.standings if row["place"] == 1]
    names = [row["name"] for row in top]
    score = top[0]["score"] if top else None
    decided = not entry.form.several_scorings or any(r["round"] == entry.form.last_round for r in store.rounds(game_id))
    state = "winner" if decided else "leading"
    word = ("Winner" if len(names) == 1 else "Shared win") if decided else "Leading"
    return {"state": state, "names": names, "score": score, "text": f"{word}: {' and '.join(names)} ({score})", "detail": ""}
