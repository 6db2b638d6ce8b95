"""Errors the scanner reports to users, each one line with what to do next.

An error may carry a ``remedy`` (``scoring.errors.Remedy``, re-exported here with ``in_own_words``):
what the user could do that the scanner cannot say in a face's own terms; each face words it itself,
so no engine message names a CLI flag or a button.
"""

from __future__ import annotations

from scoring.errors import Remedy, TableError, in_own_words

__all__ = ["AdaptationError", "BoardNotFoundError", "ModelError", "PhotoError", "Remedy", "ScanError", "in_own_words"]


class ScanError(TableError):
    """A scanner error that may name a ``remedy`` (None: the message says all there is to do)."""

    def __init__(self, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(message, remedy=remedy)


class PhotoError(ScanError):
    """The photo cannot be used: unreadable, not an image, too small, too large, too dark."""

    exit_code = 2
    http_status = 400


class BoardNotFoundError(PhotoError):
    """No board (or more than one) could be found in an otherwise readable photo."""

    http_status = 422


class ModelError(ScanError):
    """A shipped model file is missing, truncated or not the one recorded."""

    exit_code = 1
    http_status = 500


class AdaptationError(ScanError):
    """An adaptation file is missing, corrupt, or was fitted for another model than the shipped one.

    ``profile`` names the calibration profile whose adaptation it is (None: no profile's).
    """

    exit_code = 2
    http_status = 422

    def __init__(self, message: str, *, remedy: Remedy | None = None, profile: str | None = None) -> None:
        super().__init__(message, remedy=remedy)
        self.profile = profile
