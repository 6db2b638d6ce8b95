"""Linking tile centres into a square lattice and fitting the grid -> photo map."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.alhambra.locate import Located
from scanner.errors import BoardNotFoundError, Remedy
from scanner.geometry import cell_square, link_lattice, project
from scanner.photo import Photo

SMALL_TILE_OUT_PX = 4.6  # smaller tiles in the locator's output get a second, closer look
BIG_TILE_OUT_PX = 9.0  # bigger ones a second, farther look
PLACED_REACH = 0.25  # a tile placed further than this (pitches) from its lattice cell is not believed
PLACED_FIT = 0.08  # ... nor one the refitted lattice misses by more than this (pitches)
PLACED_SHARE = 0.6  # the refit stands only when at least this share of the tiles agree with it
LSQ_MIN_CELLS = 5  # palaces with at least this many linked centres get a least-squares homography
BRIDGE_STEPS = 2  # groups of centres on one lattice this many cell steps apart (one unseen tile between) are one palace
LINK_TOLERANCE = 0.45  # a centre is linked within this many steps of the place its neighbour predicts
LINK_CANDIDATES = 3  # the centres nearest that place tried in turn (one already linked is passed over)
TWO_PALACES = f"photograph one palace at a time, or {Remedy.SET_CORNERS.words} around one of them"


@dataclass(frozen=True)
class Lattice:
    """Tile centres linked into a grid: lattice cell -> centre, and the fitted grid -> image map."""

    cells: dict[tuple[int, int], np.ndarray]
    grid_to_image: np.ndarray
    pitch_px: float
    stray: int  # detected centres that did not fit the lattice
    far: int = 0  # of those, how many lie well away from the palace (another palace?)


def local_pitch(grid_to_image: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Return the size in image px of one grid step at each centre (geometric mean of both axes)."""
    pts = np.concatenate([centres, centres + [1, 0], centres + [0, 1]])
    mapped = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), np.asarray(grid_to_image, np.float64)).reshape(3, -1, 2)
    dx = np.linalg.norm(mapped[1] - mapped[0], axis=1)
    dy = np.linalg.norm(mapped[2] - mapped[0], axis=1)
    return np.sqrt(dx * dy)


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
        coords = link_lattice(points, int(start), u, v, tolerance=LINK_TOLERANCE, candidates=LINK_CANDIDATES)
        if len(coords) > len(best):
            best = coords
        if len(best) == n:
            break
    coords = best
    grid = fit_grid(coords, points, allow_perspective=False)
    for round_index in range(3):  # re-assign every centre with the fitted map, then refit
        assigned = _assign(grid, points, scores)
        if not assigned:  # the map fits no centre (scattered specks): keep the linked ones
            break
        coords = assigned
        grid = fit_grid(coords, points, allow_perspective=round_index == 2)
    coords = _main_group(_assign(grid, points, scores) or coords)
    grid = refine_grid(grid, coords, points)
    cells = {cell: points[j] for j, cell in coords.items()}
    pitch = float(np.median(local_pitch(grid, np.array(list(cells), dtype=np.float64))))
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
    pitch = float(np.median(local_pitch(grid, src)))
    for _ in range(2):
        residual = np.linalg.norm(cv2.perspectiveTransform(src.reshape(-1, 1, 2), grid).reshape(-1, 2) - dst, axis=1)
        keep = residual < 0.25 * pitch
        if keep.sum() < min_cells or len(set(src[keep, 0])) < 2 or len(set(src[keep, 1])) < 2:
            return grid
        homography = _homography_through(src[keep], dst[keep])
        if homography is None:
            return grid
        grid = homography
    return grid


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


def fit_grid(coords: dict[int, tuple[int, int]], points: np.ndarray, allow_perspective: bool = True) -> np.ndarray:
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
                    err_h = np.median(
                        np.linalg.norm(cv2.perspectiveTransform(src.reshape(-1, 1, 2), homography).reshape(-1, 2) - dst, axis=1)
                    )
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


def lattice_quality(found: Located, lattice: Lattice) -> tuple[float, float, float]:
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


