"""The scoring cores keyed by game id, found from the per-game folders: no game is named here.

Each sub-package ``scoring/<game>/`` whose ``GAME`` is a ``Game`` is a game's core; its id is the
folder's name. The shells' registry (``tablescan.games``) adds each game's review form and reader.

>>> sorted(GAMES)
['alhambra', 'sagrada', 'splendor']
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import scoring
from scoring.errors import StateError
from scoring.fields import describe, expect_object
from scoring.game import Game
from scoring.report import Report


def _cores() -> dict[str, Game[Any, Report]]:
    """Return game id -> ``Game`` for every ``scoring/<game>/`` package that defines one."""
    found: dict[str, Game[Any, Report]] = {}
    for info in pkgutil.iter_modules(scoring.__path__):
        if info.ispkg:
            core = getattr(importlib.import_module(f"scoring.{info.name}"), "GAME", None)
            if isinstance(core, Game) and core.id == info.name:
                found[core.id] = core
    return dict(sorted(found.items()))


GAMES: dict[str, Game[Any, Report]] = _cores()


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
