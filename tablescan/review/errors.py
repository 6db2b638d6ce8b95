"""Errors of the review screen, each a ``TableError`` with its HTTP status."""

from __future__ import annotations

from scoring.errors import TableError


class NotFoundError(TableError):
    """A game, player or photo named in a request does not exist."""

    exit_code = 2
    http_status = 404


class UploadError(TableError):
    """An uploaded file is not a usable image."""

    exit_code = 2
    http_status = 400


class PhotoRefusedError(UploadError):
    """A replacement photo the scanner cannot read: the player's earlier, read photo is kept."""

    http_status = 422


class UploadTooLargeError(UploadError):
    """An upload is over the size cap."""

    http_status = 413


class LengthRequiredError(UploadError):
    """A multipart upload that does not say its size (it could not be capped before parsing)."""

    http_status = 411


class ForbiddenError(TableError):
    """A request without the access token in LAN mode."""

    exit_code = 2
    http_status = 403


class ScannerUnavailableError(TableError):
    """A rescan was asked for but this installation has no photo scanner for the game."""

    exit_code = 1
    http_status = 503


class DatabaseError(TableError):
    """The review database cannot be opened or was written by a newer tablescan."""

    exit_code = 2
    http_status = 500
