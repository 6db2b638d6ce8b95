"""Whole boards as the never-worse check sees them: cells right against the players' board, grids that read as misplaced.

Cells are keyed as the review screen keys them ("row,col" or "x,y"); values are its stored values,
"" or "." for an empty cell. A board of ``fixed`` cells always shows the same ones (a Sagrada
window); otherwise its keys are relative to one of its cells (an Alhambra palace's fountain), so
the read board is matched to the true one at the offset that agrees best, and a tile read where
there is none (or missed) is a wrong cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scanner.reading import parse_key

EMPTY = ("", ".")
# a grid reads as misplaced when its cells' corrections agree with the readings one cell over at
# least this often (and at least twice as often as with the readings in place)
SHIFT_AGREEMENT = 0.3
SHIFT_MIN_CELLS = 3


def _tiles(board: Mapping[str, str]) -> dict[tuple[int, int], str]:
    cells = {}
    for key, value in board.items():
        at = parse_key(key)
        if at is not None and str(value or "") not in EMPTY:
            cells[at] = str(value)
    return cells


@dataclass(frozen=True)
class BoardScore:
    """How one board was read against the players' own: cells right of cells compared."""

    right: int
    cells: int

    @property
    def entirely_right(self) -> bool:
        """Whether every cell was read right (and the board was read at all)."""
        return self.cells > 0 and self.right == self.cells


def compare_boards(truth: Mapping[str, str], read: Mapping[str, str] | None, fixed: bool = True) -> BoardScore:
    """Score a board as read against the true one (``read`` None: the board was not found, nothing right).

    >>> compare_boards({"0,0": "B4", "0,1": "."}, {"0,0": "B4", "0,1": "R2"})
    BoardScore(right=1, cells=2)
    >>> compare_boards({"0,0": "fountain", "1,0": "tower:N"}, {"0,0": "fountain", "1,0": "tower:N", "0,1": "garden:"}, fixed=False)
    BoardScore(right=2, cells=3)
    >>> compare_boards({"0,0": "fountain", "1,0": "tower:N"}, {"-1,0": "fountain", "0,0": "tower:N"}, fixed=False)
    BoardScore(right=2, cells=2)
    """
    if fixed:
        cells = len(truth)
        if read is None:
            return BoardScore(0, cells)
        right = sum(_same(read.get(key), value) for key, value in truth.items())
        return BoardScore(right, cells)
    true_tiles = _tiles(truth)
    if read is None:
        return BoardScore(0, len(true_tiles))
    return _best_offset(true_tiles, _tiles(read))[1]


def align(truth: Mapping[str, str], read: Mapping[str, str]) -> tuple[int, int]:
    """The offset to add to the true board's keys to put it where the read board lies (boards of relative cells).

    The board's shape counts as much as its values: at each offset, every true tile on a cell read as a
    tile scores one, and one more where the value read is its own (the smallest board of cells on a
    tie). A set the scanner misreads throughout (the very set a player adapts to) agrees in few values,
    and a few chance agreements one cell over must not move every correction off its tile.

    >>> align({"0,0": "fountain", "1,0": "tower:N"}, {"-1,0": "fountain", "0,0": "tower:N"})
    (-1, 0)
    >>> align({"0,0": "fountain", "1,0": "tower:N", "2,0": "garden:"}, {"0,0": "chambers:", "1,0": "garden:", "2,0": "pavilion:"})
    (0, 0)
    """
    true_tiles, read_tiles = _tiles(truth), _tiles(read)
    offsets = {(0, 0)} | {(r[0] - t[0], r[1] - t[1]) for t in true_tiles for r in read_tiles}
    best, where = (0, -(len(true_tiles) + len(read_tiles))), (0, 0)
    for dx, dy in sorted(offsets):
        shifted = {(x + dx, y + dy): value for (x, y), value in true_tiles.items()}
        score = sum((at in read_tiles) + (read_tiles.get(at) == value) for at, value in shifted.items())
        key = (score, -len(set(shifted) | set(read_tiles)))
        if key > best:
            best, where = key, (dx, dy)
    return where


def _best_offset(true_tiles: dict[tuple[int, int], str], read_tiles: dict[tuple[int, int], str]) -> tuple[tuple[int, int], BoardScore]:
    """The offset at which the most tiles agree (the smallest board of cells on a tie), and the score there."""
    offsets = {(0, 0)} | {(r[0] - t[0], r[1] - t[1]) for t, value in true_tiles.items() for r, seen in read_tiles.items() if seen == value}
    best, where = BoardScore(0, len(true_tiles) + len(read_tiles)), (0, 0)
    for dx, dy in sorted(offsets):
        shifted = {(x + dx, y + dy): value for (x, y), value in true_tiles.items()}
        right = sum(read_tiles.get(at) == value for at, value in shifted.items())
        cells = len(set(shifted) | set(read_tiles))
        if right > best.right or (right == best.right and cells < best.cells):
            best, where = BoardScore(right, cells), (dx, dy)
    return where, best


