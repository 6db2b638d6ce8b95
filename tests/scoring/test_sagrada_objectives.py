"""Each Sagrada public objective and the private objective on hand-made windows."""

from __future__ import annotations

import pytest

from scoring.sagrada import OBJECTIVES, parse_window, private_points

FILLED_ROWS = [
    "R1 Y2 G3 B4 P5",  # colours and values all different
    "R2 R3 G4 B5 P6",  # red twice; values all different
    "Y1 G2 B3 P4 R5",  # colours and values all different
    "R6 Y5 G4 B3 .",  # incomplete: never counts, though its dice all differ
]
COLUMN_ROWS = [
    "R1 Y1 G1 B1 P1",
    "Y2 G2 B2 P2 R2",
    "G3 B3 P3 R3 Y3",
    "B4 P4 R4 Y4 .",  # column 5 incomplete
]
SET_ROWS = [
    "R1 Y1 G2 . .",
    "B1 P2 . . .",
    "R3 Y4 G5 B6 .",
    ". . . . .",
]
EMPTY = [". . . . ."] * 4


def _window(rows: list[str]):
    return parse_window(list(rows))


@pytest.mark.parametrize(
    ("rows", "objective", "points", "units"),
    [
        (FILLED_ROWS, "row-color-variety", 12, ["row 1", "row 3"]),
        (FILLED_ROWS, "row-shade-variety", 15, ["row 1", "row 2", "row 3"]),
        (FILLED_ROWS, "column-color-variety", 0, []),
        (FILLED_ROWS, "column-shade-variety", 0, []),
        (COLUMN_ROWS, "column-color-variety", 20, ["column 1", "column 2", "column 3", "column 4"]),
        (COLUMN_ROWS, "column-shade-variety", 16, ["column 1", "column 2", "column 3", "column 4"]),
        (COLUMN_ROWS, "row-color-variety", 18, ["row 1", "row 2", "row 3"]),
        (COLUMN_ROWS, "row-shade-variety", 0, []),
        (SET_ROWS, "light-shades", 4, ["set 1", "set 2"]),
        (SET_ROWS, "medium-shades", 2, ["set 1"]),
        (SET_ROWS, "deep-shades", 2, ["set 1"]),
        (SET_ROWS, "shade-variety", 5, ["set 1"]),
        (SET_ROWS, "color-variety", 4, ["set 1"]),
        (["R1 Y1 B1 . ."] + [". . . . ."] * 3, "light-shades", 0, []),
        (EMPTY, "shade-variety", 0, []),
        (EMPTY, "row-color-variety", 0, []),
        (["R1 Y2 G3 B4 P5", "Y2 G3 B4 P5 R6", "G3 B4 P5 R6 Y1", "B4 P5 R6 Y1 G2"], "color-variety", 16, None),
        (["R1 Y2 G3 B4 P5", "Y2 G3 B4 P5 R6", "G3 B4 P5 R6 Y1", "B4 P5 R6 Y1 G2"], "shade-variety", 15, None),
    ],
)
def test_objective_points_and_units(rows, objective, points, units):
    result = OBJECTIVES[objective].score(_window(rows))
    assert result.points == points
    if units is not None:
        assert [unit.label for unit in result.units] == units


def test_set_units_use_one_die_of_each_kind():
    result = OBJECTIVES["light-shades"].score(_window(SET_ROWS))
    assert [unit.cells for unit in result.units] == [((0, 0), (0, 2)), ((0, 1), (1, 1))]
    assert result.note == "1s: 3, 2s: 2"


def _diagonal_window(dice: dict[tuple[int, int], str]):
    grid = [["."] * 5 for _ in range(4)]
    for (r, c), text in dice.items():
        grid[r][c] = text
    return parse_window([" ".join(row) for row in grid])


@pytest.mark.parametrize(
    ("name", "dice", "points"),
    [
        ("isolated die", {(1, 1): "R1"}, 0),
        ("pair", {(0, 0): "R1", (1, 1): "R2"}, 2),
        ("anti-diagonal pair", {(0, 4): "G1", (1, 3): "G2"}, 2),
        ("straight chain of 3", {(0, 0): "R1", (1, 1): "R2", (2, 2): "R3"}, 3),
        ("straight chain of 4", {(0, 0): "B1", (1, 1): "B2", (2, 2): "B3", (3, 3): "B4"}, 4),
        ("V shape", {(0, 0): "R1", (1, 1): "R2", (0, 2): "R3"}, 3),
        ("zig-zag", {(0, 0): "Y1", (1, 1): "Y2", (0, 2): "Y3", (1, 3): "Y4", (0, 4): "Y5"}, 5),
        ("X of five", {(0, 0): "P1", (0, 2): "P2", (1, 1): "P3", (2, 0): "P4", (2, 2): "P5"}, 5),
        ("two separate pairs", {(0, 0): "R1", (1, 1): "R2", (2, 3): "B3", (3, 4): "B4"}, 4),
        ("chain broken by an empty cell", {(0, 0): "R1", (1, 1): "R2", (3, 3): "R4"}, 2),
        ("chain broken by another colour", {(0, 0): "R1", (1, 1): "G2", (2, 2): "R3"}, 0),
        ("orthogonal same colour does not count", {(0, 0): "R1", (0, 1): "R2"}, 0),
        ("pairs of two colours crossing", {(0, 0): "R1", (1, 1): "R2", (0, 1): "B3", (1, 0): "B4"}, 4),
    ],
)
def test_color_diagonals(name, dice, points):
    result = OBJECTIVES["color-diagonals"].score(_diagonal_window(dice))
    assert result.points == points, name
    assert len({unit.cells for unit in result.units}) == points  # each die once


def test_color_diagonals_full_checkerboard():
    rows = ["R1 B2 R3 B4 R5", "B3 R4 B5 R6 B1", "R5 B6 R1 B2 R3", "B1 R2 B3 R4 B5"]
    assert OBJECTIVES["color-diagonals"].score(_window(rows)).points == 20


@pytest.mark.parametrize(
    ("color", "points"),
    [
        ("red", 1 + 2 + 3 + 5 + 6),
        ("yellow", 2 + 1 + 5),
        ("green", 3 + 4 + 2 + 4),
        ("blue", 4 + 5 + 3 + 3),
        ("purple", 5 + 6 + 4),
    ],
)
def test_private_objective_sums_pips_of_its_colour(color, points):
    assert private_points(_window(FILLED_ROWS), color).points == points


def test_private_objective_lists_the_dice():
    result = private_points(_window(SET_ROWS), "yellow")
    assert result.points == 5
    assert [unit.label for unit in result.units] == ["Y1 r1c2", "Y4 r3c2"]
    assert private_points(_window(EMPTY), "yellow").points == 0
