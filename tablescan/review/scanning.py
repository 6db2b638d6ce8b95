"""The review screen's one door to the photo scanner: everything scanner-specific passes here."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from calibration import load_profile
from calibration.profile import profile_path
from scanner import Scanner
from scanner.adapt import classifier_manifest, scan_examples
from scanner.errors import Remedy, in_own_words
from tablescan.games import game_entry, readers, scannable_games
from tablescan.review.board import readings_from_scan
from tablescan.review.errors import ScannerUnavailableError

_lock = threading.Lock()
_scanners: dict[tuple, Any] = {}  # (profile name, profile file mtime) -> Scanner: models load once per profile state


@dataclass(frozen=True)
class ScanOutcome:
    """What a scan gives the review screen: corners (TL, TR, BR, BL), model name, readings per cell.

    ``review`` is the scanner's verdict on the board (FORMATS.md ``scan.review``: needed, reasons) or
    None when it gave none; ``fields`` what the photo shows of the player's fields (a pattern card).
    """

    corners: list[list[float]]
    model: str | None
    readings: list[dict]
    examples: list[dict] = field(default_factory=list)  # each cell's crop for `tablescan adapt` (scanner.adapt.scan_examples)
    review: dict | None = None
    fields: dict = field(default_factory=dict)


def in_screen_words(error: Exception) -> str:
    """A scan's error as the screen says it: a scanner error's remedy worded as what to do on this screen."""
    return in_own_words(error, {Remedy.SET_CORNERS: "drag the board's four corners into place on the photo to rescan"})


def scanner_games() -> tuple[str, ...]:
    """Return the games this installation can read from photos (empty without a scanner)."""
    return scannable_games()


def _load_scanner(profile: str | None) -> Any:
    """Return the Scanner for ``profile`` (None: no calibration), rebuilt when the profile file changes."""
    loaded = None
    key: tuple = (None, None)
    if profile:
        path = profile_path(profile)
        key = (profile, path.stat().st_mtime_ns if path.exists() else None)
        loaded = load_profile(profile)  # a missing or corrupt profile is a CalibrationError, said to the user
    with _lock:
        if key not in _scanners:
            _scanners.clear()
            _scanners[key] = Scanner(profile=loaded, readers=readers())
        return _scanners[key]


def scan_photo(
    path: Path,
    game: str,
    corners: list | None = None,
    player_name: str | None = None,
    name: str | None = None,
    profile: str | None = None,
) -> ScanOutcome:
    """Scan a stored photo of one player's board; ``name`` labels messages, ``profile`` names a calibration.

    Models load once per process (and again only when the profile file changes, e.g. after ``tablescan adapt``).

    Raises:
        ScannerUnavailableError: this installation cannot read ``game`` from photos.
        TableError: the scanner's own errors (PhotoError, BoardNotFoundError, ModelError, CalibrationError).
    """
    if game not in scanner_games():
        raise ScannerUnavailableError(f"{game}: no photo scanner for this game yet; enter the board by hand")
    scanner = _load_scanner(profile)
    with _lock:  # one scan at a time: the models are shared and the CPU is small
        result = scanner.scan(path, game, corners=corners, player_name=player_name, name=name or path.name)
    return ScanOutcome(
        corners=[[round(float(x), 1), round(float(y), 1)] for x, y in result.scan.corners],
        model=result.scan.model,
        readings=readings_from_scan(game, result.player, result.cells),
        examples=_examples(scanner, result, game),
        review=None if result.review is None else result.review.to_json(),
        fields=game_entry(game).form.scanned_fields(result.player),
    )


def _examples(scanner: Any, result: Any, game: str) -> list[dict]:
    return scan_examples(result, game, classifier_manifest(scanner, game))
