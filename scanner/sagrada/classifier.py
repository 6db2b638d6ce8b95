"""The Sagrada dice classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels."""

from __future__ import annotations

from scanner.reading import CellClassifier
from scanner.sagrada.cells import MARGIN

MODEL = "sagrada_dice"


def head_labels(value: str) -> dict[str, str]:
    """Return the class each head of ``sagrada_dice`` should give a cell whose (corrected) value is ``value``.

    >>> head_labels("B4")
    {'die': 'die', 'colour': 'B', 'value': '4'}
    >>> head_labels(".")
    {'die': 'empty', 'colour': 'none', 'value': 'none'}
    >>> head_labels("R")
    {}
    """
    text = str(value).strip()
    if text in ("", "."):
        return {"die": "empty", "colour": "none", "value": "none"}
    if len(text) == 2 and text[0] in "RYGBP" and text[1] in "123456":
        return {"die": "die", "colour": text[0], "value": text[1]}
    return {}


CLASSIFIER = CellClassifier(model=MODEL, margin=float(MARGIN), head_labels=head_labels)
