"""The game facts shipped inside the package (tiles, patterns, tool cards, cards)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load_data(game: str, name: str) -> dict[str, Any]:
    """Return the parsed JSON data file ``scoring/<game>/data/<name>.json`` (cached, read-only use).

    >>> len(load_data("alhambra", "tiles")["tiles"])
    54

    Raises:
        FileNotFoundError: when no such data file is shipped.
    """
    text = resources.files("scoring").joinpath(game, "data", f"{name}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
