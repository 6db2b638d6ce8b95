"""Reading an Alhambra palace from a photo: find the tiles, fit their lattice, classify, decode.

Stages (one code path, timed by the pipeline's ``Timings``):

1. ``locate``: a small fully convolutional net (``models/alhambra_locate``) turns a 320x240
   letterboxed copy of the photo into a tile-centre heatmap and a tile-area mask; heatmap peaks
   are the tile centres.
2. ``lattice``: the centres are linked into a square lattice (orientation, pitch, perspective)
   by growing grid coordinates from the most central tile, then fitting a homography from grid
   to photo. The lattice's axes are only known up to a quarter turn.
3. ``classify``: each lattice cell is cropped square (``crop_cells``, shared with training) and
   read by the tile classifier (``models/alhambra_tiles``): kind (none, fountain, six types), the
   four walls as they lie in the crop, the price and the crop's rotation from upright. The
   rotations of all tiles vote for north (tiles never rotate in the game).
4. ``rules``: the most probable reading that obeys the rules: one fountain, every building a
   catalogue tile used once, neighbours agreeing on their shared walls. Cells where the rules
   changed the model's first choice become ``Override`` records.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from scanner.alhambra.classifier import CROP_MARGIN
from scanner.alhambra.classifier import MODEL as TILES_MODEL
from scanner.errors import BoardNotFoundError
from scanner.model import OnnxModel, load_model, models_dir, softmax
from scanner.photo import Photo
from scanner.reading import BoardReading, CellReading, Override, Timings
from scoring.alhambra.palace import (
    BUILDING_TYPES,
    CATALOGUE,
    FOUNTAIN_TILE,
    OPPOSITE,
    SIDES,
    neighbour,
    reachable,
)

GAME = "alhambra"
LOCATE_MODEL = "alhambra_locate"
LOCATE_SIZE = (320, 240)  # (width, height) of the detector input, landscape
LOCATE_STRIDE = 4
CROP_PX = 64
KINDS = ("none", "fountain", *BUILDING_TYPES)
PRICES = tuple(str(p) for p in range(2, 14))
ROTATIONS = ("0", "90", "180", "270")  # crop = np.rot90(upright, k): quarter turns counter-clockwise
SIDES = "NESW"
CROP_SIDES = ("top", "right", "bottom", "left")
PEAK_THRESHOLD = 0.35
TILE_AT_CENTRE = 0.5  # a cell with a located centre holds a tile unless the classifier finds no tile likelier (a loose die, a card)
TILE_OFF_CENTRE = 0.15  # an empty neighbour cell holds a tile only when P(no tile) is under this
SMALL_TILE_OUT_PX = 4.6  # smaller tiles in the locator's output get a second, closer look
BIG_TILE_OUT_PX = 9.0  # bigger ones a second, farther look
GOOD_TILE_OUT_PX = 6.0
LSQ_MIN_CELLS = 5  # palaces with at least this many linked centres get a least-squares homography
TOO_DARK = 12  # mean brightness (0-255) under which a photo is refused as too dark
DIM = 40  # mean brightness under which a photo without any tile found is blamed on the light
HINT = "retake from above with the whole palace in frame, or give --corners x,y,x,y,x,y,x,y"


# --------------------------------------------------------------------------------------------
# preprocessing shared with training


def locate_input(image_rgb: np.ndarray, zoom: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Return the detector batch (1, 3, 240, 320) float32 and the 3x3 map from input px to image px.

    Portrait photos are transposed first so the input is always landscape. ``zoom`` > 1 shrinks
    the photo that much more (tiles too big for the locator), centred on a plain median-colour ground.
    """
    height, width = image_rgb.shape[:2]
    transposed = height > width
    if transposed:
        image_rgb = image_rgb.transpose(1, 0, 2)
        height, width = width, height
    out_w, out_h = LOCATE_SIZE
    scale = min(out_w / width, out_h / height) / zoom
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    small = cv2.resize(image_rgb, (new_w, new_h), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((out_h, out_w, 3), dtype=np.uint8)
    x0 = y0 = 0
    if zoom > 1.0:
        canvas[:] = np.median(small.reshape(-1, 3), axis=0).astype(np.uint8)
        x0, y0 = (out_w - new_w) // 2, (out_h - new_h) // 2
    canvas[y0:y0 + new_h, x0:x0 + new_w] = small
    batch = (canvas.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    to_image = np.array([[width / new_w, 0, -x0 * width / new_w], [0, height / new_h, -y0 * height / new_h], [0, 0, 1]], dtype=np.float64)
    if transposed:
        to_image = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float64) @ to_image
    return np.ascontiguousarray(batch), to_image


def crop_cells(image_rgb: np.ndarray, grid_to_image: np.ndarray, cells: list[tuple[float, float]], size: int = CROP_PX) -> np.ndarray:
    """Return square crops (N, size, size, 3) uint8 of lattice cells, crop x along grid x.

    ``grid_to_image`` maps grid (x, y) (tile centres at integers) to image pixels. The image is
    first shrunk so one tile spans about ``size`` pixels, so crops are not aliased.
    """
    if not cells:
        return np.zeros((0, size, size, 3), dtype=np.uint8)
    centres = np.asarray(cells, dtype=np.float64)
    homography = np.asarray(grid_to_image, dtype=np.float64)
    # work on the palace's part of the photo only, shrunk so one tile spans about 1.25 crops
    reach = np.concatenate([centres + [dx, dy] for dx in (-1, 1) for dy in (-1, 1)])
    spots = cv2.perspectiveTransform(reach.reshape(-1, 1, 2), homography).reshape(-1, 2)
    x0, y0 = np.clip(np.floor(spots.min(axis=0)).astype(int), 0, [image_rgb.shape[1] - 1, image_rgb.shape[0] - 1])
    x1, y1 = np.clip(np.ceil(spots.max(axis=0)).astype(int), [x0 + 1, y0 + 1], [image_rgb.shape[1], image_rgb.shape[0]])
    image = image_rgb[y0:y1, x0:x1]
    homography = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], dtype=np.float64) @ homography
    pitch = _local_pitch(homography, centres)
    shrink = float(np.median(pitch)) / (size * 1.25)
    if shrink > 1.2:
        factor = 1.0 / shrink
        small = cv2.resize(image, (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor))), interpolation=cv2.INTER_AREA)
        homography = np.diag([small.shape[1] / image.shape[1], small.shape[0] / image.shape[0], 1.0]) @ homography
        image = small
    half = 0.5 + CROP_MARGIN
    target = np.array([[0, 0], [size, 0], [size, size], [0, size]], dtype=np.float32)
    crops = np.empty((len(centres), size, size, 3), dtype=np.uint8)
    for index, (x, y) in enumerate(centres):
        square = np.array([[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]])
        source = cv2.perspectiveTransform(square.reshape(-1, 1, 2), homography).reshape(4, 2).astype(np.float32)
        warp = cv2.getPerspectiveTransform(source, target)
        crops[index] = cv2.warpPerspective(image, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return crops


def crops_batch(crops: np.ndarray) -> np.ndarray:
    """Return the classifier batch (N, 3, H, W) float32 in 0-1 from uint8 RGB crops."""
    return np.ascontiguousarray(crops.astype(np.float32).transpose(0, 3, 1, 2) / 255.0)


def _local_pitch(grid_to_image: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Return the size in image px of one grid step at each centre (geometric mean of both axes)."""
    pts = np.concatenate([centres, centres + [1, 0], centres + [0, 1]])
    mapped = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), np.asarray(grid_to_image, np.float64)).reshape(3, -1, 2)
    dx = np.linalg.norm(mapped[1] - mapped[0], axis=1)
    dy = np.linalg.norm(mapped[2] - mapped[0], axis=1)
    return np.sqrt(dx * dy)


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


def crop_walls_to_upright(crop_walls: np.ndarray, k: int) -> np.ndarray:
    """Reorder per-side values from crop order (top, right, bottom, left) to N, E, S, W."""
    return np.array([crop_walls[(side - k) % 4] for side in range(4)])


def upright_walls_to_crop(walls: str, k: int) -> list[int]:
    """Return the crop-order (top, right, bottom, left) wall flags of a tile rotated ``k`` quarter turns CCW."""
    return [int(SIDES[(index + k) % 4] in walls) for index in range(4)]


# --------------------------------------------------------------------------------------------
# locating the tiles


@dataclass(frozen=True)
class Located:
    """One locator pass: heatmap and mask (output px), peaks (output px and photo px), the map between."""

    heat: np.ndarray
    mask: np.ndarray
    peaks: np.ndarray
    heights: np.ndarray
    points: np.ndarray
    to_photo: np.ndarray
    zoom: float


@dataclass(frozen=True)
class Lattice:
    """Tile centres linked into a grid: lattice cell -> centre, and the fitted grid -> image map."""

    cells: dict[tuple[int, int], np.ndarray]
    grid_to_image: np.ndarray
    pitch_px: float
    stray: int  # detected centres that did not fit the lattice
    far: int = 0  # of those, how many lie well away from the palace (another palace?)


def find_peaks(heat: np.ndarray, threshold: float = PEAK_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """Return sub-pixel (x, y) local maxima of a heatmap above ``threshold`` and their heights."""
    dilated = cv2.dilate(heat, np.ones((5, 5), np.uint8))
    ys, xs = np.nonzero((heat >= dilated) & (heat > threshold))
    points, scores = [], []
    height, width = heat.shape
    for x, y in zip(xs, ys):
        x0, x1, y0, y1 = max(0, x - 1), min(width, x + 2), max(0, y - 1), min(height, y + 2)
        patch = heat[y0:y1, x0:x1]
        gy, gx = np.mgrid[y0:y1, x0:x1]
        total = float(patch.sum())
        points.append(((gx * patch).sum() / total, (gy * patch).sum() / total))
        scores.append(float(heat[y, x]))
    order = np.argsort(scores)[::-1]
    pts = np.array(points, dtype=np.float64).reshape(-1, 2)[order]
    return pts, np.array(scores, dtype=np.float64)[order]


def fit_lattice(points: np.ndarray, scores: np.ndarray, pitch_hint: float | None = None) -> Lattice:
    """Link tile centres (image px) into a square lattice and fit grid -> image.

    Raises:
        BoardNotFoundError: no centres, or centres that do not form a lattice.
    """
    n = len(points)
    if n == 0:
        raise BoardNotFoundError("no tiles found")
    if n == 1:
        pitch = float(pitch_hint or 100.0)
        x, y = points[0]
        grid = np.array([[pitch, 0, x], [0, pitch, y], [0, 0, 1]], dtype=np.float64)
        return Lattice({(0, 0): points[0]}, grid, pitch, 0)
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    np.fill_diagonal(dist, np.inf)
    nearest = dist.min(axis=1)
    step = float(np.median(nearest))
    # dominant direction modulo a quarter turn, from neighbour vectors
    angles = []
    for i in range(n):
        for j in np.nonzero(dist[i] < 1.3 * nearest[i])[0]:
            d = points[j] - points[i]
            angles.append(math.atan2(d[1], d[0]))
    a = np.array(angles)
    theta = math.atan2(np.sin(4 * a).mean(), np.cos(4 * a).mean()) / 4
    u = np.array([math.cos(theta), math.sin(theta)]) * step
    v = np.array([-u[1], u[0]])
    centrality = np.linalg.norm(points - np.median(points, axis=0), axis=1) - 0.2 * step * scores
    best: dict[int, tuple[int, int]] = {}
    for start in np.argsort(centrality)[:4]:  # a few starts: keep the one linking the most centres
        coords = _link(points, int(start), u, v)
        if len(coords) > len(best):
            best = coords
        if len(best) == n:
            break
    coords = best
    grid = _fit_grid(coords, points, allow_perspective=False)
    for round_index in range(3):  # re-assign every centre with the fitted map, then refit
        assigned = _assign(grid, points, scores)
        if not assigned:  # the map fits no centre (scattered specks): keep the linked ones
            break
        coords = assigned
        grid = _fit_grid(coords, points, allow_perspective=round_index == 2)
    coords = _main_group(_assign(grid, points, scores) or coords)
    grid = refine_grid(grid, coords, points)
    cells = {cell: points[j] for j, cell in coords.items()}
    pitch = float(np.median(_local_pitch(grid, np.array(list(cells), dtype=np.float64))))
    inside = np.array(list(cells.values()))
    strays = [points[j] for j in range(n) if j not in coords]
    far_points = [p for p in strays if np.linalg.norm(inside - p, axis=1).min() > 1.6 * pitch]
    # another palace shows as a cluster of centres away from this one, not as scattered specks
    far = sum(1 for i, p in enumerate(far_points) if any(i != j and np.linalg.norm(p - q) < 1.6 * pitch for j, q in enumerate(far_points)))
    return Lattice(cells, grid, pitch, n - len(coords), far)


def refine_grid(grid: np.ndarray, coords: dict[int, tuple[int, int]], points: np.ndarray, *, min_cells: int = LSQ_MIN_CELLS) -> np.ndarray:
    """Least-squares homography over every linked centre, outliers (> 0.25 pitch off) left out.

    The robust fits above keep the affine map unless a homography is clearly better and take it
    from a minimal sample; one least-squares fit over all centres averages the locator's peak
    noise (a few percent of a pitch per centre) down. Palaces of fewer than ``min_cells`` tiles,
    or a single row or column, keep ``grid``.
    """
    idx = list(coords)
    if len(idx) < min_cells:
        return grid
    src = np.array([coords[j] for j in idx], dtype=np.float64)
    if len(set(src[:, 0])) < 2 or len(set(src[:, 1])) < 2:
        return grid
    dst = points[idx]
    pitch = float(np.median(_local_pitch(grid, src)))
    for _ in range(2):
        residual = np.linalg.norm(cv2.perspectiveTransform(src.reshape(-1, 1, 2), grid).reshape(-1, 2) - dst, axis=1)
        keep = residual < 0.25 * pitch
        if keep.sum() < min_cells or len(set(src[keep, 0])) < 2 or len(set(src[keep, 1])) < 2:
            return grid
        homography, _ = cv2.findHomography(src[keep], dst[keep], 0)
        if homography is None or abs(homography[2, 2]) < 1e-12:
            return grid
        homography = homography / homography[2, 2]
        if abs(np.linalg.det(homography)) < 1e-12:
            return grid
        grid = homography
    return grid


def _link(points: np.ndarray, start: int, u: np.ndarray, v: np.ndarray) -> dict[int, tuple[int, int]]:
    """Grow grid coordinates from ``start`` by stepping to the centre nearest each predicted neighbour."""
    coords: dict[int, tuple[int, int]] = {start: (0, 0)}
    basis = {start: (u, v)}
    queue = [start]
    taken: set[tuple[int, int]] = {(0, 0)}
    while queue:
        i = queue.pop(0)
        bu, bv = basis[i]
        ci = coords[i]
        for (di, dj), offset in (((1, 0), bu), ((-1, 0), -bu), ((0, 1), bv), ((0, -1), -bv)):
            cell = (ci[0] + di, ci[1] + dj)
            if cell in taken:
                continue
            gaps = np.linalg.norm(points - (points[i] + offset), axis=1)
            for j in np.argsort(gaps)[:3]:
                j = int(j)
                if j in coords or gaps[j] > 0.45 * np.linalg.norm(offset):
                    continue
                coords[j] = cell
                taken.add(cell)
                seen = points[j] - points[i]
                basis[j] = (seen * di, bv) if di else (bu, seen * dj)
                queue.append(j)
                break
    return coords


def _main_group(coords: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Keep the largest group of cells linked at most one missing tile apart (drops far-off centres)."""
    remaining = dict(coords)
    best: dict[int, tuple[int, int]] = {}
    while remaining:
        first = next(iter(remaining))
        group = {first: remaining.pop(first)}
        frontier = [first]
        while frontier:
            cx, cy = group[frontier.pop()]
            near = [j for j, (x, y) in remaining.items() if max(abs(x - cx), abs(y - cy)) <= 2]
            for j in near:
                group[j] = remaining.pop(j)
                frontier.append(j)
        if len(group) > len(best):
            best = group
    return best


def _assign(grid: np.ndarray, points: np.ndarray, scores: np.ndarray) -> dict[int, tuple[int, int]]:
    """Give each centre the nearest lattice cell (strongest centre wins a cell; far-off ones stay out)."""
    lattice_pts = cv2.perspectiveTransform(points.reshape(-1, 1, 2), np.linalg.inv(grid)).reshape(-1, 2)
    rounded = np.round(lattice_pts)
    residual = np.linalg.norm(lattice_pts - rounded, axis=1)
    coords: dict[int, tuple[int, int]] = {}
    taken: set[tuple[int, int]] = set()
    for j in np.argsort(-scores):
        cell = (int(rounded[j, 0]), int(rounded[j, 1]))
        if residual[j] < 0.4 and cell not in taken:
            taken.add(cell)
            coords[int(j)] = cell
    return coords


def _fit_grid(coords: dict[int, tuple[int, int]], points: np.ndarray, allow_perspective: bool = True) -> np.ndarray:
    """Fit grid -> image: affine (robust), upgraded to a homography when it fits clearly better.

    A single row or column gets a similarity; one centre a unit square of 100 px.
    """
    idx = list(coords)
    src = np.array([coords[j] for j in idx], dtype=np.float64)
    dst = points[idx]
    xs, ys = set(src[:, 0]), set(src[:, 1])
    if len(idx) >= 3 and len(xs) >= 2 and len(ys) >= 2:
        affine, _ = cv2.estimateAffine2D(src.reshape(-1, 1, 2), dst.reshape(-1, 1, 2), method=cv2.LMEDS)
        if affine is not None:
            grid = np.vstack([affine, [0, 0, 1]])
            if allow_perspective and len(idx) >= 10 and len(xs) >= 3 and len(ys) >= 3:
                pitch = math.sqrt(abs(np.linalg.det(affine[:, :2])))
                homography, _ = cv2.findHomography(src, dst, cv2.RANSAC, 0.2 * pitch)
                if homography is not None and abs(np.linalg.det(homography)) > 1e-12:
                    homography = homography / homography[2, 2]
                    err_h = np.median(np.linalg.norm(cv2.perspectiveTransform(src.reshape(-1, 1, 2), homography).reshape(-1, 2) - dst, axis=1))
                    err_a = np.median(np.linalg.norm(src @ affine[:, :2].T + affine[:, 2] - dst, axis=1))
                    if err_h < 0.85 * err_a:
                        return homography
            return grid
    if len(idx) >= 2:
        # a single row or column: a similarity, with the other axis a quarter turn clockwise
        ext_src = np.concatenate([src, src + [[0, 1]]])
        direction = dst[-1] - dst[0]
        span = src[-1] - src[0]
        along = direction / max(np.abs(span).sum(), 1e-9)
        if span[1] and not span[0]:  # a column: step along y
            step_y = along
            step_x = np.array([-step_y[1], step_y[0]]) * -1
        else:
            step_x = along
            step_y = np.array([-step_x[1], step_x[0]])
        origin = (dst - src[:, :1] * step_x - src[:, 1:] * step_y).mean(axis=0)
        del ext_src
        return np.array([[step_x[0], step_y[0], origin[0]], [step_x[1], step_y[1], origin[1]], [0, 0, 1]], dtype=np.float64)
    x, y = points[idx[0]]
    return np.array([[100.0, 0, x], [0, 100.0, y], [0, 0, 1]])


# --------------------------------------------------------------------------------------------
# decoding with the rules


@dataclass(frozen=True)
class TileEvidence:
    """The classifier's calibrated probabilities for one cell, in upright (N, E, S, W) terms."""

    kind: np.ndarray  # over KINDS
    walls: np.ndarray  # P(wall) for N, E, S, W
    price: np.ndarray  # over PRICES

    def model_value(self) -> tuple[str, float]:
        """The model's own first choice (ignoring the rules) and its probability."""
        kind_index = int(np.argmax(self.kind))
        kind = KINDS[kind_index]
        if kind in ("none", "fountain"):
            return kind, float(self.kind[kind_index])
        walls = "".join(side for side, p in zip(SIDES, self.walls) if p >= 0.5)
        wall_p = float(np.prod(np.where(self.walls >= 0.5, self.walls, 1 - self.walls)))
        return f"{kind}:{walls}", float(self.kind[kind_index]) * wall_p


_CAT_KIND = np.array([KINDS.index(tile.type) for tile in CATALOGUE])
_CAT_WALLS = np.array([[side in tile.walls for side in SIDES] for tile in CATALOGUE], dtype=np.float64)
_CAT_PRICE = np.array([PRICES.index(str(tile.price)) for tile in CATALOGUE])


def tile_log_scores(evidence: TileEvidence, price_weight: float = 0.15) -> np.ndarray:
    """Log-probability of each catalogue tile (in ``CATALOGUE`` order) given one cell's evidence."""
    eps = 1e-6
    walls = np.clip(evidence.walls, eps, 1 - eps)
    scores = np.log(np.clip(evidence.kind[_CAT_KIND], eps, 1))
    scores = scores + _CAT_WALLS @ np.log(walls) + (1 - _CAT_WALLS) @ np.log(1 - walls)
    return scores + price_weight * np.log(np.clip(evidence.price[_CAT_PRICE], eps, 1))


def decode_palace(evidence: dict[tuple[int, int], TileEvidence], *, max_nodes: int = 50_000) -> tuple[tuple[int, int], dict[tuple[int, int], int]]:
    """Pick the fountain and a catalogue tile per other cell: most probable reading obeying the rules.

    Rules: exactly one fountain; each catalogue tile at most once; shared walls agree (a wall on
    one side of an edge faces a wall on the other; the fountain has none); every tile reachable on
    foot from the fountain (the cells themselves, and so any hole, come from the lattice, not from
    this choice). Returns the fountain cell and cell -> index in ``CATALOGUE``. When no reachable
    reading is among the likely candidates, the best wall-consistent one is kept; without any
    consistent reading the walls rule is dropped too (the validator then reports the break).
    """
    cells = list(evidence)
    fountain = max(cells, key=lambda c: float(evidence[c].kind[KINDS.index("fountain")]))
    others = [c for c in cells if c != fountain]
    if not others:
        return fountain, {}
    scores = {c: tile_log_scores(evidence[c]) for c in others}
    candidates = {}
    for c in others:
        order = np.argsort(-scores[c])
        best = scores[c][order[0]]
        candidates[c] = [int(t) for t in order[:10] if scores[c][t] > best - 25]
    # search order: most certain first, then neighbours of what is placed (better pruning)
    order = sorted(others, key=lambda c: -(scores[c][candidates[c][0]] - (scores[c][candidates[c][1]] if len(candidates[c]) > 1 else -50)))
    remaining_best = np.cumsum([scores[c][candidates[c][0]] for c in order][::-1])[::-1].tolist() + [0.0]
    best_total = [-math.inf]
    best_choice: list[dict[tuple[int, int], int]] = [{}]
    fallback_total = [-math.inf]  # best wall-consistent reading that leaves some tile unreachable
    fallback_choice: list[dict[tuple[int, int], int]] = [{}]
    chosen: dict[tuple[int, int], int] = {}
    used: set[int] = set()
    nodes = [0]

    def consistent(cell: tuple[int, int], tile_index: int) -> bool:
        walls = CATALOGUE[tile_index].walls
        for side in SIDES:
            other = neighbour(cell, side)
            if other == fountain:
                if side in walls:
                    return False
            elif other in chosen:
                if (side in walls) != (OPPOSITE[side] in CATALOGUE[chosen[other]].walls):
                    return False
        return True

    def all_reachable() -> bool:
        palace = {cell: CATALOGUE[index] for cell, index in chosen.items()}
        palace[fountain] = FOUNTAIN_TILE
        return len(reachable(palace, [fountain])) == len(palace)

    def search(depth: int, total: float) -> None:
        nodes[0] += 1
        if nodes[0] > max_nodes:
            return
        if depth == len(order):
            if total > best_total[0]:
                if all_reachable():
                    best_total[0] = total
                    best_choice[0] = dict(chosen)
                elif total > fallback_total[0]:
                    fallback_total[0] = total
                    fallback_choice[0] = dict(chosen)
            return
        if total + remaining_best[depth] <= best_total[0]:
            return
        cell = order[depth]
        for tile_index in candidates[cell]:
            if tile_index in used or not consistent(cell, tile_index):
                continue
            chosen[cell] = tile_index
            used.add(tile_index)
            search(depth + 1, total + scores[cell][tile_index])
            used.discard(tile_index)
            del chosen[cell]

    search(0, 0.0)
    if best_choice[0]:
        return fountain, best_choice[0]
    if fallback_choice[0]:
        return fountain, fallback_choice[0]
    # no consistent reading: best tile per cell, each tile once (greedy by confidence)
    result: dict[tuple[int, int], int] = {}
    used.clear()
    for cell in order:
        for tile_index in np.argsort(-scores[cell]):
            if int(tile_index) not in used:
                result[cell] = int(tile_index)
                used.add(int(tile_index))
                break
    return fountain, result


# --------------------------------------------------------------------------------------------
# the reader


class AlhambraReader:
    """Finds and reads one player's palace."""

    game = GAME

    def __init__(self, locate: OnnxModel, tiles: OnnxModel) -> None:
        self.locate_model = locate
        self.tiles_model = tiles
        manifest = json.loads((models_dir() / TILES_MODEL / "manifest.json").read_text(encoding="utf-8"))
        self.temperatures = {head: float(t) for head, t in manifest.get("temperatures", {}).items()}
        self.model_label = f"{locate.manifest.label}; {tiles.manifest.label}"

    def read(self, photo: Photo, *, corners: np.ndarray | None = None, timings: Timings | None = None,
             trace: dict[str, Any] | None = None) -> BoardReading:
        """Locate, classify and decode the palace in ``photo``.

        ``corners`` (TL, TR, BR, BL of the palace's bounding box in image px) limit the search to
        that area. A ``trace`` dict, when given, receives the intermediate results (lattice, cells
        read, probabilities, north, evidence, decoding) for diagnosis. Raises:
            BoardNotFoundError: no palace, two palaces, or a palace cut off by the photo's edge.
        """
        timings = timings or Timings()
        image = photo.image_rgb
        with timings.stage("locate"):
            offset = np.zeros(2)
            search = image
            if corners is not None:
                x0, y0 = np.floor(np.asarray(corners).min(axis=0)).astype(int)
                x1, y1 = np.ceil(np.asarray(corners).max(axis=0)).astype(int)
                pad = int(0.1 * max(x1 - x0, y1 - y0))
                x0, y0 = max(0, x0 - pad), max(0, y0 - pad)
                x1, y1 = min(image.shape[1], x1 + pad), min(image.shape[0], y1 + pad)
                search = image[y0:y1, x0:x1]
                offset = np.array([x0, y0], dtype=np.float64)
            found = self._locate(search, offset, 1.0)
            self._check_photo(photo, image, found.mask, len(found.points))
            touches_edge = corners is None and _palace_touches_edge(found.mask, found.peaks, search.shape[:2], found.zoom)
        with timings.stage("lattice"):
            lattice = fit_lattice(found.points, found.heights, self._pitch_hint(found.mask, found.to_photo))
            try:
                self._check_two_palaces(photo, lattice, found)
                two_palaces = None
            except BoardNotFoundError as error:  # or one palace of big tiles whose centres split
                two_palaces = error
            first = found
            quality, coverage, pitch_out = _lattice_quality(found, lattice)
            clean = 0.6 <= coverage <= 1.2 and lattice.stray == 0 and SMALL_TILE_OUT_PX <= pitch_out <= BIG_TILE_OUT_PX
            if len(found.points) > 1 and not clean:
                # split peaks (tiles too big) or missed ones (too small): look again shrunk and
                # enlarged, and let the tile classifier say which lattice shows whole tiles. The
                # palace's own area is looked at three ways, as the first pitch may be off by half
                # or double: sized by that pitch, as large as it goes, and half that pitch's size.
                options = [(found, lattice)]
                retries = [(search, offset, 2.0)]
                close_up = self._zoom_in(search, offset, found, lattice)
                if close_up is not None:
                    crop, at, zoom = close_up
                    retries += [(crop, at, zoom)] + [(crop, at, z) for z in (1.0, 2.0 * zoom) if abs(z - zoom) > 0.2 * zoom]
                for retry in retries:
                    with timings.stage("locate"):
                        again = self._locate(*retry)
                    if len(again.points) > 1:
                        options.append((again, fit_lattice(again.points, again.heights, self._pitch_hint(again.mask, again.to_photo))))
                with timings.stage("classify"):
                    found, lattice = max(options, key=lambda option: self._tiles_seen(image, option[1]))
            if two_palaces is not None:
                if found is first:
                    raise two_palaces
                self._check_two_palaces(photo, lattice, found)  # the better look must agree
            with timings.stage("locate"):
                lattice = self._second_look(search, offset, found, lattice)
            if touches_edge and not all(self._inside(image, lattice.grid_to_image, cell, margin=0.5) for cell in lattice.cells):
                raise BoardNotFoundError(
                    f"{photo.name}: the palace runs off the photo's edge (tiles reach the border); "
                    "step back so the whole palace is in frame, or give --corners x,y,x,y,x,y,x,y"
                )
            leaving = {cell for cell in lattice.cells if not self._inside(image, lattice.grid_to_image, cell, margin=0.0)}
            occupied = set(lattice.cells)
            ring = {(x + dx, y + dy) for x, y in occupied for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - occupied
            ring = {cell for cell in ring if self._inside(image, lattice.grid_to_image, cell, margin=-0.2)}
            cells = sorted(occupied) + sorted(ring)
        with timings.stage("classify"):
            crops = crop_cells(image, lattice.grid_to_image, cells)
            kind, walls, price, rotation = self._classify(crops)
        with timings.stage("rules"):
            is_tile = {}
            for index, cell in enumerate(cells):
                p_none = kind[index, 0]
                is_tile[cell] = p_none < (TILE_AT_CENTRE if cell in occupied else TILE_OFF_CENTRE)
                if cell in leaving and p_none < 0.5:  # a tile partly outside the photo
                    raise BoardNotFoundError(
                        f"{photo.name}: the palace is cut off by the photo's edge (a tile leaves the frame); "
                        "step back so the whole palace is in frame"
                    )
                if cell in leaving:
                    is_tile[cell] = False  # a centre on something else at the edge (a hand, a card)
            tile_rows = [i for i, cell in enumerate(cells) if is_tile[cell]]
            if not tile_rows:
                raise BoardNotFoundError(f"{photo.name}: no Alhambra tiles recognised; {HINT}")
            votes = np.log(np.clip(rotation[tile_rows], 1e-6, 1)).sum(axis=0)
            k = int(np.argmax(votes))
            evidence: dict[tuple[int, int], TileEvidence] = {}
            lattice_of: dict[tuple[int, int], tuple[int, int]] = {}
            crop_of: dict[tuple[int, int], np.ndarray] = {}
            for i in tile_rows:
                world = rotate_cell(cells[i], k)
                kind_p = kind[i].copy()
                kind_p[0] = 0.0
                kind_p /= max(kind_p.sum(), 1e-9)
                evidence[world] = TileEvidence(kind_p, crop_walls_to_upright(walls[i], k), price[i])
                lattice_of[world] = cells[i]
                crop_of[world] = np.rot90(crops[i], -k)
            fountain, chosen = decode_palace(evidence)
            if trace is not None:
                trace.update(lattice=lattice, cells=cells, occupied=occupied, is_tile=is_tile, kind=kind, walls=walls,
                             price=price, rotation=rotation, k=k, evidence=evidence, lattice_of=lattice_of,
                             fountain=fountain, chosen=chosen)
            fx, fy = fountain
            palace: list[dict[str, Any]] = [{"at": [0, 0], "tile": "fountain"}]
            readings: list[CellReading] = []
            overrides: list[Override] = []
            for world in sorted(evidence, key=lambda c: (c[1], c[0])):
                at = (world[0] - fx, world[1] - fy)
                ev = evidence[world]
                model_value, model_conf = ev.model_value()
                scores = tile_log_scores(ev)
                if world == fountain:
                    value = "fountain"
                    confidence = float(ev.kind[KINDS.index("fountain")])
                    alternatives = ((model_value, model_conf),) if model_value != "fountain" else ()
                else:
                    tile = CATALOGUE[chosen[world]]
                    value = f"{tile.type}:{tile.walls}"
                    palace.append({"at": list(at), "type": tile.type, "walls": tile.walls})
                    by_value = _value_probs(scores)
                    confidence = by_value.get(value, 0.0)
                    alternatives = tuple((v, round(p, 4)) for v, p in sorted(by_value.items(), key=lambda e: -e[1]) if v != value)[:3]
                if value != model_value:
                    reason = "one fountain per palace" if "fountain" in (value, model_value) else "catalogue tile, used once, walls agree with neighbours"
                    overrides.append(Override(at, model_value, model_conf, value, confidence, reason))
                polygon = self._polygon(lattice.grid_to_image, lattice_of[world])
                readings.append(CellReading(at, value, min(max(confidence, 0.0), 1.0), polygon, alternatives, crop_of[world]))
            box_corners = self._palace_corners(lattice.grid_to_image, [lattice_of[w] for w in evidence], k)
        return BoardReading(
            player={"palace": palace},
            corners=box_corners,
            cells=tuple(readings),
            overrides=tuple(overrides),
            model=self.model_label,
            notes=(f"north: crops turned {ROTATIONS[k]} degrees", f"pitch {lattice.pitch_px:.0f} px"),
        )

    # ----------------------------------------------------------------------------------------

    def _locate(self, search: np.ndarray, offset: np.ndarray, zoom: float) -> Located:
        """Run the locator on ``search`` (at ``offset`` in the photo) shrunk by ``zoom``."""
        batch, to_image = locate_input(search, zoom)
        outputs = self.locate_model.run(batch)
        heat = _sigmoid(outputs["heat"][0, 0])
        mask = _sigmoid(outputs["mask"][0, 0])
        peaks, heights = find_peaks(heat)
        shift = np.array([[1, 0, offset[0]], [0, 1, offset[1]], [0, 0, 1]])
        to_photo = shift @ to_image @ np.diag([LOCATE_STRIDE, LOCATE_STRIDE, 1.0]) @ np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        points = cv2.perspectiveTransform(peaks.reshape(-1, 1, 2), to_photo).reshape(-1, 2) if len(peaks) else peaks
        return Located(heat, mask, peaks, heights, points, to_photo, zoom)

    def _classify(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Calibrated kind, walls (crop order), price and rotation probabilities, averaged over the four quarter turns.

        The classifier was trained on crops in every quarter turn, so each crop is read four times,
        turned; walls and rotation are turned back before the logits are averaged.
        """
        n = len(crops)
        views = np.concatenate([np.rot90(crops, j, axes=(1, 2)) for j in range(4)])
        out = self.tiles_model.run(crops_batch(np.ascontiguousarray(views)))
        part = {name: [out[name][j * n:(j + 1) * n] for j in range(4)] for name in ("kind", "walls", "price", "rotation")}
        kind = np.mean(part["kind"], axis=0)
        price = np.mean(part["price"], axis=0)
        walls = np.mean([w[:, [(side - j) % 4 for side in range(4)]] for j, w in enumerate(part["walls"])], axis=0)
        rotation = np.mean([r[:, [(k + j) % 4 for k in range(4)]] for j, r in enumerate(part["rotation"])], axis=0)
        return (
            softmax(kind, self.temperatures.get("kind", 1.0)),
            _sigmoid(walls / self.temperatures.get("walls", 1.0)),
            softmax(price, self.temperatures.get("price", 1.0)),
            softmax(rotation, self.temperatures.get("rotation", 1.0)),
        )

    def _second_look(self, search: np.ndarray, offset: np.ndarray, found: Located, lattice: Lattice) -> Lattice:
        """Average each tile centre with a second locator pass on the palace alone, then refit the lattice.

        One pass places a centre about 7% of a pitch off (median; the heatmap's grid is coarse);
        the pass on the enlarged palace errs differently, and the mean of the two is about 15%
        closer on held-out renders. Centres the second pass does not confirm (none within 0.3
        pitch) keep the first position.
        """
        retry = self._zoom_in(search, offset, found, lattice)
        if retry is None or len(lattice.cells) < LSQ_MIN_CELLS:
            return lattice
        again = self._locate(*retry)
        if not len(again.points):
            return lattice
        order = list(lattice.cells)
        first = np.array([lattice.cells[cell] for cell in order])
        gaps = np.linalg.norm(first[:, None] - again.points[None], axis=2)
        nearest = gaps.argmin(axis=1)
        close = gaps[np.arange(len(order)), nearest] < 0.3 * lattice.pitch_px
        points = np.where(close[:, None], (first + again.points[nearest]) / 2, first)
        grid = refine_grid(lattice.grid_to_image, dict(enumerate(order)), points)
        cells = {cell: points[i] for i, cell in enumerate(order)}
        pitch = float(np.median(_local_pitch(grid, np.array(order, dtype=np.float64))))
        return Lattice(cells, grid, pitch, lattice.stray, lattice.far)

    def _tiles_seen(self, image: np.ndarray, lattice: Lattice) -> float:
        """How many lattice cells the classifier reads as a whole, upright-consistent tile, less the doubtful ones (not sure empties)."""
        cells = sorted(lattice.cells)
        out = self.tiles_model.run(crops_batch(crop_cells(image, lattice.grid_to_image, cells)))
        kind = softmax(out["kind"], self.temperatures.get("kind", 1.0))
        rotation = softmax(out["rotation"], self.temperatures.get("rotation", 1.0))
        k = int(np.argmax(np.log(np.clip(rotation, 1e-6, 1)).sum(axis=0)))
        sure = kind[:, 1:].max(axis=1) * rotation[:, k]
        empty = kind[:, 0] > 0.8  # a centre on clutter beside the palace: an empty cell, not a doubt
        return float((sure > 0.8).sum() - ((sure < 0.5) & ~empty).sum())

    def _zoom_in(self, search: np.ndarray, offset: np.ndarray, found: Located, lattice: Lattice):
        """Arguments for a second locator pass on the palace's area, enlarged so tiles span ~6 output px."""
        rows, cols = np.nonzero(found.mask > 0.5)
        if not len(rows):
            return None
        corners_out = np.array([[cols.min(), rows.min()], [cols.max() + 1, rows.max() + 1]], dtype=np.float64) - 0.5
        box = cv2.perspectiveTransform(corners_out.reshape(-1, 1, 2), found.to_photo).reshape(-1, 2) - offset
        lo, hi = box.min(axis=0), box.max(axis=0)
        grow = np.maximum(0.15 * (hi - lo), lattice.pitch_px)
        x0, y0 = np.maximum(np.floor(lo - grow), 0).astype(int)
        x1, y1 = np.minimum(np.ceil(hi + grow), [search.shape[1], search.shape[0]]).astype(int)
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        crop = search[y0:y1, x0:x1]
        long_side, short_side = max(crop.shape[:2]), min(crop.shape[:2])
        scale = min(LOCATE_SIZE[0] / long_side, LOCATE_SIZE[1] / short_side)
        zoom = max(1.0, lattice.pitch_px * scale / LOCATE_STRIDE / GOOD_TILE_OUT_PX)
        return crop, offset + [x0, y0], zoom

    def _check_photo(self, photo: Photo, image: np.ndarray, mask: np.ndarray, peaks: int) -> None:
        """Refuse photos too dark, too blurred or without tiles, saying what was seen."""
        brightness = float(image[::8, ::8].mean())
        if brightness < TOO_DARK:
            raise BoardNotFoundError(f"{photo.name}: photo too dark (mean brightness {brightness:.0f}/255); retake with more light")
        if peaks == 0:
            if brightness < DIM:
                raise BoardNotFoundError(f"{photo.name}: no tiles found in a dark photo (mean brightness {brightness:.0f}/255); "
                                         "retake with more light")
            grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
            small = cv2.resize(grey, (320, max(1, round(320 * grey.shape[0] / grey.shape[1]))), interpolation=cv2.INTER_AREA)
            sharpness = float(cv2.Laplacian(small, cv2.CV_64F).var())
            if sharpness < 15:
                raise BoardNotFoundError(f"{photo.name}: photo too blurred to find tiles (sharpness {sharpness:.0f}); hold still, focus and retake")
            raise BoardNotFoundError(f"{photo.name}: no Alhambra palace found (no tile centres seen); {HINT}")

    def _check_two_palaces(self, photo: Photo, lattice: Lattice, found: Located) -> None:
        """Refuse a photo whose tile centres form a second group: off the palace's grid or in a second tile area."""
        peaks = len(found.points)
        _, labels = cv2.connectedComponents((found.mask > 0.5).astype(np.uint8), connectivity=8)
        per_blob: dict[int, int] = {}
        for x, y in found.peaks:
            label = int(labels[min(int(round(y)), labels.shape[0] - 1), min(int(round(x)), labels.shape[1] - 1)])
            if label:
                per_blob[label] = per_blob.get(label, 0) + 1
        groups = sorted(per_blob.values(), reverse=True)
        if len(groups) >= 2 and groups[1] >= 3:
            raise BoardNotFoundError(
                f"{photo.name}: two separate groups of tiles ({groups[0]} and {groups[1]} tiles) in view; "
                f"photograph one palace at a time, or give --corners x,y,x,y,x,y,x,y around it"
            )
        if lattice.far >= 3 and lattice.far >= 0.25 * peaks:
            raise BoardNotFoundError(
                f"{photo.name}: {lattice.far} of {peaks} tiles lie apart from the palace's grid (two palaces in view?); "
                f"photograph one palace at a time, or give --corners x,y,x,y,x,y,x,y around it"
            )

    @staticmethod
    def _inside(image: np.ndarray, grid_to_image: np.ndarray, cell: tuple[int, int], margin: float) -> bool:
        """True when the cell's square (grown by ``margin`` pitches) lies inside the image."""
        half = 0.5 + margin
        x, y = cell
        square = np.array([[x - half, y - half], [x + half, y - half], [x + half, y + half], [x - half, y + half]])
        pts = cv2.perspectiveTransform(square.reshape(-1, 1, 2), grid_to_image).reshape(-1, 2)
        h, w = image.shape[:2]
        return bool((pts[:, 0] >= -1).all() and (pts[:, 1] >= -1).all() and (pts[:, 0] <= w + 1).all() and (pts[:, 1] <= h + 1).all())

    @staticmethod
    def _pitch_hint(mask: np.ndarray, to_photo: np.ndarray) -> float | None:
        area = float((mask > 0.5).sum())
        if area <= 0:
            return None
        return math.sqrt(area) * math.sqrt(abs(np.linalg.det(to_photo[:2, :2])))

    @staticmethod
    def _polygon(grid_to_image: np.ndarray, cell: tuple[int, int]) -> tuple[tuple[float, float], ...]:
        x, y = cell
        square = np.array([[x - 0.5, y - 0.5], [x + 0.5, y - 0.5], [x + 0.5, y + 0.5], [x - 0.5, y + 0.5]])
        pts = cv2.perspectiveTransform(square.reshape(-1, 1, 2), grid_to_image).reshape(-1, 2)
        return tuple((round(float(px), 2), round(float(py), 2)) for px, py in pts)

    @staticmethod
    def _palace_corners(grid_to_image: np.ndarray, cells: list[tuple[int, int]], k: int) -> np.ndarray:
        """The palace's bounding box in the upright frame, as TL, TR, BR, BL image points."""
        world = np.array([rotate_cell(c, k) for c in cells], dtype=np.float64)
        x0, y0 = world.min(axis=0) - 0.5
        x1, y1 = world.max(axis=0) + 0.5
        box = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        lattice_box = np.array([rotate_cell_float(p, -k) for p in box])
        return cv2.perspectiveTransform(lattice_box.reshape(-1, 1, 2), grid_to_image).reshape(-1, 2).astype(np.float32)


def rotate_cell_float(point: tuple[float, float], k: int) -> tuple[float, float]:
    """``rotate_cell`` for real-valued points."""
    x, y = point
    for _ in range(k % 4):
        x, y = -y, x
    return x, y


def _lattice_quality(found: Located, lattice: Lattice) -> tuple[float, float, float]:
    """Score a locator pass + lattice: cells found, discounted when the lattice does not cover the tile mask.

    Returns (quality, coverage, pitch in output px); coverage = cells x pitch^2 / mask area is
    about 0.75-0.95 for a right lattice and far lower when split peaks halved the pitch.
    """
    unit = math.sqrt(abs(np.linalg.det(found.to_photo[:2, :2])))
    pitch_out = lattice.pitch_px / unit
    area = max(float((found.mask > 0.5).sum()), 1.0)
    coverage = len(lattice.cells) * pitch_out**2 / area
    n = max(len(found.points), 1)
    quality = len(lattice.cells) * min(1.0, coverage / 0.75, 1.5 / max(coverage, 1e-9)) * (1 - lattice.stray / n)
    return quality, coverage, pitch_out


def _palace_touches_edge(mask: np.ndarray, peaks: np.ndarray, shape: tuple[int, int], zoom: float = 1.0) -> bool:
    """True when the palace's part of the tile mask (the blobs holding tile centres) reaches the photo's border."""
    height, width = shape
    if height > width:
        height, width = width, height
    scale = min(LOCATE_SIZE[0] / width, LOCATE_SIZE[1] / height) / zoom
    new_w, new_h = int(round(width * scale)), int(round(height * scale))
    x0 = y0 = 0
    if zoom > 1.0:
        x0, y0 = (LOCATE_SIZE[0] - new_w) // 2, (LOCATE_SIZE[1] - new_h) // 2
    c0, r0 = x0 // LOCATE_STRIDE, y0 // LOCATE_STRIDE
    c1, r1 = max(c0 + 1, (x0 + new_w) // LOCATE_STRIDE), max(r0 + 1, (y0 + new_h) // LOCATE_STRIDE)
    count, labels = cv2.connectedComponents((mask > 0.5).astype(np.uint8), connectivity=8)
    palace = {int(labels[int(round(y)), int(round(x))]) for x, y in peaks} - {0}
    if not palace:
        return False
    area = np.isin(labels[r0:r1, c0:c1], list(palace))
    border = np.concatenate([area[0], area[-1], area[:, 0], area[:, -1]])
    return int(border.sum()) >= 2


def _value_probs(scores: np.ndarray) -> dict[str, float]:
    """Probability of each reading text ``type:walls`` from per-catalogue-tile log scores (twins summed)."""
    probs = np.exp(scores - scores.max())
    probs /= probs.sum()
    values: dict[str, float] = {}
    for tile, p in zip(CATALOGUE, probs):
        key = f"{tile.type}:{tile.walls}"
        values[key] = values.get(key, 0.0) + float(p)
    return values


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def make_reader() -> AlhambraReader:
    """Return the Alhambra reader with its two models loaded.

    Raises:
        ModelError: a model file is missing or corrupt.
    """
    return AlhambraReader(load_model(LOCATE_MODEL), load_model(TILES_MODEL))
