"""Rule findings that are not errors: a state parses but breaks a placement rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Issue:
    """One placement-rule finding, for the review screen and the score report.

    ``cells`` are grid positions in the game's own convention (Sagrada ``(row, col)``,
    Alhambra ``(x, y)``); ``player`` is the player's index or ``None`` for the whole game;
    ``explained_by`` names tool cards (Sagrada) that could make the finding legal.

    >>> Issue("orthogonal-same-color", "R3 next to R5", cells=((0, 0),), player=0).rule
    'orthogonal-same-color'
    """

    rule: str
    detail: str
    cells: tuple[tuple[int, int], ...] = ()
    player: int | None = None
    explained_by: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the generic JSON form (games may shape their own report entries).

        >>> Issue("isolated-die", "r1c1 alone", ((0, 0),), player=1).to_json()
        {'rule': 'isolated-die', 'detail': 'r1c1 alone', 'cells': [[0, 0]], 'player': 1}
        """
        doc: dict[str, Any] = {"rule": self.rule, "detail": self.detail, "cells": [list(c) for c in self.cells]}
        if self.player is not None:
            doc["player"] = self.player
        if self.explained_by:
            doc["explained_by"] = list(self.explained_by)
        return doc
