"""What every game module offers, gathered in one record for the shells."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Game:
    """The entry points of one game's scoring core.

    ``parse`` turns a FORMATS.md document into the game's state (raising ``StateError``),
    ``validate`` lists placement ``Issue``s, ``score`` returns a report with ``to_json()``
    and ``to_text()``, ``generate(rng, **options)`` builds a random legal state.
    """

    id: str
    title: str
    parse: Callable[[Any], Any]
    validate: Callable[[Any], list]
    score: Callable[[Any], Any]
    generate: Callable[..., Any]
