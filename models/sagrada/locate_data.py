"""Training views for the Sagrada cell-centre locator (``models/sagrada_locate``).

Renders of the training board styles (``models.sagrada.styles.TRAINING_STYLES``, never the held-out
one), a share of them with real dice pasted in (fold 0 of the loose dice, ``composite.training_pool``:
the locator must find real dice, not only drawn ones), and a share of windows that are only dice on
a plain dark card (``composite.mosaic_window``: the lattice of dice, with no card, strip or frame
design to go by), are made once (``renders``) and every training example is a fresh random *view* of one
(``random_view``): the whole photo, a crop around the grid at any angle and off-centre, or the
photo cut to the grid (rectified or not, as apps save it), each letterboxed exactly as the
scanner letterboxes a photo (``scanner.sagrada.lattice.locate_input``). On top: the frame and table
replaced by other colours and textures (a board of another design, or no frame seen), thin lines
and marks drawn over the photo (another app's guides), and colour swaps. The targets come from
``scanner.sagrada.lattice.locate_targets``, so the centres the scanner reads are the ones trained.
"""

from __future__ import annotations

import functools
import math
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.sagrada import composite
from models.sagrada.make_dataset import code_version
from models.sagrada.render import render
from models.sagrada.styles import TRAINING_STYLES
from scanner.sagrada.lattice import COLS, LOCATE_SIZE, ROWS, grid_homography, locate_targets

RENDER_SIZES = ((1024, 768), (768, 1024), (960, 720), (800, 800))


