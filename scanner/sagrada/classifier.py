"""The Sagrada dice classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels."""

from __future__ import annotations

import numpy as np

from scanner.reading import CellClassifier
from scanner.sagrada.cells import COLS, CROP_HEIGHT_MM, MARGIN, cell_crops, lift_corners, rectify_grid

MODEL = "sagrada_dice"


def head_labels(value: str) -> dict[str, str]:
    """Return the class each head of ``sagrada_dice`` should give a cell whose (corrected) value is ``value``.

    An empty cell labels the die head alone: there the colour and value heads read the pattern
    card's print (a red print is colour ``R``, value ``none``), which a corrected ``.`` does not name.

    >>> head_labels("B4")
    {'die': 'die', 'colour': 'B', 'value': '4'}
    >>> head_labels(".")
    {'die': 'empty'}
    >>> head_labels("R")
    {}
    """
    text = str(value).strip()
    if text in ("", "."):
        return {"die": "empty"}
    if len(text) == 2 and text[0] in "RYGBP" and text[1] in "123456":
        return {"die": "die", "colour": text[0], "value": text[1]}
    return {}


def grid_crops(image_rgb: np.ndarray, corners: np.ndarray) -> list[tuple[tuple[int, int], np.ndarray]]:
    """Each cell's crop, as the reader cuts it, of the window whose grid corners are ``corners`` (TL, TR, BR, BL, in that order).

    The reader orients corners given to it by itself; true corners keep their order here.
    """
    height, width = image_rgb.shape[:2]
    lifted = lift_corners(np.asarray(corners, dtype=np.float64).reshape(4, 2), (width, height), CROP_HEIGHT_MM)
    rectified, _ = rectify_grid(image_rgb, lifted)
    return [((index // COLS, index % COLS), crop) for index, crop in enumerate(cell_crops(rectified))]


CLASSIFIER = CellClassifier(model=MODEL, margin=float(MARGIN), head_labels=head_labels, grid_crops=grid_crops)
