"""Sagrada cell crops: rectify the 4x5 grid and cut one crop per cell, exactly as training does.

The grid's corners (TL, TR, BR, BL in photo pixels) are the outer corners of the 4x5 cell block.
The rectified grid has ``PITCH_PX`` pixels per cell and a ``MARGIN`` (fraction of a pitch) of
context all round, so each crop is the cell plus that margin: dice lean out of their cells when
the camera is tilted. ``models/sagrada_dice`` imports these functions, so training crops and
inference crops are made the same way.
"""

from __future__ import annotations

import cv2
import numpy as np

from scanner.geometry import PixelCentres, area_resize, cell_square, footprint, padded_box, project, shrink_then_warp
from scanner.sagrada.lattice import grid_homography

ROWS, COLS = 4, 5
PITCH_PX = 32
MARGIN = 0.25
MARGIN_PX = int(round(MARGIN * PITCH_PX))
CROP_PX = PITCH_PX + 2 * MARGIN_PX
CARD_BLACK = (18, 18, 18)
CROP_HEIGHT_MM = 8.0  # crops are cut on a plane half a die above the board: dice tops and prints both stay near the centre
RECT_W, RECT_H = COLS * PITCH_PX + 2 * MARGIN_PX, ROWS * PITCH_PX + 2 * MARGIN_PX


REDUCE_ABOVE, REDUCED_TO = 1.6, 1.2  # a grid spanning more photo pixels per rectified pixel is cut from the photo reduced to this


def photo_px_per_rectified_px(corners: np.ndarray, pitch_px: int = PITCH_PX) -> float:
    """How many photo pixels one rectified pixel spans along the grid's longest side (corners TL, TR, BR, BL).

    >>> photo_px_per_rectified_px(np.array([[0, 0], [480, 0], [480, 384], [0, 384]], float))
    3.0
    """
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    return float(
        max(sides[0] / (COLS * pitch_px), sides[2] / (COLS * pitch_px), sides[1] / (ROWS * pitch_px), sides[3] / (ROWS * pitch_px))
    )


def rectify_grid(
    image_rgb: np.ndarray, corners: np.ndarray, *, pitch_px: int = PITCH_PX, margin: float = MARGIN
) -> tuple[np.ndarray, np.ndarray]:
    """Warp the grid with corners TL, TR, BR, BL to ``pitch_px`` per cell plus ``margin`` pitches all round.

    Large photos are first reduced with area averaging so small pips do not alias away.
    Returns the rectified RGB image and the 3x3 homography from rectified to photo pixels.
    """
    corners = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    margin_px = margin * pitch_px
    width, height = COLS * pitch_px + 2 * margin_px, ROWS * pitch_px + 2 * margin_px
    target = np.array(
        [[margin_px, margin_px], [width - margin_px, margin_px], [width - margin_px, height - margin_px], [margin_px, height - margin_px]],
        dtype=np.float64,
    )
    to_rect = cv2.getPerspectiveTransform(corners.astype(np.float32), target.astype(np.float32)).astype(np.float64)
    scale = photo_px_per_rectified_px(corners, pitch_px)
    size = int(round(width)), int(round(height))
    box, factor = None, None
    if scale > REDUCE_ABOVE:  # reduce only the region around the grid, to REDUCED_TO photo pixels per rectified pixel
        found = padded_box(footprint(to_rect, size), image_rgb.shape)
        if found[2] - found[0] > 4 and found[3] - found[1] > 4:
            box, factor = found, 1.0 / (scale / REDUCED_TO)
    rectified = shrink_then_warp(image_rgb, size, to_out=to_rect, box=box, factor=factor, centres=PixelCentres.CORNERS)
    return rectified, np.linalg.inv(to_rect)


def reduced_for_grid(image_rgb: np.ndarray, corners: np.ndarray, pitch_px: int = PITCH_PX) -> tuple[np.ndarray, np.ndarray]:
    """The photo reduced once, as ``rectify_grid`` reduces the region of a grid spanning more than ``REDUCE_ABOVE``
    photo pixels per rectified pixel, and the (x, y) scale from photo to reduced pixels: for reading many grids near
    ``corners``.

    >>> reduced, scale = reduced_for_grid(np.zeros((400, 600, 3), np.uint8), np.array([[0, 0], [480, 0], [480, 384], [0, 384]]))
    >>> reduced.shape, scale.tolist()
    ((160, 240, 3), [0.4, 0.4])
    """
    scale = photo_px_per_rectified_px(np.asarray(corners, dtype=np.float64).reshape(4, 2), pitch_px)
    height, width = image_rgb.shape[:2]
    if scale <= REDUCE_ABOVE:
        return image_rgb, np.ones(2)
    size = max(2, int(round(width * REDUCED_TO / scale))), max(2, int(round(height * REDUCED_TO / scale)))
    return area_resize(image_rgb, size), np.array([size[0] / width, size[1] / height])


