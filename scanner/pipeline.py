"""``Scanner``: photo -> the game's board state and its scan evidence, through one code path that times itself.

Readers hand back the game's own state (``scoring.<game>``); nothing inside the scanner writes or
parses a FORMATS.md document. ``ScanResult.to_json`` is the one place a scan becomes one: the state's
own ``to_json`` (the player keys the photo shows) plus the evidence's ``scan`` block.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from calibration import apply_profile, distort_points, undistort_points
from scanner.adapt import adapt_reader, profile_adaptation
from scanner.errors import BoardNotFoundError, PhotoError, Remedy
from scanner.guides import WrittenWord, covered_by, erase_words, unblend_guide_lines, without_guide_lines, words_about
from scanner.photo import Photo, load_photo
from scanner.readers import READER_MODULES, READERS, ReaderFactory
from scanner.reading import BoardReader, BoardReading, CellReading, Override, ScanEvidence, ScanReview, Timings
from scanner.verdict import judge
from scoring.errors import StateError
from scoring.issue import Issue
from scoring.registry import GAMES

__all__ = ["READERS", "READER_MODULES", "ScanEvidence", "ScanResult", "Scanner", "merge_documents", "scan_evidence"]

WORKING_LONG_SIDE_PX = 1600
# A cell named by a placement rule the board as read breaks (and no tool card explains) reads no surer than
# this: the rules say it cannot be as read, so the reading there, or next to it, is wrong.
RULE_BROKEN_SURE = 0.5


# A word written over the photo (``scanner.guides.find_words``) covering at least WORD_COVERS of a cell's outline hides
# what lies there: a camera app's "ALIGN" over an empty square beside a palace, or over a tower's octagon, read as a
# chambers at 100% (the two misread palaces left unflagged of 800 Alhambra transfer photos under a guide, 2026-12-07).
# Such words are painted out (``scanner.guides.erase_words``) and the board read again (where a game's pieces carry
# no white marks that read as letters, ``Verdict.words_painted_out``); the reading again is taken
# where its cells no word covers read on average no less surely than before, give or take WORDS_OUT_LOSS (a palace
# found a row off after the paint: guides photo 191). Where it is not, each covered cell reads no surer than
# WORD_COVERED_SURE and says why. Read again, the cells under words need no such doubt: on those 800 photos, of the
# 85 squares words cover in the readings kept, 80 read right and the other 5 under 53%; of the 35 empty squares
# read as tiles under a word before, 34 read empty.
WORD_COVERS, WORD_COVERED_SURE, WORDS_OUT_LOSS = 0.05, 0.5, 0.01
WORD_DOUBT = "has a word written over it in the photo"


def read_without_words(
    reader: BoardReader, photo: Photo, reading: BoardReading, corners: np.ndarray | None, timings: Timings
) -> BoardReading:
    """``reading`` of ``photo``, or where words written over the photo cover its cells, the board read again with
    them painted out (where the game's verdict allows it, ``Verdict.words_painted_out``), or ``reading`` with the
    covered cells doubted (``WORD_COVERS`` and after)."""
    with timings.stage("guides"):
        words = words_about(photo.image_rgb, [cell.polygon for cell in reading.cells])
        covered = covered_by(words, [cell.polygon for cell in reading.cells], WORD_COVERS)
    if not any(covered):
        return reading
    again = _read_words_out(reader, photo, words, corners, timings) if reading.verdict.words_painted_out else None
    if again is not None:
        covered_again = covered_by(words, [cell.polygon for cell in again.cells], WORD_COVERS)
        if _mean_confidence(again.cells, covered_again) >= _mean_confidence(reading.cells, covered) - WORDS_OUT_LOSS:
            note = f"{len(words)} word(s) written over the photo painted out and the board read again"
            return replace(again, notes=(*again.notes, note))
    return _no_surer_than(reading, {cell.cell for cell, under in zip(reading.cells, covered) if under}, WORD_COVERED_SURE, WORD_DOUBT)


def _read_words_out(
    reader: BoardReader, photo: Photo, words: list[WrittenWord], corners: np.ndarray | None, timings: Timings
) -> BoardReading | None:
    """The board read in ``photo`` with ``words`` painted out, or None where it is not found there."""
    with timings.stage("guides"):
        fine = None if photo.fine_rgb is None else erase_words(photo.fine_rgb, words)
        cleared = replace(photo, image_rgb=erase_words(photo.image_rgb, words), fine_rgb=fine)
    try:
        return reader.read(cleared, corners=corners, timings=timings)
    except BoardNotFoundError:
        return None


def _mean_confidence(cells: tuple[CellReading, ...], skipped: list[bool]) -> float:
    """The mean confidence of ``cells`` but those ``skipped`` marks (1.0 where none is left)."""
    kept = [cell.confidence for cell, skip in zip(cells, skipped) if not skip]
    return float(np.mean(kept)) if kept else 1.0


def _no_surer_than(reading: BoardReading, named: set[tuple[int, ...]], sure: float, doubt: str = "") -> BoardReading:
    """``reading`` with each cell in ``named`` no surer than ``sure`` and, with ``doubt``, saying why (a reason the
    reader gave stays)."""
    if not named:
        return reading
    cells = tuple(
        replace(cell, confidence=min(cell.confidence, sure), doubt=cell.doubt or doubt) if tuple(cell.cell) in named else cell
        for cell in reading.cells
    )
    return replace(reading, cells=cells)


def doubt_broken_rules(reading: BoardReading, issues: tuple[Issue, ...]) -> BoardReading:
    """``reading`` with each cell a broken placement rule names (``issues`` no tool card explains) no surer than ``RULE_BROKEN_SURE``."""
    named = {tuple(cell) for issue in issues if not issue.explained_by for cell in issue.cells}
    return _no_surer_than(reading, named, RULE_BROKEN_SURE)


@dataclass(frozen=True)
class ScanResult:
    """Everything one scan produced: the game's state, its issues, the scan evidence and timings.

    ``cells`` and ``image_corners`` are in ``photo.image_rgb`` pixels (for overlays and crops);
    ``corners`` and ``scan`` are in pixels of the photo as taken.
    """

    state: Any
    issues: tuple[Issue, ...]
    scan: ScanEvidence
    corners: np.ndarray  # TL, TR, BR, BL in full-photo pixels, as the photo was taken
    cells: tuple[CellReading, ...]  # outlines in ``photo.image_rgb`` pixels
    overrides: tuple[Override, ...]
    photo: Photo = field(repr=False)  # the image as read (reduced, and calibrated when a profile is used)
    image_corners: np.ndarray = field(repr=False)  # corners in ``photo.image_rgb`` pixels
    seconds: dict[str, float] = field(default_factory=dict)
    cell_bar: float = 0.0  # the reader's review bar for a cell (``Thresholds.cell``): one read under it is named for a look

    @property
    def cells_to_check(self) -> int:
        """How many cells were read under the review's bar: the ones players are asked to look at."""
        return sum(1 for cell in self.cells if cell.confidence < self.cell_bar)

    def to_json(self) -> dict[str, Any]:
        """Return the scan's FORMATS.md document: the state's own ``to_json`` and, per player, the ``scan`` block.

        The player keeps its name and the keys the photo shows (``scan.board_keys``), their items
        listed as the evidence says; what a photo cannot see (favor tokens, a reserve) is left out.

        Raises:
            ValueError: the evidence's listing does not order all of a board key's items (a reader bug).
        """
        document = self.state.to_json()
        player = document["players"][0]
        shown: dict[str, Any] = {"name": player["name"]}
        for key in self.scan.board_keys:
            if key in player:
                order = self.scan.listing.get(key)
                if order is not None and len(order) != len(player[key]):
                    raise ValueError(f"listing[{key!r}]: expected an order of all {len(player[key])} items, got {len(order)}")
                shown[key] = player[key] if order is None else [player[key][index] for index in order]
        shown["scan"] = self.scan.to_json()
        document["players"] = [shown]
        return document

    @property
    def document(self) -> dict[str, Any]:
        """The scan's FORMATS.md document (``to_json()``), a new copy on each access."""
        return self.to_json()

    @property
    def review(self) -> ScanReview | None:
        """The scan's verdict on itself (``scan.review``): whether the players should look before taking the score."""
        return self.scan.review

    @property
    def player(self) -> dict[str, Any]:
        """The scanned player's entry of the document."""
        return self.to_json()["players"][0]

    def least_certain(self, count: int = 5) -> list[CellReading]:
        """Return the ``count`` readings with the lowest confidence, least certain first."""
        return sorted(self.cells, key=lambda reading: reading.confidence)[:count]


class Scanner:
    """Reads boards from photos; models load once per ``Scanner`` and are reused across scans.

    ``readers`` maps each game id this scanner reads to a zero-argument factory of its reader
    (default: the shipped ``scanner.readers.READERS``); a reader is made on first use, once.
    """

    def __init__(self, profile: Any | None = None, *, readers: Mapping[str, ReaderFactory] | None = None) -> None:
        self.profile = profile
        self.factories: Mapping[str, Callable[[], BoardReader]] = dict(READERS if readers is None else readers)
        self._readers: dict[str, BoardReader] = {}

    @property
    def games(self) -> tuple[str, ...]:
        """The game ids this scanner can read, sorted."""
        return tuple(sorted(self.factories))

    def reader(self, game: str) -> BoardReader:
        """Return (making once) the reader for ``game``.

        Raises:
            PhotoError: the game has no photo reader.
        """
        self._check_scannable(game)
        if game not in self._readers:
            reader = self.factories[game]()
            if getattr(self.profile, "adaptation", None) is not None:  # the profile selects adapted heads (tablescan adapt)
                reader = adapt_reader(reader, profile_adaptation(self.profile))
            self._readers[game] = reader
        return self._readers[game]

    def _check_scannable(self, game: str) -> None:
        """Raise ``PhotoError`` unless ``game`` has a photo reader (a reader given by hand counts too)."""
        if game not in self.factories and game not in self._readers:
            choices = ", ".join(self.games)
            raise PhotoError(f"game {game!r}: scanning is supported for {choices}", remedy=Remedy.CHOOSE_GAME)

    def scan(
        self,
        source: str | Path | bytes | Photo,
        game: str,
        *,
        corners: np.ndarray | None = None,
        player_name: str | None = None,
        name: str | None = None,
    ) -> ScanResult:
        """Scan one photo of one player's board.

        ``corners`` (TL, TR, BR, BL in full-photo pixels) skip the board search.

        Raises:
            PhotoError: unreadable or unusable photo.
            BoardNotFoundError: the board could not be found; the message says what to try.
            ModelError: a shipped model is missing or corrupt.
            StateError: ``player_name`` is not a valid player name.
        """
        timings = Timings()
        self._check_scannable(game)  # before any work
        with timings.stage("decode"):
            photo = source if isinstance(source, Photo) else load_photo(source, name=name, min_long_side_px=WORKING_LONG_SIDE_PX)
        reader = self.reader(game)
        with timings.stage("guides"):  # another camera app's guide drawn over the photo hides what it crosses
            cleared, lines = without_guide_lines(photo.image_rgb)
            fine = unblend_guide_lines(photo.image_rgb, lines) if lines else None
        if lines:  # painted out in the photo's own pixels, before a profile straightens its lens
            notes = (*photo.notes, f"{len(lines)} guide lines drawn over the photo painted out")
            photo = replace(photo, image_rgb=cleared, fine_rgb=fine, notes=notes)
        local_corners = None if corners is None else np.asarray(corners, dtype=np.float64).reshape(4, 2) / photo.scale
        to_photo = _identity
        camera = getattr(self.profile, "camera", None)
        if self.profile is not None:
            size = (photo.width_px, photo.height_px)
            with timings.stage("calibrate"):
                photo = Photo(
                    image_rgb=apply_profile(photo.image_rgb, self.profile),
                    name=photo.name,
                    full_size=photo.full_size,
                    scale=photo.scale,
                    notes=photo.notes + ("profile",),
                    fine_rgb=None if photo.fine_rgb is None else apply_profile(photo.fine_rgb, self.profile),
                )
            if camera is not None:
                if local_corners is not None:
                    local_corners = undistort_points(local_corners, camera, size)

                def to_photo(points: np.ndarray) -> np.ndarray:
                    return distort_points(points, camera, size)

        given = None if local_corners is None else local_corners.astype(np.float32)
        reading = read_without_words(reader, photo, reader.read(photo, corners=given, timings=timings), given, timings)
        with timings.stage("assemble"):
            state = _named(reading.state, player_name or Path(photo.name).stem)
            issues = tuple(GAMES[game].validate(state))
            reading = doubt_broken_rules(reading, issues)
            review = judge(
                reading.cells,
                reading.verdict.wording,
                reading.verdict.thresholds,
                overrides=reading.overrides,
                issues=issues,
                grid=reading.grid,
            )
            evidence = replace(scan_evidence(photo, reading, timings, to_photo), review=review)
        return ScanResult(
            state=state,
            issues=issues,
            scan=replace(evidence, seconds=round(timings.total, 3)),  # the whole scan, assembly included
            corners=to_photo(np.asarray(reading.corners, dtype=np.float64)) * photo.scale,
            cells=reading.cells,
            overrides=reading.overrides,
            photo=photo,
            image_corners=np.asarray(reading.corners, dtype=np.float64),
            seconds=dict(timings.seconds),
            cell_bar=reading.verdict.thresholds.cell,
        )


def _identity(points: np.ndarray) -> np.ndarray:
    return np.asarray(points, dtype=np.float64)


def _named(state: Any, name: str) -> Any:
    """The one-player ``state`` with its player named ``name``.

    Raises:
        StateError: ``name`` is not a valid player name.
    """
    player = state.players[0]
    return state if player.name == name else replace(state, players=(replace(player, name=name),))


def scan_evidence(
    photo: Photo,
    reading: BoardReading,
    timings: Timings,
    to_photo: Callable[[np.ndarray], np.ndarray] = _identity,
) -> ScanEvidence:
    """Return the evidence of one reading in pixels of the photo as loaded (EXIF orientation applied).

    ``to_photo`` maps points of ``photo.image_rgb`` back to the photo as taken (undoing an undistortion);
    points are full-resolution pixels rounded to 0.1 px, ``seconds`` the scan's total so far.
    """

    def in_photo(points: Any) -> tuple[tuple[float, float], ...]:
        mapped = to_photo(np.asarray(points, dtype=np.float64).reshape(-1, 2)) * photo.scale
        return tuple((x, y) for x, y in mapped.round(1).tolist())

    return ScanEvidence(
        photo=photo.name,
        corners=in_photo(reading.corners),
        cells=tuple(replace(cell, polygon=in_photo(cell.polygon)) for cell in reading.cells),
        overrides=reading.overrides,
        model=reading.model,
        seconds=round(timings.total, 3),
        board_keys=reading.board_keys,
        listing=reading.listing,
    )


def merge_documents(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Combine single-player scan documents of one game into one game document (players in order).

    Raises:
        StateError: the documents are of different games or repeat a player name.
    """
    if not documents:
        raise StateError("players: expected at least one scanned photo")
    merged = copy.deepcopy(documents[0])
    merged["players"] = []
    seen: set[str] = set()
    for index, doc in enumerate(documents):
        if doc.get("game") != merged.get("game"):
            raise StateError(f"players[{index}]: photo is of game {doc.get('game')!r}, expected {merged.get('game')!r}")
        for player in doc["players"]:
            if player["name"] in seen:
                raise StateError(f"players[{index}].name: {player['name']!r} appears twice; give each photo's player their own name")
            seen.add(player["name"])
            merged["players"].append(copy.deepcopy(player))
    return merged
