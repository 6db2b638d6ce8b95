"""Sagrada on the review screen: a 4 x 5 window of dice, cells ``"row,col"``, values ``"B4"`` or ``"."``."""

from __future__ import annotations

import re
from typing import Any

from scoring.errors import StateError
from scoring.sagrada import (
    COLOR_NAMES,
    COLORS,
    COLS,
    OBJECTIVES,
    PATTERNS,
    PUBLIC_COUNT,
    ROWS,
    SOLO_PUBLIC_COUNT,
    Objective,
    PlayerScore,
    SagradaReport,
)
from scoring.sagrada.window import VALUES
from tablescan.review.forms import ReviewForm, cell_text, copy_json, int_in, number, pair_key

COLOR_CHOICES = tuple(COLOR_NAMES.values())
PUBLIC_OBJECTIVES = tuple(OBJECTIVES)
SOLO_PRIVATE_COUNT = 2  # the solo player draws two private objectives
MAX_FAVOR_ENTRY = 12
MAX_ROUND_TRACK_ENTRY = 200

_CELL = re.compile(rf"^([0-{ROWS - 1}]),([0-{COLS - 1}])$")
DIE_IMAGE_COLOURS = {  # fill and ink of each colour's dice in the results image, as on the screen
    "R": ((216, 65, 58), (255, 255, 255)),
    "Y": ((240, 196, 25), (58, 48, 0)),
    "G": ((58, 154, 82), (255, 255, 255)),
    "B": ((53, 117, 196), (255, 255, 255)),
    "P": ((138, 79, 176), (255, 255, 255)),
}
_DIE = re.compile(rf"^[{''.join(COLORS)}][{min(VALUES)}-{max(VALUES)}]$")


def _solo_default() -> dict[str, Any]:
    # nothing drawn yet: both private objectives and the round track's sum are "not set" until entered
    return {"private_objectives": [None] * SOLO_PRIVATE_COUNT, "round_track_sum": None}


def _solo_document(solo: dict) -> dict[str, Any]:
    """The document's solo block; colours not yet drawn stand in as the first unchosen ones (the standings wait)."""
    chosen = [colour for colour in solo.get("private_objectives") or [] if colour][:SOLO_PRIVATE_COUNT]
    spare = [colour for colour in COLOR_CHOICES if colour not in chosen]
    track = solo.get("round_track_sum")
    return {"private_objectives": chosen + spare[: SOLO_PRIVATE_COUNT - len(chosen)], "round_track_sum": number(track)}


def _objective_json(objective: Objective, label: str) -> dict:
    return {
        "id": label,
        "points": objective.points,
        "note": objective.note,
        "units": [{"label": unit.label, "cells": [cell_text(cell) for cell in unit.cells]} for unit in objective.units],
    }


