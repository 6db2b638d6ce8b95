"""Finding a Sagrada window's grid from its content: cell centres, then a 4x5 lattice fitted through them.

A small ONNX model (``models/sagrada_locate``, trained on renders) sees the photo letterboxed into
``LOCATE_SIZE`` and marks every cell's centre, dice and printed or blank cells alike (a heatmap at
stride ``LOCATE_STRIDE``), plus the grid's area (a mask). ``fit_window`` links the centres into a
square lattice (growing from the middle, the step and direction taken from the neighbours, so
perspective is followed), fits a homography through them robustly (RANSAC, then least squares over
the inliers), and picks the 4x5 extent that covers the most centres and the most of the mask. The
board's outline and frame play no part: a grid that fills the photo, a board of another design or
lines drawn over the photo leave the centres where they are.

The functions that build the model's input and targets live here and training imports them, so
training and scanning prepare pixels the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.geometry import link_lattice

ROWS, COLS = 4, 5
LOCATE_SIZE = (320, 240)  # (width, height) of the model's input, landscape (portrait photos are transposed)
LOCATE_STRIDE = 4
OUT_SIZE = (LOCATE_SIZE[0] // LOCATE_STRIDE, LOCATE_SIZE[1] // LOCATE_STRIDE)
PEAK_THRESHOLD = 0.3
TARGET_SIGMA = 0.12  # the centre targets' spread, in cell pitches
ZOOM_PITCH_OUT = 8.0  # the second look enlarges the grid so a cell spans about this many output px
MIN_CELLS = 8  # fewer linked centres than this is not a window's grid
LINK_TOLERANCE = 0.35  # a centre is linked within this many steps of the place its neighbour predicts
LINK_REACHES = (1, 2)  # then a cell further, where the neighbour's centre was not seen (an empty cell, a missed die)
INLIER = 0.3  # a centre within this many pitches of a lattice point is on it
F_PERSPECTIVE = 3.0  # the F statistic above which a homography is preferred to an affine map (about p = 0.05)
MAX_RESIDUAL = 0.15  # the most the centres' median distance from their lattice points may be (pitches): chance spots give ~0.2


# --------------------------------------------------------------------------------------------- input


def locate_input(image_rgb: np.ndarray, box: tuple[int, int, int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return the model's batch (1, 3, 240, 320) float32 and the 3x3 map from input px to photo px.

    ``box`` (x0, y0, x1, y1 photo px; None: the whole photo) is the part shown. A portrait region is
    transposed first so the input is always landscape; it is letterboxed top-left on black.
    """
    x0, y0, x1, y1 = box if box is not None else (0, 0, image_rgb.shape[1], image_rgb.shape[0])
    region = image_rgb[y0:y1, x0:x1]
    height, width = region.shape[:2]
    transposed = height > width
    if transposed:
        region = region.transpose(1, 0, 2)
        height, width = width, height
    out_w, out_h = LOCATE_SIZE
    scale = min(out_w / width, out_h / height)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    small = cv2.resize(np.ascontiguousarray(region), (new_w, new_h), interpolation=interpolation)
    canvas = np.zeros((out_h, out_w, 3), dtype=np.uint8)
    canvas[:new_h, :new_w] = small
    batch = (canvas.astype(np.float32) / np.float32(255.0)).transpose(2, 0, 1)[None]
    # pixel centres: input px i covers region px (i + 0.5) / s - 0.5
    sx, sy = width / new_w, height / new_h
    to_region = np.array([[sx, 0, 0.5 * sx - 0.5], [0, sy, 0.5 * sy - 0.5], [0, 0, 1]], dtype=np.float64)
    if transposed:
        to_region = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float64) @ to_region
    shift = np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]], dtype=np.float64)
    return np.ascontiguousarray(batch), shift @ to_region


def output_to_input() -> np.ndarray:
    """The 3x3 map from output (heatmap) px to input px: output px i is centred on input px 4 i + 1.5."""
    s = float(LOCATE_STRIDE)
    return np.array([[s, 0, (s - 1) / 2], [0, s, (s - 1) / 2], [0, 0, 1]], dtype=np.float64)