def cell_crops(rectified: np.ndarray) -> np.ndarray:
    """Cut the 20 cell crops (row-major, each ``CROP_PX`` square with its margin) from a rectified grid.

    Raises:
        ValueError: the image is not a rectified grid of the expected size.
    """
    if rectified.shape[:2] != (RECT_H, RECT_W):
        raise ValueError(f"rectified grid: expected {RECT_H}x{RECT_W} px, got {rectified.shape[0]}x{rectified.shape[1]}")
    crops = np.empty((ROWS * COLS, CROP_PX, CROP_PX, 3), np.uint8)
    for r in range(ROWS):
        for c in range(COLS):
            y, x = r * PITCH_PX, c * PITCH_PX
            crops[r * COLS + c] = rectified[y : y + CROP_PX, x : x + CROP_PX]
    return crops


def grid_image_crops(grid_rgb: np.ndarray) -> np.ndarray:
    """Crops from an image already cut to the grid's outer edges (as some apps save it): 20 crops.

    The image is resized to the grid and padded with the pattern card's black to give each cell its margin.
    """
    grid = cv2.resize(grid_rgb, (COLS * PITCH_PX, ROWS * PITCH_PX), interpolation=cv2.INTER_AREA)
    padded = cv2.copyMakeBorder(grid, MARGIN_PX, MARGIN_PX, MARGIN_PX, MARGIN_PX, cv2.BORDER_CONSTANT, value=CARD_BLACK)
    return cell_crops(padded)


DIE_FRACTION = 16 / (20.5 * (1 + 2 * MARGIN))  # a 16 mm die in a 20.5 mm cell's crop