def _same(a: str | None, b: str | None) -> bool:
    a, b = str(a or ""), str(b or "")
    return a == b or (a in EMPTY and b in EMPTY)


def misplaced_shift(cells: Mapping[str, tuple[str, str]]) -> tuple[int, int] | None:
    """The one-cell shift that explains a board's corrections better than its readings in place, or None.

    ``cells`` maps a cell key to (value read, value the players left). When the grid was placed a
    cell off, the crops show the neighbours: the corrections then match the readings one cell over.
    Empty cells are left out (they agree everywhere).

    >>> row = {f"0,{c}": (read, true) for c, (read, true) in enumerate(zip("BRGPY", "RGPYB"))}
    >>> misplaced_shift(row)
    (0, 1)
    >>> misplaced_shift({f"0,{c}": (v, v) for c, v in enumerate("BRGPY")}) is None
    True
    """
    read: dict[tuple[int, int], str] = {}
    labels: dict[tuple[int, int], str] = {}
    for key, (seen, label) in cells.items():
        at = parse_key(key)
        if at is None:
            continue
        if str(seen or "") not in EMPTY:
            read[at] = str(seen)
        if str(label or "") not in EMPTY:
            labels[at] = str(label)
    if len(labels) < SHIFT_MIN_CELLS:
        return None
    in_place = sum(read.get(at) == value for at, value in labels.items())
    best, shift = 0, None
    for d in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
        agree = sum(read.get((at[0] + d[0], at[1] + d[1])) == value for at, value in labels.items())
        if agree > best:
            best, shift = agree, d
    if shift is not None and best >= max(SHIFT_MIN_CELLS, SHIFT_AGREEMENT * len(labels), 2 * in_place + 1):
        return shift
    return None


def half_turn(key: str, keys: Sequence[str]) -> str | None:
    """The key of the cell a board's half turn puts at ``key`` (a full grid of ``keys`` from "0,0"), or None.

    >>> half_turn("0,1", [f"{r},{c}" for r in range(4) for c in range(5)])
    '3,3'
    """
    cells = [at for at in (parse_key(k) for k in keys) if at is not None]
    at = parse_key(key)
    if not cells or at is None:
        return None
    rows, cols = max(a for a, _ in cells) + 1, max(b for _, b in cells) + 1
    if min(a for a, _ in cells) != 0 or min(b for _, b in cells) != 0 or len(set(cells)) != rows * cols:
        return None
    return f"{rows - 1 - at[0]},{cols - 1 - at[1]}"


def read_turned(cells: Mapping[str, tuple[str, str]]) -> bool:
    """Whether a board of fixed cells was read turned a half turn: its corrections match the readings turned round.

    >>> row = {f"{r},{c}": (v, v) for r, line in enumerate(["B4 Y3 G6", "R1 P5 G2"]) for c, v in enumerate(line.split())}
    >>> read_turned(row), read_turned({k: (row[half_turn(k, list(row))][0], v) for k, (_, v) in row.items()})
    (False, True)
    """
    keys = list(cells)
    pairs = [(cells[turned][0], label) for key, (_, label) in cells.items() if (turned := half_turn(key, keys)) is not None]
    labels = [label for _, label in pairs if str(label or "") not in EMPTY]
    if len(labels) < SHIFT_MIN_CELLS:
        return False
    turned_agree = sum(read == label for read, label in pairs if str(label or "") not in EMPTY)
    in_place = sum(cells[key][0] == label for key, (_, label) in cells.items() if str(label or "") not in EMPTY)
    return turned_agree >= max(SHIFT_MIN_CELLS, SHIFT_AGREEMENT * len(labels), 2 * in_place + 1)


def corner_error(found: Sequence[Sequence[float]], truth: Sequence[Sequence[float]]) -> float:
    """How far found corners lie from the true ones, as a share of the true board's mean side (any corner first).

    >>> corner_error([[0, 0], [10, 0], [10, 10], [0, 10]], [[1, 0], [11, 0], [11, 10], [1, 10]])
    0.1
    """
    a = np.asarray(found, dtype=np.float64).reshape(4, 2)
    b = np.asarray(truth, dtype=np.float64).reshape(4, 2)
    side = float(np.mean(np.linalg.norm(b - np.roll(b, -1, axis=0), axis=1)))
    errors = [float(np.mean(np.linalg.norm(np.roll(a, k, axis=0) - b, axis=1))) for k in range(4)]
    return round(min(errors) / max(side, 1e-9), 4)