def grid_homography(corners: np.ndarray) -> np.ndarray:
    """The map from grid units (x along the 5 columns 0-5, y down the 4 rows 0-4) to photo px, from corners TL, TR, BR, BL."""
    unit = np.array([[0, 0], [COLS, 0], [COLS, ROWS], [0, ROWS]], np.float32)
    return cv2.getPerspectiveTransform(unit, np.asarray(corners, np.float32).reshape(4, 2)).astype(np.float64)


def cell_centres(grid_to_photo: np.ndarray) -> np.ndarray:
    """The 20 cell centres (row-major) in photo px for a grid-units -> photo map."""
    cols, rows = np.meshgrid(np.arange(COLS) + 0.5, np.arange(ROWS) + 0.5)
    pts = np.stack([cols.ravel(), rows.ravel()], axis=1)
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), grid_to_photo).reshape(-1, 2)


def locate_targets(corners_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The model's targets for a grid with corners (TL, TR, BR, BL) in input px: centre heat and grid mask, (60, 80) float32 each.

    The heat is a Gaussian of ``TARGET_SIGMA`` pitches (as seen there) at every cell centre, peak 1;
    the mask is the grid's area.
    """
    out_w, out_h = OUT_SIZE
    to_out = np.linalg.inv(output_to_input())
    grid = to_out @ grid_homography(corners_in)
    centres = cell_centres(grid)
    # the local pitch at each centre: the mean length of one cell's two steps
    cols, rows = np.meshgrid(np.arange(COLS) + 0.5, np.arange(ROWS) + 0.5)
    base = np.stack([cols.ravel(), rows.ravel()], axis=1)
    right = cv2.perspectiveTransform((base + [0.5, 0]).reshape(-1, 1, 2), grid).reshape(-1, 2)
    down = cv2.perspectiveTransform((base + [0, 0.5]).reshape(-1, 1, 2), grid).reshape(-1, 2)
    pitch = np.linalg.norm(right - centres, axis=1) + np.linalg.norm(down - centres, axis=1)
    ys, xs = np.mgrid[0:out_h, 0:out_w].astype(np.float32)
    heat = np.zeros((out_h, out_w), np.float32)
    for (cx, cy), p in zip(centres, pitch):
        sigma = max(0.6, TARGET_SIGMA * float(p))
        if not (-3 * sigma < cx < out_w + 3 * sigma and -3 * sigma < cy < out_h + 3 * sigma):
            continue
        heat = np.maximum(heat, np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma * sigma)))
        ix, iy = int(round(cx)), int(round(cy))
        if 0 <= ix < out_w and 0 <= iy < out_h:
            heat[iy, ix] = 1.0  # the nearest pixel is the positive one
    outline = cv2.perspectiveTransform(np.array([[0, 0], [COLS, 0], [COLS, ROWS], [0, ROWS]], np.float64).reshape(-1, 1, 2), grid)
    mask = np.zeros((out_h, out_w), np.uint8)
    cv2.fillPoly(mask, [np.round(outline.reshape(-1, 2) * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return heat, mask.astype(np.float32) / 255.0


# --------------------------------------------------------------------------------------------- peaks


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function, elementwise."""
    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(x, dtype=np.float64), -30, 30)))


def find_peaks(heat: np.ndarray, threshold: float = PEAK_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """Return sub-pixel (x, y) local maxima of a heatmap above ``threshold`` and their heights, highest first."""
    heat = np.asarray(heat, np.float32)
    dilated = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= dilated) & (heat > threshold))
    height, width = heat.shape
    points, scores = [], []
    for x, y in zip(xs, ys):
        x0, x1, y0, y1 = max(0, x - 1), min(width, x + 2), max(0, y - 1), min(height, y + 2)
        patch = heat[y0:y1, x0:x1].astype(np.float64)
        gy, gx = np.mgrid[y0:y1, x0:x1]
        total = float(patch.sum())
        points.append(((gx * patch).sum() / total, (gy * patch).sum() / total))
        scores.append(float(heat[y, x]))
    order = np.argsort(scores)[::-1]
    return np.array(points, np.float64).reshape(-1, 2)[order], np.array(scores, np.float64)[order]


