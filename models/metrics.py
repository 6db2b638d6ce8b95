"""Measures shared by the games' evaluations."""

from __future__ import annotations

import numpy as np


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
