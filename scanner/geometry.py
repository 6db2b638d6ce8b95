"""Board geometry shared by every game: corner order, perspective warps and cell outlines, all in (x, y) pixels."""

from __future__ import annotations

import cv2
import numpy as np


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


def warp_to_rectangle(image_rgb: np.ndarray, corners: np.ndarray, width_px: int, height_px: int) -> tuple[np.ndarray, np.ndarray]:
    """Warp the quadrilateral ``corners`` (TL, TR, BR, BL) to a ``width_px`` x ``height_px`` image.

    Returns the rectified image and the 3x3 homography from rectified to photo pixels.
    """
    target = np.array([[0, 0], [width_px, 0], [width_px, height_px], [0, height_px]], dtype=np.float32)
    forward = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), target)
    rectified = cv2.warpPerspective(image_rgb, forward, (width_px, height_px), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
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
