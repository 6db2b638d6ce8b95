"""What a board reader hands back: per-cell readings, rule overrides and where the board is."""

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
    """A reader's result for one photo: the player's part of the game document and the evidence.

    ``player`` holds the game-specific keys of one FORMATS.md player (``window`` and maybe
    ``pattern`` for Sagrada, ``palace`` for Alhambra); ``corners`` are TL, TR, BR, BL in
    ``Photo.image_rgb`` pixels.
    """

    player: dict[str, Any]
    corners: np.ndarray
    cells: tuple[CellReading, ...]
    overrides: tuple[Override, ...] = ()
    model: str = ""
    notes: tuple[str, ...] = ()
    game_fields: Mapping[str, Any] = field(default_factory=dict)  # the document's game-level keys (a one-player scan's defaults)

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners)
        if corners.shape != (4, 2):
            raise ValueError(f"corners: expected (4, 2) TL, TR, BR, BL, got {corners.shape}")


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