def die_box_crop(
    image_rgb: np.ndarray, box: tuple[float, float, float, float], die_fraction: float = DIE_FRACTION, box_per_die: float = 1.0
) -> np.ndarray:
    """Crop a loose die given its box (x0, y0, x1, y1 px) so it fills the crop as a die in a cell does.

    ``box_per_die`` is how much wider than the die the box is (a loose box around a die is wider).
    """
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half = max(x1 - x0, y1 - y0) / box_per_die / die_fraction / 2
    src = np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half]], np.float32)
    dst = np.array([[0, 0], [CROP_PX, 0], [CROP_PX, CROP_PX]], np.float32)
    if half * 2 > 1.6 * CROP_PX:
        factor = CROP_PX * 1.2 / (half * 2)
        small = cv2.resize(image_rgb, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
        src = src * factor
        image_rgb = small
    matrix = cv2.getAffineTransform(src, dst)
    return cv2.warpAffine(image_rgb, matrix, (CROP_PX, CROP_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def zoomed(crops: np.ndarray, zoom: float) -> np.ndarray:
    """The middle ``1 / zoom`` of each square crop (N, S, S, 3) enlarged back to S x S (bilinear): its die ``zoom`` times larger.

    A crop shows its cell and a quarter pitch all round; at 1.2 the middle left is the cell and an
    eighth of a pitch, and a die's pips are a fifth wider.

    Raises:
        ValueError: ``zoom`` under 1, or the crops are not (N, S, S, 3).
    """
    crops = np.asarray(crops)
    if crops.ndim != 4 or crops.shape[1] != crops.shape[2] or crops.shape[3] != 3:
        raise ValueError(f"crops: expected (N, S, S, 3), got {crops.shape}")
    if zoom < 1:
        raise ValueError(f"zoom: expected 1 or more, got {zoom}")
    side = crops.shape[1]
    inner = max(1, int(round(side / zoom)))
    start = (side - inner) // 2
    middle = crops[:, start : start + inner, start : start + inner]
    return np.stack([cv2.resize(np.ascontiguousarray(crop), (side, side), interpolation=cv2.INTER_LINEAR) for crop in middle])


PITCH_MM, DIE_MM = 20.5, 16.0  # a window's cell pitch (square and gap) and a die's side
GRID_W_MM, GRID_H_MM = COLS * PITCH_MM, ROWS * PITCH_MM
GRID_CORNERS_MM = np.array([[0, 0], [GRID_W_MM, 0], [GRID_W_MM, GRID_H_MM], [0, GRID_H_MM]], np.float64)  # TL, TR, BR, BL
TYPICAL_FOCAL = 0.85  # focal length / long side of a phone's main camera (about 26-28 mm equivalent)
FOCAL_RANGE = (0.6, 1.6)  # focal lengths / long side a phone's main camera gives, wide to nearly 2x zoom


def lift_corners(corners: np.ndarray, image_size: tuple[int, int], height_mm: float) -> np.ndarray:
    """Return where the grid's corners would be seen ``height_mm`` above the board (e.g. on the dice).

    The camera's pose is recovered from the board's homography (square pixels, centred principal
    point; the focal length from the homography when the view is tilted enough to tell and it
    comes out within ``FOCAL_RANGE`` of the long side, else a typical phone's), then the grid is
    moved up by ``height_mm``. A grid placed a fifth of a cell off can put the estimate at 5x the
    long side, and the lift half a cell off with it.
    """
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    if height_mm == 0:
        return corners.copy()
    width, height = image_size
    centre = np.array([width / 2, height / 2])
    h = _board_homography(corners, image_size)
    long_side = max(width, height)
    focal = _focal_from_homography(h, long_side) or TYPICAL_FOCAL * long_side
    k_inv = np.diag([1 / focal, 1 / focal, 1.0])
    m = k_inv @ h
    scale = 2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
    m = m * scale
    if m[2, 2] < 0:  # the board lies in front of the camera
        m = -m
    r1, r2 = m[:, 0] / np.linalg.norm(m[:, 0]), m[:, 1] / np.linalg.norm(m[:, 1])
    r3 = np.cross(r1, r2)
    lifted = np.column_stack([m[:, 0], m[:, 1], m[:, 2] - height_mm * r3])
    h_top = np.diag([focal, focal, 1.0]) @ lifted
    pts = cv2.perspectiveTransform(GRID_CORNERS_MM.reshape(-1, 1, 2), h_top).reshape(-1, 2)
    return pts + centre


def _board_homography(corners: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """The board's mm -> photo px homography, photo px taken from the photo's centre (the principal point assumed there)."""
    centre = np.array([image_size[0] / 2, image_size[1] / 2])
    to_centre = (np.asarray(corners, np.float64).reshape(4, 2) - centre).astype(np.float32)
    return cv2.getPerspectiveTransform(GRID_CORNERS_MM.astype(np.float32), to_centre).astype(np.float64)


def pose_known(corners: np.ndarray, image_size: tuple[int, int]) -> bool:
    """Whether the grid's perspective gives the camera's focal length (a tilted view), so that ``lift_corners`` is measured, not
    guessed: seen from straight above (or in a photo cropped off its centre) a lift rests on a typical phone's focal length."""
    return _focal_from_homography(_board_homography(corners, image_size), max(image_size)) is not None


def _focal_from_homography(h: np.ndarray, long_side: float) -> float | None:
    """Focal length (px) from a plane's homography (principal point at the origin), or None when ill-conditioned
    or outside what a phone gives (``FOCAL_RANGE`` of the photo's ``long_side``)."""
    h11, h12, h21, h22, h31, h32 = h[0, 0], h[0, 1], h[1, 0], h[1, 1], h[2, 0], h[2, 1]
    estimates, weights = [], []
    if abs(h31 * h32) > 1e-12:
        f2 = -(h11 * h12 + h21 * h22) / (h31 * h32)
        if f2 > 0:
            estimates.append(f2)
            weights.append(abs(h31 * h32))
    if abs(h31**2 - h32**2) > 1e-12:
        f2 = (h12**2 + h22**2 - h11**2 - h21**2) / (h31**2 - h32**2)
        if f2 > 0:
            estimates.append(f2)
            weights.append(abs(h31**2 - h32**2))
    if not estimates:
        return None
    focal = float(np.sqrt(np.average(estimates, weights=weights)))
    plausible = 0.3 < focal / 1000 < 10 and FOCAL_RANGE[0] <= focal / long_side <= FOCAL_RANGE[1]
    return focal if plausible else None


def _share_outside(polygon: np.ndarray, image_size: tuple[int, int]) -> float:
    """The share of a convex ``polygon``'s area (photo px) that lies outside the photo."""
    width, height = image_size
    polygon = np.asarray(polygon, np.float32).reshape(-1, 2)
    area = abs(float(cv2.contourArea(polygon)))
    if area < 1e-6:
        return 0.0
    photo = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    inside, _ = cv2.intersectConvexConvex(polygon, photo)
    return float(min(1.0, max(0.0, 1.0 - inside / area)))


def off_photo_shares(corners: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """Per cell (row-major), the share of what it shows that lies beyond the photo's edge.

    What a cell shows is its square on the board (a print, an empty cell) and, where it holds a
    die, the die's top face a die's height up (``lift_corners``): the larger of the two shares
    outside the photo. A die leaning past the edge of a photo cut close to the grid shows only its
    side or a part of its top, and a part of a 6 can read as a sure 1. The dice tops are measured
    only where the grid's perspective gives the camera (``pose_known``): seen from above a die
    barely leans, and a photo cut to the grid would put a guessed camera a hand's width away.
    """
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    shares = np.zeros(ROWS * COLS)
    planes = ((0.0, 0.5), (DIE_MM, DIE_MM / PITCH_MM / 2)) if pose_known(corners, image_size) else ((0.0, 0.5),)
    for lift, half in planes:  # half: the outline's half side in cells (a board square, a die's top)
        to_photo = grid_homography(lift_corners(corners, image_size, lift))
        for index in range(ROWS * COLS):
            r, c = divmod(index, COLS)
            shares[index] = max(shares[index], _share_outside(project(cell_square(c + 0.5, r + 0.5, half), to_photo), image_size))
    return shares
