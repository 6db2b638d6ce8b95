"""Review forms: what the review screen needs of one game, one module per game.

A form turns the screen's named cells and text values into the game's FORMATS.md document and back,
offers the settings and player fields with their defaults, checks each edit, and reads the
scoring core's typed report for the evidence and tie-break notes the page shows. The forms are
joined to their rules and readers by ``tablescan.games.GAMES``; nothing else in ``tablescan/``
knows a game by name.
"""

from __future__ import annotations

import json
from typing import Any

from scoring.errors import StateError


class ReviewForm:
    """The review screen's view of one game; each game's module subclasses it.

    ``cell_names`` documents how a cell is named (``"row,col"``, ``"x,y"``, ``"colour:points"``),
    ``score_key`` names the score in the report's player entries, ``several_scorings`` whether the
    game is scored in rounds the screen records one by one (up to ``last_round``).
    """

    cell_names: str = ""
    score_key: str = "total"  # the report's per-player score field
    several_scorings: bool = False
    last_round: int = 1  # with several scorings: the final one
    shortcuts: tuple[tuple[str, str], ...] = ()  # the board picker's keys and what each does
    scan_flags: tuple[str, ...] = ()  # the settings flags of ``tablescan scan`` this game takes

    def screen(self) -> dict[str, Any]:
        """Return what the page's script needs to know of the form (the view's ``form`` block)."""
        return {
            "cell_names": self.cell_names,
            "score_key": self.score_key,
            "several_scorings": self.several_scorings,
            "last_round": self.last_round,
            "shortcuts": [list(pair) for pair in self.shortcuts],
            "constants": self.constants(),
            "labels": self.labels(),
        }

    def constants(self) -> dict[str, Any]:
        """Return the game's names and limits its page script draws the board, picker and inputs with."""
        return {}

    def check_player_count(self, count: int) -> None:
        """Refuse a player count the game cannot be played with (the screen's own 1-6 cap is checked first).

        Raises:
            StateError: too few players for this game.
        """

    def flag_value(self, flag: str, text: str) -> Any:
        """Return one comma-separated value of a scan settings flag as the game document stores it.

        Raises:
            StateError: a value the game has no such thing as (worded without a path: the shell names the flag).
        """
        return text

    def options(self) -> dict[str, Any]:
        """Return the choices the game page offers for this game (keys are the page's option lists)."""
        return {}

    def default_settings(self, player_count: int) -> dict[str, Any]:
        """Return a new game's settings."""
        return {}

    def image_marks(self) -> list[tuple[str, tuple[int, int, int], tuple[int, int, int]]]:
        """Return how the results image marks tokens of the boards' text: (regex, fill, ink) each (none: plain text)."""
        return []

    def settings_for_count(self, settings: dict, player_count: int) -> dict[str, Any]:
        """Return a game's settings once a player joined or left: what is set stays, what the count needs is added."""
        return {**self.default_settings(player_count), **settings}

    def default_fields(self, position: int) -> dict[str, Any]:
        """Return a new player's fields."""
        return {}

    def blank_cells(self) -> dict[str, str]:
        """Return a new player's board."""
        return {}

    def normalize_cell(self, cell: str, text: str, value: Any) -> tuple[str, str]:
        """Check one cell edit (``text`` is the stripped value, ``value`` as sent) and return it stored.

        Raises:
            StateError: an unknown cell name or a value the game has no such thing as.
        """
        raise NotImplementedError

    def clean_settings(self, settings: dict, change: dict, player_count: int) -> dict:
        """Apply a settings change to a copy of the settings, checking each value.

        Raises:
            StateError: a value out of range or unknown.
        """
        return settings

    def clean_fields(self, fields: dict, change: dict) -> dict:
        """Apply a player-fields change to a copy of the fields, checking each value.

        Raises:
            StateError: a value out of range or unknown.
        """
        return fields

    def player_document(self, player: dict, cells: dict[str, str], player_count: int) -> dict:
        """Return one player's FORMATS.md entry, without its name, from stored fields and cells."""
        return {}

    def unset(self, player: dict, player_count: int, settings: dict | None = None) -> list[str]:
        """Return what decides the player's score and nobody has entered yet, each as "<what> is not set".

        ``settings`` are the game's (None: a new game's defaults).
        """
        return []

    def unset_settings(self, settings: dict, player_count: int) -> list[str]:
        """Return the game-wide settings that decide scores and nobody has entered yet ("the ... are not set")."""
        return []

    def board_entered(self, cells: dict[str, str]) -> bool:
        """Whether a board holds anything beyond a new player's blank board (photo aside)."""
        blank = self.blank_cells()
        return any(value != blank.get(cell, "") for cell, value in cells.items())

    def labels(self) -> dict[str, str]:
        """Return the report's keys in words (``"favor_tokens"`` -> ``"Favor tokens"``) for the breakdown's columns."""
        return {}

    def settle_document(self, doc: dict, settings: dict, players: list[dict], entries: list[dict]) -> None:
        """Add the game-wide settings to a document whose player ``entries`` are built."""

    def scanned_values(self, player_doc: dict) -> dict[str, str]:
        """Return the board a scanned player entry shows, as cell name -> stored value."""
        return {}

    def scanned_fields(self, player_doc: dict) -> dict[str, Any]:
        """Return the player fields a scanned player entry shows (set on the player; they may change them)."""
        return {}

    def scan_cell_key(self, cell: Any) -> str | None:
        """Return the cell name of a scan block's ``cell``, or None when it names none."""
        return cell if isinstance(cell, str) else None

    def scan_cell_value(self, value: Any) -> str:
        """Return the stored value of a scan block's cell value."""
        return str(value or ".")

    def finish_readings(self, readings: list[dict]) -> list[dict]:
        """Return scanned readings in stored form."""
        return readings

    def pattern_grid(self, fields: dict) -> list[str] | None:
        """Return the restriction rows printed under a player's board, or None."""
        return None

    def evidence(self, player: Any) -> dict:
        """Return what earned a player's points, read from the report's typed player score."""
        return {}

    def tie_breaks(self, report: Any) -> list[str]:
        """Return the report's own tie-break lines (none for a game whose report words none)."""
        return []

    def tie_note(self, report: Any, ahead: str, behind: str) -> tuple[str, bool]:
        """Explain why ``ahead`` ranks over ``behind`` on an equal score; return (note, place shared)."""
        return f"tied with {behind} on points", True


def copy_json(value: dict) -> dict:
    """Return a deep copy of a JSON-like dict."""
    return json.loads(json.dumps(value))


def int_in(value: Any, path: str, low: int, high: int) -> int:
    """Return ``value`` as an integer ``low``-``high`` (digits in text accepted).

    >>> int_in("3", "fields.favor_tokens", 0, 12)
    3

    Raises:
        StateError: not a whole number in range, naming ``path``.
    """
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise StateError(f"{path}: expected an integer {low}-{high}, got {value!r}")
    return value


def number(value: Any, default: int = 0) -> Any:
    """Return a stored number field, ``default`` when left blank."""
    return default if value is None or value == "" else value


def cell_text(cell: Any) -> str:
    """Return a cell as the page names it: ``[1, 2]`` -> ``"1,2"``, a name as it is."""
    return ",".join(str(int(part)) for part in cell) if isinstance(cell, (list, tuple)) else str(cell)


def pair_key(cell: Any) -> str | None:
    """Return ``"a,b"`` for a two-number cell (a scan block's list), a name as it is, else None."""
    if isinstance(cell, (list, tuple)) and len(cell) == 2:
        return f"{int(cell[0])},{int(cell[1])}"
    if isinstance(cell, str):
        return cell
    return None
