"""Finding a Sagrada window's grid in a photo: a coarse mask, then refined, oriented corners.

Two small ONNX models, trained on renders (``models/sagrada_finder``, ``models/sagrada_refiner``):

1. the finder sees the whole photo letterboxed to ``FINDER_PX`` square and marks the grid's area
   (a mask at 1/4 resolution); the largest blob gives a rough quadrilateral;
2. the refiner sees a ``PATCH_PX`` square patch warped from around a guessed quadrilateral (the
   guess's corners at fixed spots, ``PATCH_MARGIN`` of context all round) and returns one heatmap
   per guessed corner, peaked at the true grid corner nearest it, plus which guessed corner is the
   board's top-left (the stained-glass strip is at the top, the name below). It runs twice.

The functions that build the models' inputs live here and training imports them, so training and
scanning prepare pixels the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.errors import BoardNotFoundError, Remedy
from scanner.geometry import PixelCentres, Shrunk, footprint, order_clockwise, padded_box, shrink_photo, shrink_then_warp, warp_to_rectangle
from scanner.model import softmax
from scanner.sagrada import lattice
from scanner.sagrada.cells import CROP_HEIGHT_MM, lift_corners

FINDER_PX = 128
FINDER_STRIDE = 4
MASK_PX = FINDER_PX // FINDER_STRIDE
PATCH_PX = 96
PATCH_MARGIN = 0.2
HEAT_STRIDE = 2
HEAT_PX = PATCH_PX // HEAT_STRIDE


def _patch_square() -> np.ndarray:
    lo, hi = PATCH_MARGIN * PATCH_PX, (1 - PATCH_MARGIN) * PATCH_PX
    return np.array([[lo, lo], [hi, lo], [hi, hi], [lo, hi]], np.float64)


def reduced_source(image_rgb: np.ndarray, to_out: np.ndarray, size: tuple[int, int], *, whole: bool = False) -> Shrunk:
    """Return the photo shrunk for warping ``image_rgb`` by ``to_out`` into ``size`` (w, h) (``scanner.geometry.Shrunk``).

    When the output is much smaller than the region it shows, the region is reduced with area
    averaging first (no aliasing, and much faster warps); the result can be reused for nearby warps.
    ``whole`` reduces the whole photo instead of the region (for several warps that may wander).
    """
    width, height = size
    box = footprint(to_out, size)
    span = box.max(axis=0) - box.min(axis=0)
    scale = max(span[0] / width, span[1] / height)
    if scale > 1.6:
        region = (0, 0, image_rgb.shape[1], image_rgb.shape[0]) if whole else padded_box(box, image_rgb.shape)
        if region[2] - region[0] > 4 and region[3] - region[1] > 4:
            return shrink_photo(image_rgb, box=region, factor=1.2 / scale, centres=PixelCentres.CENTRES)
    return Shrunk(image_rgb, np.eye(3))


def warp_reduced(
    image_rgb: np.ndarray,
    to_out: np.ndarray,
    size: tuple[int, int],
    *,
    border: int = cv2.BORDER_REPLICATE,
    reduced: Shrunk | None = None,
) -> np.ndarray:
    """Warp ``image_rgb`` by the photo->output homography ``to_out`` into ``size`` (w, h), via ``reduced_source``."""
    shrunk = reduced if reduced is not None else reduced_source(image_rgb, to_out, size)
    return shrink_then_warp(shrunk, size, to_out=to_out, interpolation=cv2.INTER_LINEAR, border=border)


# --------------------------------------------------------------------------------------------- finder


def letterbox(image_rgb: np.ndarray) -> tuple[np.ndarray, float]:
    """Fit the photo into a ``FINDER_PX`` square (top-left aligned, black padding); returns it and the scale."""
    height, width = image_rgb.shape[:2]
    scale = FINDER_PX / max(width, height)
    new_w, new_h = max(1, int(round(width * scale))), max(1, int(round(height * scale)))
    small = cv2.resize(image_rgb, (new_w, new_h), interpolation=cv2.INTER_AREA)
    canvas = np.zeros((FINDER_PX, FINDER_PX, 3), np.uint8)
    canvas[:new_h, :new_w] = small
    return canvas, scale


def finder_example(image_rgb: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the finder's input for a photo and its target: the grid's area at 1/4 resolution (uint8 0-255)."""
    canvas, scale = letterbox(image_rgb)
    mask = np.zeros((MASK_PX, MASK_PX), np.uint8)
    pts = ((np.asarray(corners, np.float64) + 0.5) * scale - FINDER_STRIDE / 2) / FINDER_STRIDE  # mask px (centres at integers)
    cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return canvas, mask


@dataclass(frozen=True, eq=False)
class MaskQuad:
    """One blob of the finder's mask as a candidate grid: corners (photo px, clockwise from the
    top-left-most), area in mask px, mean probability inside, bounding box x0, y0, x1, y1 in mask px (inclusive)."""

    corners: np.ndarray
    area: float
    probability: float
    box: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        if np.shape(self.corners) != (4, 2):
            raise ValueError(f"corners: expected (4, 2) points, got {np.shape(self.corners)}")
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError(f"probability: expected 0-1, got {self.probability}")


@dataclass(frozen=True, eq=False)
class Refinement:
    """A refined grid: corners (in the guess's order), each corner's heat peak, and the probability that each corner is the top-left."""

    corners: np.ndarray
    peaks: np.ndarray
    turn: np.ndarray

    def __post_init__(self) -> None:
        shapes = {"corners": (self.corners, (4, 2)), "peaks": (self.peaks, (4,)), "turn": (self.turn, (4,))}
        for name, (array, shape) in shapes.items():
            if np.shape(array) != shape:
                raise ValueError(f"{name}: expected shape {shape}, got {np.shape(array)}")

    @property
    def oriented(self) -> np.ndarray:
        """The corners turned so the likeliest top-left comes first (TL, TR, BR, BL)."""
        return np.roll(self.corners, int(np.argmax(self.turn)), axis=0)