@dataclass(frozen=True, eq=False)
class Centres:
    """One look of the locator: cell centres (photo px) with their heights, the grid mask and the output px -> photo map."""

    points: np.ndarray
    heights: np.ndarray
    mask: np.ndarray
    to_photo: np.ndarray

    def __post_init__(self) -> None:
        if self.points.ndim != 2 or self.points.shape[1] != 2 or len(self.heights) != len(self.points):
            raise ValueError(f"points: expected (N, 2) with N heights, got {self.points.shape} and {len(self.heights)}")

    def mask_at(self, points_photo: np.ndarray) -> np.ndarray:
        """The mask's probability at photo points (0 outside the output)."""
        out = cv2.perspectiveTransform(np.asarray(points_photo, np.float64).reshape(-1, 1, 2), np.linalg.inv(self.to_photo)).reshape(-1, 2)
        ix, iy = np.round(out[:, 0]).astype(int), np.round(out[:, 1]).astype(int)
        h, w = self.mask.shape
        inside = (ix >= 0) & (iy >= 0) & (ix < w) & (iy < h)
        values = np.zeros(len(out))
        values[inside] = self.mask[iy[inside], ix[inside]]
        return values


def locate_centres(model, image_rgb: np.ndarray, box: tuple[int, int, int, int] | None = None) -> Centres:
    """Run the locator on ``box`` of the photo (None: all of it) and return the centres it saw.

    Raises:
        ModelError: the model cannot run.
    """
    batch, to_photo_in = locate_input(image_rgb, box)
    out = model.run(batch)
    heat = sigmoid(out["heat"][0, 0])
    mask = sigmoid(out["mask"][0, 0])
    peaks, heights = find_peaks(heat)
    to_photo = to_photo_in @ output_to_input()
    points = cv2.perspectiveTransform(peaks.reshape(-1, 1, 2), to_photo).reshape(-1, 2) if len(peaks) else peaks
    return Centres(points, heights, mask, to_photo)


# --------------------------------------------------------------------------------------------- lattice


@dataclass(frozen=True, eq=False)
class WindowFit:
    """A 4x5 grid fitted through cell centres.

    ``corners`` are the grid's outer corners TL, TR, BR, BL (photo px) with the 5-cell side first,
    in one of the two orientations a 4x5 grid allows (``turned`` gives the other); ``seen`` is how
    many of the 20 cells have a centre on them, ``residual`` the median distance of those centres
    from the lattice (pitches), ``strays`` the centres near the grid but off its lattice, ``outside``
    the linked centres beyond the 4x5 extent, ``mask`` the mean mask probability over the cells.
    """

    corners: np.ndarray
    seen: int
    residual: float
    strays: int
    outside: int
    mask: float
    cells_seen: tuple[bool, ...]

    def __post_init__(self) -> None:
        if np.shape(self.corners) != (4, 2) or not np.all(np.isfinite(self.corners)):
            raise ValueError(f"corners: expected (4, 2) finite points, got {np.shape(self.corners)}")
        if len(self.cells_seen) != ROWS * COLS:
            raise ValueError(f"cells_seen: expected {ROWS * COLS} flags, got {len(self.cells_seen)}")

    @property
    def turned(self) -> np.ndarray:
        """The same grid turned half round (the other reading of which long side is the top)."""
        return np.roll(self.corners, 2, axis=0)

    @property
    def confidence(self) -> float:
        """How well the lattice fits, 0-1: the share of cells seen, discounted by the residual and stray centres."""
        share = self.seen / (ROWS * COLS)
        fit = math.exp(-((max(0.0, self.residual - 0.05) / 0.15) ** 2))
        return float(max(0.0, min(1.0, share * fit * 0.95 ** (self.strays + self.outside))))

    def corner_support(self) -> tuple[float, float, float, float]:
        """Per grid corner (TL, TR, BR, BL), the share of the 2x2 cells at that corner with a centre seen, times ``confidence``."""
        seen = np.array(self.cells_seen, bool).reshape(ROWS, COLS)
        blocks = (seen[:2, :2], seen[:2, -2:], seen[-2:, -2:], seen[-2:, :2])
        return tuple(float(block.mean()) * self.confidence for block in blocks)  # type: ignore[return-value]


def _basis(points: np.ndarray) -> tuple[float, float]:
    """The lattice's step (median nearest-neighbour distance) and direction modulo a quarter turn."""
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    nearest = dist.min(axis=1)
    step = float(np.median(nearest))
    angles = []
    for i in range(len(points)):
        for j in np.nonzero(dist[i] < 1.3 * nearest[i])[0]:
            d = points[j] - points[i]
            angles.append(math.atan2(d[1], d[0]))
    a = np.array(angles)
    return step, math.atan2(np.sin(4 * a).mean(), np.cos(4 * a).mean()) / 4


