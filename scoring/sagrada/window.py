"""Sagrada windows: dice, cells, the 24 pattern cards, the 12 tool cards and placement checks.

A window is 4 rows of 5 cells, top row first; a cell holds a ``Die`` or ``None`` (empty).
Cells are ``(row, col)``, zero-based from the top-left. Human-facing text (issue details,
reports) numbers rows and columns from 1, e.g. ``row 1 col 3``.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Iterator
from dataclasses import dataclass

from scoring.data import load_data
from scoring.errors import StateError
from scoring.issue import Issue

COLORS: tuple[str, ...] = ("R", "Y", "G", "B", "P")
COLOR_NAMES: dict[str, str] = {"R": "red", "Y": "yellow", "G": "green", "B": "blue", "P": "purple"}
COLOR_LETTERS: dict[str, str] = {name: letter for letter, name in COLOR_NAMES.items()}
VALUES: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
ROWS, COLS = 4, 5
PRINTS: tuple[str, ...] = (".",) + COLORS + tuple(str(v) for v in VALUES)
DICE_PER_COLOR = 18

Cell = tuple[int, int]


@dataclass(frozen=True, order=True)
class Die:
    """One die: a colour letter (``R Y G B P``) and a pip value 1-6.

    >>> Die("B", 4)
    Die(color='B', value=4)
    >>> Die("X", 4)
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: die colour: expected one of R, Y, G, B, P; got 'X'

    Raises:
        StateError: on an unknown colour or a value outside 1-6.
    """

    color: str
    value: int

    def __post_init__(self) -> None:
        if self.color not in COLORS:
            raise StateError(f"die colour: expected one of {', '.join(COLORS)}; got {self.color!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, int) or not 1 <= self.value <= 6:
            raise StateError(f"die value: expected an integer 1-6, got {self.value!r}")

    def __str__(self) -> str:
        return f"{self.color}{self.value}"


Window = tuple[tuple["Die | None", ...], ...]


def cell_problem(text: object) -> str | None:
    """Return why ``text`` is not a window cell (``None`` when it is one).

    >>> cell_problem("B4") is None, cell_problem(".") is None
    (True, True)
    >>> cell_problem("R7")
    "cell 'R7' is not a die: the value must be 1-6"
    """
    if not isinstance(text, str):
        return f"cell {text!r} is not a string"
    if text == ".":
        return None
    if len(text) == 2 and text[0] in COLORS:
        if text[1] in "123456":
            return None
        return f"cell {text!r} is not a die: the value must be 1-6"
    if len(text) == 2 and text[1] in "123456" and text[0].upper() in COLORS:
        return f"cell {text!r} is not a die: write the colour letter in upper case ({text.upper()!r})"
    return (
        f"cell {text!r} is not a die: expected a colour letter ({' '.join(COLORS)}) "
        "and a value 1-6 like 'B4', or '.' for empty"
    )


def parse_cell(text: str) -> Die | None:
    """Return the die a cell text names, ``None`` for ``"."``; inverse of ``cell_name``.

    >>> parse_cell("B4"), parse_cell(".")
    (Die(color='B', value=4), None)

    Raises:
        StateError: when the text is not ``.`` or a colour letter and a value 1-6.
    """
    problem = cell_problem(text)
    if problem is not None:
        raise StateError(problem)
    return None if text == "." else Die(text[0], int(text[1]))


def cell_name(die: Die | None) -> str:
    """Return the cell text of a die (``"."`` for an empty cell); inverse of ``parse_cell``.

    >>> cell_name(Die("G", 6)), cell_name(None)
    ('G6', '.')
    """
    return "." if die is None else f"{die.color}{die.value}"


def parse_window(rows: object, path: str = "window") -> Window:
    """Return the window that FORMATS.md row strings describe; inverse of ``window_rows``.

    >>> parse_window(["B4 . . . .", ". . . . .", ". . . . .", ". . . . R1"])[3][4]
    Die(color='R', value=1)
    >>> parse_window(["B4 . . .", "", "", ""], "players[0].window")
    Traceback (most recent call last):
    ...
    scoring.errors.StateError: players[0].window[0]: expected 5 cells separated by spaces, got 4

    Raises:
        StateError: on anything but 4 strings of 5 valid cells, naming the JSON path.
    """
    if not isinstance(rows, list):
        raise StateError(f"{path}: expected a list of {ROWS} row strings, got {_kind(rows)}")
    if len(rows) != ROWS:
        raise StateError(f"{path}: expected {ROWS} rows (top row first), got {len(rows)}")
    window = []
    for r, row in enumerate(rows):
        row_path = f"{path}[{r}]"
        if not isinstance(row, str):
            raise StateError(f"{row_path}: expected a string of {COLS} cells like 'B4 . R3 G1 Y2', got {_kind(row)}")
        cells = row.split()
        if len(cells) != COLS:
            raise StateError(f"{row_path}: expected {COLS} cells separated by spaces, got {len(cells)}")
        parsed = []
        for text in cells:
            problem = cell_problem(text)
            if problem is not None:
                raise StateError(f"{row_path}: {problem}")
            parsed.append(parse_cell(text))
        window.append(tuple(parsed))
    return tuple(window)


def window_rows(window: Window) -> list[str]:
    """Return the FORMATS.md row strings of a window; inverse of ``parse_window``.

    >>> window_rows(empty_window())[0]
    '. . . . .'
    """
    return [" ".join(cell_name(die) for die in row) for row in window]


def check_window(window: object, path: str = "window") -> Window:
    """Return ``window`` if it is 4 tuples of 5 ``Die``/``None`` entries.

    >>> check_window(empty_window()) == empty_window()
    True

    Raises:
        StateError: when it is not shaped like a window.
    """
    if not isinstance(window, tuple) or len(window) != ROWS:
        raise StateError(f"{path}: expected a tuple of {ROWS} rows, got {_kind(window)}")
    for r, row in enumerate(window):
        if not isinstance(row, tuple) or len(row) != COLS:
            raise StateError(f"{path}[{r}]: expected a tuple of {COLS} cells, got {_kind(row)}")
        for c, die in enumerate(row):
            if die is not None and not isinstance(die, Die):
                raise StateError(f"{path}[{r}][{c}]: expected a Die or None, got {_kind(die)}")
    return window


def empty_window() -> Window:
    """Return a window with no dice.

    >>> sum(die is None for row in empty_window() for die in row)
    20
    """
    return tuple(tuple(None for _ in range(COLS)) for _ in range(ROWS))


def cells() -> Iterator[Cell]:
    """Yield every ``(row, col)`` in reading order.

    >>> list(cells())[:3], len(list(cells()))
    ([(0, 0), (0, 1), (0, 2)], 20)
    """
    for r in range(ROWS):
        for c in range(COLS):
            yield (r, c)


def dice_of(window: Window) -> list[tuple[Cell, Die]]:
    """Return ``((row, col), die)`` for every die, in reading order.

    >>> dice_of(parse_window([". B4 . . .", ". . . . .", ". . . . .", ". . . . ."]))
    [((0, 1), Die(color='B', value=4))]
    """
    return [((r, c), die) for r, row in enumerate(window) for c, die in enumerate(row) if die is not None]


def orthogonal(cell: Cell) -> list[Cell]:
    """Return the orthogonal neighbours of a cell inside the window.

    >>> orthogonal((0, 0))
    [(1, 0), (0, 1)]
    """
    return _inside(cell, ((-1, 0), (1, 0), (0, -1), (0, 1)))


def diagonal(cell: Cell) -> list[Cell]:
    """Return the diagonal neighbours of a cell inside the window.

    >>> diagonal((0, 0))
    [(1, 1)]
    """
    return _inside(cell, ((-1, -1), (-1, 1), (1, -1), (1, 1)))


def on_edge(cell: Cell) -> bool:
    """Return whether a cell lies on the window's outer edge.

    >>> on_edge((0, 2)), on_edge((1, 2))
    (True, False)
    """
    r, c = cell
    return r in (0, ROWS - 1) or c in (0, COLS - 1)


def place_name(cell: Cell) -> str:
    """Return the human name of a cell, counting from 1.

    >>> place_name((0, 2))
    'row 1 col 3'
    """
    return f"row {cell[0] + 1} col {cell[1] + 1}"


def short_place(cell: Cell) -> str:
    """Return the compact human name of a cell, counting from 1.

    >>> short_place((3, 4))
    'r4c5'
    """
    return f"r{cell[0] + 1}c{cell[1] + 1}"


def _inside(cell: Cell, steps: tuple[tuple[int, int], ...]) -> list[Cell]:
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in steps if 0 <= r + dr < ROWS and 0 <= c + dc < COLS]


def _kind(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, str):
        return repr(value if len(value) <= 30 else value[:27] + "...")
    return "null" if value is None else type(value).__name__


# ---------------------------------------------------------------- pattern and tool cards


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
            raise StateError(f"pattern {self.name}: expected a tuple of {ROWS} rows, got {_kind(self.grid)}")
        for r, row in enumerate(self.grid):
            if not isinstance(row, str) or len(row) != COLS or any(ch not in PRINTS for ch in row):
                raise StateError(
                    f"pattern {self.name}: row {r + 1} must be {COLS} of {''.join(PRINTS)}, got {row!r}"
                )

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
    scoring.errors.StateError: pattern: unknown pattern 'Virtue' (did you mean 'Virtus'?); see ...

    Raises:
        StateError: when no pattern has that name.
    """
    if isinstance(name, Pattern):
        return name
    if not isinstance(name, str):
        raise StateError(f"{path}: expected a pattern name (a string), got {_kind(name)}")
    if name in PATTERNS:
        return PATTERNS[name]
    folded = {key.casefold().replace("\u2019", "'"): key for key in PATTERNS}
    key = name.casefold().replace("\u2019", "'")
    if key in folded:
        return PATTERNS[folded[key]]
    near = difflib.get_close_matches(name, list(PATTERNS), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise StateError(f"{path}: unknown pattern {name!r}{hint}; see scoring/<game>/data/sagrada_patterns.json")


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


# ---------------------------------------------------------------- placement checks

RULES: tuple[str, ...] = (
    "orthogonal-same-color",
    "orthogonal-same-value",
    "color-restriction",
    "value-restriction",
    "isolated-die",
    "no-edge-die",
)


def window_violations(window: Window, pattern: Pattern | None = None) -> list[Issue]:
    """Return every placement-rule break in a finished window, in ``RULES`` order.

    Same colour or value orthogonally adjacent is never legal (a misread or a mistake). A die
    off its pattern print (when ``pattern`` is given), a die touching no other die (when the
    window has two or more dice) and a window with dice but none on its edge can each be the
    work of a tool card: ``explained_by`` names those cards.

    >>> w = parse_window(["R3 R5 . . .", ". . . . .", ". . . . .", ". . . . ."])
    >>> [(i.rule, i.cells) for i in window_violations(w)]
    [('orthogonal-same-color', ((0, 0), (0, 1)))]
    """
    window = check_window(window)
    issues: list[Issue] = []
    placed = dice_of(window)
    pairs = [
        (cell, die, other, neighbour)
        for cell, die in placed
        for other in orthogonal(cell)
        if other > cell and (neighbour := window[other[0]][other[1]]) is not None
    ]
    for cell, die, other, neighbour in pairs:
        if die.color == neighbour.color:
            issues.append(
                Issue(
                    "orthogonal-same-color",
                    f"{die} at {place_name(cell)} and {neighbour} at {place_name(other)} are orthogonally "
                    f"adjacent and both {COLOR_NAMES[die.color]}",
                    cells=(cell, other),
                )
            )
    for cell, die, other, neighbour in pairs:
        if die.value == neighbour.value:
            issues.append(
                Issue(
                    "orthogonal-same-value",
                    f"{die} at {place_name(cell)} and {neighbour} at {place_name(other)} are orthogonally "
                    f"adjacent and both show {die.value}",
                    cells=(cell, other),
                )
            )
    if pattern is not None:
        for rule, is_color in (("color-restriction", True), ("value-restriction", False)):
            for cell, die in placed:
                mark = pattern.restriction(cell)
                if mark == "." or (mark in COLORS) != is_color or print_allows(mark, die):
                    continue
                wanted = f"a {COLOR_NAMES[mark]} die" if is_color else f"a {mark}"
                issues.append(
                    Issue(
                        rule,
                        f"{die} at {place_name(cell)} sits where {pattern.name} asks for {wanted}",
                        cells=(cell,),
                        explained_by=tools_explaining(rule),
                    )
                )
    if len(placed) >= 2:
        for cell, die in placed:
            around = orthogonal(cell) + diagonal(cell)
            if all(window[r][c] is None for r, c in around):
                issues.append(
                    Issue(
                        "isolated-die",
                        f"{die} at {place_name(cell)} touches no other die, not even diagonally",
                        cells=(cell,),
                        explained_by=tools_explaining("isolated-die"),
                    )
                )
    if placed and not any(on_edge(cell) for cell, _ in placed):
        issues.append(
            Issue(
                "no-edge-die",
                f"none of the {len(placed)} dice is on the window's edge (the first die must be placed there)",
                cells=tuple(cell for cell, _ in placed),
                explained_by=tools_explaining("no-edge-die"),
            )
        )
    return issues


# ---------------------------------------------------------------- generation


def generate_window(
    rng: random.Random,
    pattern: Pattern | None = None,
    empty: int = 0,
    supply: dict[str, int] | None = None,
) -> Window:
    """Return a random legal window: no placement-rule break at all.

    No two orthogonally adjacent dice share a colour or value, every die obeys ``pattern``'s
    prints (when given), exactly ``empty`` cells stay empty and the dice form one group,
    touching each other at least diagonally, that reaches the edge. ``supply`` (colour letter
    -> dice left in the bag) is decremented as dice are used; colours that run out are avoided.

    >>> w = generate_window(random.Random(1), PATTERNS["Virtus"], empty=2)
    >>> window_violations(w, PATTERNS["Virtus"]), sum(d is None for row in w for d in row)
    ([], 2)

    Raises:
        ValueError: when ``empty`` is not 0-20 or no legal window exists for the supply.
    """
    if isinstance(empty, bool) or not isinstance(empty, int) or not 0 <= empty <= ROWS * COLS:
        raise ValueError(f"empty: expected an integer 0-{ROWS * COLS}, got {empty!r}")
    for _ in range(50):
        occupied = _random_group(rng, ROWS * COLS - empty)
        filled = _fill(rng, occupied, pattern, supply)
        if filled is not None:
            if supply is not None:
                for die in filled.values():
                    supply[die.color] -= 1
            return tuple(tuple(filled.get((r, c)) for c in range(COLS)) for r in range(ROWS))
    raise ValueError("no legal window found for this pattern and dice supply")


def _random_group(rng: random.Random, size: int) -> set[Cell]:
    """Grow a random group of ``size`` cells from an edge cell, each touching the group."""
    if size == 0:
        return set()
    if size == ROWS * COLS:
        return set(cells())
    group = {rng.choice([cell for cell in cells() if on_edge(cell)])}
    while len(group) < size:
        frontier = sorted({n for cell in group for n in orthogonal(cell) + diagonal(cell)} - group)
        group.add(rng.choice(frontier))
    return group


def _fill(
    rng: random.Random, occupied: set[Cell], pattern: Pattern | None, supply: dict[str, int] | None
) -> dict[Cell, Die] | None:
    """Backtracking search for dice on ``occupied`` cells obeying every placement rule.

    The most constrained cell goes next; dice are tried in a random order that favours the
    colours with most dice left, so several windows drawn from one bag stay balanced.
    """
    left = dict(supply) if supply is not None else {color: ROWS * COLS for color in COLORS}
    placed: dict[Cell, Die] = {}
    open_cells = set(occupied)
    budget = [2000]

    base = {
        cell: [die for die in _ALL_DICE if pattern is None or print_allows(pattern.restriction(cell), die)]
        for cell in occupied
    }
    around = {cell: orthogonal(cell) for cell in occupied}

    def options(cell: Cell) -> list[Die]:
        taken = [placed[n] for n in around[cell] if n in placed]
        colors = {die.color for die in taken}
        values = {die.value for die in taken}
        return [
            die
            for die in base[cell]
            if left[die.color] > 0 and die.color not in colors and die.value not in values
        ]

    def search() -> bool:
        if not open_cells:
            return True
        budget[0] -= 1
        if budget[0] < 0:
            return False
        cell, found = min(((cell, options(cell)) for cell in sorted(open_cells)), key=lambda item: len(item[1]))
        weighted = sorted(found, key=lambda die: rng.random() ** (1 / left[die.color]), reverse=True)
        open_cells.discard(cell)
        for die in weighted:
            placed[cell] = die
            left[die.color] -= 1
            if search():
                return True
            left[die.color] += 1
            del placed[cell]
        open_cells.add(cell)
        return False

    return placed if search() else None


_ALL_DICE: tuple[Die, ...] = tuple(Die(color, value) for color in COLORS for value in VALUES)
