"""Errors the scanner reports to users, each one line with what to do next.

An error may carry a ``remedy``: what the user could do that the scanner cannot say in a face's
own terms. The message words it plainly (``Remedy.words``, e.g. "mark the board's corners by
hand"); each face replaces those words with its own (``--corners x,y,...`` on the CLI, dragging
the corners on the review screen), so no engine message names a CLI flag or a button.
"""

from __future__ import annotations

from enum import Enum

from scoring.errors import TableError


class Remedy(Enum):
    """What would fix a scan that a face can offer in its own terms; ``words`` is how messages say it plainly."""

    SET_CORNERS = "mark the board's corners by hand"
    CHOOSE_GAME = "choose a game the scanner reads"
    ADAPT_AGAIN = "adapt again to re-fit it, or reset the adaptation to use the shipped models"
    RESET_ADAPTATION = "reset the adaptation to use the shipped models"

    @property
    def words(self) -> str:
        """The plain words messages use for this remedy."""
        return str(self.value)


class ScanError(TableError):
    """A scanner error that may name a ``remedy`` (None: the message says all there is to do)."""

    def __init__(self, message: str, *, remedy: Remedy | None = None) -> None:
        super().__init__(message)
        self.remedy = remedy


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


def in_own_words(error: BaseException, wording: dict[Remedy, str]) -> str:
    """The error's message (one line) with its remedy's plain words replaced by a face's ``wording`` of it.

    A remedy the message does not spell out is added at the end.

    >>> in_own_words(PhotoError("x.jpg: retake it, or mark the board's corners by hand", remedy=Remedy.SET_CORNERS),
    ...              {Remedy.SET_CORNERS: "drag the corners"})
    'x.jpg: retake it, or drag the corners'
    """
    message = str(error).replace("\n", " ")
    remedy = error.remedy if isinstance(error, ScanError) else None
    if remedy is None or remedy not in wording:
        return message
    if remedy.words in message:
        return message.replace(remedy.words, wording[remedy])
    return f"{message}; {wording[remedy]}"