class SagradaForm(ReviewForm):
    """Settings: public objectives (and the solo setup); fields: private colour, favor tokens, pattern."""

    cell_names = "row,col"
    shortcuts = (
        (" ".join(COLORS), "die colour"),
        (f"{min(VALUES)}–{max(VALUES)}", "die value"),
        (". Del ⌫", "empty cell"),
        ("arrows", "move"),
        ("Esc", "close the picker"),
    )
    scan_flags = ("--objectives", "--private", "--favor")

    def flag_value(self, flag: str, text: str) -> Any:
        if flag == "--private":
            name = COLOR_NAMES.get(text.upper(), text.lower())
            if name not in COLOR_CHOICES:
                letters = ", ".join(f"{name} ({letter})" for letter, name in COLOR_NAMES.items())
                raise StateError(f"expected a colour name or letter: {letters}; got {text!r}")
            return name
        if flag == "--objectives":
            if text not in PUBLIC_OBJECTIVES:
                raise StateError(f"no public objective {text!r}; the ids are {', '.join(PUBLIC_OBJECTIVES)}")
            return text
        if flag == "--favor":
            if not (text.isascii() and text.isdigit()) or int(text) > MAX_FAVOR_ENTRY:
                raise StateError(f"expected a whole number 0-{MAX_FAVOR_ENTRY} of unused favor tokens, got {text!r}")
            return int(text)
        return text

    def constants(self) -> dict[str, Any]:
        return {
            "colors": dict(COLOR_NAMES),
            "values": list(VALUES),
            "rows": ROWS,
            "cols": COLS,
            "public_slots": PUBLIC_COUNT,
            "solo_public_slots": SOLO_PUBLIC_COUNT,
            "solo": _solo_default(),
            "max_favor_tokens": MAX_FAVOR_ENTRY,
        }

    def options(self) -> dict[str, Any]:
        return {
            "public_objectives": list(PUBLIC_OBJECTIVES),
            "colors": list(COLOR_CHOICES),
            "patterns": [{"name": p.name, "difficulty": p.difficulty, "grid": list(p.grid)} for p in PATTERNS.values()],
        }

    def default_settings(self, player_count: int) -> dict[str, Any]:
        # no cards the table has not turned up: the objectives start empty and are "not set" until chosen
        settings: dict[str, Any] = {"public_objectives": []}
        if player_count == 1:
            settings["solo"] = _solo_default()
        return settings

    def image_marks(self) -> list[tuple[str, tuple[int, int, int], tuple[int, int, int]]]:
        # each die drawn on its colour (the screen's), its letter and pips still written on it
        return [(rf"^{letter}[{min(VALUES)}-{max(VALUES)}]$", fill, ink) for letter, (fill, ink) in DIE_IMAGE_COLOURS.items()]

    def settings_for_count(self, settings: dict, player_count: int) -> dict[str, Any]:
        adjusted = super().settings_for_count(settings, player_count)
        if player_count == 1:  # the solo game reveals fewer public objectives: keep the first ones
            adjusted["public_objectives"] = list(adjusted.get("public_objectives") or [])[:SOLO_PUBLIC_COUNT]
        return adjusted

    def default_fields(self, position: int) -> dict[str, Any]:
        # nothing the players have not told the screen: an unset value is shown as "not set", never guessed
        return {"private_objective": None, "favor_tokens": None, "pattern": None}

    def blank_cells(self) -> dict[str, str]:
        return {f"{r},{c}": "." for r in range(ROWS) for c in range(COLS)}

    def normalize_cell(self, cell: str, text: str, value: Any) -> tuple[str, str]:
        if not _CELL.match(cell):
            raise StateError(f"cell {cell!r}: expected 'row,col' with row 0-{ROWS - 1} and col 0-{COLS - 1}")
        text = text.upper()
        if text in ("", "."):
            return cell, "."
        if not _DIE.match(text):
            raise StateError(
                f"cells[{cell!r}]: expected a die like 'B4' (colour {''.join(COLORS)}, "
                f"value {min(VALUES)}-{max(VALUES)}) or '.', got {value!r}"
            )
        return cell, text

    def clean_settings(self, settings: dict, change: dict, player_count: int) -> dict:
        settings = copy_json(settings)
        if "public_objectives" in change:
            chosen = change["public_objectives"]
            if not isinstance(chosen, list) or len(chosen) > PUBLIC_COUNT or any(item not in PUBLIC_OBJECTIVES for item in chosen):
                raise StateError(f"settings.public_objectives: expected up to {PUBLIC_COUNT} of {', '.join(PUBLIC_OBJECTIVES)}")
            settings["public_objectives"] = chosen
        if "solo" in change and player_count == 1:
            solo = change["solo"] if isinstance(change["solo"], dict) else {}
            before = settings.get("solo") or _solo_default()
            privates = solo.get("private_objectives", before.get("private_objectives"))
            if not isinstance(privates, list) or len(privates) != SOLO_PRIVATE_COUNT:
                raise StateError("settings.solo.private_objectives: expected two colour names (empty for not set)")
            privates = [colour or None for colour in privates]  # "" or null: not drawn yet
            if any(c is not None and c not in COLOR_CHOICES for c in privates):
                raise StateError(f"settings.solo.private_objectives: expected colours of {', '.join(COLOR_CHOICES)}")
            if privates[0] is not None and privates[0] == privates[1]:
                raise StateError(f"settings.solo.private_objectives: expected two different colours, got {privates[0]} twice")
            track = solo.get("round_track_sum", before.get("round_track_sum"))
            if track is not None and not (isinstance(track, str) and not track.strip()):
                track = int_in(track, "settings.solo.round_track_sum", 0, MAX_ROUND_TRACK_ENTRY)
            else:
                track = None
            settings["solo"] = {"private_objectives": privates, "round_track_sum": track}
        return settings

    def clean_fields(self, fields: dict, change: dict) -> dict:
        fields = copy_json(fields)
        if "private_objective" in change:
            chosen = change["private_objective"] or None  # "" or null: not set (again)
            if chosen is not None and chosen not in COLOR_CHOICES:
                raise StateError(f"fields.private_objective: expected one of {', '.join(COLOR_CHOICES)}, or empty for not set")
            fields["private_objective"] = chosen
        if "favor_tokens" in change:
            tokens = change["favor_tokens"]
            unset = tokens is None or (isinstance(tokens, str) and not tokens.strip())
            fields["favor_tokens"] = None if unset else int_in(tokens, "fields.favor_tokens", 0, MAX_FAVOR_ENTRY)
        if "pattern" in change:
            pattern = change["pattern"] or None
            if pattern is not None and pattern not in PATTERNS:
                raise StateError(f"fields.pattern: no window pattern named {pattern!r}")
            fields["pattern"] = pattern
        return fields

    def player_document(self, player: dict, cells: dict[str, str], player_count: int) -> dict:
        fields = player["fields"]
        doc: dict[str, Any] = {"window": [" ".join(cells.get(f"{r},{c}", ".") for c in range(COLS)) for r in range(ROWS)]}
        if fields.get("pattern"):
            doc["pattern"] = fields["pattern"]
        if player_count == 1:
            doc["favor_tokens"] = 0
        else:
            # a value nobody set stays out of the document (the core then scores it 0 and says so);
            # ``unset`` names it so the standings say the score is incomplete instead of ranking on it
            if fields.get("private_objective"):
                doc["private_objective"] = fields["private_objective"]
            if fields.get("favor_tokens") not in (None, ""):
                doc["favor_tokens"] = number(fields.get("favor_tokens"))
        return doc

    def unset(self, player: dict, player_count: int, settings: dict | None = None) -> list[str]:
        if player_count == 1:  # the solo game takes its objectives from the settings and has no tokens
            return []
        fields = player["fields"]
        missing = []
        if not fields.get("private_objective"):
            missing.append("private objective is not set")
        if fields.get("favor_tokens") in (None, ""):
            missing.append("favor tokens are not set")
        return missing

    def unset_settings(self, settings: dict, player_count: int) -> list[str]:
        wanted = SOLO_PUBLIC_COUNT if player_count == 1 else PUBLIC_COUNT
        missing = wanted - len(settings.get("public_objectives") or [])
        unset = []
        if missing == wanted:
            unset.append("the public objectives are not set")
        elif missing > 0:
            unset.append(f"{missing} of the {wanted} public objectives {'is' if missing == 1 else 'are'} not set")
        if player_count == 1:
            solo = settings.get("solo") or _solo_default()
            drawn = [colour for colour in solo.get("private_objectives") or [] if colour]
            if len(drawn) < SOLO_PRIVATE_COUNT:
                unset.append("the solo private objectives are not set" if not drawn else "the second solo private objective is not set")
            if solo.get("round_track_sum") is None:
                unset.append("the round track's sum is not set")
        return unset

    def board_entered(self, cells: dict[str, str]) -> bool:
        return any(value != "." for value in cells.values())

    def labels(self) -> dict[str, str]:
        return {
            **{objective_id: objective.title for objective_id, objective in OBJECTIVES.items()},
            "public": "Public objectives",
            "private": "Private objective",
            "favor_tokens": "Favor tokens",
            "empty_cells": "Empty cells",
        }

    def settle_document(self, doc: dict, settings: dict, players: list[dict], entries: list[dict]) -> None:
        doc["public_objectives"] = list(settings.get("public_objectives") or [])
        if len(players) == 1:
            doc["solo"] = _solo_document(settings.get("solo") or _solo_default())

    def scanned_values(self, player_doc: dict) -> dict[str, str]:
        values: dict[str, str] = {}
        for r, row in enumerate(player_doc.get("window") or []):
            for c, die in enumerate(str(row).split()):
                values[f"{r},{c}"] = die
        return values

    def scanned_fields(self, player_doc: dict) -> dict[str, Any]:
        # the pattern card the scanner identified (FORMATS.md ``players[].pattern``); none when it knew none
        pattern = player_doc.get("pattern")
        return {"pattern": pattern} if isinstance(pattern, str) and pattern in PATTERNS else {}

    def scan_cell_key(self, cell: Any) -> str | None:
        return pair_key(cell)

    def pattern_grid(self, fields: dict) -> list[str] | None:
        pattern = PATTERNS.get(fields.get("pattern") or "")
        return list(pattern.grid) if pattern is not None else None

    def evidence(self, player: PlayerScore) -> dict:
        if not player.public:
            return {}
        objectives = [_objective_json(objective, objective.id) for objective in player.public]
        objectives.append(_objective_json(player.private, f"private ({player.private_color})"))
        return {"objectives": objectives}

    def tie_breaks(self, report: SagradaReport) -> list[str]:
        return [str(line) for line in report.tie_breaks]

    def tie_note(self, report: SagradaReport, ahead: str, behind: str) -> tuple[str, bool]:
        # the core words each tie-break (private points, favor tokens, turn order), one per tied
        # neighbour pair in the ranking; turn order always separates two players, so no place is shared
        totals = {player.name: player.total for player in report.players}
        tied = [(a, b) for a, b in zip(report.ranking, report.ranking[1:]) if totals[a] == totals[b]]
        notes = dict(zip(tied, report.tie_breaks))
        if (ahead, behind) in notes:
            return notes[(ahead, behind)], False
        return super().tie_note(report, ahead, behind)


FORM = SagradaForm()
