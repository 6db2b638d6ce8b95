"""Game documents (FORMATS.md JSON) as the CLI reads and scores them.

What is read is bounded: at most ``MAX_DOCUMENT_BYTES`` bytes, ``MAX_DEPTH`` levels of nesting and
``MAX_NUMBER_DIGITS`` characters per number, so a hostile or mistaken file gets one line, never a
traceback or a machine out of memory.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

from scoring.errors import StateError
from scoring.registry import game_of

FORMATS_DOC = "docs/formats.md"  # the project's reference of its file formats, command line and exit codes
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
MAX_NUMBER_DIGITS = 100
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def source_label(source: str) -> str:
    """Return how messages name ``source``: ``<stdin>`` for ``-``, else the path as given."""
    return "<stdin>" if source == "-" else source


def read_limited(stream: BinaryIO, label: str, limit: int, what: str) -> bytes:
    """Read at most ``limit`` bytes of ``stream``.

    Raises:
        StateError: the stream holds more than ``limit`` bytes (the message states the limit).
    """
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise StateError(f"{label}: more than {limit // (1024 * 1024)} MiB, the limit for {what}; give a smaller file")
    return data


def read_source_bytes(source: str, limit: int, what: str) -> bytes:
    """Return the bytes of a path or ``-`` (standard input), at most ``limit`` of them.

    Raises:
        StateError: missing, a folder, unreadable or over the limit.
    """
    label = source_label(source)
    if source == "-":
        return read_limited(sys.stdin.buffer, label, limit, what)
    try:
        with open(source, "rb") as stream:
            return read_limited(stream, label, limit, what)
    except FileNotFoundError:
        raise StateError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise StateError(f"{label}: is a directory, expected {what}") from None
    except OSError as error:
        raise StateError(f"{label}: cannot read ({error.strerror or error})") from None


def decode_text(data: bytes, label: str) -> str:
    """Return UTF-8 ``data`` as text (a leading byte-order mark is dropped).

    Raises:
        StateError: the bytes are not UTF-8 text.
    """
    if data.startswith(_UTF16_BOMS):
        raise StateError(f"{label}: not UTF-8 text (it looks like UTF-16); save it as UTF-8")
    try:
        return data.removeprefix(_UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as error:
        raise StateError(f"{label}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); save it as UTF-8") from None


def _whole_number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits, over the {MAX_NUMBER_DIGITS}-digit limit")
    return int(text)


def _fraction(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text)} characters, over the {MAX_NUMBER_DIGITS}-character limit")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is too large")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` levels of lists and objects (checked without recursion)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def parse_json_text(text: str, label: str) -> Any:
    """Parse JSON text within the depth and number-length limits.

    Raises:
        StateError: invalid JSON, nesting deeper than ``MAX_DEPTH`` or a number longer than ``MAX_NUMBER_DIGITS``.
    """
    too_deep = f"{label}: nested more than {MAX_DEPTH} levels deep, the limit for a game file"
    try:
        value = json.loads(text, parse_int=_whole_number, parse_float=_fraction, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise StateError(f"{label}: invalid JSON at line {error.lineno} column {error.colno} ({error.msg})") from None
    except RecursionError:
        raise StateError(too_deep) from None
    except ValueError as error:
        raise StateError(f"{label}: {error}; write numbers as plain JSON numbers") from None
    if _depth_over(value, MAX_DEPTH):
        raise StateError(too_deep)
    return value


def read_document(source: str) -> Any:
    """Read a JSON game document from a path or ``-`` (stdin), within the size, depth and number limits.

    Raises:
        StateError: unreadable file, not UTF-8, invalid JSON or over a limit, naming the file.
    """
    label = source_label(source)
    return parse_json_text(decode_text(read_source_bytes(source, MAX_DOCUMENT_BYTES, "a JSON game file"), label), label)


def score_document(doc: Any, label: str) -> Any:
    """Parse and score a game document; errors are prefixed with ``label``.

    Raises:
        StateError: the document does not follow FORMATS.md.
    """
    try:
        game = game_of(doc)
        state = game.parse(doc)
    except StateError as error:
        raise StateError(f"{label}: {error}") from None
    return game.score(state)
