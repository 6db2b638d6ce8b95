"""Errors the scanner reports to users, each one line with what to do next."""

from scoring.errors import TableError


class PhotoError(TableError):
    """The photo cannot be used: unreadable, not an image, too small, too large, too dark."""

    exit_code = 2
    http_status = 400


class BoardNotFoundError(PhotoError):
    """No board (or more than one) could be found in an otherwise readable photo."""

    http_status = 422


class ModelError(TableError):
    """A shipped model file is missing, truncated or not the one recorded."""

    exit_code = 1
    http_status = 500


class AdaptationError(TableError):
    """An adaptation file is missing, corrupt, or was fitted for another model than the shipped one."""

    exit_code = 2
    http_status = 422
