"""The Sagrada dice classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from scanner.guides import without_guide_lines
from scanner.reading import CellClassifier, parse_key
from scanner.sagrada.cells import COLS, CROP_HEIGHT_MM, MARGIN, ROWS, cell_crops, lift_corners, rectify_grid
from scanner.sagrada.reader import recall_poolings
from scoring.errors import StateError
from scoring.sagrada.cards import pattern_named

MODEL = "sagrada_dice"


def head_labels(value: str) -> dict[str, str]:
    """Return the class each head of ``sagrada_dice`` should give a cell whose (corrected) value is ``value``.

    An empty cell (``.``) labels the die head alone: there the colour and value heads read the
    pattern card's print, which ``.`` does not name. ``cell_label`` names it where the card is known:
    ``..`` a blank print, ``.R`` a red one, ``.4`` a 4.

    >>> head_labels("B4")
    {'die': 'die', 'colour': 'B', 'value': '4'}
    >>> head_labels(".")
    {'die': 'empty'}
    >>> head_labels(".R"), head_labels(".4")
    ({'die': 'empty', 'colour': 'R', 'value': 'none'}, {'die': 'empty', 'colour': 'none', 'value': '4'})
    >>> head_labels("..")
    {'die': 'empty', 'colour': 'none', 'value': 'none'}
    >>> head_labels("R")
    {}
    """
    text = str(value).strip()
    if text in ("", "."):
        return {"die": "empty"}
    if len(text) == 2 and text[0] == ".":
        mark = text[1]
        if mark == ".":
            return {"die": "empty", "colour": "none", "value": "none"}
        if mark in "RYGBP":
            return {"die": "empty", "colour": mark, "value": "none"}
        if mark in "123456":
            return {"die": "empty", "colour": "none", "value": mark}
        return {}
    if len(text) == 2 and text[0] in "RYGBP" and text[1] in "123456":
        return {"die": "die", "colour": text[0], "value": text[1]}
    return {}


def cell_label(value: str, cell: str, fields: Mapping[str, Any]) -> str:
    """What a window cell teaches: its value, or for an empty cell on a known pattern card, ``.`` and the print there.

    >>> cell_label(".", "0,0", {"pattern": "Virtus"}), cell_label(".", "0,0", {}), cell_label("G2", "0,0", {"pattern": "Virtus"})
    ('.4', '.', 'G2')
    """
    if str(value).strip() not in ("", ".") or not isinstance(fields, Mapping) or not fields.get("pattern"):
        return value
    try:
        pattern = pattern_named(fields["pattern"])
    except StateError:
        return value
    at = parse_key(cell)
    if at is None or not (0 <= at[0] < ROWS and 0 <= at[1] < COLS):
        return value
    return "." + pattern.restriction(at)


def grid_crops(image_rgb: np.ndarray, corners: np.ndarray) -> list[tuple[tuple[int, int], np.ndarray]]:
    """Each cell's crop, as the reader cuts it, of the window whose grid corners are ``corners`` (TL, TR, BR, BL, in that order).

    The reader orients corners given to it by itself; true corners keep their order here. Guide
    lines drawn over the photo are painted out first, as ``Scanner.scan`` does before the reader
    sees the photo.
    """
    image_rgb, _ = without_guide_lines(image_rgb)
    height, width = image_rgb.shape[:2]
    lifted = lift_corners(np.asarray(corners, dtype=np.float64).reshape(4, 2), (width, height), CROP_HEIGHT_MM)
    rectified, _ = rectify_grid(image_rgb, lifted)
    return [((index // COLS, index % COLS), crop) for index, crop in enumerate(cell_crops(rectified))]


CLASSIFIER = CellClassifier(
    model=MODEL, margin=float(MARGIN), head_labels=head_labels, grid_crops=grid_crops, cell_label=cell_label, recall_views=recall_poolings
)
