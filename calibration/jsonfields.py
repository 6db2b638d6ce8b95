"""Checked reads of numbers from parsed profile JSON, failing like ``scoring.fields`` does."""

from __future__ import annotations

import math
from typing import Any

from scoring.fields import describe, fail


def expect_number(value: Any, path: str, *, positive: bool = False) -> float:
    """Return ``value`` as a float if it is a finite JSON number (> 0 when ``positive``).

    Raises:
        StateError: when it is not a number, not finite, or not positive when it must be.
    """
    wanted = "a positive number" if positive else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(path, f"expected {wanted}, got {describe(value)}")
    number = float(value)
    if not math.isfinite(number) or (positive and number <= 0):
        raise fail(path, f"expected {wanted}, got {describe(value)}")
    return number


def expect_numbers(value: Any, path: str, length: int, *, positive: bool = False) -> tuple[float, ...]:
    """Return ``value`` as a tuple of ``length`` floats.

    Raises:
        StateError: when it is not a list of that many finite numbers.
    """
    if not isinstance(value, list) or len(value) != length:
        raise fail(path, f"expected a list of {length} numbers, got {describe(value)}")
    return tuple(expect_number(item, f"{path}[{index}]", positive=positive) for index, item in enumerate(value))
