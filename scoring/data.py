"""The game facts shipped inside the package (tiles, patterns, tool cards, cards)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def load_data(name: str) -> dict:
    """Return the parsed JSON data file ``scoring/data/<name>.json`` (cached, read-only use).

    >>> len(load_data("alhambra_tiles")["tiles"])
    54

    Raises:
        FileNotFoundError: when no such data file is shipped.
    """
    text = resources.files("scoring").joinpath("data", f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)
