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
    probabilities; ``crop`` is the rectified crop the model saw (kept for corrections, never output).
    """

    cell: tuple[int, int]
    value: str
    confidence: float
    polygon: tuple[tuple[float, float], ...]
    alternatives: tuple[tuple[str, float], ...] = ()
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)

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
    ``corners`` are TL, TR, BR, BL in ``Photo.image_rgb`` pixels.
    """

    state: Any
    board_keys: tuple[str, ...]
    corners: np.ndarray
    cells: tuple[CellReading, ...]
    overrides: tuple[Override, ...] = ()
    model: str = ""
    notes: tuple[str, ...] = ()
    listing: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

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

    def __post_init__(self) -> None:
        if len(self.corners) != 4 or any(len(point) != 2 for point in self.corners):
            raise ValueError(f"corners: expected 4 (x, y) points TL, TR, BR, BL, got {self.corners!r}")
        if self.seconds < 0:
            raise ValueError(f"seconds: expected >= 0, got {self.seconds}")

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md ``scan`` block (photo, corners, cells, overrides, model, seconds)."""
        return {
            "photo": self.photo,
            "corners": [[x, y] for x, y in self.corners],
            "cells": [cell.to_json() for cell in self.cells],
            "overrides": [override.to_json() for override in self.overrides],
            "model": self.model,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class CellClassifier:
    """A game's adaptable cell classifier: the model's name, its crops' margin, and how a cell value labels its heads.

    ``head_labels(value)`` gives the class each head should give a cell whose (corrected) value is
    ``value`` (an empty dict when the value says nothing the heads read).
    """

    model: str
    margin: float  # context around a cell in its crops, in cell pitches each side
    head_labels: Callable[[str], dict[str, str]]

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
