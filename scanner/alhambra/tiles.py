"""Reading the tiles: square crops of lattice cells (shared with training) and the tile classifier's probabilities."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.alhambra.classifier import CROP_MARGIN
from scanner.alhambra.lattice import Lattice, local_pitch
from scanner.alhambra.locate import sigmoid
from scanner.geometry import PixelCentres, cell_square, project, shrink_photo, shrink_then_warp
from scanner.model import OnnxModel, image_batch, softmax
from scoring.alhambra.palace import BUILDING_TYPES, SIDES

CROP_PX = 64
KINDS = ("none", "fountain", *BUILDING_TYPES)
PRICES = tuple(str(p) for p in range(2, 14))
ROTATIONS = ("0", "90", "180", "270")  # crop = np.rot90(upright, k): quarter turns counter-clockwise
CROP_SIDES = ("top", "right", "bottom", "left")


@dataclass(frozen=True, eq=False)
class CellCrops:
    """Square crops of lattice cells: ``cells[i]`` (lattice x, y) is shown by ``crops[i]``, uint8 RGB (N, S, S, 3)."""

    cells: tuple[tuple[int, int], ...]
    crops: np.ndarray

    def __post_init__(self) -> None:
        crops = self.crops
        if not isinstance(crops, np.ndarray) or crops.dtype != np.uint8 or crops.ndim != 4 or crops.shape[3] != 3:
            raise ValueError(
                f"crops: expected (N, S, S, 3) uint8 RGB, got {getattr(crops, 'shape', type(crops).__name__)} "
                f"{getattr(crops, 'dtype', '')}".rstrip()
            )
        if len(crops) != len(self.cells):
            raise ValueError(f"crops: expected one per cell ({len(self.cells)}), got {len(crops)}")


@dataclass(frozen=True, eq=False)
class TilePredictions:
    """Calibrated probabilities per crop: kind (N, 8) over ``KINDS``, walls (N, 4) in crop order, price (N, 12), rotation (N, 4)."""

    kind: np.ndarray
    walls: np.ndarray
    price: np.ndarray
    rotation: np.ndarray

    def __post_init__(self) -> None:
        count = len(self.kind)
        widths = {
            "kind": (self.kind, len(KINDS)),
            "walls": (self.walls, 4),
            "price": (self.price, len(PRICES)),
            "rotation": (self.rotation, len(ROTATIONS)),
        }
        for name, (array, width) in widths.items():
            if array.shape != (count, width):
                raise ValueError(f"{name}: expected ({count}, {width}) probabilities, got {array.shape}")

    def as_tuple(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(kind, walls, price, rotation)."""
        return self.kind, self.walls, self.price, self.rotation


def crop_cells(image_rgb: np.ndarray, grid_to_image: np.ndarray, cells: Sequence[tuple[float, float]], size: int = CROP_PX) -> np.ndarray:
    """Return square crops (N, size, size, 3) uint8 of lattice cells, crop x along grid x.

    ``grid_to_image`` maps grid (x, y) (tile centres at integers) to image pixels. The image is
    first shrunk so one tile spans about ``size`` pixels, so crops are not aliased.
    """
    return crop_squares(image_rgb, grid_to_image, cells, 0.5 + CROP_MARGIN, size, tile_px=size * 1.25)


def crop_squares(
    image_rgb: np.ndarray,
    grid_to_image: np.ndarray,
    centres_at: Sequence[tuple[float, float]],
    half: float,
    size: int,
    *,
    tile_px: float,
) -> np.ndarray:
    """Return (N, size, size, 3) uint8 crops of the grid squares of half-side ``half`` centred on ``centres_at``.

    The palace's part of the photo is cut out (edge pixels repeat from there) and, when a tile spans
    over 1.2 x ``tile_px`` pixels, shrunk so it spans ``tile_px`` (area averaging), then each square is
    warped into its crop. ``crop_cells`` (the tile classifier's crops) and ``crop_octagons`` (the price
    octagon reader's) are this with their own square and resolution.
    """
    if not centres_at:
        return np.zeros((0, size, size, 3), dtype=np.uint8)
    centres = np.asarray(centres_at, dtype=np.float64)
    homography = np.asarray(grid_to_image, dtype=np.float64)
    # work on the palace's part of the photo only, shrunk so one tile spans about tile_px
    reach = np.concatenate([centres + [dx, dy] for dx in (-1, 1) for dy in (-1, 1)])
    spots = cv2.perspectiveTransform(reach.reshape(-1, 1, 2), homography).reshape(-1, 2)
    x0, y0 = np.clip(np.floor(spots.min(axis=0)).astype(int), 0, [image_rgb.shape[1] - 1, image_rgb.shape[0] - 1])
    x1, y1 = np.clip(np.ceil(spots.max(axis=0)).astype(int), [x0 + 1, y0 + 1], [image_rgb.shape[1], image_rgb.shape[0]])
    box = (int(x0), int(y0), int(x1), int(y1))  # the palace's part: edge pixels repeat from here
    shrink = float(np.median(local_pitch(homography, centres))) / tile_px
    if shrink > 1.2:
        palace = shrink_photo(image_rgb, box=box, factor=1.0 / shrink, centres=PixelCentres.CORNERS, min_side_px=1, blocks=True)
    else:
        palace = shrink_photo(image_rgb, box=box)
    homography = palace.from_photo @ homography
    crops = np.empty((len(centres), size, size, 3), dtype=np.uint8)
    for index, (x, y) in enumerate(centres):
        quad = project(cell_square(x, y, half), homography)
        crops[index] = shrink_then_warp(palace, (size, size), quad=quad, interpolation=cv2.INTER_LINEAR, border=cv2.BORDER_REPLICATE)
    return crops


