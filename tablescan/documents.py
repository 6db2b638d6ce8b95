"""Game documents (FORMATS.md JSON) as the CLI reads and scores them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scoring.errors import StateError
from scoring.registry import game_of


def read_document(source: str) -> dict:
    """Read a JSON game document from a path or ``-`` (stdin).

    Raises:
        StateError: unreadable file or invalid JSON, naming the file.
    """
    label = "<stdin>" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StateError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise StateError(f"{label}: is a directory, expected a JSON game file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise StateError(f"{label}: cannot read ({error.__class__.__name__}: {error})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise StateError(f"{label}: invalid JSON at line {error.lineno} column {error.colno} ({error.msg})") from None


def score_document(doc: dict, label: str) -> Any:
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
