"""The scan's verdict on itself: may the players take a board's score without looking (FORMATS.md, "Scan output")?

A board needs review when the scanner does not stand behind every cell as read: a grid corner the
refiner barely saw, an orientation in doubt, a cell read under its game's confidence bar, a cell
where the rules overrode the model, or a placement rule the reading breaks. Each doubt becomes a
reason in a player's words, least certain first; at most ``Thresholds.max_cells`` cell-level
reasons are listed, the rest summed up as "and N more".

The functions are pure: they judge what the scan already has (``CellReading``, ``Override``,
``Issue`` and, for a grid found by the scanner, a ``GridCertainty``). How a game names its cells and
values comes in a ``Wording``; each game's wording and measured bars live in its folder (``scanner/<game>/verdict.py``)
and travel with its readings (``BoardReading.verdict``), so nothing here switches on a game id.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scanner.reading import CORNER_NAMES, CellReading, GridCertainty, Override, ScanReview, Thresholds, Wording
from scoring.issue import Issue

CLOSE_BEHIND = 0.05  # an alternative at least this probable is named beside a doubtful reading
CLOSE_NAMED = 2  # at most this many alternatives are named


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
    """The doubts about a grid: each weakly seen corner, a poor fit to the cells seen, cells unlike the game's, an uncertain
    orientation, and for corners given by hand an uncertain width."""
    doubts = [
        Doubt(float(peak), f"the grid's {name} corner is uncertain", grid=True)
        for name, peak in zip(CORNER_NAMES, grid.corner_peaks)
        if peak < thresholds.corner
    ]
    if grid.fit < thresholds.fit:
        seen = f" ({grid.fit_words})" if grid.fit_words else ""
        doubts.append(Doubt(grid.fit, f"the grid does not line up well with the cells seen{seen}", grid=True))
    if grid.likeness < thresholds.likeness:
        # listed first (certainty 0): every other reading hangs on the photo showing this game's board
        doubts.append(Doubt(0.0, grid.likeness_words or "the cells do not read clearly as this game's board", grid=True))
    if grid.flipped_probability > thresholds.flipped:
        doubts.append(Doubt(1.0 - grid.flipped_probability, "the board's orientation is uncertain (it may be upside down)", grid=True))
    elif grid.orientation_confidence < thresholds.orientation:
        doubts.append(Doubt(grid.orientation_confidence, "the board's orientation is uncertain (which side is the top)", grid=True))
    if grid.width_confidence < thresholds.orientation:
        words = "the grid may be turned a quarter (which way its rows run is uncertain): check its corners"
        doubts.append(Doubt(grid.width_confidence, words, grid=True))
    return doubts


def cell_doubts(
    cells: Sequence[CellReading],
    wording: Wording,
    thresholds: Thresholds,
    overrides: Iterable[Override] = (),
    issues: Iterable[Issue] = (),
) -> list[Doubt]:
    """The doubts about single readings: cells the reader doubts itself, overridden cells, cells under the bar, and broken
    placement rules.

    A cell the rules overrode is a doubt unless the scanner stands behind the rules' choice as
    surely as the bar asks: a reader that weighs the whole board and its rules gives the cell that
    confidence (both readers weigh it in); the model's own probability of a value it did not
    prefer never clears the bar.
    """
    confidence = {reading.cell: reading.confidence for reading in cells}
    doubts: list[Doubt] = []
    overridden = set()
    doubted = {reading.cell for reading in cells if reading.doubt}  # the reader's own reason names these cells instead
    for override in overrides:
        overridden.add(override.cell)
        sure = confidence.get(override.cell, override.chosen_confidence)
        if sure >= thresholds.cell or override.cell in doubted:
            continue
        doubts.append(
            Doubt(
                sure,
                f"{wording.cell(override.cell)} read {wording.value(override.chosen_value)} by the rules, where the model saw "
                f"{wording.short(override.model_value)} at {percent(override.model_confidence)} ({override.reason})",
            )
        )
    for reading in cells:
        if reading.doubt:
            doubts.append(
                Doubt(
                    min(reading.confidence, thresholds.cell),
                    f"{wording.cell(reading.cell)} {reading.doubt}: read {wording.value(reading.value)} at {percent(reading.confidence)}",
                )
            )
            continue
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
    >>> judge([sure], Wording(str), Thresholds(cell=0.95)).to_json()
    {'needed': False, 'reasons': []}
    """
    doubts = cell_doubts(cells, wording, thresholds, overrides, issues)
    if grid is not None:
        doubts += grid_doubts(grid, thresholds)
    return review_of(doubts, thresholds.max_cells)


__all__ = ["GridCertainty", "ScanReview", "Thresholds", "Wording", "cell_doubts", "grid_doubts", "judge", "percent", "review_of"]
