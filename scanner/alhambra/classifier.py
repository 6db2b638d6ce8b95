"""The Alhambra tile classifier as adaptation sees it: its model, its crops' margin, a cell value's head labels.

The crops a reading keeps are upright (``scanner.alhambra.decode.turn_upright``), so a tile's walls
N, E, S, W are its crop's top, right, bottom and left.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from scanner.reading import CellClassifier, CellReading

MODEL = "alhambra_tiles"
CROP_MARGIN = 0.06  # extra border around a cell, in tile pitches
UPRIGHT_SIDES = "NESW"  # the walls head's classes (top, right, bottom, left) on an upright crop
MIRROR = (0, 3, 2, 1)  # a crop mirrored left to right: its right wall is the left one, and back


def _unique_prices() -> dict[tuple[str, str], str]:
    """(type, walls) -> price for the catalogue tiles that have no twin of the same type and walls."""
    from scanner.alhambra.decode import CATALOGUE  # here: decode imports this module's crop margin

    prices: dict[tuple[str, str], set[int]] = {}
    for tile in CATALOGUE:
        if tile.price is not None:
            prices.setdefault((tile.type, tile.walls), set()).add(tile.price)
    return {key: str(next(iter(found))) for key, found in prices.items() if len(found) == 1}


def head_labels(value: str) -> dict[str, Any]:
    """Return the class each adapted head of ``alhambra_tiles`` should give an upright crop of a cell whose value is ``value``.

    ``walls`` is 0/1 per crop side (top, right, bottom, left); ``price`` only when the type and walls
    name one catalogue tile (four have a twin of another price); ``rotation`` is the upright crop's.

    >>> head_labels("garden:NS")
    {'kind': 'garden', 'walls': (1, 0, 1, 0), 'rotation': '0'}
    >>> head_labels("tower:NEW")["price"]
    '7'
    >>> head_labels("fountain")
    {'kind': 'fountain', 'walls': (0, 0, 0, 0), 'rotation': '0'}
    >>> head_labels("")
    {'kind': 'none'}
    >>> head_labels("castle:N")
    {}
    """
    from scanner.alhambra.tiles import KINDS

    text = str(value).strip()
    if text in ("", "."):
        return {"kind": "none"}
    kind, _, walls = text.partition(":")
    if kind not in KINDS or any(side not in UPRIGHT_SIDES for side in walls):
        return {}
    labels: dict[str, Any] = {"kind": kind, "walls": tuple(int(side in walls) for side in UPRIGHT_SIDES), "rotation": "0"}
    price = _unique_prices().get((kind, "".join(side for side in UPRIGHT_SIDES if side in walls)))
    if price is not None:
        labels["price"] = price
    return labels


def turn_labels(labels: dict[str, Any], variant: int) -> dict[str, Any]:
    """The labels of the upright crop turned ``variant % 4`` quarter turns counter-clockwise, then mirrored when ``variant >= 4``.

    Kind and price do not turn; the walls move round with the crop's sides; a mirrored tile has no rotation.

    >>> turn_labels({"kind": "garden", "walls": (1, 0, 0, 0), "rotation": "0"}, 1)
    {'kind': 'garden', 'walls': (0, 0, 0, 1), 'rotation': '90'}
    >>> turn_labels({"walls": (0, 1, 0, 0), "rotation": "0"}, 4)
    {'walls': (0, 0, 0, 1)}
    """
    turned = dict(labels)
    quarter = variant % 4
    if "walls" in labels:
        walls = labels["walls"]
        walls = tuple(walls[(side + quarter) % 4] for side in range(4))  # crop = rot90(upright, k): side j shows upright side j + k
        turned["walls"] = tuple(walls[i] for i in MIRROR) if variant >= 4 else walls
    if "rotation" in labels:
        if variant >= 4:
            del turned["rotation"]
        else:
            turned["rotation"] = ("0", "90", "180", "270")[quarter]
    return turned


def _palace_to_image(cells: tuple[CellReading, ...]) -> np.ndarray | None:
    """A homography from palace positions (tile centres at integers) to image pixels, from the readings' outlines."""
    at = np.array([reading.cell for reading in cells], dtype=np.float64)
    centres = np.array([np.asarray(reading.polygon, dtype=np.float64).reshape(-1, 2).mean(axis=0) for reading in cells])
    if len(at) >= 4 and np.linalg.matrix_rank(np.c_[at, np.ones(len(at))]) == 3:
        homography, _ = cv2.findHomography(at, centres, 0)
        if homography is not None and abs(np.linalg.det(homography)) > 1e-9:
            return np.asarray(homography, dtype=np.float64)
    if len(at) >= 2:
        affine, _ = cv2.estimateAffinePartial2D(at, centres)
        if affine is not None:
            return np.vstack([affine, [0.0, 0.0, 1.0]])
    return None


def empty_cells(image_rgb: np.ndarray, cells: tuple[CellReading, ...]) -> list[tuple[tuple[int, int], np.ndarray]]:
    """Upright crops of the cells beside the palace's tiles that hold none (the ring the reader also classifies).

    Cells whose square leaves the photo are left out; a palace of one tile gives none (no lattice to follow).
    """
    from scanner.alhambra.tiles import crop_cells

    if len(cells) < 2:
        return []
    to_image = _palace_to_image(cells)
    if to_image is None:
        return []
    occupied = {tuple(reading.cell) for reading in cells}
    ring = sorted({(x + dx, y + dy) for x, y in occupied for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - occupied)
    height, width = image_rgb.shape[:2]
    inside = []
    for cell in ring:
        square = np.array([[cell[0] + dx, cell[1] + dy] for dx in (-0.5, 0.5) for dy in (-0.5, 0.5)], dtype=np.float64)
        points = cv2.perspectiveTransform(square.reshape(-1, 1, 2), to_image).reshape(-1, 2)
        if np.all(points >= 0) and np.all(points[:, 0] < width) and np.all(points[:, 1] < height):
            inside.append(cell)
    if not inside:
        return []
    crops = crop_cells(image_rgb, to_image, [(float(x), float(y)) for x, y in inside])
    return list(zip(inside, crops))


CLASSIFIER = CellClassifier(
    model=MODEL,
    margin=CROP_MARGIN,
    head_labels=head_labels,
    binary_heads=frozenset({"walls"}),
    turn_labels=turn_labels,
    empty_cells=empty_cells,
    fixed_cells=False,
    crop_features={"walls": ("crop_sides",)},  # a wall is a strip along one side: its colour there, side by side
)