def rotate_cell(cell: tuple[int, int], k: int) -> tuple[int, int]:
    """Map a lattice position to upright (world) coordinates when crops are ``k`` quarter turns CCW.

    (A quarter turn counter-clockwise of the art moves its east side to the top; the inverse
    is ``rotate_cell(cell, -k)``.)

    >>> rotate_cell((2, 0), 1)
    (0, 2)
    """
    x, y = cell
    for _ in range(k % 4):
        x, y = -y, x
    return x, y


def rotate_cell_float(point: tuple[float, float], k: int) -> tuple[float, float]:
    """``rotate_cell`` for real-valued points."""
    x, y = point
    for _ in range(k % 4):
        x, y = -y, x
    return x, y


def rotation_votes(rotation: np.ndarray) -> np.ndarray:
    """(4,) summed log votes of the crops' rotations (N, 4) for each quarter turn, each clipped at 1e-6: north is its argmax."""
    return np.log(np.clip(rotation, 1e-6, 1)).sum(axis=0)


def crop_walls_to_upright(crop_walls: np.ndarray, k: int) -> np.ndarray:
    """Reorder per-side values from crop order (top, right, bottom, left) to N, E, S, W."""
    return np.array([crop_walls[(side - k) % 4] for side in range(4)])


def upright_walls_to_crop(walls: str, k: int) -> list[int]:
    """Return the crop-order (top, right, bottom, left) wall flags of a tile rotated ``k`` quarter turns CCW."""
    return [int(SIDES[(index + k) % 4] in walls) for index in range(4)]


def classify_tiles(model: OnnxModel, temperatures: Mapping[str, float], crops: np.ndarray) -> TilePredictions:
    """Calibrated kind, walls (crop order), price and rotation probabilities, averaged over the four quarter turns.

    The classifier was trained on crops in every quarter turn, so each crop is read four times,
    turned; walls and rotation are turned back before the logits are averaged.

    Raises:
        ModelError: the classifier cannot run.
    """
    n = len(crops)
    views = np.concatenate([np.rot90(crops, j, axes=(1, 2)) for j in range(4)])
    out = model.run(image_batch(views))
    part = {name: [out[name][j * n : (j + 1) * n] for j in range(4)] for name in ("kind", "walls", "price", "rotation")}
    kind = np.mean(part["kind"], axis=0)
    price = np.mean(part["price"], axis=0)
    walls = np.mean([w[:, [(side - j) % 4 for side in range(4)]] for j, w in enumerate(part["walls"])], axis=0)
    rotation = np.mean([r[:, [(k + j) % 4 for k in range(4)]] for j, r in enumerate(part["rotation"])], axis=0)
    return TilePredictions(
        softmax(kind, temperatures.get("kind", 1.0)),
        sigmoid(walls / temperatures.get("walls", 1.0)),
        softmax(price, temperatures.get("price", 1.0)),
        softmax(rotation, temperatures.get("rotation", 1.0)),
    )


def tiles_seen(model: OnnxModel, temperatures: Mapping[str, float], image: np.ndarray, lattice: Lattice) -> float:
    """How many lattice cells the classifier reads as a whole, upright-consistent tile, less the doubtful ones (not sure empties).

    Raises:
        ModelError: the classifier cannot run.
    """
    cells = sorted(lattice.cells)
    out = model.run(image_batch(crop_cells(image, lattice.grid_to_image, cells)))
    kind = softmax(out["kind"], temperatures.get("kind", 1.0))
    rotation = softmax(out["rotation"], temperatures.get("rotation", 1.0))
    k = int(np.argmax(rotation_votes(rotation)))
    sure = kind[:, 1:].max(axis=1) * rotation[:, k]
    empty = kind[:, 0] > 0.8  # a centre on clutter beside the palace: an empty cell, not a doubt
    return float((sure > 0.8).sum() - ((sure < 0.5) & ~empty).sum())
