"""What every game's score report offers the shells, as typed ``Protocol``s.

The CLI and the review screen read these fields directly (never through ``getattr`` with a
default): each game's report dataclass has them as real typed fields or properties.

- ``players``: one line per player in listed order, each with its ``name`` and ``total``;
- ``ranking``: the player names, best first;
- ``tie_breaks``: one sentence per tie that a rule broke (empty when no rule broke one; a game
  whose tied players share the place, like Alhambra, has none);
- ``to_json()``: the FORMATS.md report document; ``to_text()``: a report to check by eye.

The cells behind each point are game-specific typed evidence on each player line: a Sagrada
player's ``public`` and ``private`` objectives (``Objective.units``, each ``Unit`` with its
``label`` and ``(row, col)`` ``cells``), an Alhambra player's longest ``wall`` (``((x, y),
side)`` segments).

>>> from scoring.registry import GAMES
>>> game = GAMES["sagrada"]
>>> report: Report = game.score(game.generate(__import__("random").Random(3), players=2))
>>> isinstance(report.tie_breaks, tuple), [type(p.total) for p in report.players]
(True, [<class 'int'>, <class 'int'>])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class PlayerTotal(Protocol):
    """One player's line of a report: the name and the total points (Splendor: prestige)."""

    @property
    def name(self) -> str:
        """The player's name as the document gives it."""
        ...

    @property
    def total(self) -> int:
        """The player's points after this scoring."""
        ...


class Report(Protocol):
    """A scored game, as every game's ``score(state)`` returns it."""

    @property
    def players(self) -> Sequence[PlayerTotal]:
        """One line per player, in the document's order."""
        ...

    @property
    def ranking(self) -> tuple[str, ...]:
        """Player names, best first."""
        ...

    @property
    def tie_breaks(self) -> tuple[str, ...]:
        """One sentence per tie a rule broke, in ranking order."""
        ...

    def to_json(self) -> dict[str, Any]:
        """Return the FORMATS.md score report."""
        ...

    def to_text(self) -> str:
        """Return a plain-text report a player can check by eye."""
        ...