def _local_basis(points: np.ndarray, start: int, step: float) -> tuple[np.ndarray, np.ndarray]:
    """The lattice's two steps at ``start``: to its nearest centre, and to the nearest one roughly across that (perspective and tilt
    make the two steps differ in length and meet away from 90 degrees)."""
    offsets = points - points[start]
    lengths = np.linalg.norm(offsets, axis=1)
    lengths[start] = np.inf
    order = np.argsort(lengths)
    u = offsets[order[0]]
    if not np.isfinite(lengths[order[0]]) or lengths[order[0]] > 2.5 * step:
        return np.array([step, 0.0]), np.array([0.0, step])
    for j in order[1:6]:
        if not np.isfinite(lengths[j]) or lengths[j] > 2.5 * lengths[order[0]]:
            break
        if abs(offsets[j] @ u) / (lengths[j] * lengths[order[0]]) < 0.5:
            v = offsets[j]
            if u[0] * v[1] - u[1] * v[0] < 0:
                v = -v
            return u, v
    return u, np.array([-u[1], u[0]])


def _reduce_basis(coords: dict[int, tuple[int, int]], points: np.ndarray) -> dict[int, tuple[int, int]]:
    """The same lattice points in the coordinates of its shortest basis (Lagrange-Gauss reduction).

    Linking from a diagonal step (its true neighbour across was missing) gives coordinates in a
    sheared basis, ``(u, u + v)`` say: every centre still sits on a lattice point, but a 4x5 block of
    those coordinates is a slanted band across the window. The two shortest independent steps of
    a grid seen at up to 40 degrees of tilt are its rows and columns, so reducing the basis of the
    affine map through the linked centres restores them.
    """
    if len(coords) < 3:
        return coords
    idx = list(coords)
    src = np.array([coords[j] for j in idx], np.float64)
    design = np.column_stack([src, np.ones(len(src))])
    coef, _, rank, _ = np.linalg.lstsq(design, points[idx], rcond=None)
    if rank < 3:
        return coords
    a, b = coef[0].copy(), coef[1].copy()  # the photo steps of lattice x and y
    change = np.eye(2, dtype=np.int64)  # columns: the new basis vectors in old lattice coordinates
    for _ in range(32):
        if a @ a > b @ b:
            a, b = b, a
            change = change[:, ::-1].copy()
        mu = int(round(float(a @ b) / max(float(a @ a), 1e-12)))
        if mu == 0:
            break
        b = b - mu * a
        change[:, 1] -= mu * change[:, 0]
    if np.abs(change).sum() == 2:  # the same basis, perhaps swapped or turned: nothing was sheared
        return coords
    inverse = np.round(np.linalg.inv(change)).astype(np.int64)  # unimodular: integer coordinates stay integer
    moved = src.astype(np.int64) @ inverse.T
    return {j: (int(x), int(y)) for j, (x, y) in zip(idx, moved)}


def _homography(src: np.ndarray, dst: np.ndarray, pitch: float, robust: bool) -> np.ndarray | None:
    """Lattice coords -> photo px: a homography (RANSAC when ``robust``), an affine map for few or collinear points."""
    if len(src) < 3 or len(set(src[:, 0])) < 2 or len(set(src[:, 1])) < 2:
        return None
    if len(src) >= 6 and len(set(src[:, 0])) >= 3 and len(set(src[:, 1])) >= 3:
        method = cv2.RANSAC if robust else 0
        h, _ = cv2.findHomography(src, dst, method, 0.2 * pitch)
        if h is not None and abs(h[2, 2]) > 1e-12 and abs(np.linalg.det(h)) > 1e-12:
            return h / h[2, 2]
    affine, _ = cv2.estimateAffine2D(src.reshape(-1, 1, 2), dst.reshape(-1, 1, 2), method=cv2.LMEDS)
    return None if affine is None else np.vstack([affine, [0, 0, 1]])


