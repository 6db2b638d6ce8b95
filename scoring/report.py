"""What every game's score report offers the shells: typed ``Protocol``s and the evidence records.

The CLI and the review screen read these fields directly (never through ``getattr`` with a
default): each game's report dataclass has them as real typed fields or properties.

- ``players``: one line per player in listed order, each with its ``name``, its ``total`` and
  its ``evidence``;
- ``ranking``: the player names, best first;
- ``tie_breaks``: one sentence per tie that a rule broke (Sagrada, Splendor); Alhambra breaks
  no tie (tied players share the place), so its tuple is always empty;
- ``to_json()``: the FORMATS.md report document; ``to_text()``: a report to check by eye.

Each report checks its hand-off in ``__post_init__`` with ``check_ranking``.

The cells behind each point are ``evidence``: one ``Evidence`` per line of a player's score
that a board position earned, each with the ``Unit``s (a label and its cells, in the game's
own convention) that earned it. Sagrada gives its public objectives and then the private one
(units: rows, columns, sets or dice, cells ``(row, col)``); Alhambra gives each scoring
building type (one unit: its tiles' cells) and then the longest wall (one unit per segment,
labelled by cell and side, cells ``(x, y)``); Splendor scores cards, not board cells, so its
evidence is empty. Games keep their own typed fields too (a Sagrada line's ``public`` and
``private``, an Alhambra line's ``wall`` segments).

>>> from random import Random
>>> from scoring.registry import GAMES
>>> game = GAMES["sagrada"]
>>> report: Report = game.score(game.generate(Random(3), players=2))
>>> isinstance(report, Report), isinstance(report.tie_breaks, tuple)
(True, True)
>>> [type(line.total).__name__ for line in report.players]
['int', 'int']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Cell = tuple[int, int]


@dataclass(frozen=True)
class Unit:
    """One thing that earned points: a row, a column, a set, a die, a building type, a wall segment.

    ``cells`` are the board positions behind it, in the game's own convention.

    >>> Unit("row 1", ((0, 0), (0, 1))).cells[1]
    (0, 1)
    """

    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Evidence:
    """One line of a player's score: its ``id``, its ``points`` and the ``units`` that earned them.

    ``note`` explains the count in words (e.g. the per-value counts behind a Sagrada set card,
    the place behind an Alhambra majority).

    >>> line = Evidence("longest-wall", 2, (Unit("(1, 0) N", ((1, 0),)), Unit("(1, 0) E", ((1, 0),))))
    >>> line.points, line.cells
    (2, ((1, 0),))
    """

    id: str
    points: int
    units: tuple[Unit, ...]
    note: str = ""

    @property
    def cells(self) -> tuple[Cell, ...]:
        """Return every cell behind these points, once each, in the order the units name them.

        >>> Evidence("x", 1, (Unit("a", ((0, 1),)), Unit("b", ((0, 1), (2, 2))))).cells
        ((0, 1), (2, 2))
        """
        return tuple(dict.fromkeys(cell for unit in self.units for cell in unit.cells))


def check_ranking(players: Sequence[PlayerTotal], ranking: Sequence[str], tie_breaks: Sequence[str]) -> None:
    """Check a report's hand-off: the ranking names every player once, the tie-breaks are sentences.

    >>> check_ranking((), ("Ana",), ())
    Traceback (most recent call last):
    ...
    ValueError: ranking: expected each of the players' names once ([]), got ['Ana']

    Raises:
        ValueError: when the ranking is not the players' names in some order, or a tie-break is not a string.
    """
    names = [player.name for player in players]
    if sorted(ranking) != sorted(names):
        raise ValueError(f"ranking: expected each of the players' names once ({names}), got {list(ranking)}")
    if not isinstance(tie_breaks, tuple) or not all(isinstance(line, str) for line in tie_breaks):
        raise ValueError(f"tie_breaks: expected a tuple of sentences, got {tie_breaks!r}")


class PlayerTotal(Protocol):
    """One player's line of a report: the name, the total points (Splendor: prestige), the evidence."""

    @property
    def name(self) -> str:
        """The player's name as the document gives it."""
        ...

    @property
    def total(self) -> int:
        """The player's points after this scoring."""
        ...

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """The lines of the score that board cells earned, each with those cells."""
        ...


@runtime_checkable
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
