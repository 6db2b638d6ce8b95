"""Pure rules and scoring cores for Alhambra, Sagrada and Splendor.

Standard library only: no I/O beyond the package's own data, no clock, no numpy.
Each game package (``scoring.alhambra``, ``scoring.sagrada``, ``scoring.splendor``) offers a
frozen state dataclass with ``from_json``/``to_json``, ``validate(state) -> list[Issue]`` and
``score(state) -> report``; every report satisfies ``scoring.report.Report`` (typed players
with totals and evidence, ranking, tie-breaks, ``to_json()``, ``to_text()``). Each game's
``GAME`` is a ``scoring.game.Game[State, Report]``; ``scoring.registry.GAMES`` maps game ids
to them.
"""

from scoring.errors import StateError, TableError
from scoring.issue import Issue

__all__ = ["Issue", "StateError", "TableError"]
