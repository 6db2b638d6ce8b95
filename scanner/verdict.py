"""The scan's verdict on itself: may the players take a board's score without looking (FORMATS.md, "Scan output")?

A board needs review when the scanner does not stand behind every cell as read: a grid corner the
refiner barely saw, an orientation in doubt, a cell read under its game's confidence bar, a cell
where the rules overrode the model, or a placement rule the reading breaks. Each doubt becomes a
reason in a player's words, least certain first; at most ``Thresholds.max_cells`` cell-level
reasons are listed, the rest summed up as "and N more".

The functions are pure: they judge what the scan already has (``CellReading``, ``Override``,
``Issue`` and, for a grid found by the scanner, a ``GridCertainty``). How a game names its cells and
values comes in a ``Wording``; no game is named here except in the per-game wordings and measured
thresholds at the end, which the callers pick (the readers), so nothing switches on a game id.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from scanner.reading import CellReading, Override
from scoring.issue import Issue

Cell = tuple[int, int]
CORNER_NAMES = ("upper-left", "upper-right", "lower-right", "lower-left")  # TL, TR, BR, BL
CLOSE_BEHIND = 0.05  # an alternative at least this probable is named beside a doubtful reading
CLOSE_NAMED = 2  # at most this many alternatives are named


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

    def __post_init__(self) -> None:
        for name in ("cell", "corner", "orientation", "flipped"):
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

    def __post_init__(self) -> None:
        if len(self.corner_peaks) != 4:
            raise ValueError(f"grid.corner_peaks: expected 4 peaks (TL, TR, BR, BL), got {len(self.corner_peaks)}")
        for name, value in (*zip(CORNER_NAMES, self.corner_peaks), ("orientation", self.orientation_confidence)):
            if not 0.0 <= value <= 1.0 + 1e-9:
                raise ValueError(f"grid.{name}: expected 0-1, got {value}")
        if not 0.0 <= self.flipped_probability <= 1.0 + 1e-9:
            raise ValueError(f"grid.flipped_probability: expected 0-1, got {self.flipped_probability}")


@dataclass(frozen=True)
class Wording:
    """How a game names things for players: a cell (``cell``), a value as read (``value``), an alternative (``short``)."""

    cell: Callable[[Cell], str]
    value: Callable[[str], str] = str
    short: Callable[[str], str] = str


@dataclass(frozen=True, order=True)
class Doubt:
    """One reason for review: how sure the scanner is of the thing named (0-1; lower first) and the words."""

    certainty: float
    words: str
    grid: bool = False  # a doubt about the whole board (never cut), not about one cell


def percent(probability: float) -> str:
    """A probability as a player reads it, rounded down so that nothing under 1 shows as 100%.

    >>> percent(0.414), percent(0.9999)
    ('41%', '99%')
    """
    return f"{math.floor(100 * min(max(probability, 0.0), 1.0) + 1e-9)}%"


def grid_doubts(grid: GridCertainty, thresholds: Thresholds) -> list[Doubt]:
    """The doubts about a found grid: each weakly seen corner, and an uncertain orientation."""
    doubts = [
        Doubt(float(peak), f"the grid's {name} corner is uncertain", grid=True)
        for name, peak in zip(CORNER_NAMES, grid.corner_peaks)
        if peak < thresholds.corner
    ]
    if grid.flipped_probability > thresholds.flipped:
        doubts.append(Doubt(1.0 - grid.flipped_probability, "the board's orientation is uncertain (it may be upside down)", grid=True))
    elif grid.orientation_confidence < thresholds.orientation:
        doubts.append(Doubt(grid.orientation_confidence, "the board's orientation is uncertain (which side is the top)", grid=True))
    return doubts


def cell_doubts(
    cells: Sequence[CellReading],
    wording: Wording,
    thresholds: Thresholds,
    overrides: Iterable[Override] = (),
    issues: Iterable[Issue] = (),
) -> list[Doubt]:
    """The doubts about single readings: overridden cells, cells under the bar, and broken placement rules."""
    confidence = {reading.cell: reading.confidence for reading in cells}
    doubts: list[Doubt] = []
    overridden = set()
    for override in overrides:
        overridden.add(override.cell)
        sure = confidence.get(override.cell, override.chosen_confidence)
        doubts.append(
            Doubt(
                sure,
                f"{wording.cell(override.cell)} read {wording.value(override.chosen_value)} by the rules, where the model saw "
                f"{wording.short(override.model_value)} at {percent(override.model_confidence)} ({override.reason})",
            )
        )
    for reading in cells:
        if reading.cell in overridden or reading.confidence >= thresholds.cell:
            continue
        close = [wording.short(value) for value, p in reading.alternatives if p >= CLOSE_BEHIND][:CLOSE_NAMED]
        behind = f" ({' and '.join(close)} close behind)" if close else ""
        doubts.append(
            Doubt(
                reading.confidence,
                f"{wording.cell(reading.cell)} read {wording.value(reading.value)} at {percent(reading.confidence)}{behind}",
            )
        )
    for issue in issues:
        sure = min((confidence[cell] for cell in issue.cells if cell in confidence), default=0.0)
        doubts.append(Doubt(sure, f"the reading breaks a rule: {issue.detail}"))
    return doubts


def review_of(doubts: Iterable[Doubt], max_cells: int = 5) -> ScanReview:
    """The review for these doubts: least certain first, at most ``max_cells`` cell-level ones and "and N more"."""
    ordered = sorted(doubts, key=lambda doubt: (doubt.certainty, not doubt.grid, doubt.words))
    kept: list[str] = []
    cut = 0
    shown = 0
    for doubt in ordered:
        if doubt.grid or shown < max_cells:
            kept.append(doubt.words)
            shown += not doubt.grid
        else:
            cut += 1
    if cut:
        kept.append(f"and {cut} more")
    return ScanReview(bool(kept), tuple(kept))


def judge(
    cells: Sequence[CellReading],
    wording: Wording,
    thresholds: Thresholds,
    *,
    overrides: Iterable[Override] = (),
    issues: Iterable[Issue] = (),
    grid: GridCertainty | None = None,
) -> ScanReview:
    """Judge one scanned board from its readings, the rules' overrides and issues and (when found) its grid.

    >>> sure = CellReading((0, 0), "B4", 0.999, ((0, 0), (1, 0), (1, 1)))
    >>> judge([sure], SAGRADA_WORDING, SAGRADA_THRESHOLDS).to_json()
    {'needed': False, 'reasons': []}
    """
    doubts = cell_doubts(cells, wording, thresholds, overrides, issues)
    if grid is not None:
        doubts += grid_doubts(grid, thresholds)
    return review_of(doubts, thresholds.max_cells)


# ------------------------------------------------------------------------- per-game wording and bars
# Measured by tests/benchmarks/bench_verdict.py; they belong with each game's reader (scanner/<game>/).

SAGRADA_COLOURS = {"R": "red", "Y": "yellow", "G": "green", "B": "blue", "P": "purple"}


def sagrada_cell_name(cell: Cell) -> str:
    """A Sagrada cell as players count it, from 1 (``(1, 3)`` -> ``"cell r2c4"``).

    >>> sagrada_cell_name((1, 3))
    'cell r2c4'
    """
    return f"cell r{cell[0] + 1}c{cell[1] + 1}"


def sagrada_value_name(value: str) -> str:
    """A Sagrada cell value by letter and name (``"P1"`` -> ``"P1 (purple 1)"``, ``"."`` -> ``"empty"``).

    >>> sagrada_value_name("P1"), sagrada_value_name(".")
    ('P1 (purple 1)', 'empty')
    """
    if len(value) == 2 and value[0] in SAGRADA_COLOURS:
        return f"{value} ({SAGRADA_COLOURS[value[0]]} {value[1]})"
    return "empty" if value == "." else value


def sagrada_short_name(value: str) -> str:
    """A Sagrada value as named beside another reading (``"G1"``, ``"empty"``)."""
    return "empty" if value == "." else value


def alhambra_tile_name(at: Cell) -> str:
    """An Alhambra tile by its place from the fountain (``(2, 1)`` -> ``"the tile 2 east, 1 south of the fountain"``).

    >>> alhambra_tile_name((2, 1)), alhambra_tile_name((0, -1)), alhambra_tile_name((0, 0))
    ('the tile 2 east, 1 south of the fountain', 'the tile 1 north of the fountain', 'the fountain')
    """
    x, y = at
    steps = [f"{abs(x)} {'east' if x > 0 else 'west'}"] if x else []
    steps += [f"{abs(y)} {'south' if y > 0 else 'north'}"] if y else []
    return f"the tile {', '.join(steps)} of the fountain" if steps else "the fountain"


def alhambra_value_name(value: str) -> str:
    """An Alhambra reading ``type:walls`` in words (``"tower:NE"`` -> ``"a tower walled N and E"``).

    >>> alhambra_value_name("tower:NE"), alhambra_value_name("arcades:"), alhambra_value_name("fountain")
    ('a tower walled N and E', 'arcades without walls', 'the fountain')
    """
    kind, _, walls = value.partition(":")
    if kind == "fountain" or not _:
        return "the fountain" if kind == "fountain" else value
    article = "" if kind.endswith("s") else ("an " if kind[0] in "aeiou" else "a ")
    walled = f"walled {' and '.join(walls)}" if walls else "without walls"
    return f"{article}{kind} {walled}"


def alhambra_short_name(value: str) -> str:
    """An Alhambra reading named beside another (``"seraglio NE"``, ``"garden, no walls"``)."""
    kind, sep, walls = value.partition(":")
    if not sep:
        return kind
    return f"{kind} {walls}" if walls else f"{kind}, no walls"


SAGRADA_WORDING = Wording(sagrada_cell_name, sagrada_value_name, sagrada_short_name)
ALHAMBRA_WORDING = Wording(alhambra_tile_name, alhambra_value_name, alhambra_short_name)
# The benchmark's rule: the strictest bars that leave no wrong or foreign board unflagged and flag at most
# 1 in 8 right boards (half the 1-in-4 target). 100 held-out Sagrada renders (1 read wrong: its cell at
# 16%), 50 Alhambra renders (2 wrong: their tiles at 67% and 97.6%), 240 photos of something else (all
# refused or flagged); right boards flagged: Sagrada 12 of 99, Alhambra 6 of 48.
SAGRADA_THRESHOLDS = Thresholds(cell=0.95, corner=0.3, orientation=0.9, flipped=0.05)
ALHAMBRA_THRESHOLDS = Thresholds(cell=0.98)
