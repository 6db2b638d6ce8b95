"""Checked reads from parsed JSON, each failure a ``StateError`` naming the JSON path.

Paths look like ``players[1].palace[3].walls``. Every game's ``from_json`` uses these
helpers so that error messages read the same everywhere.
"""

from __future__ import annotations

from typing import Any

from scoring.errors import StateError

_MISSING = object()


def child(path: str, key: str | int) -> str:
    """Return the JSON path of ``key`` below ``path``.

    >>> child("", "players"), child("players", 1), child("players[1]", "name")
    ('players', 'players[1]', 'players[1].name')
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def describe(value: Any) -> str:
    """Return a short description of a JSON value for error messages.

    >>> describe(True), describe(3), describe("x" * 50)[:12], describe([1, 2])
    ('true', '3', "'xxxxxxxxxxx", 'a list of 2')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 30 else value[:27] + "...")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def fail(path: str, message: str) -> StateError:
    """Build (not raise) a ``StateError`` for ``path``.

    >>> str(fail("players[0].favor_tokens", "expected an integer >= 0, got -1"))
    'players[0].favor_tokens: expected an integer >= 0, got -1'
    """
    return StateError(f"{path or '(document)'}: {message}")


def expect_object(value: Any, path: str) -> dict[str, Any]:
    """Return ``value`` if it is a JSON object.

    >>> expect_object([], "players[0]")
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: players[0]: expected an object, got a list of 0

    Raises:
        StateError: when it is not.
    """
    if not isinstance(value, dict):
        raise fail(path, f"expected an object, got {describe(value)}")
    return value


def expect_list(value: Any, path: str, length: int | None = None, *, min_length: int = 0) -> list[Any]:
    """Return ``value`` if it is a JSON array (of exactly ``length`` items when given).

    >>> expect_list(["a"], "window", 4)
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: window: expected 4 items, got 1

    Raises:
        StateError: when it is not a list or has the wrong length.
    """
    if not isinstance(value, list):
        raise fail(path, f"expected a list, got {describe(value)}")
    if length is not None and len(value) != length:
        raise fail(path, f"expected {length} items, got {len(value)}")
    if len(value) < min_length:
        raise fail(path, f"expected at least {min_length} items, got {len(value)}")
    return value


def expect_int(value: Any, path: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` if it is an integer within ``[low, high]`` (booleans are not integers).

    >>> expect_int(3, "x", low=0)
    3
    >>> expect_int(2.0, "x")
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: x: expected an integer, got 2.0

    Raises:
        StateError: when it is not an integer or is out of range.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"expected an integer{_range_text(low, high)}, got {describe(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise fail(path, f"expected an integer{_range_text(low, high)}, got {value}")
    return value


def expect_str(value: Any, path: str, choices: tuple[str, ...] | None = None) -> str:
    """Return ``value`` if it is a string (one of ``choices`` when given).

    >>> expect_str("red", "color", ("red", "blue"))
    'red'

    Raises:
        StateError: when it is not a string or not one of the choices.
    """
    if not isinstance(value, str):
        raise fail(path, f"expected a string, got {describe(value)}")
    if choices is not None and value not in choices:
        raise fail(path, f"expected one of {', '.join(choices)}; got {describe(value)}")
    return value


def field(obj: dict[str, Any], key: str, path: str, default: Any = _MISSING) -> Any:
    """Return ``obj[key]``, or ``default`` when absent (or null) and a default is given.

    >>> field({"a": None}, "a", "doc", default=0), field({"a": 1}, "a", "doc")
    (0, 1)

    Raises:
        StateError: when the key is required and missing.
    """
    value = obj.get(key)
    if value is None:
        if default is _MISSING:
            raise fail(child(path, key), "missing required key")
        return default
    return value


def _range_text(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" {low}-{high}"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""