def _assign(grid: np.ndarray, points: np.ndarray, heights: np.ndarray) -> tuple[dict[int, tuple[int, int]], np.ndarray]:
    """Give each centre its nearest lattice point (the highest centre wins a point); returns the assignment and every residual (pitches)."""
    lattice = cv2.perspectiveTransform(points.reshape(-1, 1, 2), np.linalg.inv(grid)).reshape(-1, 2)
    rounded = np.round(lattice)
    residual = np.linalg.norm(lattice - rounded, axis=1)
    coords: dict[int, tuple[int, int]] = {}
    taken: set[tuple[int, int]] = set()
    for j in np.argsort(-heights):
        cell = (int(rounded[j, 0]), int(rounded[j, 1]))
        if residual[j] < INLIER and cell not in taken:
            taken.add(cell)
            coords[int(j)] = cell
    return coords, residual


def fit_lattice(points: np.ndarray, heights: np.ndarray) -> tuple[np.ndarray, dict[int, tuple[int, int]]] | None:
    """Link centres into a square lattice and fit lattice coords -> photo px; None when no lattice of ``MIN_CELLS`` forms.

    Returns the map (integer lattice points are cell centres) and each linked centre's lattice point.
    """
    points = np.asarray(points, np.float64).reshape(-1, 2)
    heights = np.asarray(heights, np.float64).reshape(-1)
    if len(points) < MIN_CELLS:
        return None
    step, theta = _basis(points)
    u = np.array([math.cos(theta), math.sin(theta)]) * step
    v = np.array([-u[1], u[0]])
    centrality = np.linalg.norm(points - np.median(points, axis=0), axis=1) - 0.3 * step * heights
    best: dict[int, tuple[int, int]] = {}
    for start in np.argsort(centrality)[:5]:
        for bu, bv in (_local_basis(points, int(start), step), (u, v)):
            coords = link_lattice(points, int(start), bu, bv, tolerance=LINK_TOLERANCE, reaches=LINK_REACHES)
            if len(coords) > len(best):
                best = coords
            if len(best) >= 0.9 * len(points):
                break
        if len(best) >= 0.9 * len(points):
            break
    if len(best) < MIN_CELLS:
        return None
    coords = _reduce_basis(best, points)
    grid: np.ndarray | None = None
    for round_index in range(4):
        idx = list(coords)
        src = np.array([coords[j] for j in idx], np.float64)
        fitted = _homography(src, points[idx], step, robust=round_index == 0)
        if fitted is None:
            break
        grid = fitted
        assigned, _ = _assign(grid, points, heights)
        if len(assigned) < MIN_CELLS:
            break
        coords = assigned
    if grid is None or len(coords) < MIN_CELLS:
        return None
    return grid, coords


def _simplest(src: np.ndarray, dst: np.ndarray, homography: np.ndarray) -> np.ndarray:
    """The least-squares affine map instead of ``homography`` unless the homography fits clearly better.

    Two perspective terms fitted to noise move the extrapolated outer corners most; a grid seen
    straight on is affine, and one seen at a tilt shows it in the residuals.
    """
    design = np.column_stack([src, np.ones(len(src))])
    coef, *_ = np.linalg.lstsq(design, dst, rcond=None)
    affine = np.vstack([coef.T, [0, 0, 1]])
    err_a = np.linalg.norm(design @ coef - dst, axis=1)
    err_h = np.linalg.norm(cv2.perspectiveTransform(src.reshape(-1, 1, 2), homography).reshape(-1, 2) - dst, axis=1)
    rss_a, rss_h = float((err_a**2).sum()), float((err_h**2).sum())
    dof = max(1, 2 * len(src) - 8)
    # an F-test of the two perspective terms: they stay when they explain clearly more than noise would
    return homography if (rss_a - rss_h) / 2 > F_PERSPECTIVE * max(rss_h, 1e-12) / dof else affine


def _refit(grid: np.ndarray, coords: dict[int, tuple[int, int]], inside: list[int], points: np.ndarray) -> np.ndarray:
    """Least squares through the centres inside the chosen extent only (those beyond it would pull it), off-lattice ones left out."""
    for _ in range(2):
        src = np.array([coords[j] for j in inside], np.float64)
        dst = points[inside]
        if len(inside) < MIN_CELLS or len(set(src[:, 0])) < 3 or len(set(src[:, 1])) < 3:
            return grid
        h, _ = cv2.findHomography(src, dst, 0)
        if h is None or abs(h[2, 2]) < 1e-12 or abs(np.linalg.det(h)) < 1e-12:
            return grid
        grid = _simplest(src, dst, h / h[2, 2])
        lattice = cv2.perspectiveTransform(dst.reshape(-1, 1, 2), np.linalg.inv(grid)).reshape(-1, 2)
        residual = np.linalg.norm(lattice - src, axis=1)
        keep = [j for j, r in zip(inside, residual) if r < 0.2]
        if len(keep) == len(inside):
            break
        inside = keep
    return grid


