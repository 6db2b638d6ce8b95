"""Pure rules and scoring cores for Alhambra, Sagrada and Splendor.

Standard library only: no I/O beyond the package's own data, no clock, no numpy.
Each game module offers a frozen state dataclass with ``from_json``/``to_json``,
``validate(state) -> list[Issue]`` and ``score(state) -> report`` (a report has
``to_json()`` and ``to_text()``). ``scoring.registry.GAMES`` maps game ids to them.
"""

from scoring.errors import StateError, TableError
from scoring.issue import Issue

__all__ = ["Issue", "StateError", "TableError"]
