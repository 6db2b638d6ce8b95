"""How a Sagrada scan names its cells and values for players, and the bars it must clear to go unreviewed."""

from __future__ import annotations

from scanner.reading import Cell, Thresholds, Verdict, Wording
from scoring.sagrada import COLOR_NAMES


def sagrada_cell_name(cell: Cell) -> str:
    """A Sagrada cell as players count it, from 1 (``(1, 3)`` -> ``"cell r2c4"``).

    >>> sagrada_cell_name((1, 3))
    'cell r2c4'
    """
    return f"cell r{cell[0] + 1}c{cell[1] + 1}"


def sagrada_value_name(value: str) -> str:
    """A Sagrada cell value by letter and name (``"P1"`` -> ``"P1 (purple 1)"``, ``"."`` -> ``"empty"``).

    >>> sagrada_value_name("P1"), sagrada_value_name(".")
    ('P1 (purple 1)', 'empty')
    """
    if len(value) == 2 and value[0] in COLOR_NAMES:
        return f"{value} ({COLOR_NAMES[value[0]]} {value[1]})"
    return "empty" if value == "." else value


def sagrada_short_name(value: str) -> str:
    """A Sagrada value as named beside another reading (``"G1"``, ``"empty"``)."""
    return "empty" if value == "." else value


WORDING = Wording(sagrada_cell_name, sagrada_value_name, sagrada_short_name)
# Measured with tests/benchmarks/bench_verdict.py (2026-12-02 afternoon, the cell model with the yellow
# copies): 100 held-out Sagrada renders (95 read right; 5 wrong, each with a cell read under 77%, some with an
# issue) and 60 photos of something else (all refused). At a cell bar of 0.95, 13 of 95 right boards are
# flagged and no wrong one is left unflagged; 0.9 would flag 11, 0.8 would flag 8. The bar stays at 0.95:
# on the transfer sets a wrong cell reads up to 96% (models/sagrada/transfer.py).
# The likeness bar (a found grid with no pattern card recognised, its dice read at this mean confidence or
# less, is flagged as perhaps not a window): the 8 of the 80 Alhambra transfer palaces scanned as Sagrada that
# are not refused read their "dice" at 0.58-0.67; windows without a recognised card at 0.60 (a hard real-dice
# composite), 0.71 and up (scanner.sagrada.reader.MIN_DICE_CONFIDENCE).
THRESHOLDS = Thresholds(cell=0.95, corner=0.3, orientation=0.9, flipped=0.05, fit=0.6, likeness=0.75)
# A word written over the photo only doubts the dice it covers: a row of white pips across dice reads as letters,
# and painted out with them a P5 read as P2 at 99.8% (training photo 9200192).
VERDICT = Verdict(WORDING, THRESHOLDS, words_painted_out=False)
