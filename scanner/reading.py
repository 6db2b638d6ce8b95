"""What a board reader hands back: the game's state as read, per-cell readings, rule overrides and where the board is."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from scanner.photo import Photo


@dataclass(frozen=True)
class CellReading:
    """One cell or tile as read: its position, value (FORMATS.md text), confidence and outline.

    ``cell`` is ``(row, col)`` for Sagrada and ``(x, y)`` for Alhambra; ``polygon`` is in pixels of
    the photo as ``Photo.image_rgb`` holds it; ``alternatives`` lists the next readings with their
    probabilities; ``crop`` is the rectified crop the model saw (kept for corrections, never output);
    ``doubt``, when set, is a reason for review the reader sees beyond the model's confidence;
    ``part`` holds the patches of the cell its game's part reader read (``CellClassifier.part``: an
    Alhambra tile's price octagon), (V, S, S, 3), kept for corrections as ``crop`` is.
    """

    cell: tuple[int, int]
    value: str
    confidence: float
    polygon: tuple[tuple[float, float], ...]
    alternatives: tuple[tuple[str, float], ...] = ()
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)
    doubt: str = ""  # why the reader doubts this cell whatever its model says (e.g. "runs off the photo's edge"), in a player's words
    part: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence: expected 0-1, got {self.confidence}")

    def to_json(self, scale: float = 1.0) -> dict:
        """Return the FORMATS.md ``scan.cells`` entry, outline scaled to full-photo pixels."""
        return {
            "cell": list(self.cell),
            "value": self.value,
            "confidence": round(float(self.confidence), 4),
            "polygon": [[round(x * scale, 1), round(y * scale, 1)] for x, y in self.polygon],
        }


@dataclass(frozen=True)
class Override:
    """A cell where the rules overrode the model's first choice."""

    cell: tuple[int, int]
    model_value: str
    model_confidence: float
    chosen_value: str
    chosen_confidence: float
    reason: str

    def to_json(self) -> dict:
        """Return a JSON object for reports."""
        return {
            "cell": list(self.cell),
            "model": {"value": self.model_value, "confidence": round(self.model_confidence, 4)},
            "chosen": {"value": self.chosen_value, "confidence": round(self.chosen_confidence, 4)},
            "reason": self.reason,
        }


# ------------------------------------------------------------------------- the scan's verdict on itself
# Value types only; ``scanner.verdict`` judges a reading with them.

Cell = tuple[int, int]
CORNER_NAMES = ("upper-left", "upper-right", "lower-right", "lower-left")  # TL, TR, BR, BL


