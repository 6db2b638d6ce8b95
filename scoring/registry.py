"""The one ``GAMES`` dict, keyed by game id."""

from __future__ import annotations

from typing import Any

from scoring import alhambra, sagrada, splendor
from scoring.errors import StateError
from scoring.fields import describe, expect_object
from scoring.game import Game
from scoring.report import Report

GAMES: dict[str, Game[Any, Report]] = {module.GAME.id: module.GAME for module in (alhambra, sagrada, splendor)}


def game_of(doc: Any) -> Game[Any, Report]:
    """Return the ``Game`` named by a document's ``game`` key.

    >>> game_of({"game": "sagrada"}).id
    'sagrada'

    Raises:
        StateError: when the document is not an object or names no known game.
    """
    expect_object(doc, "")
    name = doc.get("game")
    if not isinstance(name, str) or name not in GAMES:
        raise StateError(f"game: expected one of {', '.join(GAMES)}; got {describe(name)}")
    return GAMES[name]
