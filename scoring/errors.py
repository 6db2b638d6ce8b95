"""The error hierarchy shared by every tablescan package.

Each class carries the process exit code and the HTTP status the shells use.
"""


class TableError(Exception):
    """Root of every error tablescan reports to a user as one line."""

    exit_code = 1
    http_status = 500


class StateError(TableError, ValueError):
    """A game document is malformed: wrong JSON, type, name or impossible value.

    The message starts with the JSON path of the offending value, e.g.
    ``players[1].window[2]: cell 'X7' is not a die``.

    >>> str(StateError("players[0].name: expected a string, got 3"))
    'players[0].name: expected a string, got 3'
    """

    exit_code = 2
    http_status = 400