def _windows(coords: dict[int, tuple[int, int]]) -> list[tuple[int, int, int, int]]:
    """Every 5x4 and 4x5 block of lattice points (x0, y0, width, height) that holds at least one linked centre."""
    cells = np.array(list(coords.values()))
    lo, hi = cells.min(axis=0), cells.max(axis=0)
    found = []
    for width, height in ((COLS, ROWS), (ROWS, COLS)):
        for x0 in range(int(lo[0]) - width + 1, int(hi[0]) + 1):
            for y0 in range(int(lo[1]) - height + 1, int(hi[1]) + 1):
                found.append((x0, y0, width, height))
    return found


def fit_window(centres: Centres, image_size: tuple[int, int] | None = None) -> WindowFit | None:
    """Fit the 4x5 grid through the located centres; None when they form no lattice.

    The extent is the 4x5 block of the lattice holding the most centres (their heights summed);
    near-ties go to the block the mask covers most and that leaves the fewest cells unseen inside
    the photo (``image_size``: width, height), so a window cut off by the photo's edge is placed
    running off it rather than over the table. Its 5-cell side becomes the top.
    """
    fitted = fit_lattice(centres.points, centres.heights)
    if fitted is None:
        return None
    grid, coords = fitted
    heights = centres.heights
    cells = np.array(list(coords.values()), np.int64)
    lo = cells.min(axis=0)
    span = cells.max(axis=0) - lo + 1
    board = np.zeros((span[1] + 2 * COLS, span[0] + 2 * COLS))  # heights on the lattice, padded by a window's size
    for j, (x, y) in coords.items():
        board[y - lo[1] + COLS, x - lo[0] + COLS] += heights[j]
    summed = np.pad(board.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    options = []
    for width, height in ((COLS, ROWS), (ROWS, COLS)):
        totals = summed[height:, width:] - summed[:-height, width:] - summed[height:, :-width] + summed[:-height, :-width]
        for yy, xx in zip(*np.nonzero(totals >= totals.max() - 0.5)):
            options.append((float(totals[yy, xx]), int(xx) + int(lo[0]) - COLS, int(yy) + int(lo[1]) - COLS, width, height))
    top = max(option[0] for option in options)
    best_key, best = -math.inf, None
    for total, x0, y0, width, height in options:
        if total < top - 0.5:
            continue
        xs, ys = np.meshgrid(np.arange(x0, x0 + width), np.arange(y0, y0 + height))
        lattice_pts = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64)
        photo_pts = cv2.perspectiveTransform(lattice_pts.reshape(-1, 1, 2), grid).reshape(-1, 2)
        cover = float(centres.mask_at(photo_pts).mean())
        key = total + 2.0 * cover
        if image_size is not None:
            held = {coords[j] for j in coords}
            in_photo = (
                (photo_pts[:, 0] >= 0) & (photo_pts[:, 1] >= 0) & (photo_pts[:, 0] < image_size[0]) & (photo_pts[:, 1] < image_size[1])
            )
            unseen = sum(
                1 for point, inside_photo in zip(lattice_pts, in_photo) if inside_photo and (int(point[0]), int(point[1])) not in held
            )
            key -= 0.5 * unseen
        if key > best_key:
            inside = [j for j, (x, y) in coords.items() if x0 <= x < x0 + width and y0 <= y < y0 + height]
            best_key, best = key, (x0, y0, width, height, inside, cover)
    if best is None or not best[4]:
        return None
    x0, y0, width, height, inside, cover = best
    grid = _refit(grid, coords, inside, centres.points)
    # grid units (x along the 5 columns, y down the 4 rows) -> lattice coords
    if width == COLS:
        to_lattice = np.array([[1, 0, x0 - 0.5], [0, 1, y0 - 0.5], [0, 0, 1]], np.float64)
    else:
        to_lattice = np.array([[0, 1, x0 - 0.5], [1, 0, y0 - 0.5], [0, 0, 1]], np.float64)
    grid_to_photo = grid @ to_lattice
    outline = np.array([[0, 0], [COLS, 0], [COLS, ROWS], [0, ROWS]], np.float64)
    corners = cv2.perspectiveTransform(outline.reshape(-1, 1, 2), grid_to_photo).reshape(4, 2)
    if cv2.contourArea(corners.astype(np.float32), oriented=True) < 0:  # mirrored: make it clockwise on screen
        corners = corners[[1, 0, 3, 2]]
        grid_to_photo = grid_to_photo @ np.array([[-1, 0, COLS], [0, 1, 0], [0, 0, 1]], np.float64)
    lattice_inv = np.linalg.inv(grid_to_photo)
    seen_flags = [False] * (ROWS * COLS)
    residuals = []
    for j in inside:
        gx, gy = cv2.perspectiveTransform(centres.points[j].reshape(1, 1, 2), lattice_inv).reshape(2)
        c, r = int(math.floor(gx)), int(math.floor(gy))
        if 0 <= r < ROWS and 0 <= c < COLS:
            seen_flags[r * COLS + c] = True
            residuals.append(math.hypot(gx - (c + 0.5), gy - (r + 0.5)))
    residual = float(np.median(residuals)) if residuals else 1.0
    if sum(seen_flags) < MIN_CELLS or residual > MAX_RESIDUAL:  # scattered spots link by chance, but not this closely
        return None
    # centres near the grid (within half a cell of it) that are not on its lattice: something else is in there
    near = cv2.perspectiveTransform(centres.points.reshape(-1, 1, 2), lattice_inv).reshape(-1, 2)
    within = (near[:, 0] > -0.5) & (near[:, 0] < COLS + 0.5) & (near[:, 1] > -0.5) & (near[:, 1] < ROWS + 0.5)
    strays = int(sum(1 for j in np.nonzero(within)[0] if int(j) not in coords))
    if strays > max(4, sum(seen_flags) // 2):  # more spots off the lattice than a few marks: no grid of cells
        return None
    beside = (near[:, 0] > -1.0) & (near[:, 0] < COLS + 1.0) & (near[:, 1] > -1.0) & (near[:, 1] < ROWS + 1.0)
    outside = sum(1 for j in coords if j not in inside and beside[j])  # a row or column of cells next to the grid
    return WindowFit(
        corners=corners,
        seen=int(sum(seen_flags)),
        residual=residual,
        strays=strays,
        outside=int(outside),
        mask=cover,
        cells_seen=tuple(seen_flags),
    )


def away_from(centres: Centres, corners: np.ndarray) -> Centres:
    """The centres more than a cell beyond the grid with ``corners`` (another window's, a tray of dice, marks)."""
    if not len(centres.points):
        return centres
    lattice_inv = np.linalg.inv(grid_homography(corners))
    near = cv2.perspectiveTransform(centres.points.reshape(-1, 1, 2), lattice_inv).reshape(-1, 2)
    away = ~((near[:, 0] > -1.0) & (near[:, 0] < COLS + 1.0) & (near[:, 1] > -1.0) & (near[:, 1] < ROWS + 1.0))
    return Centres(centres.points[away], centres.heights[away], centres.mask, centres.to_photo)


SECOND_WINDOW = 12  # centres away from the grid, and cells of a second grid among them, that make a second window


def box_around(points: np.ndarray, image_size: tuple[int, int], grow: float = 0.15) -> tuple[int, int, int, int]:
    """The bounding box of ``points`` grown by ``grow`` of its size each way, clipped to the photo."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    pad = grow * (hi - lo) + 8
    x0, y0 = np.maximum(np.floor(lo - pad), 0).astype(int)
    x1, y1 = np.minimum(np.ceil(hi + pad), image_size).astype(int)
    return int(x0), int(y0), max(int(x1), int(x0) + 2), max(int(y1), int(y0) + 2)


def zoom_box(corners: np.ndarray, image_size: tuple[int, int], grow: float = 0.75) -> tuple[int, int, int, int]:
    """A box around the grid (its bounding box grown by ``grow`` cells each way), clipped to the photo, for a second look."""
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    pitch = float(sides.mean()) / ((COLS + ROWS) / 2)
    width, height = image_size
    lo = np.floor(corners.min(axis=0) - grow * pitch).astype(int)
    hi = np.ceil(corners.max(axis=0) + grow * pitch).astype(int)
    x0, y0 = max(0, int(lo[0])), max(0, int(lo[1]))
    x1, y1 = min(width, int(hi[0])), min(height, int(hi[1]))
    return x0, y0, max(x1, x0 + 2), max(y1, y0 + 2)


def pitch_out(corners: np.ndarray, centres: Centres) -> float:
    """The grid's mean cell pitch in the locator's output px for the look ``centres`` came from."""
    out = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), np.linalg.inv(centres.to_photo)).reshape(4, 2)
    sides = np.linalg.norm(out - np.roll(out, -1, axis=0), axis=1)
    return float(sides.mean()) / ((COLS + ROWS) / 2)


def centre_residual(points: np.ndarray, corners: np.ndarray) -> float:
    """The median distance (cells) from each centre inside the grid with ``corners`` to its cell's middle (1.0: none inside)."""
    if not len(points):
        return 1.0
    grid = cv2.perspectiveTransform(np.asarray(points, np.float64).reshape(-1, 1, 2), np.linalg.inv(grid_homography(corners))).reshape(
        -1, 2
    )
    inside = (grid[:, 0] >= 0) & (grid[:, 0] < COLS) & (grid[:, 1] >= 0) & (grid[:, 1] < ROWS)
    if not inside.any():
        return 1.0
    offsets = grid[inside] - (np.floor(grid[inside]) + 0.5)
    return float(np.median(np.linalg.norm(offsets, axis=1)))


FILLS_BAND = 4  # output px (16 input px, about a quarter cell when the grid fills the input) in from each edge
FILLS_EDGE = 0.65  # the share of each photo edge the grid mask must cover for the grid to fill the photo


def fills_photo(centres: Centres, image_size: tuple[int, int]) -> bool:
    """Whether the locator's grid mask runs along all four edges of the photo: a photo cut to the grid (or nearly)."""
    width, height = image_size
    corners = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], np.float64)
    out = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), np.linalg.inv(centres.to_photo)).reshape(4, 2)
    x0, y0 = np.clip(np.round(out.min(axis=0)).astype(int), 0, None)
    x1, y1 = np.round(out.max(axis=0)).astype(int)
    h, w = centres.mask.shape
    x1, y1 = min(int(x1), w - 1), min(int(y1), h - 1)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return False
    mask = centres.mask[y0 : y1 + 1, x0 : x1 + 1] > 0.5
    band = FILLS_BAND  # the mask fades at the photo's very edge: look a few output px in
    edges = (mask[:band].any(axis=0), mask[-band:].any(axis=0), mask[:, :band].any(axis=1), mask[:, -band:].any(axis=1))
    return all(float(edge.mean()) >= FILLS_EDGE for edge in edges)