def _render(seed: int, styled: bool = True, real_share: float = 0.0, mosaic_share: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    cv2.setNumThreads(1)
    if styled and np.random.default_rng([seed, 14]).random() < mosaic_share:  # its own draw: the rest stay as they were
        size = RENDER_SIZES[int(np.random.default_rng([seed, 15]).integers(len(RENDER_SIZES)))]
        image, corners = composite.mosaic_window(seed, composite.training_pool(), size)
        return image, np.asarray(corners, np.float64)
    face_source = None
    if real_share > 0 and np.random.default_rng([seed, 12]).random() < real_share:  # its own draw: the rest stay as they were
        pool = composite.training_pool()
        face_source = pool.face if pool.dice else None
    rng = np.random.default_rng([seed, 11])
    size = RENDER_SIZES[int(rng.integers(len(RENDER_SIZES)))]
    fill = float(rng.uniform(0.3, 0.95)) if rng.random() < 0.7 else None
    if not styled:  # our own board only
        sample = render(seed, out_size=size, px_per_mm=4.0, fill=fill)
        return sample.image_rgb, np.array(sample.label["render"]["corners"], np.float64)
    style = TRAINING_STYLES[int(rng.integers(len(TRAINING_STYLES)))]  # never the held-out style
    overlay = bool(rng.random() < 0.15)
    sample = render(seed, out_size=size, px_per_mm=4.0, fill=fill, style=style, overlay=overlay, face_source=face_source)
    return sample.image_rgb, np.array(sample.label["render"]["corners"], np.float64)


def renders(
    first_seed: int, count: int, workers: int = 1, *, styled: bool = True, real_share: float = 0.0, mosaic_share: float = 0.0
) -> tuple[list[np.ndarray], np.ndarray]:
    """Render ``count`` photos from ``first_seed`` on (of the training styles, or only ours when not ``styled``).

    About ``real_share`` of the styled ones show real fold-0 dice where the pool has them (none
    when ``../shared/realdata`` is absent), and about ``mosaic_share`` of them are windows that are
    only dice on a plain dark card (``composite.mosaic_window``). Returns the images and their grid corners (N, 4, 2).
    """
    seeds = list(range(first_seed, first_seed + count))
    if workers > 1:
        with get_context("fork").Pool(workers) as pool:
            parts = pool.map(
                functools.partial(_render, styled=styled, real_share=real_share, mosaic_share=mosaic_share), seeds, chunksize=4
            )
    else:
        parts = [_render(seed, styled, real_share, mosaic_share) for seed in seeds]
    return [p[0] for p in parts], np.stack([p[1] for p in parts])


CACHE = Path("build/sagrada_locate")


def load_or_render(
    first_seed: int,
    count: int,
    workers: int = 1,
    cache: Path = CACHE,
    *,
    styled: bool = True,
    real_share: float = 0.0,
    mosaic_share: float = 0.0,
) -> tuple[list[np.ndarray], np.ndarray]:
    """``renders``, cached in ``cache`` by seed, count, styles, real dice and the renderer's code version."""
    # (the pool itself is loaded in each worker: OpenCV used before a fork can hang the children)
    real = f"_real{real_share:g}" if real_share > 0 and composite.real_dice_present() else ""
    mosaic = f"_mosaic{mosaic_share:g}" if styled and mosaic_share > 0 else ""
    path = cache / code_version() / f"{'renders' if styled else 'classic'}{real}{mosaic}_{first_seed}_{count}.npz"
    if path.is_file():
        with np.load(path) as data:
            return [data[f"image{i}"] for i in range(count)], data["corners"]
    images, corners = renders(first_seed, count, workers, styled=styled, real_share=real_share, mosaic_share=mosaic_share)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = {f"image{i}": image for i, image in enumerate(images)}
    np.savez(path, corners=corners, **arrays)
    return images, corners


def _grown_quad(corners: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """The grid's outline grown by ``margins`` cells (top, right, bottom, left), on the board's plane."""
    top, right, bottom, left = margins
    outline = np.array([[-left, -top], [COLS + right, -top], [COLS + right, ROWS + bottom], [-left, ROWS + bottom]], np.float64)
    return cv2.perspectiveTransform(outline.reshape(-1, 1, 2), grid_homography(corners)).reshape(4, 2)


def _view_homography(image_shape: tuple[int, ...], corners: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, tuple[int, int]]:
    """A random photo -> virtual photo map and the virtual photo's size (w, h)."""
    height, width = image_shape[:2]
    kind = rng.random()
    if kind < 0.3:  # the photo as it is
        return np.eye(3), (width, height)
    if kind < 0.55:  # cut to the grid, as an app saves it: rectified (or nearly), a small margin or none
        margins = rng.uniform(-0.06, 0.35, 4) if rng.random() < 0.7 else np.full(4, rng.uniform(-0.04, 0.06))
        quad = _grown_quad(corners, margins)
        w_cells, h_cells = COLS + margins[1] + margins[3], ROWS + margins[0] + margins[2]
        px = float(rng.uniform(24, 90))
        size = (max(32, int(w_cells * px)), max(32, int(h_cells * px)))
        if rng.random() < 0.3:  # not rectified: the photo's own perspective, just cropped tight
            x, y, box_w, box_h = cv2.boundingRect(quad.astype(np.float32))
            return np.array([[1, 0, -x], [0, 1, -y], [0, 0, 1]], np.float64), (max(16, box_w), max(16, box_h))
        turn = int(rng.integers(4)) if rng.random() < 0.4 else 0
        if turn % 2:
            size = (size[1], size[0])
        rect = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float64)
        target = np.roll(rect, turn, axis=0) + rng.normal(0, 0.01 * max(size), (4, 2))
        h = cv2.getPerspectiveTransform(quad.astype(np.float32), target.astype(np.float32)).astype(np.float64)
        return h, size
    # a crop around the grid at any angle, maybe off-centre and cutting into the board
    grid_centre = corners.mean(axis=0)
    grid_size = float(np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[1])) / 2
    aspect = float(rng.choice([4 / 3, 3 / 4, 1.0, 16 / 9, 9 / 16]))
    out_long = float(rng.uniform(400, 1200))
    size = (int(out_long), int(out_long / aspect)) if aspect >= 1 else (int(out_long * aspect), int(out_long))
    fill = float(rng.uniform(0.35, 1.05))  # the grid's size over the view's short side
    scale = fill * min(size) / max(grid_size, 1.0)
    angle = float(rng.uniform(-math.pi, math.pi))
    shift = rng.uniform(-0.25, 0.25, 2) * np.array(size)
    cos, sin = math.cos(angle) * scale, math.sin(angle) * scale
    centre_out = np.array(size, np.float64) / 2 + shift
    h = np.array([[cos, -sin, 0], [sin, cos, 0], [0, 0, 1]], np.float64)
    moved = h[:2, :2] @ grid_centre
    h[:2, 2] = centre_out - moved
    return h, size