def is_clean(found: Located, lattice: Lattice) -> bool:
    """Whether a first lattice needs no second look: it covers the tile area, has no strays and tiles of a usual size."""
    _, coverage, pitch_out = lattice_quality(found, lattice)
    return 0.6 <= coverage <= 1.2 and lattice.stray == 0 and SMALL_TILE_OUT_PX <= pitch_out <= BIG_TILE_OUT_PX


def pitch_hint(mask: np.ndarray, to_photo: np.ndarray) -> float | None:
    """A first guess of the tile pitch in photo px from the tile mask's area (None without a tile area)."""
    area = float((mask > 0.5).sum())
    if area <= 0:
        return None
    return math.sqrt(area) * math.sqrt(abs(np.linalg.det(to_photo[:2, :2])))


def lattice_from(found: Located) -> Lattice:
    """``fit_lattice`` on one locator pass's centres.

    Raises:
        BoardNotFoundError: no centres, or centres that do not form a lattice.
    """
    return fit_lattice(found.points, found.heights, pitch_hint(found.mask, found.to_photo))


def averaged_lattice(lattice: Lattice, again: Located) -> Lattice:
    """Average each tile centre with a second locator pass's nearest centre, then refit the lattice.

    Centres the second pass does not confirm (none within 0.3 pitch) keep the first position.
    """
    order = list(lattice.cells)
    first = np.array([lattice.cells[cell] for cell in order])
    gaps = np.linalg.norm(first[:, None] - again.points[None], axis=2)
    nearest = gaps.argmin(axis=1)
    close = gaps[np.arange(len(order)), nearest] < 0.3 * lattice.pitch_px
    points = np.where(close[:, None], (first + again.points[nearest]) / 2, first)
    grid = refine_grid(lattice.grid_to_image, dict(enumerate(order)), points)
    cells = {cell: points[i] for i, cell in enumerate(order)}
    pitch = float(np.median(local_pitch(grid, np.array(order, dtype=np.float64))))
    return Lattice(cells, grid, pitch, lattice.stray, lattice.far)


def lattice_through(lattice: Lattice, cells: Sequence[tuple[int, int]], offsets: np.ndarray) -> Lattice | None:
    """The lattice refitted so each cell's centre moves by its offset (grid units), or None when they do not agree.

    The offsets come from a cue placed alike on every tile (``octagon.octagon_places``). A homography
    through the moved centres (an affine map for four), fitted three times over the centres it
    misses by under ``PLACED_FIT`` pitches and moved by under ``PLACED_REACH``; None when under
    ``PLACED_SHARE`` of them (or under four, or one row or column) agree.
    """
    grid_cells = np.asarray(cells, dtype=np.float64).reshape(-1, 2)
    offsets = np.asarray(offsets, dtype=np.float64).reshape(-1, 2)
    near = np.linalg.norm(offsets, axis=1) <= PLACED_REACH
    targets = project(grid_cells + offsets, lattice.grid_to_image)
    pitch = float(np.median(local_pitch(lattice.grid_to_image, grid_cells))) if len(grid_cells) else 0.0
    keep = near
    grid = lattice.grid_to_image
    for _ in range(3):
        if keep.sum() < max(4, PLACED_SHARE * len(grid_cells)) or len(set(grid_cells[keep, 0])) < 2 or len(set(grid_cells[keep, 1])) < 2:
            return None
        fitted = _fit_through(grid_cells[keep], targets[keep])
        if fitted is None:
            return None
        grid = fitted
        agree = near & (np.linalg.norm(project(grid_cells, grid) - targets, axis=1) < PLACED_FIT * pitch)
        if (agree == keep).all():
            break
        keep = agree
    else:  # still changing after three fits: stands only if enough of the last say agree
        if keep.sum() < max(4, PLACED_SHARE * len(grid_cells)):
            return None
    centres = {cell: project(np.asarray([cell], dtype=np.float64), grid)[0] for cell in lattice.cells}
    return Lattice(centres, grid, float(np.median(local_pitch(grid, grid_cells))), lattice.stray, lattice.far)