def whole_photo(image_size: tuple[int, int]) -> np.ndarray:
    """The photo's own outline as grid corners (pixel edges), its long side first: the grid of a photo cut to it."""
    width, height = image_size
    outline = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64) - 0.5
    return outline if width >= height else np.roll(outline, -1, axis=0)


def fit_given(centres: Centres, corners: np.ndarray) -> WindowFit:
    """How well the centres seen fit a grid placed otherwise (``corners`` TL, TR, BR, BL): the same measures as ``fit_window``."""
    corners = np.asarray(corners, np.float64).reshape(4, 2)
    to_photo = grid_homography(corners)
    seen_flags = [False] * (ROWS * COLS)
    residuals: list[float] = []
    strays = 0
    if len(centres.points):
        grid = cv2.perspectiveTransform(centres.points.reshape(-1, 1, 2), np.linalg.inv(to_photo)).reshape(-1, 2)
        for gx, gy in grid:
            if not (-0.5 < gx < COLS + 0.5 and -0.5 < gy < ROWS + 0.5):
                continue
            c, r = int(math.floor(gx)), int(math.floor(gy))
            off = math.hypot(gx - (c + 0.5), gy - (r + 0.5))
            if 0 <= r < ROWS and 0 <= c < COLS and off < INLIER and not seen_flags[r * COLS + c]:
                seen_flags[r * COLS + c] = True
                residuals.append(off)
            else:
                strays += 1
    cover = float(centres.mask_at(cell_centres(to_photo)).mean())
    return WindowFit(
        corners=corners,
        seen=int(sum(seen_flags)),
        residual=float(np.median(residuals)) if residuals else 1.0,
        strays=strays,
        outside=0,
        mask=cover,
        cells_seen=tuple(seen_flags),
    )
