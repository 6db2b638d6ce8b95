"""Splendor on the review screen (scoring only): card counts per ``"colour:points"`` cell."""

from __future__ import annotations

from typing import Any

from scoring.errors import StateError
from scoring.splendor import COLORS, MAX_CARD_POINTS, MAX_RESERVED, NOBLES, SplendorReport
from tablescan.review.forms import ReviewForm, copy_json, int_in, number

CARD_POINTS = tuple(range(MAX_CARD_POINTS + 1))
MAX_CARDS_PER_CELL = 40
MAX_NOBLE_ENTRY = 10


def noble_label(noble_id: str) -> str:
    """Return what a noble asks for, e.g. ``"4 white 4 blue"``.

    >>> noble_label("N1")
    '4 white 4 blue'
    """
    return " ".join(f"{count} {colour}" for colour, count in NOBLES[noble_id].requirement.items())


class SplendorForm(ReviewForm):
    """No settings; fields: nobles (a count or which ones) and reserved cards."""

    cell_names = "colour:points"
    score_key = "prestige"
    shortcuts = (
        ("+ −", "one card more / fewer"),
        ("0–9", "set the count"),
        ("arrows", "move"),
        ("Esc", "close the picker"),
    )

    def constants(self) -> dict[str, Any]:
        return {"max_nobles": MAX_NOBLE_ENTRY, "max_reserved": MAX_RESERVED}

    def options(self) -> dict[str, Any]:
        return {
            "splendor_colors": list(COLORS),
            "nobles": [{"id": noble_id, "label": noble_label(noble_id)} for noble_id in NOBLES],
            "splendor_points": list(CARD_POINTS),
        }

    def default_fields(self, position: int) -> dict[str, Any]:
        return {"nobles": None, "reserved": 0}  # nobles score: "not set" until entered; reserved cards never score

    def unset(self, player: dict, player_count: int, settings: dict | None = None) -> list[str]:
        return ["nobles are not set"] if player["fields"].get("nobles") in (None, "") else []

    def board_entered(self, cells: dict[str, str]) -> bool:
        return any(value not in ("", "0") for value in cells.values())

    def labels(self) -> dict[str, str]:
        return {"cards": "Development cards", "nobles": "Nobles", "prestige": "Prestige"}

    def normalize_cell(self, cell: str, text: str, value: Any) -> tuple[str, str]:
        colour, _, points = cell.partition(":")
        if colour not in COLORS or not points.isdigit() or int(points) not in CARD_POINTS:
            raise StateError(f"cell {cell!r}: expected 'colour:points' with a colour of {', '.join(COLORS)} and points 0-{MAX_CARD_POINTS}")
        if not text.isdigit() or int(text) > MAX_CARDS_PER_CELL:
            raise StateError(f"cells[{cell!r}]: expected a card count 0-{MAX_CARDS_PER_CELL}, got {value!r}")
        return cell, str(int(text))

    def clean_fields(self, fields: dict, change: dict) -> dict:
        fields = copy_json(fields)
        if "reserved" in change:
            fields["reserved"] = int_in(change["reserved"], "fields.reserved", 0, MAX_RESERVED)
        if "nobles" in change:
            nobles = change["nobles"]
            if isinstance(nobles, list):  # which nobles: the core checks the bonuses can meet each one
                if len(set(nobles)) != len(nobles) or any(noble not in NOBLES for noble in nobles):
                    raise StateError(f"fields.nobles: expected distinct noble ids of {', '.join(sorted(NOBLES))}")
                fields["nobles"] = list(nobles)
            elif nobles is None or (isinstance(nobles, str) and not nobles.strip()):
                fields["nobles"] = None  # not set (again)
            else:
                fields["nobles"] = int_in(nobles, "fields.nobles", 0, MAX_NOBLE_ENTRY)
        return fields

    def player_document(self, player: dict, cells: dict[str, str], player_count: int) -> dict:
        fields = player["fields"]
        cards: list[dict[str, Any]] = []
        for colour in COLORS:
            for points in CARD_POINTS:
                count = int(cells.get(f"{colour}:{points}", "0") or 0)
                cards.extend({"bonus": colour, "points": points} for _ in range(count))
        return {"cards": cards, "nobles": number(fields.get("nobles")), "reserved": number(fields.get("reserved"))}

    def scanned_values(self, player_doc: dict) -> dict[str, str]:
        counts: dict[str, int] = {}
        for card in player_doc.get("cards") or []:
            if isinstance(card, dict) and card.get("bonus") in COLORS:
                key = f"{card['bonus']}:{int(card.get('points', 0))}"
                counts[key] = counts.get(key, 0) + 1
        return {key: str(count) for key, count in counts.items()}

    def tie_note(self, report: SplendorReport, ahead: str, behind: str) -> tuple[str, bool]:
        cards = {player.name: player.cards for player in report.players}
        if cards[ahead] != cards[behind]:
            return f"ahead of {behind}: fewer development cards ({cards[ahead]} vs {cards[behind]})", False
        return f"shares the place with {behind} (same prestige and card count)", True


FORM = SplendorForm()
