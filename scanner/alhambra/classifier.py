"""The Alhambra tile classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels."""

from __future__ import annotations

from scanner.reading import CellClassifier

MODEL = "alhambra_tiles"
CROP_MARGIN = 0.06  # extra border around a cell, in tile pitches


def head_labels(value: str) -> dict[str, str]:
    """Return the class each adapted head of ``alhambra_tiles`` should give a cell whose value is ``value``.

    >>> head_labels("garden:NS")
    {'kind': 'garden'}
    >>> head_labels("")
    {'kind': 'none'}
    """
    text = str(value).strip()
    if text in ("", "."):
        return {"kind": "none"}
    return {"kind": text.partition(":")[0]}


CLASSIFIER = CellClassifier(model=MODEL, margin=CROP_MARGIN, head_labels=head_labels)
