"""Errors calibration reports to users: one line saying what is wrong and what to do, in the user's terms (no CLI flags)."""

from __future__ import annotations

from scoring.errors import Remedy, TableError


class CalibrationError(TableError):
    """A calibration cannot be made or a saved profile cannot be used (missing, corrupt, unfit).

    ``remedy`` is what would fix it in the user's terms (each face words it: flags on the CLI);
    ``profile`` names the profile the error is about (None: no particular one).
    """

    exit_code = 2
    http_status = 400

    def __init__(self, message: str, *, remedy: Remedy | None = None, profile: str | None = None) -> None:
        super().__init__(message, remedy=remedy)
        self.profile = profile


class TargetNotFoundError(CalibrationError):
    """A calibration photo does not show the printed target (the message names the photo)."""
