"""Sagrada's 24 window pattern cards and 12 tool cards, as shipped in ``scoring/sagrada/data``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from scoring.data import load_data
from scoring.errors import StateError
from scoring.sagrada.window import (
    COLS,
    PRINTS,
    ROWS,
    Cell,
    Die,
    describe_kind,
)


@dataclass(frozen=True)
class Pattern:
    """One window pattern card side: ``grid`` is 4 strings of 5 prints.

    A print is ``.`` (no restriction), a colour letter or a digit 1-6.

    >>> PATTERNS["Virtus"].restriction((0, 0)), PATTERNS["Virtus"].difficulty
    ('4', 5)

    Raises:
        StateError: on a malformed grid or a difficulty outside 1-6.
    """

    name: str
    difficulty: int
    grid: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise StateError(f"pattern name: expected a non-empty string, got {self.name!r}")
        if isinstance(self.difficulty, bool) or not isinstance(self.difficulty, int) or not 1 <= self.difficulty <= 6:
            raise StateError(f"pattern {self.name}: difficulty must be 1-6, got {self.difficulty!r}")
        if not isinstance(self.grid, tuple) or len(self.grid) != ROWS:
            raise StateError(f"pattern {self.name}: expected a tuple of {ROWS} rows, got {describe_kind(self.grid)}")
        for r, row in enumerate(self.grid):
            if not isinstance(row, str) or len(row) != COLS or any(ch not in PRINTS for ch in row):
                raise StateError(f"pattern {self.name}: row {r + 1} must be {COLS} of {''.join(PRINTS)}, got {row!r}")

    def restriction(self, cell: Cell) -> str:
        """Return the print of a cell: ``.``, a colour letter or a digit.

        >>> PATTERNS["Virtus"].restriction((0, 0)) in PRINTS
        True
        """
        return self.grid[cell[0]][cell[1]]

    def allows(self, cell: Cell, die: Die) -> bool:
        """Return whether ``die`` satisfies the print at ``cell``.

        >>> PATTERNS["Virtus"].allows((0, 0), Die("R", 4)), PATTERNS["Virtus"].allows((0, 4), Die("R", 4))
        (True, False)
        """
        return print_allows(self.restriction(cell), die)


def print_allows(mark: str, die: Die) -> bool:
    """Return whether a die may sit on a cell with print ``mark``.

    >>> print_allows(".", Die("R", 1)), print_allows("3", Die("R", 1)), print_allows("R", Die("R", 1))
    (True, False, True)
    """
    return mark == "." or mark == die.color or mark == str(die.value)


def _load_patterns() -> dict[str, Pattern]:
    found = {}
    for entry in load_data("sagrada", "patterns")["patterns"]:
        pattern = Pattern(entry["name"], entry["difficulty"], tuple(entry["grid"]))
        found[pattern.name] = pattern
    return found


PATTERNS: dict[str, Pattern] = _load_patterns()


def pattern_named(name: object, path: str = "pattern") -> Pattern:
    """Return the pattern card called ``name``, suggesting near names on a miss.

    >>> pattern_named("Virtus").difficulty
    5
    >>> pattern_named("Virtue")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: pattern: unknown pattern 'Virtue' (did you mean 'Virtus'?); the name ...

    Raises:
        StateError: when no pattern has that name.
    """
    if isinstance(name, Pattern):
        return name
    if not isinstance(name, str):
        raise StateError(f"{path}: expected a pattern name (a string), got {describe_kind(name)}")
    if name in PATTERNS:
        return PATTERNS[name]
    folded = {key.casefold().replace("\u2019", "'"): key for key in PATTERNS}
    key = name.casefold().replace("\u2019", "'")
    if key in folded:
        return PATTERNS[folded[key]]
    near = difflib.get_close_matches(name, list(PATTERNS), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise StateError(f"{path}: unknown pattern {name!r}{hint}; the name is printed at the foot of the pattern card")


@dataclass(frozen=True)
class Tool:
    """One tool card: its name, colour, effect and the window findings it can explain.

    >>> TOOLS["Cork-backed Straightedge"].explains
    ('isolated-die',)
    """

    name: str
    color: str
    effect: str
    explains: tuple[str, ...]


TOOLS: dict[str, Tool] = {
    entry["name"]: Tool(entry["name"], entry["color"], entry["effect"], tuple(entry["explains"]))
    for entry in load_data("sagrada", "tools")["tools"]
}


def tools_explaining(rule: str) -> tuple[str, ...]:
    """Return the names of the tool cards that can make a finding of ``rule`` legal.

    >>> tools_explaining("value-restriction")
    ('Copper Foil Burnisher',)
    >>> tools_explaining("orthogonal-same-color")
    ()
    """
    return tuple(tool.name for tool in TOOLS.values() if rule in tool.explains)
