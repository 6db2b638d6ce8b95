"""Sagrada windows: dice, cells and the window grid with its JSON row form.

The pattern and tool cards live in ``scoring.sagrada.cards``, the placement checks in
``scoring.sagrada.rules`` and random legal windows in ``scoring.sagrada.generate``.

A window is 4 rows of 5 cells, top row first; a cell holds a ``Die`` or ``None`` (empty).
Cells are ``(row, col)``, zero-based from the top-left. Human-facing text (issue details,
reports) numbers rows and columns from 1, e.g. ``row 1 col 3``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from scoring.errors import StateError

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
    return f"cell {text!r} is not a die: expected a colour letter ({' '.join(COLORS)}) and a value 1-6 like 'B4', or '.' for empty"


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
        raise StateError(f"{path}: expected a list of {ROWS} row strings, got {describe_kind(rows)}")
    if len(rows) != ROWS:
        raise StateError(f"{path}: expected {ROWS} rows (top row first), got {len(rows)}")
    window = []
    for r, row in enumerate(rows):
        row_path = f"{path}[{r}]"
        if not isinstance(row, str):
            raise StateError(f"{row_path}: expected a string of {COLS} cells like 'B4 . R3 G1 Y2', got {describe_kind(row)}")
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
        raise StateError(f"{path}: expected a tuple of {ROWS} rows, got {describe_kind(window)}")
    for r, row in enumerate(window):
        if not isinstance(row, tuple) or len(row) != COLS:
            raise StateError(f"{path}[{r}]: expected a tuple of {COLS} cells, got {describe_kind(row)}")
        for c, die in enumerate(row):
            if die is not None and not isinstance(die, Die):
                raise StateError(f"{path}[{r}][{c}]: expected a Die or None, got {describe_kind(die)}")
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


def describe_kind(value: object) -> str:
    """Return a short description of a value for error messages (lists and tuples by length).

    >>> describe_kind(("....",) * 3), describe_kind(None), describe_kind(4)
    ('a tuple of 3', 'null', 'int')
    """
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, str):
        return repr(value if len(value) <= 30 else value[:27] + "...")
    return "null" if value is None else type(value).__name__