def quads_from_mask(probability: np.ndarray, scale: float, *, threshold: float = 0.5) -> list[MaskQuad]:
    """Return candidate grid quads from the finder's mask, largest first."""
    binary = (probability > threshold).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=4)
    found: list[MaskQuad] = []
    for index in range(1, count):
        area = float(stats[index, cv2.CC_STAT_AREA])
        if area < 12:
            continue
        blob = (labels == index).astype(np.uint8)
        contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        hull = cv2.convexHull(max(contours, key=cv2.contourArea)).reshape(-1, 2).astype(np.float64)
        quad = _quad_of_hull(hull)
        corners = (quad * FINDER_STRIDE + FINDER_STRIDE / 2) / scale - 0.5
        x, y, w, h = (int(stats[index, k]) for k in (cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP, cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT))
        found.append(MaskQuad(order_clockwise(corners), area, float(probability[labels == index].mean()), (x, y, x + w - 1, y + h - 1)))
    found.sort(key=lambda item: -item.area)
    return found


def _quad_of_hull(hull: np.ndarray) -> np.ndarray:
    """Approximate a convex hull by four points (pixel-edge hull grown by half a pixel)."""
    perimeter = cv2.arcLength(hull.astype(np.float32), True)
    for eps in np.linspace(0.01, 0.2, 20):
        approx = cv2.approxPolyDP(hull.astype(np.float32), eps * perimeter, True).reshape(-1, 2)
        if len(approx) == 4:
            quad = approx.astype(np.float64)
            break
    else:
        quad = cv2.boxPoints(cv2.minAreaRect(hull.astype(np.float32))).astype(np.float64)
    centre = quad.mean(axis=0)
    direction = quad - centre
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    return quad + direction / np.maximum(norms, 1e-6) * 0.7  # pixel centres -> outer edge


# --------------------------------------------------------------------------------------------- refiner


def patch_homography(guess: np.ndarray) -> np.ndarray:
    """Return the photo->patch homography putting the guessed corners at the patch's fixed spots."""
    return cv2.getPerspectiveTransform(np.asarray(guess, np.float32).reshape(4, 2), _patch_square().astype(np.float32)).astype(np.float64)


