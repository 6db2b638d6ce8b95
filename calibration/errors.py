"""Errors calibration reports to users: one line saying what is wrong and what to do."""

from __future__ import annotations

from scoring.errors import TableError


class CalibrationError(TableError):
    """A calibration cannot be made or a saved profile cannot be used (missing, corrupt, unfit)."""

    exit_code = 2
    http_status = 400


class TargetNotFoundError(CalibrationError):
    """A calibration photo does not show the printed target (the message names the photo)."""
