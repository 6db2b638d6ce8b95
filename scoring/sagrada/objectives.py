"""The ten Sagrada public objectives and the private objective, each with its evidence.

Every objective returns an ``Objective`` result: the points and the units that earned them
(rows, columns, sets or dice), so a player can check the score by eye.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scoring.report import Evidence, Unit
from scoring.sagrada.window import (
    COLOR_NAMES,
    COLORS,
    COLS,
    ROWS,
    VALUES,
    Cell,
    Die,
    Window,
    diagonal,
    dice_of,
    short_place,
)


@dataclass(frozen=True)
class Objective(Evidence):
    """An objective's result on one window: ``points`` and the ``units`` that earned them.

    A ``Unit`` is a row, a column, a set or a die; its ``cells`` are its dice. ``note``
    explains the count in words (e.g. the per-value counts behind a set card).

    >>> Objective("private-red", 9, (Unit("R3 r1c1", ((0, 0),)),)).cells
    ((0, 0),)
    """


@dataclass(frozen=True)
class PublicObjective:
    """A public objective card: its id, printed name, points per unit and its scorer."""

    id: str
    title: str
    per_unit: int
    rule: str
    measure: Callable[[Window], tuple[tuple[Unit, ...], str]]

    def score(self, window: Window) -> Objective:
        """Return this card's points on ``window`` with the units that earned them.

        >>> from scoring.sagrada.window import parse_window
        >>> w = parse_window(["R1 Y2 G3 B4 P5", ". . . . .", ". . . . .", ". . . . ."])
        >>> OBJECTIVES["row-color-variety"].score(w).points
        6
        """
        units, note = self.measure(window)
        return Objective(self.id, self.per_unit * len(units), units, note)


Line = tuple[str, list[tuple[Cell, Die | None]]]


def _color(die: Die) -> str:
    return die.color


def _value(die: Die) -> int:
    return die.value


def _rows(window: Window) -> list[Line]:
    return [(f"row {r + 1}", [((r, c), window[r][c]) for c in range(COLS)]) for r in range(ROWS)]


def _columns(window: Window) -> list[Line]:
    return [(f"column {c + 1}", [((r, c), window[r][c]) for r in range(ROWS)]) for c in range(COLS)]


def _variety(lines: Callable[[Window], list[Line]], key: Callable[[Die], object]) -> Callable[[Window], tuple[tuple[Unit, ...], str]]:
    """Count complete lines whose dice all differ in ``key`` (colour or value)."""

    def measure(window: Window) -> tuple[tuple[Unit, ...], str]:
        units = []
        incomplete = 0
        for label, line in lines(window):
            dice = [die for _, die in line if die is not None]
            if len(dice) < len(line):
                incomplete += 1
                continue
            if len({key(die) for die in dice}) == len(line):
                units.append(Unit(label, tuple(cell for cell, _ in line)))
        note = f"{incomplete} incomplete skipped" if incomplete else ""
        return tuple(units), note

    return measure


def _sets(kinds: tuple[object, ...], key: Callable[[Die], object]) -> Callable[[Window], tuple[tuple[Unit, ...], str]]:
    """Count complete sets of ``kinds`` (values or colours): the smallest count among them."""

    def measure(window: Window) -> tuple[tuple[Unit, ...], str]:
        by_kind: dict[object, list[Cell]] = {kind: [] for kind in kinds}
        for cell, die in dice_of(window):
            kind = key(die)
            if kind in by_kind:
                by_kind[kind].append(cell)
        count = min(len(found) for found in by_kind.values())
        units = tuple(Unit(f"set {n + 1}", tuple(by_kind[kind][n] for kind in kinds)) for n in range(count))
        note = ", ".join(f"{_kind_label(kind)}: {len(by_kind[kind])}" for kind in kinds)
        return units, note

    return measure


def _kind_label(kind: object) -> str:
    return f"{kind}s" if isinstance(kind, int) else COLOR_NAMES[str(kind)]


def _color_diagonals(window: Window) -> tuple[tuple[Unit, ...], str]:
    """Each die with a diagonally adjacent die of its colour, once."""
    units = []
    for cell, die in dice_of(window):
        partners = [other for other in diagonal(cell) if (partner := window[other[0]][other[1]]) is not None and partner.color == die.color]
        if partners:
            units.append(Unit(f"{die} {short_place(cell)}", (cell,)))
    return tuple(units), ""


OBJECTIVES: dict[str, PublicObjective] = {
    card.id: card
    for card in (
        PublicObjective("row-color-variety", "Row Color Variety", 6, "rows with no repeated colour", _variety(_rows, _color)),
        PublicObjective("column-color-variety", "Column Color Variety", 5, "columns with no repeated colour", _variety(_columns, _color)),
        PublicObjective("row-shade-variety", "Row Shade Variety", 5, "rows with no repeated value", _variety(_rows, _value)),
        PublicObjective("column-shade-variety", "Column Shade Variety", 4, "columns with no repeated value", _variety(_columns, _value)),
        PublicObjective("light-shades", "Light Shades", 2, "sets of 1 & 2", _sets((1, 2), _value)),
        PublicObjective("medium-shades", "Medium Shades", 2, "sets of 3 & 4", _sets((3, 4), _value)),
        PublicObjective("deep-shades", "Deep Shades", 2, "sets of 5 & 6", _sets((5, 6), _value)),
        PublicObjective("shade-variety", "Shade Variety", 5, "sets of one of each value", _sets(VALUES, _value)),
        PublicObjective("color-variety", "Color Variety", 4, "sets of one of each colour", _sets(COLORS, _color)),
        PublicObjective("color-diagonals", "Color Diagonals", 1, "dice with a diagonally adjacent die of their colour", _color_diagonals),
    )
}


def private_points(window: Window, color: str) -> Objective:
    """Return the private objective of colour name ``color``: the pips of that colour's dice.

    >>> from scoring.sagrada.window import parse_window
    >>> w = parse_window(["R3 . . . R6", ". . . . .", ". . . . .", ". . . . ."])
    >>> private_points(w, "red").points
    9
    """
    letter = {name: letter for letter, name in COLOR_NAMES.items()}[color]
    units = tuple(Unit(f"{die} {short_place(cell)}", (cell,)) for cell, die in dice_of(window) if die.color == letter)
    total = sum(die.value for _, die in dice_of(window) if die.color == letter)
    return Objective(f"private-{color}", total, units)
