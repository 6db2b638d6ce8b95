"""The Alhambra tile classifier as adaptation sees it (``CLASSIFIER``), with the crops of the empty cells around a palace
and the price octagon reader beside it."""

from __future__ import annotations

import cv2
import numpy as np

from scanner.alhambra.classifier import CROP_MARGIN, MODEL, head_labels, turn_labels
from scanner.alhambra.octagon import MODEL as OCTAGON_MODEL
from scanner.alhambra.octagon import PATCH_VIEWS, part_labels
from scanner.alhambra.tiles import crop_cells
from scanner.reading import CellClassifier, CellReading, PartReader


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
    # a wall is a strip along one side of the tile: its colour there, beside the tile's middle. (Adaptations
    # saved before 2026-12-06's seventh session read "crop_sides", the crop's outer edges; they still do.)
    crop_features={"walls": ("crop_walls",)},
    # "none" against a tile: a kind head sharpened on the corrected photos' tables, at the same held-out accuracy,
    # read tables they did not show as towers (alhambra-other-print after 5: 3 phantom tiles in 20 photos)
    presence_head="kind",
    # a building tile's type and price are the price octagon's (``scanner.alhambra.octagon``): its reader learns
    # from the same corrections, on the octagon patches each reading keeps
    part=PartReader(OCTAGON_MODEL, part_labels, PATCH_VIEWS),
)
