"""Measures shared by the games' evaluations."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

import numpy as np


def machine(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU a figure was measured on and the cores it had, for the cards: timings differ between machines.

    Where ``cpuinfo`` cannot be read (not Linux) the platform's own processor name stands in.
    """
    try:
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(encoding="utf-8", errors="replace"), re.MULTILINE)
    except OSError:
        found = None
    name = found.group(1).strip() if found else (platform.processor() or "an unnamed CPU")
    return f"{name}, {os.cpu_count() or 1} cores"


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = 15) -> float:
    """Expected calibration error: |accuracy - mean confidence| weighted over equal-width confidence bins.

    >>> round(expected_calibration_error(np.array([0.9, 0.9, 0.6, 0.6]), np.array([True, True, True, False])), 4)
    0.1
    """
    confidence, hits = np.asarray(confidence, float), np.asarray(correct, float)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (confidence > lo) & (confidence <= hi)
        if inside.any():
            total += inside.mean() * abs(hits[inside].mean() - confidence[inside].mean())
    return float(total)


BOOTSTRAP_DRAWS = 2000  # resamples of the photos for a benchmark's 95% intervals


def photo_intervals(right: np.ndarray, compared: np.ndarray, draws: int = BOOTSTRAP_DRAWS, seed: int = 0) -> dict[str, list[float]]:
    """95% intervals of a benchmark's share of items right and of boards entirely right, the photos resampled.

    ``right`` and ``compared`` give each photo's items (cells, tiles) read right and compared. A
    photo's items stand or fall together (one misplaced grid misreads a row), so the photos, not
    the items, are drawn (a percentile bootstrap); a board is entirely right when all its items are.

    >>> photo_intervals(np.array([20, 20]), np.array([20, 20]))
    {'items_right': [1.0, 1.0], 'boards_right': [1.0, 1.0]}
    """
    right, compared = np.asarray(right, np.float64), np.asarray(compared, np.float64)
    if right.size == 0:
        return {}
    picks = np.random.default_rng(seed).integers(0, right.size, size=(draws, right.size))
    items = right[picks].sum(axis=1) / np.maximum(compared[picks].sum(axis=1), 1)
    boards = (right == compared)[picks].mean(axis=1)
    return {
        "items_right": [round(float(q), 4) for q in np.percentile(items, [2.5, 97.5])],
        "boards_right": [round(float(q), 4) for q in np.percentile(boards, [2.5, 97.5])],
    }


def interval_text(interval: list[float]) -> str:
    """An interval of shares as percentages (``[0.954, 0.988]`` -> ``"95.4-98.8%"``).

    >>> interval_text([0.954, 0.988])
    '95.4-98.8%'
    """
    return f"{100 * interval[0]:.1f}-{100 * interval[1]:.1f}%"


def share_text(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage: one decimal, or as many more as keep a shortfall from reading 100%.

    >>> share_text(229, 240), share_text(4798, 4800), share_text(240, 240), share_text(0, 0)
    ('95.4%', '99.96%', '100.0%', 'n/a')
    """
    if not whole:
        return "n/a"
    share, digits = 100 * part / whole, 1
    while part < whole and f"{share:.{digits}f}".startswith("100"):
        digits += 1
    return f"{share:.{digits}f}%"


def paired_change(
    before: tuple[np.ndarray, np.ndarray], after: tuple[np.ndarray, np.ndarray], draws: int = BOOTSTRAP_DRAWS, seed: int = 0
) -> dict[str, Any]:
    """How two runs over the same photos differ: items right and boards entirely right, after - before.

    ``before`` and ``after`` give each photo's items read right and items compared (``right``,
    ``compared``, photo by photo, in the same order). The photos are drawn with their two readings
    together (a paired percentile bootstrap), so what the two runs share cancels: a change that
    independent intervals cannot tell from chance shows here when the same photos move the same way.
    ``items`` and ``boards`` are [change, low, high] in shares; ``better`` and ``worse`` count the
    photos with more and fewer items right.

    >>> paired_change((np.array([19, 20]), np.array([20, 20])), (np.array([20, 20]), np.array([20, 20])))["items"]
    [0.025, 0.0, 0.05]

    Raises:
        ValueError: the runs hold different numbers of photos.
    """
    right_a, compared_a = (np.asarray(part, np.float64) for part in before)
    right_b, compared_b = (np.asarray(part, np.float64) for part in after)
    if not (right_a.shape == compared_a.shape == right_b.shape == compared_b.shape):
        raise ValueError(f"paired runs: {right_a.size} photos before, {right_b.size} after; expected the same photos")
    out: dict[str, Any] = {"photos": int(right_a.size), "items": [0.0, 0.0, 0.0], "boards": [0.0, 0.0, 0.0]}
    if not right_a.size:
        return {**out, "better": 0, "worse": 0}
    picks = np.random.default_rng(seed).integers(0, right_a.size, size=(draws, right_a.size))

    def share(right: np.ndarray, compared: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
        return right[rows].sum(axis=-1) / np.maximum(compared[rows].sum(axis=-1), 1)

    def board(right: np.ndarray, compared: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
        return (right == compared)[rows].mean(axis=-1)

    for key, measure in (("items", share), ("boards", board)):
        point = float(measure(right_b, compared_b, slice(None)) - measure(right_a, compared_a, slice(None)))
        drawn = measure(right_b, compared_b, picks) - measure(right_a, compared_a, picks)
        low, high = np.percentile(drawn, [2.5, 97.5])
        out[key] = [round(point, 4), round(float(low), 4), round(float(high), 4)]
    out["better"] = int((right_b > right_a).sum())
    out["worse"] = int((right_b < right_a).sum())
    return out
