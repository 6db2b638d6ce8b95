"""Board geometry shared by every game: corner order, perspective warps and cell outlines, all in (x, y) pixels."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, TypeVar

import cv2
import numpy as np

A = TypeVar("A")
B = TypeVar("B")

HELPER_THREAD = "scan-helper"
BANDS_MIN_PIXELS = 1_000_000  # a smaller reduction is not worth handing half to another thread


def order_clockwise(points: np.ndarray) -> np.ndarray:
    """Order four points clockwise on screen (y down), starting from the one with the smallest x + y: TL, TR, BR, BL, float64 (4, 2).

    >>> order_clockwise(np.array([[10, 0], [0, 0], [0, 10], [10, 10]])).tolist()
    [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]
    """
    pts = np.asarray(points, dtype=np.float64).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # clockwise in image coordinates (y down), starting near -pi
    start = int(np.argmin(pts.sum(axis=1)))  # top-left has the smallest x + y
    return np.roll(pts, -start, axis=0)


def order_corners(points: np.ndarray) -> np.ndarray:
    """Return four points ordered TL, TR, BR, BL (``order_clockwise``) as float32 (4, 2)."""
    return order_clockwise(points).astype(np.float32)


class PixelCentres(Enum):
    """Where a reduced image's pixel centres are taken to sit, in the arithmetic that maps photo pixels onto it.

    ``CORNERS``: pixel ``i`` is treated as the point ``i`` in both images, so a reduction by ``s`` maps
    ``x -> (x - x0) * s`` (off by up to half a source pixel: the dice crops were trained on this).
    ``CENTRES``: pixel ``i``'s centre is the point ``i`` in both images, so the map is
    ``x -> (x - x0 + 0.5) * s - 0.5``, which is what area averaging really does (the refiner was trained on this).
    """

    CORNERS = "corners"
    CENTRES = "centres"


@dataclass(frozen=True)
class Shrunk:
    """A photo cropped and reduced for warping, and the 3x3 homography from photo pixels to its pixels.

    Raises:
        ValueError: the image is not (H, W, C) or the homography is not 3x3.
    """

    image_rgb: np.ndarray
    from_photo: np.ndarray

    def __post_init__(self) -> None:
        if self.image_rgb.ndim != 3 or min(self.image_rgb.shape[:2]) < 1:
            raise ValueError(f"image_rgb: expected (H, W, C) with H, W >= 1, got {self.image_rgb.shape}")
        if np.shape(self.from_photo) != (3, 3):
            raise ValueError(f"from_photo: expected a 3x3 homography, got {np.shape(self.from_photo)}")


def shrink_photo(
    image_rgb: np.ndarray,
    *,
    box: tuple[int, int, int, int] | None = None,
    factor: float | None = None,
    centres: PixelCentres = PixelCentres.CORNERS,
    min_side_px: int = 2,
    blocks: bool = False,
) -> Shrunk:
    """Crop ``box`` (x0, y0, x1, y1; None: the whole photo) and reduce it by ``factor`` with area averaging (None: not at all).

    Each reduced side is ``round(side * factor)`` pixels but at least ``min_side_px``; the returned
    homography follows ``centres`` (see ``PixelCentres``). With ``blocks`` the reduction is
    ``quick_reduce`` (faster, a little different from one area ``cv2.resize``), and the box's right and
    bottom edges may move out by a few pixels (within the photo) so it can average whole blocks
    first; the homography accounts for it. The input is never modified.

    Raises:
        ValueError: the box holds no pixel.
    """
    x0, y0, x1, y1 = box if box is not None else (0, 0, image_rgb.shape[1], image_rgb.shape[0])
    if factor is None:
        return Shrunk(image_rgb[y0:y1, x0:x1], np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], dtype=np.float64))
    if blocks:
        x1, y1 = block_aligned_end((x0, y0, x1, y1), image_rgb.shape, factor)
    region = image_rgb[y0:y1, x0:x1]
    new_w, new_h = max(min_side_px, int(round(region.shape[1] * factor))), max(min_side_px, int(round(region.shape[0] * factor)))
    source = quick_reduce(region, (new_w, new_h)) if blocks else area_resize(region, (new_w, new_h))
    sx, sy = new_w / region.shape[1], new_h / region.shape[0]
    if centres is PixelCentres.CENTRES:
        offset = np.array([[sx, 0, -x0 * sx + 0.5 * sx - 0.5], [0, sy, -y0 * sy + 0.5 * sy - 0.5], [0, 0, 1]])
    else:
        offset = np.array([[sx, 0, -x0 * sx], [0, sy, -y0 * sy], [0, 0, 1]])
    return Shrunk(source, offset)


def quick_reduce(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Reduce ``image`` to ``size`` (w, h) quickly: ``resize_area`` where it shrinks at least twofold, bilinear where less.

    A reduction under twofold is fractional, where OpenCV's area resize is slow (4-6 ms for the
    1-2 MP palace of a 12 MP photo, against 1.2-1.3 ms bilinear). Under twofold, bilinear samples
    lie under two source pixels apart and each reads a 2 x 2 block, so no source row or column is
    skipped (its weights are less even than area averaging's: the crops of 12 MP renders differ from
    area-averaged ones by 0.3-0.6 grey levels on average); the geometry is the same (no shift). A side
    that shrinks twofold or more takes area averaging for the whole image, though the other side shrinks
    less: bilinear taps over two pixels apart would skip its rows (147 x 149 to 74 x 74 lost a lit pixel).
    """
    height, width = image.shape[:2]
    if max(width / max(size[0], 1), height / max(size[1], 1)) >= 2:
        return resize_area(image, size)
    return cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)