@dataclass(frozen=True)
class ScanReview:
    """The ``review`` object of a scanned board: ``needed`` is false exactly when there are no ``reasons``.

    >>> ScanReview(True, ("cell r2c4 read P1 at 41%",)).to_json()
    {'needed': True, 'reasons': ['cell r2c4 read P1 at 41%']}
    """

    needed: bool
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.needed, bool):
            raise ValueError(f"review.needed: expected true or false, got {self.needed!r}")
        if not isinstance(self.reasons, tuple) or not all(isinstance(reason, str) and reason for reason in self.reasons):
            raise ValueError(f"review.reasons: expected a tuple of non-empty texts, got {self.reasons!r}")
        if self.needed != bool(self.reasons):
            got = f"{len(self.reasons)} reason(s)" if self.reasons else "no reasons"
            raise ValueError(f"review: needed is {str(self.needed).lower()} with {got}; a review is needed exactly when there are reasons")

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md ``review`` object."""
        return {"needed": self.needed, "reasons": list(self.reasons)}

    @classmethod
    def from_json(cls, doc: Any) -> ScanReview:
        """Parse a FORMATS.md ``review`` object; inverse of ``to_json``.

        Raises:
            ValueError: not an object with a boolean ``needed`` and a list of texts ``reasons`` that agree.
        """
        if not isinstance(doc, dict) or not isinstance(doc.get("reasons", []), list):
            raise ValueError(f"review: expected {{'needed': bool, 'reasons': [text, ...]}}, got {doc!r}")
        return cls(doc.get("needed"), tuple(doc.get("reasons", [])))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Thresholds:
    """The bars a reading must clear to go unreviewed (each 0-1), measured per game (``tests/benchmarks/bench_verdict.py``).

    ``cell``: a cell's calibrated confidence; ``corner``: a grid corner's refiner heat peak;
    ``orientation``: the probability of the top-left chosen; ``flipped``: the most the probability of
    the half turn may be; ``max_cells``: cell-level reasons listed before "and N more".
    """

    cell: float
    corner: float = 0.0
    orientation: float = 0.0
    flipped: float = 1.0
    max_cells: int = 5
    fit: float = 0.0  # the least ``GridCertainty.fit`` a grid may have (how well it lines up with the cells seen)
    likeness: float = 0.0  # the least ``GridCertainty.likeness`` a board may have (how surely its cells read as the game's)

    def __post_init__(self) -> None:
        for name in ("cell", "corner", "orientation", "flipped", "fit", "likeness"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"thresholds.{name}: expected 0-1, got {value}")
        if self.max_cells < 1:
            raise ValueError(f"thresholds.max_cells: expected at least 1, got {self.max_cells}")


@dataclass(frozen=True)
class GridCertainty:
    """How sure the scanner is of a grid it found: each corner's heat peak (TL, TR, BR, BL) and its orientation.

    From ``scanner.sagrada.grid``: the final refinement's per-corner ``peaks`` (turned to TL first),
    ``BoardLocation.orientation_confidence`` and ``BoardLocation.flipped_probability``.
    """

    corner_peaks: tuple[float, float, float, float]
    orientation_confidence: float = 1.0
    flipped_probability: float = 0.0
    fit: float = 1.0  # how well the grid lines up with the cells seen in the photo (``scanner.sagrada.lattice``), 0-1
    fit_words: str = ""  # what was seen, when the fit is poor (e.g. "16 of 20 cells seen")
    likeness: float = 1.0  # how surely the cells read as this game's board (a window's dice), 0-1
    likeness_words: str = ""  # the review's words when they read doubtfully (what was seen, what to check)
    width_confidence: float = 1.0  # for corners given by hand: how sure the sides taken for the grid's width are, 0-1

    def __post_init__(self) -> None:
        if len(self.corner_peaks) != 4:
            raise ValueError(f"grid.corner_peaks: expected 4 peaks (TL, TR, BR, BL), got {len(self.corner_peaks)}")
        for name, value in (*zip(CORNER_NAMES, self.corner_peaks), ("orientation", self.orientation_confidence)):
            if not 0.0 <= value <= 1.0 + 1e-9:
                raise ValueError(f"grid.{name}: expected 0-1, got {value}")
        if not 0.0 <= self.flipped_probability <= 1.0 + 1e-9:
            raise ValueError(f"grid.flipped_probability: expected 0-1, got {self.flipped_probability}")
        if not 0.0 <= self.fit <= 1.0 + 1e-9:
            raise ValueError(f"grid.fit: expected 0-1, got {self.fit}")
        if not 0.0 <= self.likeness <= 1.0 + 1e-9:
            raise ValueError(f"grid.likeness: expected 0-1, got {self.likeness}")
        if not 0.0 <= self.width_confidence <= 1.0 + 1e-9:
            raise ValueError(f"grid.width_confidence: expected 0-1, got {self.width_confidence}")


@dataclass(frozen=True)
class Wording:
    """How a game names things for players: a cell (``cell``), a value as read (``value``), an alternative (``short``)."""

    cell: Callable[[Cell], str]
    value: Callable[[str], str] = str
    short: Callable[[str], str] = str


@dataclass(frozen=True)
class Verdict:
    """How a game's readings are judged: its wording for players and its measured bars.

    ``words_painted_out``: a word written over the photo is painted out and the board read again
    (``scanner.pipeline.read_without_words``); else the cells it covers are only doubted, as where a
    game's pieces carry white marks that read as letters (a die's pips in a row) and would be painted
    out with it.
    """

    wording: Wording = field(default_factory=lambda: Wording(str))
    thresholds: Thresholds = field(default_factory=lambda: Thresholds(cell=0.95))
    words_painted_out: bool = False


@dataclass(frozen=True)
class BoardReading:
    """A reader's result for one photo: the game's state as read and the evidence behind it.

    ``state`` is the game's own one-player state (``scoring.<game>``): the board as read, the player
    named after the photo, the game-level fields at a one-board scan's defaults. ``board_keys`` are
    the player keys of its FORMATS.md document the photo shows (``window`` and ``pattern``,
    ``palace``); the state's other player fields (favor tokens, reserve, earlier points) are defaults
    a photo cannot see, so a scan's document leaves them out. ``listing`` keeps what the state
    cannot: the order in which the document lists a board key's items, as indices into the state's
    own listing (e.g. a palace's fountain first, where the state sorts its tiles by position).
    ``corners`` are TL, TR, BR, BL in ``Photo.image_rgb`` pixels. ``verdict`` is how the game's
    readings are judged (``scanner.verdict``); ``grid`` how sure the reader is of a grid it found
    itself (None: the grid was given, or the game has no grid to doubt).
    """

    state: Any
    board_keys: tuple[str, ...]
    corners: np.ndarray
    cells: tuple[CellReading, ...]
    overrides: tuple[Override, ...] = ()
    model: str = ""
    notes: tuple[str, ...] = ()
    listing: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    verdict: Verdict = field(default_factory=Verdict)
    grid: GridCertainty | None = None

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners)
        if corners.shape != (4, 2):
            raise ValueError(f"corners: expected (4, 2) TL, TR, BR, BL, got {corners.shape}")
        players = getattr(self.state, "players", ())
        if len(players) != 1:
            raise ValueError(f"state: expected a one-player game state, got {type(self.state).__name__} with {len(players)} players")
        if not self.board_keys:
            raise ValueError("board_keys: expected the player keys the photo shows, got none")
        for key, order in self.listing.items():
            if key not in self.board_keys or sorted(order) != list(range(len(order))):
                raise ValueError(f"listing[{key!r}]: expected a reordering of a board key's items, got {list(order)}")

    @property
    def player(self) -> Any:
        """The scanned player as the game's state holds it (``SagradaPlayer``, ``AlhambraPlayer``)."""
        return self.state.players[0]


@dataclass(frozen=True)
class ScanEvidence:
    """What a scan saw of one board, in pixels of the photo as loaded (EXIF orientation applied).

    ``to_json()`` is the player's FORMATS.md ``scan`` block; ``cells`` are the readings with their
    outlines in those pixels. ``board_keys`` and ``listing`` are the reading's: which player keys
    the photo shows and in which order the document lists their items (see ``BoardReading``).
    """

    photo: str
    corners: tuple[tuple[float, float], ...]
    cells: tuple[CellReading, ...]
    overrides: tuple[Override, ...]
    model: str
    seconds: float
    board_keys: tuple[str, ...]
    listing: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    review: ScanReview | None = None  # the scan's verdict on itself (None: not judged, e.g. a stand-in)

    def __post_init__(self) -> None:
        if len(self.corners) != 4 or any(len(point) != 2 for point in self.corners):
            raise ValueError(f"corners: expected 4 (x, y) points TL, TR, BR, BL, got {self.corners!r}")
        if self.seconds < 0:
            raise ValueError(f"seconds: expected >= 0, got {self.seconds}")

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md ``scan`` block (photo, corners, cells, overrides, model, seconds, review)."""
        block: dict[str, Any] = {
            "photo": self.photo,
            "corners": [[x, y] for x, y in self.corners],
            "cells": [cell.to_json() for cell in self.cells],
            "overrides": [override.to_json() for override in self.overrides],
            "model": self.model,
            "seconds": self.seconds,
        }
        if self.review is not None:
            block["review"] = self.review.to_json()
        return block


def parse_key(key: str) -> tuple[int, int] | None:
    """A cell key "a,b" as integers (a Sagrada window's "row,col", a palace's "x,y"), or None.

    >>> parse_key("2,-1"), parse_key("x")
    ((2, -1), None)
    """
    parts = str(key).split(",")
    try:
        a, b = (int(part) for part in parts)
    except ValueError:
        return None
    return a, b


@dataclass(frozen=True)
class PartReader:
    """A model that reads one part of each cell beside the game's cell classifier, and how a cell value labels its heads.

    An Alhambra tile's type and price are read from its price octagon, in ``views`` patches per tile
    (the corner patch and a closer one): a reading keeps them (``CellReading.part``), and a player's
    correction of the tile labels them. ``head_labels(value)`` gives the class each head should give
    the patches of a cell whose value is ``value`` (an empty dict where it says nothing they show).
    """

    model: str
    head_labels: Callable[[str], dict[str, Any]]
    views: int = 1

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model: expected a model name, got ''")
        if self.views < 1:
            raise ValueError(f"views: expected at least 1 patch per cell, got {self.views}")


@dataclass(frozen=True)
class CellClassifier:
    """A game's adaptable cell classifier: the model's name, its crops' margin, and how a cell value labels its heads.

    ``head_labels(value)`` gives the class each head should give a cell whose (corrected) value is
    ``value`` (an empty dict when the value says nothing the heads read); a head in ``binary_heads``
    reads independent yes/no classes (sigmoid logits, e.g. a tile's four walls) and is labelled with
    a 0/1 tuple, one per class. ``turn_labels(labels, variant)`` gives the labels of the crop turned
    or mirrored (``scanner.adapt.dihedral`` variant 1-7; None: every label stays, a head missing from
    the result is unknown for that copy). ``empty_cells(image_rgb, cells)`` gives ``(cell, crop)`` for
    the cells the reader also classified around the read ones (``CellReading``s) that hold nothing,
    examples of "no tile" (None: every cell the reader reads is among its readings). With
    ``fixed_cells`` a board always shows the same cells (a window's 20); without, its cells are
    positions relative to one of them (a palace's fountain) and a cell absent from a board is empty.
    ``crop_features[head]`` names the features computed from the crop itself that an adapted head
    may read beside the model's own (``scanner.adapt.examples``: ``crop_colour``, ``crop_sides``);
    a head not named reads the crop's colour. ``grid_crops(image_rgb, corners)`` cuts every cell's crop
    of a board whose corners (TL, TR, BR, BL, image pixels) are given in that order, as the reader
    would (None: the game's boards have no such corners). ``cell_label(value, cell, fields)`` is what a
    cell teaches given its value, its key and its player's fields (None: the value itself; Sagrada
    names the pattern card's print under an empty cell when the card is known). ``recall_views(crops)``
    gives, for each way the reader may pool a doubtful cell, the views of crops whose readings it
    averages (a Sagrada board read closer pools closer views); an adaptation remembers the players'
    corrected cells by their embedding pooled over each (``scanner.adapt.memory``, a key per pooling;
    None: no memory). ``presence_head`` names the head that says whether a cell holds anything at all
    (a tile): an adaptation keeps it only where it reads more held-out cells right, not merely more
    surely (None: no head is held to that). ``part`` is the game's reader of a part of each cell
    (``PartReader``), adapted from the same corrections (None: none).
    """

    model: str
    margin: float  # context around a cell in its crops, in cell pitches each side
    head_labels: Callable[[str], dict[str, Any]]
    binary_heads: frozenset[str] = frozenset()
    turn_labels: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
    empty_cells: Callable[[np.ndarray, tuple[CellReading, ...]], list[tuple[tuple[int, int], np.ndarray]]] | None = None
    fixed_cells: bool = True
    crop_features: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    grid_crops: Callable[[np.ndarray, np.ndarray], list[tuple[tuple[int, int], np.ndarray]]] | None = None
    cell_label: Callable[[str, str, Mapping[str, Any]], str] | None = None
    recall_views: Callable[[np.ndarray], list[list[np.ndarray]]] | None = None
    presence_head: str | None = None
    part: PartReader | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model: expected a model name, got ''")
        if not 0.0 <= self.margin < 1.0:
            raise ValueError(f"margin: expected 0-1 cell pitches, got {self.margin}")


class Timings:
    """Per-stage wall-clock seconds, filled by the one scanning code path."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block under ``name`` (accumulating if repeated)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    @property
    def total(self) -> float:
        """Sum of all stages."""
        return sum(self.seconds.values())


class BoardReader(Protocol):
    """A game's reader: finds the board in a photo and reads it with the rules' help."""

    game: str

    def read(self, photo: Photo, *, corners: np.ndarray | None, timings: Timings) -> BoardReading:
        """Locate, rectify, classify and decode one board.

        Raises:
            BoardNotFoundError: no board (or several) found; the message says what to try.
        """
        ...
