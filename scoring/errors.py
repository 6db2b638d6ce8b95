"""The error hierarchy shared by every tablescan package.

Each class carries the process exit code and the HTTP status the shells use.

An error may carry a ``remedy``: what the user could do that an engine cannot say in a face's
own terms. The message words it plainly (``Remedy.words``, e.g. "mark the board's corners by
hand"); each face replaces those words with its own (``--corners x,y,...`` on the CLI, dragging
the corners on the review screen), so no engine message names a CLI flag or a button. The remedies
live here, at the root, so that every engine (``scanner``, ``calibration``) can name them.
"""

from __future__ import annotations

from enum import Enum


class Remedy(Enum):
    """What would fix an error that a face can offer in its own terms; ``words`` is how messages say it plainly."""

    SET_CORNERS = "mark the board's corners by hand"
    CHOOSE_GAME = "choose a game the scanner reads"
    ADAPT_AGAIN = "adapt again to re-fit it, or reset the adaptation to use the shipped models"
    RESET_ADAPTATION = "reset the adaptation to use the shipped models"
    USE_CHARUCO = "calibrate with the ChArUco target kind"
    SKIP_MISSING = "leave out the photos where it is not found"
    GIVE_REGION = "mark a white or light grey region by hand"
    MAKE_PROFILE = "make it by calibrating a camera or colour under that name (the saved profiles can be listed)"

    @property
    def words(self) -> str:
        """The plain words messages use for this remedy.

        >>> Remedy.SET_CORNERS.words
        "mark the board's corners by hand"
        """
        return str(self.value)


class TableError(Exception):
    """Root of every error tablescan reports to a user as one line; ``remedy`` (None: the message says all there is to do)."""

    exit_code = 1
    http_status = 500

    def __init__(self, message: str = "", *, remedy: Remedy | None = None) -> None:
        super().__init__(message)
        self.remedy = remedy


def in_own_words(error: BaseException, wording: dict[Remedy, str]) -> str:
    """The error's message (one line) with its remedy's plain words replaced by a face's ``wording`` of it.

    A remedy the message does not spell out is added at the end.

    >>> in_own_words(TableError("x.jpg: retake it, or mark the board's corners by hand", remedy=Remedy.SET_CORNERS),
    ...              {Remedy.SET_CORNERS: "drag the corners"})
    'x.jpg: retake it, or drag the corners'
    >>> in_own_words(TableError("p.png: no reference", remedy=Remedy.GIVE_REGION), {Remedy.GIVE_REGION: "use --region"})
    'p.png: no reference; use --region'
    """
    message = str(error).replace("\n", " ")
    remedy = error.remedy if isinstance(error, TableError) else None
    if remedy is None or remedy not in wording:
        return message
    if remedy.words in message:
        return message.replace(remedy.words, wording[remedy])
    return f"{message}; {wording[remedy]}"


class StateError(TableError, ValueError):
    """A game document is malformed: wrong JSON, type, name or impossible value.

    The message starts with the JSON path of the offending value, e.g.
    ``players[1].window[2]: cell 'X7' is not a die``.

    >>> str(StateError("players[0].name: expected a string, got 3"))
    'players[0].name: expected a string, got 3'
    """

    exit_code = 2
    http_status = 400