def resize_area(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Resize ``image`` to ``size`` (w, h) with area averaging: ``cv2.resize(..., INTER_AREA)``, faster for large reductions.

    When the image shrinks at least twofold and both its sides divide by a whole ``k`` no larger than
    the reduction, it is first averaged over k x k blocks (OpenCV's fast path, about 4x quicker than a
    fractional area resize of a 12 MP photo), then resized the rest of the way. The geometry is the
    same (no shift); a block straddling an output pixel's edge is shared by weight rather than split,
    so values differ from one direct resize by about 0.1 grey levels on average.
    """
    height, width = image.shape[:2]
    k = _block_size(width, height, size)
    if k > 1:
        image = area_resize(image, (width // k, height // k))
    return area_resize(image, size)


def area_resize(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``cv2.resize(image, size, interpolation=cv2.INTER_AREA)``, the same to the bit, about 1.6x quicker on a large image.

    OpenCV shares out a reduction by its output's size, so a small output from a large photo runs on
    one core. Here the output is cut in two, each part reduced from its own rows (or columns) of the
    image on its own thread, when the cut falls on a whole image row (column): each part's weights
    are then the whole reduction's. Otherwise, or under ``BANDS_MIN_PIXELS``, it is one ``cv2.resize``.
    """
    height, width = image.shape[:2]
    if height * width < BANDS_MIN_PIXELS:
        return cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    out = np.empty((size[1], size[0]) + image.shape[2:], dtype=image.dtype)
    row_cut, column_cut = band_cut(height, size[1]), band_cut(width, size[0])
    parts: list[tuple[Any, Any]]  # (output part, image part) of each thread
    if row_cut is not None:
        parts = [(np.s_[:row_cut], np.s_[: row_cut * height // size[1]]), (np.s_[row_cut:], np.s_[row_cut * height // size[1] :])]
    elif column_cut is not None:
        at = column_cut * width // size[0]
        parts = [(np.s_[:, :column_cut], np.s_[:, :at]), (np.s_[:, column_cut:], np.s_[:, at:])]
    else:
        return cv2.resize(image, size, interpolation=cv2.INTER_AREA)

    def reduce(part: tuple[Any, Any]) -> None:
        target, source = part
        piece = out[target]
        piece[...] = cv2.resize(image[source], (piece.shape[1], piece.shape[0]), interpolation=cv2.INTER_AREA).reshape(piece.shape)

    in_pair(lambda: reduce(parts[0]), lambda: reduce(parts[1]))
    return out


def in_pair(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """``(first(), second())``, the second run on the helper thread meanwhile (for work that lets go of the interpreter:
    OpenCV, numpy); an error in either is raised here. Called on the helper thread itself, it runs both there in turn."""
    if threading.current_thread().name.startswith(HELPER_THREAD):
        return first(), second()
    running = _helper().submit(second)
    try:
        done = first()
    finally:
        other = running.result()
    return done, other


def band_cut(height: int, out_height: int) -> int | None:
    """The output row nearest the middle at which a reduction of ``height`` rows to ``out_height`` falls on a whole image row (None: none does).

    >>> band_cut(1500, 240), band_cut(1512, 240), band_cut(1501, 240)
    (120, 120, None)
    """
    step = out_height // math.gcd(height, out_height)  # output rows between cuts on whole image rows
    if out_height < 2 * step or out_height > height:
        return None
    return min(max(step, round(out_height / 2 / step) * step), out_height - step)


@cache
def _helper() -> ThreadPoolExecutor:
    """The one helper thread that runs ``in_pair``'s second half (made anew in a forked child: threads do not survive a fork)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=HELPER_THREAD)


if hasattr(os, "register_at_fork"):  # POSIX only; where there is no fork there is nothing to clear
    os.register_at_fork(after_in_child=_helper.cache_clear)


def _block_size(width: int, height: int, size: tuple[int, int]) -> int:
    """The largest block ``k`` >= 2 dividing both sides and no larger than the reduction to ``size`` (1: none)."""
    reduction = min(width / max(size[0], 1), height / max(size[1], 1))
    for k in range(int(reduction), 1, -1):
        if width % k == 0 and height % k == 0:
            return k
    return 1


def block_aligned_end(box: tuple[int, int, int, int], shape: tuple[int, ...], factor: float) -> tuple[int, int]:
    """``box``'s right and bottom edges moved out (within the image) so its sides divide by a block size ``resize_area`` can use.

    Only ever widens the box, so what it showed it still shows; returns the edges unchanged when no block fits.
    """
    x0, y0, x1, y1 = box
    for k in range(int(1.0 / factor), 1, -1):
        wide, tall = x0 + -(-(x1 - x0) // k) * k, y0 + -(-(y1 - y0) // k) * k
        if wide <= shape[1] and tall <= shape[0]:
            return wide, tall
    return x1, y1


def shrink_then_warp(
    image: np.ndarray | Shrunk,
    size: tuple[int, int],
    *,
    to_out: np.ndarray | None = None,
    quad: np.ndarray | None = None,
    box: tuple[int, int, int, int] | None = None,
    factor: float | None = None,
    centres: PixelCentres = PixelCentres.CORNERS,
    min_side_px: int = 2,
    interpolation: int = cv2.INTER_LINEAR,
    border: int = cv2.BORDER_REPLICATE,
) -> np.ndarray:
    """Shrink the photo (``shrink_photo``; skipped when ``image`` is already a ``Shrunk``), then warp it into ``size`` (w, h).

    The warp is either ``to_out``, a 3x3 homography from *photo* pixels to output pixels, or ``quad``,
    four points TL, TR, BR, BL in the *shrunk* image's pixels sent to the output's corners (rounded
    to float32 first, as ``cv2.getPerspectiveTransform`` wants).

    Every perspective warp that feeds a model comes through here (the affine ``die_box_crop`` that
    cuts loose dice for training stays apart: OpenCV's affine warp may round differently). Each shipped
    model was trained on the exact pixels of its own setting, so the settings cannot be merged
    without retraining that model:

    - ``sagrada_dice`` (``scanner.sagrada.cells.rectify_grid``): ``to_out``; when the grid's longest
      side spans over 1.6 photo pixels per rectified pixel, its padded footprint is reduced to 1.2,
      with ``PixelCentres.CORNERS``; ``INTER_LINEAR``, ``BORDER_REPLICATE``.
    - ``sagrada_refiner`` (``scanner.sagrada.grid.warp_reduced``): ``to_out``; the same thresholds but
      measured on the footprint's bounding box, the footprint or the whole photo reduced, with
      ``PixelCentres.CENTRES``; ``INTER_LINEAR``, ``BORDER_CONSTANT`` (black beyond the photo's edge).
    - ``alhambra_tiles`` (``scanner.alhambra.tiles.crop_cells``): ``quad`` per cell; the palace's part
      of the photo is always cropped (edge pixels repeat from the crop's edge), and shrunk when a
      tile spans over 1.2 x 1.25 crop sides so it spans 1.25, at least 1 pixel a side, with
      ``PixelCentres.CORNERS``; ``INTER_LINEAR``, ``BORDER_REPLICATE``.
    - ``alhambra_octagon`` (``scanner.alhambra.octagon.crop_octagons``): the same as ``alhambra_tiles``
      (``crop_squares``) with its own square (a corner of the tile) and resolution (a tile spans
      ``PATCH_TILE_PX``).
    - ``warp_to_rectangle``: ``quad`` on the unreduced photo, ``INTER_AREA`` (which OpenCV's
      perspective warp performs as ``INTER_LINEAR``), ``BORDER_REPLICATE``.

    Merging them (one pixel-centre convention, one threshold, one border) would move every crop by
    up to half a source pixel or change its edges, and the models would see pixels they were not
    trained on; ``tests/scanner/test_warp_identity.py`` keeps each setting byte-identical to the
    formula its model was trained with.

    Raises:
        ValueError: not exactly one of ``to_out`` and ``quad``.
    """
    if (to_out is None) == (quad is None):
        raise ValueError("shrink_then_warp: expected exactly one of to_out and quad")
    shrunk = image if isinstance(image, Shrunk) else shrink_photo(image, box=box, factor=factor, centres=centres, min_side_px=min_side_px)
    width, height = size
    if quad is not None:
        target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
        forward = cv2.getPerspectiveTransform(np.asarray(quad, dtype=np.float32), target)
    else:
        forward = np.asarray(to_out, dtype=np.float64) @ np.linalg.inv(shrunk.from_photo)
    return cv2.warpPerspective(shrunk.image_rgb, forward, size, flags=interpolation, borderMode=border)


def footprint(to_out: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The photo points (TL, TR, BR, BL, float64 (4, 2)) that the corners of the ``size`` (w, h) output of ``to_out`` show."""
    width, height = size
    corners = np.array([[[0, 0]], [[width, 0]], [[width, height]], [[0, height]]], np.float64)
    return cv2.perspectiveTransform(corners, np.linalg.inv(to_out)).reshape(-1, 2)


def padded_box(points: np.ndarray, image_shape: tuple[int, ...], pad: int = 2) -> tuple[int, int, int, int]:
    """The whole pixels (x0, y0, x1, y1) around ``points`` plus ``pad``, clipped to an image of ``image_shape`` (H, W, ...)."""
    x0, y0 = np.floor(points.min(axis=0) - pad).astype(int).clip(0, None)
    x1, y1 = np.ceil(points.max(axis=0) + pad).astype(int)
    return int(x0), int(y0), int(min(x1, image_shape[1])), int(min(y1, image_shape[0]))


def warp_to_rectangle(image_rgb: np.ndarray, corners: np.ndarray, width_px: int, height_px: int) -> tuple[np.ndarray, np.ndarray]:
    """Warp the quadrilateral ``corners`` (TL, TR, BR, BL) to a ``width_px`` x ``height_px`` image.

    Returns the rectified image and the 3x3 homography from rectified to photo pixels.
    """
    target = np.array([[0, 0], [width_px, 0], [width_px, height_px], [0, height_px]], dtype=np.float32)
    forward = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), target)
    rectified = shrink_then_warp(Shrunk(image_rgb, np.eye(3)), (width_px, height_px), quad=corners, interpolation=cv2.INTER_AREA)
    return rectified, np.linalg.inv(forward)


def cell_square(x: float, y: float, half: float) -> np.ndarray:
    """The square of half-side ``half`` centred on (x, y), as TL, TR, BR, BL float64 (4, 2): a cell's outline in grid units.

    >>> cell_square(2, 1, 0.5).tolist()
    [[1.5, 0.5], [2.5, 0.5], [2.5, 1.5], [1.5, 1.5]]
    """
    return np.array([[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]], dtype=np.float64)


def project(points: np.ndarray, homography: np.ndarray) -> np.ndarray:
    """Map (N, 2) points through a 3x3 homography."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.asarray(homography, dtype=np.float64)).reshape(-1, 2)


def grid_polygons(rows: int, cols: int, width_px: float, height_px: float, homography: np.ndarray) -> list[list[list[float]]]:
    """Return each cell's outline (row-major) in photo pixels, from a rows x cols grid in rectified space."""
    polygons = []
    cell_w, cell_h = width_px / cols, height_px / rows
    for row in range(rows):
        for col in range(cols):
            x0, y0 = col * cell_w, row * cell_h
            square = np.array([[x0, y0], [x0 + cell_w, y0], [x0 + cell_w, y0 + cell_h], [x0, y0 + cell_h]])
            polygons.append(project(square, homography).round(1).tolist())
    return polygons


def link_lattice(
    points: np.ndarray,
    start: int,
    u: np.ndarray,
    v: np.ndarray,
    *,
    tolerance: float,
    candidates: int = 1,
    reaches: tuple[int, ...] = (1,),
) -> dict[int, tuple[int, int]]:
    """Lattice coordinates of ``points`` (N, 2), grown from ``start`` (at (0, 0)) with the steps ``u`` and ``v``.

    From each linked centre the four neighbours are predicted with that centre's own steps, so the
    steps follow perspective across the photo. The centre linked to a predicted place is the nearest
    not yet linked among the ``candidates`` nearest, if it lies within ``tolerance`` steps of it;
    ``reaches`` are the distances in steps looked at in turn (``(1, 2)``: a cell further when the
    neighbour's centre was not seen).

    >>> grid = np.array([[x * 10.0, y * 10.0] for y in range(2) for x in range(3)])
    >>> sorted(link_lattice(grid, 0, np.array([10.0, 0]), np.array([0, 10.0]), tolerance=0.4).values())
    [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    """
    coords: dict[int, tuple[int, int]] = {start: (0, 0)}
    basis = {start: (u, v)}
    queue = [start]
    taken = {(0, 0)}
    while queue:
        i = queue.pop(0)
        bu, bv = basis[i]
        ci = coords[i]
        for (di, dj), offset in (((1, 0), bu), ((-1, 0), -bu), ((0, 1), bv), ((0, -1), -bv)):
            limit = tolerance * np.linalg.norm(offset)
            for reach in reaches:
                cell = (ci[0] + di * reach, ci[1] + dj * reach)
                if cell in taken:  # a linked cell on the way ends the search that way
                    break
                gaps = np.linalg.norm(points - (points[i] + reach * offset), axis=1)
                nearest = (int(k) for k in np.argsort(gaps, kind="stable")[:candidates])
                j = next((k for k in nearest if k not in coords and gaps[k] <= limit), None)
                if j is None:
                    continue
                coords[j] = cell
                taken.add(cell)
                seen = (points[j] - points[i]) / reach
                basis[j] = (seen * di, bv) if di else (bu, seen * dj)
                queue.append(j)
                break
    return coords


def parse_corners(text: str) -> np.ndarray:
    """Parse ``x,y,x,y,x,y,x,y`` (any order of the four corners) into ordered (4, 2) float32.

    Raises:
        ValueError: not eight numbers.
    """
    try:
        values = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"corners: expected 8 numbers x,y,x,y,x,y,x,y; got {text!r}") from None
    if len(values) != 8:
        raise ValueError(f"corners: expected 8 numbers x,y,x,y,x,y,x,y; got {len(values)}")
    return order_corners(np.array(values).reshape(4, 2))