def _fit_through(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Least-squares grid -> image map through the pairs: a homography from five, an affine map from four."""
    if len(src) >= 5:
        return _homography_through(src, dst)
    affine = np.linalg.lstsq(np.c_[src, np.ones(len(src))], dst, rcond=None)[0].T
    grid = np.vstack([affine, [0, 0, 1]])
    return None if abs(np.linalg.det(grid)) < 1e-12 else grid


def _homography_through(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """The least-squares homography through all the pairs, scaled to h22 = 1; None when it is degenerate."""
    homography, _ = cv2.findHomography(src, dst, 0)
    if homography is None or abs(homography[2, 2]) < 1e-12:
        return None
    homography = homography / homography[2, 2]
    return None if abs(np.linalg.det(homography)) < 1e-12 else homography


def grown_region(image: np.ndarray, lattice: Lattice, region: CellRegion, tiles: Sequence[tuple[int, int]]) -> CellRegion | None:
    """``region`` with the empty ring around ``tiles`` (cells read as tiles) added where it lies in the photo; None when nothing is new.

    The first region rings the located tiles only; a tile the locator missed that is read in that
    ring may have another missed tile beyond it (a palace's tiles all touch, one after another).
    """
    known = set(region.cells)
    ring = {(x + dx, y + dy) for x, y in tiles for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - known
    ring = {cell for cell in ring if cell_inside(image, lattice.grid_to_image, cell, margin=-0.2)}
    if not ring:
        return None
    return CellRegion(region.cells + tuple(sorted(ring)), region.occupied, region.leaving)


def peak_groups(found: Located) -> list[np.ndarray]:
    """The indices of the peaks in each blob of the tile mask that holds any, the largest group first."""
    _, of_peak = _peak_blobs(found)
    per_blob: dict[int, list[int]] = {}
    for index, label in enumerate(of_peak):
        if label:
            per_blob.setdefault(int(label), []).append(index)
    return [np.array(group) for group in sorted(per_blob.values(), key=len, reverse=True)]


def _peak_blobs(found: Located) -> tuple[np.ndarray, np.ndarray]:
    """The tile mask's blobs (a label per output px, 0 outside) and the blob each peak lies in."""
    _, labels = cv2.connectedComponents((found.mask > 0.5).astype(np.uint8), connectivity=8)
    rows = np.minimum(np.round(found.peaks[:, 1]).astype(int), labels.shape[0] - 1) if len(found.peaks) else np.zeros(0, int)
    cols = np.minimum(np.round(found.peaks[:, 0]).astype(int), labels.shape[1] - 1) if len(found.peaks) else np.zeros(0, int)
    return labels, labels[rows, cols]


def without_peaks(found: Located, drop: np.ndarray) -> Located:
    """``found`` without the peaks ``drop`` (indices) and without the blobs of the tile mask that held them."""
    labels, of_peak = _peak_blobs(found)
    mask = found.mask.copy()
    mask[np.isin(labels, [label for label in of_peak[drop] if label])] = 0.0
    keep = np.ones(len(found.peaks), dtype=bool)
    keep[drop] = False
    return Located(found.heat, mask, found.peaks[keep], found.heights[keep], found.points[keep], found.to_photo, found.zoom)


def _bridged(lattice: Lattice, found: Located, groups: Sequence[np.ndarray]) -> bool:
    """True when every group of centres lies on the one lattice, each within ``BRIDGE_STEPS`` cells of the largest.

    A palace in deep shadow can show as groups of tiles whose masks do not touch, a tile between them
    unseen; a second palace lies off the first one's grid or further away. The unseen tile is then
    looked for in the ring of cells read around the tiles.
    """
    on_grid = {np.asarray(point).tobytes(): cell for cell, point in lattice.cells.items()}
    cells = [[on_grid.get(np.asarray(found.points[index]).tobytes()) for index in group] for group in groups]
    if any(cell is None for group in cells for cell in group):
        return False
    main = np.array(cells[0], dtype=np.int64).reshape(-1, 2)
    for group in cells[1:]:
        others = np.array(group, dtype=np.int64).reshape(-1, 2)
        steps = np.abs(others[:, None, :] - main[None, :, :]).sum(axis=2)
        if steps.min() > BRIDGE_STEPS:
            return False
    return True


def check_two_palaces(photo: Photo, lattice: Lattice, found: Located) -> None:
    """Refuse a photo whose tile centres form a second group: off the palace's grid or in a second tile area.

    Groups of the tile mask that all lie on the one lattice a cell apart are one palace (``_bridged``;
    ``lattice.cells`` holds the located points themselves, as ``fit_lattice`` links them).

    Raises:
        BoardNotFoundError: two palaces (or one and a second group of tiles) in view.
    """
    peaks = len(found.points)
    grouped = peak_groups(found)
    groups = [len(group) for group in grouped]
    if len(groups) >= 2 and groups[1] >= 3 and not _bridged(lattice, found, grouped):
        raise BoardNotFoundError(
            f"{photo.name}: two separate groups of tiles ({groups[0]} and {groups[1]} tiles) in view; {TWO_PALACES}",
            remedy=Remedy.SET_CORNERS,
        )
    if lattice.far >= 3 and lattice.far >= 0.25 * peaks:
        raise BoardNotFoundError(
            f"{photo.name}: {lattice.far} of {peaks} tiles lie apart from the palace's grid (two palaces in view?); {TWO_PALACES}",
            remedy=Remedy.SET_CORNERS,
        )


def cell_inside(image: np.ndarray, grid_to_image: np.ndarray, cell: tuple[int, int], margin: float) -> bool:
    """True when the cell's square (grown by ``margin`` pitches) lies inside the image."""
    half = 0.5 + margin
    x, y = cell
    pts = project(cell_square(x, y, half), grid_to_image)
    h, w = image.shape[:2]
    return bool((pts[:, 0] >= -1).all() and (pts[:, 1] >= -1).all() and (pts[:, 0] <= w + 1).all() and (pts[:, 1] <= h + 1).all())


def cell_polygon(grid_to_image: np.ndarray, cell: tuple[int, int]) -> tuple[tuple[float, float], ...]:
    """The cell's outline (TL, TR, BR, BL) in image px, rounded to 0.01 px."""
    x, y = cell
    pts = project(cell_square(x, y, 0.5), grid_to_image)
    return tuple((round(float(px), 2), round(float(py), 2)) for px, py in pts)


@dataclass(frozen=True)
class CellRegion:
    """The lattice cells to read: the located ones (sorted), then the empty ring around them that lies in the photo.

    ``leaving`` are located cells whose square crosses the photo's edge.
    """

    cells: tuple[tuple[int, int], ...]
    occupied: frozenset[tuple[int, int]]
    leaving: frozenset[tuple[int, int]]

    def __post_init__(self) -> None:
        if not self.occupied <= set(self.cells) or not self.leaving <= self.occupied:
            raise ValueError("cells: expected every located cell among the cells read, every leaving cell located")


def cells_to_read(photo: Photo, image: np.ndarray, lattice: Lattice, touches_edge: bool) -> CellRegion:
    """The cells to classify: the lattice's, and their neighbours inside the photo.

    Raises:
        BoardNotFoundError: the palace touches the photo's edge and its lattice runs off it.
    """
    if touches_edge and not all(cell_inside(image, lattice.grid_to_image, cell, margin=0.5) for cell in lattice.cells):
        raise BoardNotFoundError(
            f"{photo.name}: the palace runs off the photo's edge (tiles reach the border); "
            f"step back so the whole palace is in frame, or {Remedy.SET_CORNERS.words}",
            remedy=Remedy.SET_CORNERS,
        )
    leaving = {cell for cell in lattice.cells if not cell_inside(image, lattice.grid_to_image, cell, margin=0.0)}
    occupied = set(lattice.cells)
    ring = {(x + dx, y + dy) for x, y in occupied for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - occupied
    ring = {cell for cell in ring if cell_inside(image, lattice.grid_to_image, cell, margin=-0.2)}
    return CellRegion(tuple(sorted(occupied) + sorted(ring)), frozenset(occupied), frozenset(leaving))