def refiner_patch(image_rgb: np.ndarray, guess: np.ndarray, reduced: Shrunk | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return the refiner's input patch around ``guess`` (4 corners) and its photo->patch homography."""
    to_patch_h = patch_homography(guess)
    return warp_reduced(image_rgb, to_patch_h, (PATCH_PX, PATCH_PX), border=cv2.BORDER_CONSTANT, reduced=reduced), to_patch_h


def to_patch(points: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Map photo points into the patch built from ``guess``."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, patch_homography(guess)).reshape(-1, 2)


def _sides(quad: np.ndarray) -> np.ndarray:
    """The four side lengths of a quadrilateral (TL-TR, TR-BR, BR-BL, BL-TL)."""
    return np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)


def disturb_corners(corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return a plausible wrong guess of the grid corners (as the finder or a first refinement gives)."""
    corners = np.asarray(corners, np.float64)
    centre = corners.mean(axis=0)
    size = _sides(corners).mean()
    spread = float(rng.choice([0.25, 0.5, 1.0, 1.0]))
    angle = np.radians(rng.normal(0, 4) * spread)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = np.exp(rng.normal(0, 0.06) * spread)
    moved = (corners - centre) @ rot.T * scale + centre + rng.normal(0, 0.05, 2) * size * spread
    return moved + rng.normal(0, 0.035, (4, 2)) * size * spread


def heat_targets(points_patch: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    """Return (4, HEAT_PX, HEAT_PX) normalised Gaussian targets for corner positions given in patch px."""
    grid = np.arange(HEAT_PX, dtype=np.float64) * HEAT_STRIDE + (HEAT_STRIDE - 1) / 2  # heat px centres in patch px
    targets = np.empty((4, HEAT_PX, HEAT_PX), np.float32)
    for k, (x, y) in enumerate(np.asarray(points_patch, np.float64).reshape(4, 2)):
        gx = np.exp(-0.5 * ((grid - x) / (sigma * HEAT_STRIDE)) ** 2)
        gy = np.exp(-0.5 * ((grid - y) / (sigma * HEAT_STRIDE)) ** 2)
        heat = np.outer(gy, gx)
        total = heat.sum()
        targets[k] = heat / total if total > 1e-12 else 1.0 / heat.size
    return targets


def heat_peaks(heat_logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each heatmap's expected position (patch px) and its peak probability, from (4, H, W) logits."""
    points = np.empty((4, 2))
    peaks = np.empty(4)
    grid = np.arange(HEAT_PX, dtype=np.float64) * HEAT_STRIDE + (HEAT_STRIDE - 1) / 2
    for k in range(4):
        logits = heat_logits[k].astype(np.float64)
        prob = np.exp(logits - logits.max())
        prob /= prob.sum()
        py, px = np.unravel_index(int(np.argmax(prob)), prob.shape)
        y0, y1, x0, x1 = max(py - 3, 0), min(py + 4, HEAT_PX), max(px - 3, 0), min(px + 4, HEAT_PX)
        window = prob[y0:y1, x0:x1]
        mass = window.sum()
        points[k, 0] = (window.sum(axis=0) * grid[x0:x1]).sum() / mass
        points[k, 1] = (window.sum(axis=1) * grid[y0:y1]).sum() / mass
        peaks[k] = mass
    return points, peaks


@dataclass(frozen=True, eq=False)
class BoardLocation:
    """Where the grid is: corners TL, TR, BR, BL in photo px, and how sure each step was (each 0-1)."""

    corners: np.ndarray
    mask_confidence: float
    corner_confidence: float
    orientation_confidence: float
    flipped_probability: float = 0.0  # the refiner's probability that the top-left is the opposite corner
    corner_peaks: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)  # each corner's heat peak, TL, TR, BR, BL (how clearly it was seen)

    def __post_init__(self) -> None:
        if np.shape(self.corners) != (4, 2) or not np.all(np.isfinite(self.corners)):
            raise ValueError(f"corners: expected (4, 2) finite TL, TR, BR, BL points, got {np.shape(self.corners)}")
        sure = {
            "mask_confidence": self.mask_confidence,
            "corner_confidence": self.corner_confidence,
            "orientation_confidence": self.orientation_confidence,
            "flipped_probability": self.flipped_probability,
        }
        for name, value in sure.items():
            if not 0.0 <= value <= 1.0 + 1e-9:
                raise ValueError(f"{name}: expected 0-1, got {value}")
        if len(self.corner_peaks) != 4 or not all(0.0 <= peak <= 1.0 + 1e-9 for peak in self.corner_peaks):
            raise ValueError(f"corner_peaks: expected 4 peaks 0-1 (TL, TR, BR, BL), got {self.corner_peaks}")


Location = BoardLocation  # its earlier name


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


def _batch(image_rgb: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image_rgb.transpose(2, 0, 1)[None], dtype=np.float32) / np.float32(255.0)


RETRY_HINT = f"retake from above with the whole board in frame and more light, or {Remedy.SET_CORNERS.words}"
REFINE_STEPS = 4
SETTLED_MOVE = 0.03  # a step that moves no corner by more than this share of the grid's mean side (~0.15 cell) ends the refinement


def _largest_move(before: np.ndarray, after: np.ndarray) -> float:
    """The largest corner move between two quads, as a share of the first quad's mean side."""
    size = _sides(before).mean()
    return float(np.linalg.norm(after - before, axis=1).max() / max(size, 1e-9))


def _accept_step(guess: np.ndarray, moved: np.ndarray, max_move: float = 0.35) -> np.ndarray:
    """Take a refinement step, except for corners that jumped too far; refuse a step that breaks the quad."""
    size = _sides(guess).mean()
    step = np.linalg.norm(moved - guess, axis=1)
    proposal = np.where((step <= max_move * size)[:, None], moved, guess)
    if not cv2.isContourConvex(proposal.astype(np.float32).reshape(-1, 1, 2)):
        return guess
    signed = cv2.contourArea(proposal.astype(np.float32), oriented=True)
    before = cv2.contourArea(guess.astype(np.float32), oriented=True)
    if np.sign(signed) != np.sign(before) or abs(signed) < 0.25 * abs(before):
        return guess
    return proposal


# Which pair of a given grid's sides is its width: the cells' certainty on each reading, plus the lattice's
# own lines (``lattice_width_evidence``) at this weight. The cells alone chose wrong on 5 of 240 held-out-style
# windows of one die and on 1 of the transfer sets' 720 true grids (a composite of 3 dice): a grid a quarter
# off straddles the dice and reads the empty prints around them surely. The lines alone chose wrong on 1 of
# those 960 (its gaps under the dice). Together the right width led on all 960 by at least 0.16.
QUARTER_LATTICE_WEIGHT = 0.05
QUARTER_SCALE = 0.02  # a lead of this much is odds of e to 1 for the width chosen (0.05: 92%; 0.16: 99.97%)
LATTICE_PX = 400  # the given grid is warped to a square this big to read its lines
LATTICE_BAND = 0.025  # a line is looked for this share of the side either side of where it should be


def orient_corners(
    image_rgb: np.ndarray, corners: np.ndarray, refiner, quarter_scores: Callable[[np.ndarray], float]
) -> tuple[np.ndarray, float, float, float]:
    """Order user-given corners clockwise and turn them so the first is the board's top-left.

    Which pair of opposite sides is the grid's width (the quarter turn) is decided by
    ``quarter_scores`` (a score of the corners as TL, TR, BR, BL; the higher the likelier: e.g. how
    surely the cells read on that grid) together with the lines between the cells
    (``lattice_width_evidence``, at ``QUARTER_LATTICE_WEIGHT``), the half turn within that by the
    refiner's turn head (the caller may overrule it with more evidence). The refiner learnt one board
    style: on others its quarter is near chance.

    Returns the ordered corners, the orientation's probability and that of its half turn (the two
    renormalised to sum to 1), and the probability of the quarter turn chosen (which sides are the width).
    """
    ordered = order_clockwise(corners)
    patch, _ = refiner_patch(image_rgb, ordered)
    turn_prob = softmax(refiner.run(_batch(patch))["turn"][0].astype(np.float64))
    cells = [quarter_scores(np.roll(ordered, q, axis=0)) for q in (0, 1)]
    lead = cells[0] - cells[1] + QUARTER_LATTICE_WEIGHT * lattice_width_evidence(image_rgb, ordered)
    quarter = 0 if lead >= 0 else 1
    quarter_sure = 1.0 / (1.0 + np.exp(-min(abs(lead) / QUARTER_SCALE, 50.0)))
    turn = quarter if turn_prob[quarter] >= turn_prob[quarter + 2] else quarter + 2
    pair = float(turn_prob[quarter] + turn_prob[quarter + 2])
    return np.roll(ordered, turn, axis=0), float(turn_prob[turn]) / pair, float(turn_prob[(turn + 2) % 4]) / pair, float(quarter_sure)


def lattice_width_evidence(image_rgb: np.ndarray, corners: np.ndarray) -> float:
    """How much more the lines inside ``corners`` (TL, TR, BR, BL) look like 5 columns by 4 rows than 4 by 5.

    Every copy of the board prints its cells with gaps between them. The grid is warped to a square,
    the edges across each axis averaged along it, and each axis scored by how much stronger its edges
    are where 5 cells would put their 4 lines than where 4 would put 3 (each in a band of
    ``LATTICE_BAND``, over the median). Positive: the first side is the width; negative: the second;
    near 0: the lines do not tell (a lattice hidden by the dice, or no lattice at all).
    """
    side = LATTICE_PX
    warped, _ = warp_to_rectangle(np.ascontiguousarray(image_rgb), np.asarray(corners, np.float64).reshape(4, 2), side, side)
    flat = cv2.cvtColor(warped, cv2.COLOR_RGB2GRAY).astype(np.float32)
    edge = int(0.03 * side)  # the frame's own edge is left out
    band = int(LATTICE_BAND * side)

    def over_median(profile: np.ndarray) -> np.ndarray:
        return profile / (float(np.median(profile[edge:-edge])) + 1e-6)

    across_x = over_median(np.abs(cv2.Sobel(flat, cv2.CV_32F, 1, 0, ksize=3))[edge:-edge].mean(axis=0))
    across_y = over_median(np.abs(cv2.Sobel(flat, cv2.CV_32F, 0, 1, ksize=3))[:, edge:-edge].mean(axis=1))

    def lines(profile: np.ndarray, cells: int) -> float:
        return float(np.mean([profile[k * side // cells - band : k * side // cells + band + 1].max() for k in range(1, cells)]))

    return (lines(across_x, lattice.COLS) - lines(across_x, lattice.ROWS)) + (lines(across_y, lattice.ROWS) - lines(across_y, lattice.COLS))


REFINE_VIEWS = 4


def refine_views(image_rgb: np.ndarray, guess: np.ndarray, refiner, views: int = REFINE_VIEWS, reduced: Shrunk | None = None) -> Refinement:
    """One refinement step read from ``views`` quarter-turns of the patch (one batch), combined robustly.

    Returns the refined corners (per-corner median over the views, in ``guess``'s order), each
    corner's smallest heat peak, and the probabilities that each of ``guess``'s corners is the top-left.
    """
    patches, inverses = [], []
    if reduced is None:
        reduced = reduced_source(image_rgb, patch_homography(guess), (PATCH_PX, PATCH_PX))  # shared by the views
    for k in range(views):
        patch, to_patch_h = refiner_patch(image_rgb, np.roll(guess, -k, axis=0), reduced)
        patches.append(patch)
        inverses.append(np.linalg.inv(to_patch_h))
    batch = np.ascontiguousarray(np.stack(patches).transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255.0)
    out = refiner.run(batch)
    estimates, peaks, turn = [], [], np.zeros(4)
    for k in range(views):
        points, peak = heat_peaks(out["heat"][k])
        photo = cv2.perspectiveTransform(points.reshape(-1, 1, 2), inverses[k]).reshape(4, 2)
        estimates.append(np.roll(photo, k, axis=0))
        peaks.append(np.roll(peak, k))
        turn += np.roll(softmax(out["turn"][k].astype(np.float64)), -k)
    return Refinement(np.median(np.stack(estimates), axis=0), np.min(np.stack(peaks), axis=0), turn / views)


def implausible_grid(corners: np.ndarray, start: np.ndarray, image_size: tuple[int, int]) -> str | None:
    """Say what is wrong with refined grid corners that cannot be a photographed window, or None.

    A window's grid is a convex quadrilateral of some size, no side much shorter than the others,
    and close to the area the finder marked (``start``).
    """
    quad = np.asarray(corners, np.float64).reshape(4, 2)
    width, height = image_size
    if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
        return "its corners do not form a convex grid"
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    if area < 0.005 * width * height:
        return f"the grid would cover only {100 * area / (width * height):.1f}% of the photo"
    sides = _sides(quad)
    if sides.min() < 0.2 * sides.max():
        return "its grid would be far too skewed"
    start_area = abs(cv2.contourArea(np.asarray(start, np.float32).reshape(4, 2)))
    if not 0.33 < area / max(start_area, 1e-6) < 3.0:
        return "its corners could not be placed"
    return None


def _reduced_for(image_rgb: np.ndarray, guess: np.ndarray) -> Shrunk:
    """The whole photo reduced to suit refiner patches around ``guess`` (shared by all its steps)."""
    return reduced_source(image_rgb, patch_homography(guess), (PATCH_PX, PATCH_PX), whole=True)


def refine(image_rgb: np.ndarray, guess: np.ndarray, refiner, reduced: Shrunk, trail: list[Refinement] | None = None) -> Refinement:
    """Refine ``guess`` for up to ``REFINE_STEPS`` steps (fewer once the corners settle).

    Returns the corners, each corner's heat peak and the top-left probabilities, as ``refine_views``;
    each step's result is also appended to ``trail`` when one is given.
    """
    peaks, turn_prob = np.zeros(4), np.full(4, 0.25)
    for _ in range(REFINE_STEPS):
        step = refine_views(image_rgb, guess, refiner, reduced=reduced)
        peaks, turn_prob = step.peaks, step.turn
        accepted = _accept_step(guess, step.corners)
        settled = _largest_move(guess, accepted) < SETTLED_MOVE
        guess = accepted
        if trail is not None:
            trail.append(Refinement(guess, peaks, turn_prob))
        if settled:
            break
    return Refinement(guess, peaks, turn_prob)


GRID_ASPECT = 5 / 4  # the window's grid: 5 cells wide, 4 high, square cells
ASSUMED_FOCAL = 0.75  # a phone's focal length, in units of the photo's long side (only to judge shapes)
MAX_SKEW_COS = 0.15  # the grid's sides, seen through that camera, meet at 90 degrees give or take ~9
MAX_ASPECT_OFF = 0.2  # |log(seen aspect / 5:4)|; lens distortion and the true focal stay well inside
# choosing among retried grids: misfit beyond what true grids show (~0.08 cos, ~0.1 aspect) in steps of 0.05
TRUE_SKEW_COS, TRUE_ASPECT_OFF, MISFIT_STEP = 0.08, 0.1, 0.05


def rectangle_misfit(quad: np.ndarray, image_size: tuple[int, int]) -> tuple[float, float]:
    """How far a quad is from a 5:4 rectangle photographed by a phone-like pinhole camera.

    Back-projects the quad's two side directions through a camera of focal ``ASSUMED_FOCAL`` x the
    photo's long side, centred in the photo; returns |cos| of the angle between them (0 for a true
    rectangle) and |log| of how far their length ratio is from 5:4 either way round.
    """
    width, height = image_size
    centred = np.asarray(quad, np.float64).reshape(4, 2) - [width / 2, height / 2]
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    h = cv2.getPerspectiveTransform(unit, centred.astype(np.float32)).astype(np.float64)
    focal = ASSUMED_FOCAL * max(width, height)
    along = np.array([h[0, 0] / focal, h[1, 0] / focal, h[2, 0]])
    across = np.array([h[0, 1] / focal, h[1, 1] / focal, h[2, 1]])
    cos = abs(along @ across) / max(float(np.linalg.norm(along) * np.linalg.norm(across)), 1e-12)
    ratio = float(np.linalg.norm(along)) / max(float(np.linalg.norm(across)), 1e-12)
    return float(cos), float(abs(abs(np.log(max(ratio, 1e-12))) - np.log(GRID_ASPECT)))


def not_a_rectangle(quad: np.ndarray, image_size: tuple[int, int]) -> bool:
    """True when refined corners cannot be the 5:4 grid seen by a phone (a corner went astray)."""
    cos, aspect_off = rectangle_misfit(quad, image_size)
    return cos > MAX_SKEW_COS or aspect_off > MAX_ASPECT_OFF


RETRY_PEAK = 0.5  # a refined grid whose weakest corner's heat peak is lower than this is retried too
STRICT_MASKS = (0.9, 0.97)  # the retry also starts from the finder's mask cut at these probabilities
JUDGED = 3  # the retry's options closest to a rectangle that a judge (how surely the cells read) chooses among


def doubtful(found: Refinement, image_size: tuple[int, int]) -> bool:
    """True when a refined grid should be retried: no rectangle, or a corner the refiner barely saw."""
    return not_a_rectangle(found.corners, image_size) or float(found.peaks.min()) < RETRY_PEAK


def _misfit_score(option: Refinement, image_size: tuple[int, int]) -> float:
    """Lower is better: misfit beyond a true grid's, in ``MISFIT_STEP``s, less the weakest corner's peak."""
    cos, aspect_off = rectangle_misfit(option.corners, image_size)
    excess = max(0.0, cos - TRUE_SKEW_COS) + max(0.0, aspect_off - TRUE_ASPECT_OFF)
    return excess / MISFIT_STEP - float(option.peaks.min())


def _retry(
    image_rgb: np.ndarray,
    found: Refinement,
    refiner,
    reduced: Shrunk,
    image_size: tuple[int, int],
    *,
    earlier: list[Refinement] | None = None,
    starts: list[np.ndarray] | None = None,
    judge: Callable[[np.ndarray], float] | None = None,
) -> Refinement:
    """Retry a doubtful grid from other starting quads and keep the one closest to a rectangle.

    At strong tilt the dice hide a corner and the refiner can pull it onto an inner cell corner,
    or wander off over a board full of dice. The options: the grid found; ``earlier`` results
    (the steps on the way to it, the finder's own quad); refinements from each corner put where the
    other three say (completing a parallelogram) and from ``starts`` (other cuts of the finder's
    mask). The option closest to a rectangle wins, its weakest corner's heat peak breaking near-ties;
    with a ``judge`` (corners, top-left first -> how surely the cells read there), the judge picks
    among the ``JUDGED`` closest instead: a grid shifted off the dice reads unsure cells.
    """
    guess = found.corners
    options = [found, *(earlier or [])]
    for i in range(4):
        moved = guess.copy()
        moved[i] = guess[(i - 1) % 4] + guess[(i + 1) % 4] - guess[(i + 2) % 4]
        if cv2.isContourConvex(moved.astype(np.float32).reshape(-1, 1, 2)):
            options.append(refine(image_rgb, moved, refiner, reduced))
    for start in starts or []:  # a photo reduced to suit each start's size, as for the first start
        options.append(refine(image_rgb, start, refiner, _reduced_for(image_rgb, start)))
    options.sort(key=lambda option: _misfit_score(option, image_size))
    if judge is None:
        return options[0]
    return max(options[:JUDGED], key=lambda option: judge(option.oriented))


def find_grid(
    image_rgb: np.ndarray, finder, refiner, *, name: str = "photo", judge: Callable[[np.ndarray], float] | None = None
) -> BoardLocation:
    """Find the window's grid corners (TL, TR, BR, BL in ``image_rgb`` px) with the finder and refiner models.

    ``finder`` and ``refiner`` are ``scanner.model.OnnxModel``-like objects (``run(batch) -> dict``);
    ``judge``, when given, chooses among a doubtful grid's retries (see ``_retry``).

    Raises:
        BoardNotFoundError: no grid, two grids, or a grid cut off by the photo's edge.
    """
    height, width = image_rgb.shape[:2]
    canvas, scale = letterbox(image_rgb)
    prob = _sigmoid(finder.run(_batch(canvas))["mask"][0])
    quads = quads_from_mask(prob, scale)
    photo_area = MASK_PX * MASK_PX * (width * height) / max(width, height) ** 2
    big = [q for q in quads if q.area >= 0.01 * photo_area and q.probability > 0.6]
    if not big:
        seen = f"the most window-like area covers {100 * quads[0].area / photo_area:.1f}% of the photo" if quads else "nothing window-like"
        raise BoardNotFoundError(f"{name}: no Sagrada window found ({seen}); {RETRY_HINT}", remedy=Remedy.SET_CORNERS)
    if len(big) > 1 and big[1].area > 0.4 * big[0].area:
        raise BoardNotFoundError(
            f"{name}: {len(big)} windows in view; photograph one player's window at a time, or {Remedy.SET_CORNERS.words}",
            remedy=Remedy.SET_CORNERS,
        )
    guess = big[0].corners
    x0, y0, x1, y1 = big[0].box
    content_w, content_h = width * scale / FINDER_STRIDE, height * scale / FINDER_STRIDE
    if x0 <= 0 or y0 <= 0 or x1 >= content_w - 1 or y1 >= content_h - 1:
        raise BoardNotFoundError(
            f"{name}: the window is cut off by the photo's edge; step back so the whole board is in frame, or {Remedy.SET_CORNERS.words}",
            remedy=Remedy.SET_CORNERS,
        )
    start = guess.copy()
    reduced = _reduced_for(image_rgb, guess)  # once for all steps
    trail: list[Refinement] = []
    found = refine(image_rgb, guess, refiner, reduced, trail)
    if doubtful(found, (width, height)):
        earlier = [*trail[:-1], Refinement(start, np.zeros(4), trail[0].turn)]  # the finder's quad, the refiner's first turn reading
        strict = [quads_from_mask(prob, scale, threshold=cut) for cut in STRICT_MASKS]
        found = _retry(
            image_rgb, found, refiner, reduced, (width, height), earlier=earlier, starts=[q[0].corners for q in strict if q], judge=judge
        )
    guess, peaks, turn_prob = found.corners, found.peaks, found.turn
    problem = implausible_grid(guess, start, (width, height))
    if problem:
        raise BoardNotFoundError(
            f"{name}: no Sagrada window found (a window-like area was seen, but {problem}); {RETRY_HINT}", remedy=Remedy.SET_CORNERS
        )
    turn = int(np.argmax(turn_prob))
    corners = np.roll(guess, turn, axis=0)
    inside = (
        (corners[:, 0] > -0.01 * width)
        & (corners[:, 0] < 1.01 * width)
        & (corners[:, 1] > -0.01 * height)
        & (corners[:, 1] < 1.01 * height)
    )
    if not inside.all():
        raise BoardNotFoundError(
            f"{name}: the window is cut off by the photo's edge ({int((~inside).sum())} grid corner(s) outside); "
            f"step back so the whole board is in frame, or {Remedy.SET_CORNERS.words}",
            remedy=Remedy.SET_CORNERS,
        )
    return BoardLocation(
        corners=corners,
        mask_confidence=float(big[0].probability),
        corner_confidence=float(peaks.min()),
        orientation_confidence=float(turn_prob[turn]),
        flipped_probability=float(turn_prob[(turn + 2) % 4]),
        corner_peaks=tuple(float(peak) for peak in np.roll(peaks, turn)),
    )


# --------------------------------------------------------------------------------------------- from the content

REFINE_AGREE = 0.4  # the refiner's corners replace the lattice's only when each lies within this many pitches of it,
REFINED_RESIDUAL, RESIDUAL_SLACK = 0.2, 0.12  # and the centres seen lie this close to their cells under them (pitches)
# a window is cut off by the photo's edge when a cell's middle lies beyond it. A grid corner beyond it is not enough:
# on close, steep photos cut near the grid (models.sagrada.transfer's steep set) the fitted corners ran 0.35-1 pitch
# past the edge of 5 photos of 240 whose grids lay inside; a cell partly beyond the edge is doubted by the reader
# instead (``scanner.sagrada.reader.OFF_PHOTO``)
UNSURE_TOP = 0.2  # when the refiner's two readings of the top are this close, the photo's up is taken instead
UPRIGHT_PRIOR = 0.75  # when the refiner cannot tell the top, the photo's up is taken with this probability
CLOSER_SEEN, CLOSER_RESIDUAL = (
    21,
    0.0,
)  # a small grid always gets a second, closer look: skipping it when 18+ cells sat within 0.08 cell placed 8 more of 60 held-out-style grids over a quarter cell off
# when the centres of the first look link into no lattice, a second look at the box around them grown by this share:
# held-out-style photos at 39 degrees of tilt, taken close, show the tops of tall dice over a pitch off their cells
# and a mix of tops and bases links into nothing at the first look's scale, while the closer look places all 20
MISSED_GROW = 0.3
MIN_SEEN = 10  # fewer cells seen than this: no window (a window shows its 20 cells, dice or prints; a few may be missed)


def cells_outside(corners: np.ndarray, image_size: tuple[int, int]) -> int:
    """How many cells of the grid with ``corners`` have their middle beyond the photo's edge (``image_size``: width, height).

    >>> grid = np.array([[10, 10], [60, 10], [60, 50], [10, 50]], float)  # a pitch of 10 px
    >>> cells_outside(grid, (100, 100)), cells_outside(grid, (54, 100))
    (0, 4)
    """
    width, height = image_size
    middles = lattice.cell_centres(lattice.grid_homography(corners))
    beyond = np.maximum.reduce([-middles[:, 0], middles[:, 0] - width, -middles[:, 1], middles[:, 1] - height])
    return int((beyond > 0).sum())


class WindowCutOff(BoardNotFoundError):
    """The grid found runs off the photo's edge (its lattice ``fit``): refused, unless a reader finds the window within it."""

    def __init__(self, message: str, fit: lattice.WindowFit) -> None:
        super().__init__(message, remedy=Remedy.SET_CORNERS)
        self.fit = fit


@dataclass(frozen=True, eq=False)
class ContentGrid:
    """A grid found from its cells: the location the reader uses and the lattice fit behind it."""

    location: BoardLocation
    fit: lattice.WindowFit
    looks: int


def _two_way_turn(turn: np.ndarray) -> tuple[float, float]:
    """The refiner's top-left probabilities for the two orientations a 4x5 grid allows (as given, half turned), normalised."""
    keep, flip = float(turn[0]), float(turn[2])
    total = keep + flip
    if total < 1e-9:
        return 0.5, 0.5
    return keep / total, flip / total


def _upright_first(corners: np.ndarray) -> float:
    """Whether the grid's top edge as given is higher in the photo than its bottom edge: 1 yes, 0 no."""
    top, bottom = corners[:2, 1].mean(), corners[2:, 1].mean()
    return 1.0 if top <= bottom else 0.0


OUTLINE_SEEN = 16  # fewer cells than this in the lattice: the outline finder is asked too, and kept if more cells sit on its grid
# a lattice fit less sure than this (``WindowFit.confidence``: cells unseen, centres off the lattice or beside it) is
# weighed against the outline finder's grid by how surely the cells read on each, even when few of the centres seen
# sit on the outline's grid. On another copy's steep close-ups of tall dice (bench_adapt_loop.py, sagrada-other-copy)
# the dice tops lean off the lattice and the fit took in the stained-glass strip as a row or column: 4 of 35 lattice
# grids lay 0.48-1.27 cells off, 3 of them fitted under this bar; on those 3 the outline's grids lay 0.05-0.13 off
# and the cells read surer there. Of the 180 photos of models.sagrada.transfer 6 fell under the bar and the outline
# finder found a grid on 5; the cells read surer on the better grid each time (a training-style render's lattice 2
# cells off, its outline 0.12, kept; on 3 the outline lay 0.5-2.4 cells off and the lattice's stayed; on 1 both lay
# within 0.11). A bar of 0.95 would have swapped a real-dice composite's right grid for one 0.6 cell off.
JUDGED_FIT = 0.8


def _sits(fit: lattice.WindowFit) -> bool:
    """Whether enough of the centres seen sit on a grid to check it by: ``MIN_SEEN`` cells, within the lattice's residual."""
    return fit.seen >= MIN_SEEN and fit.residual <= lattice.MAX_RESIDUAL


def _outline_grid(image_rgb: np.ndarray, finder, refiner, seen: lattice.Centres, name: str, *, checked: bool = True) -> ContentGrid | None:
    """The outline finder's grid (``find_grid``), checked against the cells seen; None when it finds none.

    Unless ``checked`` is false (another judge weighs it), None too when the centres seen do not
    sit on it (``_sits``); its fit then says how few do.
    """
    try:
        location = find_grid(image_rgb, finder, refiner, name=name)
    except BoardNotFoundError:
        return None
    height, width = image_rgb.shape[:2]
    # at a strong tilt the centres seen lean towards the dice tops: check the grid on the board, half a die and a die up
    planes = [lift_corners(location.corners, (width, height), up) for up in (0.0, CROP_HEIGHT_MM, 2 * CROP_HEIGHT_MM)]
    fits = [lattice.fit_given(seen, corners) for corners in planes]
    sitting = [fit for fit in fits if _sits(fit)]
    if not sitting and checked:
        return None
    best = max(sitting or fits, key=lambda fit: (fit.seen, -fit.residual))
    checked_fit = dataclasses.replace(best, corners=location.corners)
    support = checked_fit.corner_support()
    peaks = tuple(min(float(a), float(b)) for a, b in zip(support, location.corner_peaks))
    return ContentGrid(dataclasses.replace(location, corner_peaks=peaks, corner_confidence=min(peaks)), checked_fit, 1)


def find_grid_by_content(
    image_rgb: np.ndarray,
    locator,
    refiner,
    *,
    name: str = "photo",
    finder=None,
    judge: Callable[[np.ndarray], float] | None = None,
) -> ContentGrid:
    """Find the window's grid from its cells (``scanner.sagrada.lattice``), oriented by the refiner's top-left head.

    One look at the whole photo, a second at the grid enlarged when it is small (or at the spots seen
    when they link into no lattice: ``MISSED_GROW``); the lattice fit
    gives the corners. The refiner then reads which long side is the top and may sharpen the
    corners, but only where it agrees with the lattice (``REFINE_AGREE``).

    With a ``finder``, the outline finder's grid is asked for too when the lattice sees few cells
    (``OUTLINE_SEEN``: kept when more cells sit on it) or, given a ``judge`` (a score of grid
    corners, the higher the likelier: how surely the cells read on them), when the fit is doubtful
    (``JUDGED_FIT``): then the grid the judge scores higher is kept.

    Raises:
        BoardNotFoundError: no 4x5 grid of cells, or a grid cut off by the photo's edge.
    """
    height, width = image_rgb.shape[:2]
    seen = lattice.locate_centres(locator, image_rgb)
    fit = lattice.fit_window(seen, (width, height))
    looks = 1
    if fit is None and len(seen.points) >= lattice.MIN_CELLS:
        closer = lattice.locate_centres(locator, image_rgb, lattice.box_around(seen.points, (width, height), MISSED_GROW))
        fit = lattice.fit_window(closer, (width, height))
        looks = 2
    outline: ContentGrid | None = None
    asked = finder is not None and (fit is None or fit.seen < OUTLINE_SEEN)
    if asked:
        outline = _outline_grid(image_rgb, finder, refiner, seen, name, checked=False)
        if outline is not None and _sits(outline.fit) and (fit is None or outline.fit.seen > fit.seen):
            return outline
    if fit is None:
        spots = len(seen.points)
        what = "nothing cell-like" if spots == 0 else f"{spots} cell-like spot{'s' if spots != 1 else ''}, not in a 4x5 grid"
        raise BoardNotFoundError(f"{name}: no Sagrada window found ({what}); {RETRY_HINT}", remedy=Remedy.SET_CORNERS)
    box = lattice.zoom_box(fit.corners, (width, height))
    box_area = (box[2] - box[0]) * (box[3] - box[1])
    small = lattice.pitch_out(fit.corners, seen) < lattice.ZOOM_PITCH_OUT
    if small and (fit.seen < CLOSER_SEEN or fit.residual > CLOSER_RESIDUAL) and box_area < 0.7 * width * height:
        closer = lattice.locate_centres(locator, image_rgb, box)
        again = lattice.fit_window(closer, (width, height))
        looks = 2
        if again is not None and again.seen >= fit.seen - 1:
            fit = again
    other = None
    away = lattice.away_from(seen, fit.corners)
    if len(away.points) >= lattice.SECOND_WINDOW:  # a second group of cells: a closer look says whether it is a window
        closer = lattice.locate_centres(locator, image_rgb, lattice.box_around(away.points, (width, height)))
        other = lattice.fit_window(closer, (width, height))
        looks += 1
        if other is not None and other.seen < lattice.SECOND_WINDOW:
            other = None
    if other is not None:
        raise BoardNotFoundError(
            f"{name}: 2 windows in view ({fit.seen} and {other.seen} cells seen); photograph one player's window at a time, "
            f"or {Remedy.SET_CORNERS.words}",
            remedy=Remedy.SET_CORNERS,
        )
    if lattice.fills_photo(seen, (width, height)):  # cut to the grid: its edges are the photo's (the centres place it less well)
        whole = lattice.whole_photo((width, height))
        if np.linalg.norm(whole - fit.corners, axis=1).max() > 0.1 * float(np.mean(_sides(whole))) / 4.5:
            fit = dataclasses.replace(fit, corners=whole)
    pitch = float(np.mean(_sides(fit.corners))) / ((lattice.COLS + lattice.ROWS) / 2)
    outside = cells_outside(fit.corners, (width, height))
    if outside:
        raise WindowCutOff(
            f"{name}: the window is cut off by the photo's edge ({outside} of its cells outside); "
            f"step back so the whole board is in frame, or {Remedy.SET_CORNERS.words}",
            fit,
        )
    if fit.seen < MIN_SEEN:
        raise BoardNotFoundError(
            f"{name}: no Sagrada window found (only {fit.seen} of 20 cells seen in a grid); {RETRY_HINT}", remedy=Remedy.SET_CORNERS
        )
    step = refine(image_rgb, fit.corners, refiner, _reduced_for(image_rgb, fit.corners))
    keep, flip = _two_way_turn(step.turn)
    if abs(keep - flip) < UNSURE_TOP:  # the refiner cannot tell (no strip or name seen): the photo's own up, half-heartedly
        keep = UPRIGHT_PRIOR if _upright_first(fit.corners) else 1.0 - UPRIGHT_PRIOR
        flip = 1.0 - keep
    corners = fit.corners
    moved = np.linalg.norm(step.corners - corners, axis=1).max() / max(pitch, 1e-9)
    if (
        moved < REFINE_AGREE
        and not not_a_rectangle(step.corners, (width, height))
        and lattice.centre_residual(seen.points, step.corners) <= min(REFINED_RESIDUAL, fit.residual + RESIDUAL_SLACK)
    ):  # the refiner's corners, where the cells seen still sit on the grid they give
        corners = step.corners
    support = fit.corner_support()
    if flip > keep:
        corners = np.roll(corners, 2, axis=0)
        support = support[2:] + support[:2]
        keep, flip = flip, keep
    location = BoardLocation(
        corners=corners,
        mask_confidence=float(min(1.0, max(0.0, fit.mask))),
        corner_confidence=float(min(support)),
        orientation_confidence=float(keep),
        flipped_probability=float(flip),
        corner_peaks=tuple(float(s) for s in support),
    )
    found = ContentGrid(location, fit, looks)
    if finder is None or judge is None or fit.confidence >= JUDGED_FIT:
        return found
    if not asked:
        outline = _outline_grid(image_rgb, finder, refiner, seen, name, checked=False)
    if outline is not None and judge(outline.location.corners) > judge(location.corners):
        return outline
    return found