def _texture(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """A random flat, gradient or noisy colour field (w, h) -> (h, w, 3) uint8."""
    w, h = size
    base = rng.uniform(0, 255, 3)
    kind = rng.random()
    if kind < 0.35:
        field = np.broadcast_to(base, (h, w, 3)).astype(np.float32)
    else:
        cells = int(rng.integers(2, 24))
        small = rng.uniform(-1, 1, (max(2, cells * h // max(w, 1)), cells, 3)).astype(np.float32)
        noise = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
        field = base + noise * float(rng.uniform(10, 90))
    return np.clip(field, 0, 255).astype(np.uint8)


def _draw_overlays(image: np.ndarray, rng: np.random.Generator) -> None:
    """Draw thin guide lines, a guide frame or marks over an input image, in place."""
    h, w = image.shape[:2]
    colour = tuple(int(c) for c in (rng.uniform(200, 255, 3) if rng.random() < 0.7 else rng.uniform(0, 255, 3)))
    thickness = int(rng.integers(1, 3))
    kind = rng.random()
    if kind < 0.4:  # rule-of-thirds or a full guide grid
        n = int(rng.integers(2, 6))
        for k in range(1, n):
            x, y = int(w * k / n + rng.normal(0, 3)), int(h * k / n + rng.normal(0, 3))
            cv2.line(image, (x, 0), (x, h), colour, thickness, cv2.LINE_AA)
            cv2.line(image, (0, y), (w, y), colour, thickness, cv2.LINE_AA)
    elif kind < 0.7:  # a guide frame, maybe with corner brackets
        x0, y0 = int(rng.uniform(0, 0.3) * w), int(rng.uniform(0, 0.3) * h)
        x1, y1 = int(rng.uniform(0.7, 1.0) * w), int(rng.uniform(0.7, 1.0) * h)
        cv2.rectangle(image, (x0, y0), (x1, y1), colour, thickness, cv2.LINE_AA)
    else:  # random strokes and marks
        for _ in range(int(rng.integers(1, 7))):
            p0 = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            p1 = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            cv2.line(image, p0, p1, colour, thickness, cv2.LINE_AA)
        if rng.random() < 0.5:
            cv2.circle(image, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(rng.uniform(3, 20)), colour, thickness, cv2.LINE_AA)


def random_view(image: np.ndarray, corners: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One random training view of a render: input (240, 320, 3) uint8, centre heat and grid mask (60, 80) float32."""
    to_view, (view_w, view_h) = _view_homography(image.shape, corners, rng)
    transposed = view_h > view_w
    width, height = (view_h, view_w) if transposed else (view_w, view_h)
    out_w, out_h = LOCATE_SIZE
    scale = min(out_w / width, out_h / height)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    letterbox = np.array([[new_w / width, 0, 0], [0, new_h / height, 0], [0, 0, 1]], np.float64)
    if transposed:
        letterbox = letterbox @ np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float64)
    to_input = letterbox @ to_view
    # shrink first when the view reduces the render a lot (no aliasing), as the scanner's area resize does
    reduce = math.sqrt(abs(np.linalg.det(to_input[:2, :2])))
    source, to_source = image, np.eye(3)
    if reduce < 0.6:
        factor = min(1.0, reduce * 1.3)
        source = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
        to_source = np.array([[factor, 0, 0], [0, factor, 0], [0, 0, 1]], np.float64)
    matrix = to_input @ np.linalg.inv(to_source)
    border = tuple(float(c) for c in rng.uniform(0, 255, 3))  # beyond the photo: a plain ground (a mirror would show grids without targets)
    view = cv2.warpPerspective(source, matrix, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    corners_in = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), to_input).reshape(4, 2)
    if rng.random() < 0.35:  # another frame, table or none at all: keep only the grid and a little of the card around it
        grow = rng.uniform(0.05, 0.45, 4)
        keep = np.zeros((out_h, out_w), np.uint8)
        quad = _grown_quad(corners_in, grow)
        cv2.fillPoly(keep, [np.round(quad * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
        alpha = (keep.astype(np.float32) / 255.0)[..., None]
        view = (view * alpha + _texture(rng, (out_w, out_h)) * (1 - alpha)).astype(np.uint8)
    if rng.random() < 0.35:
        _draw_overlays(view, rng)
    view[new_h:] = 0
    view[:, new_w:] = 0
    heat, mask = locate_targets(corners_in)
    cut_h, cut_w = -(-new_h // 4), -(-new_w // 4)
    heat[cut_h:], heat[:, cut_w:] = 0, 0
    mask[cut_h:], mask[:, cut_w:] = 0, 0
    return view, heat, mask
