"""Synthetic photos with known answers: the target seen through a known camera, colour casts, lens distortion.

Every random function takes a ``seed``. Tests and benchmarks use these to check that
calibration recovers what went in.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.colour import linear_to_srgb, srgb_to_linear
from calibration.target import Target, board_texture

BACKGROUND = 90
PAPER = 235
INK = 20
BOARD_WHITE = 210  # the white squares of ``window_board``
BOARD_LIGHT_GREY = 185
BOARD_FRAME = (45, 38, 32)
BOARD_DICE = [(200, 40, 40), (230, 200, 40), (40, 160, 70), (40, 80, 200), (140, 50, 160)]


def window_board(seed: int = 0) -> np.ndarray:
    """A small Sagrada-like window, 202 x 250 px: a dark frame, 4 x 5 cells of white, light grey and dice.

    The top-left cell (x, y, w, h = 10, 10, 40, 40) is always white; pips are white too.
    """
    rng = np.random.default_rng(seed)
    image = np.empty((202, 250, 3), np.float64)
    image[:] = BOARD_FRAME
    for row in range(4):
        for col in range(5):
            x, y = 10 + col * 48, 10 + row * 48
            kind = 0 if (row, col) == (0, 0) else rng.integers(0, 4)
            if kind == 0:
                colour = (BOARD_WHITE,) * 3
            elif kind == 1:
                colour = (BOARD_LIGHT_GREY,) * 3
            else:
                colour = BOARD_DICE[rng.integers(0, len(BOARD_DICE))]
            image[y : y + 40, x : x + 40] = colour
            if kind >= 2:  # a pip
                image[y + 17 : y + 23, x + 17 : x + 23] = BOARD_WHITE
    image += rng.normal(0, 2.0, image.shape)
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def random_poses(
    target: Target,
    camera: CameraModel,
    count: int,
    seed: int,
    max_tilt_deg: float = 35.0,
    fill: float = 0.6,
    spread: float = 0.12,
    whole: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` random poses (rvec, tvec) of the target, tilted up to ``max_tilt_deg``.

    The target spans about ``fill`` of the image width; its centre wanders up to ``spread`` of
    the frame from the image centre (larger spreads reach the corners, where distortion is largest).
    With ``whole`` the target and its white border stay in view; otherwise at least 40 % of the
    inner corners do (partial views, for ChArUco).
    """
    rng = np.random.default_rng(seed)
    board_w, board_h = target.board_mm
    poses: list[tuple[np.ndarray, np.ndarray]] = []
    while len(poses) < count:
        tilt_x, tilt_y = np.radians(rng.uniform(-max_tilt_deg, max_tilt_deg, 2))
        spin = np.radians(rng.uniform(-20, 20))
        rotation = (
            cv2.Rodrigues(np.array([tilt_x, 0.0, 0.0]))[0]
            @ cv2.Rodrigues(np.array([0.0, tilt_y, 0.0]))[0]
            @ cv2.Rodrigues(np.array([0.0, 0.0, spin]))[0]
        )
        distance = camera.fx * board_w / (camera.width_px * fill * rng.uniform(0.85, 1.15))
        shift = rng.uniform(-spread, spread, 2) * distance * np.array([camera.width_px / camera.fx, camera.height_px / camera.fy])
        centre = np.array([board_w / 2, board_h / 2, 0.0])
        tvec = np.array([shift[0], shift[1], distance]) - rotation @ centre
        rvec = cv2.Rodrigues(rotation)[0].ravel()
        if _in_view(target, camera, rvec, tvec, whole):
            poses.append((rvec, tvec))
    return poses


def render_view(target: Target, camera: CameraModel, rvec: np.ndarray, tvec: np.ndarray, supersample: int = 3) -> np.ndarray:
    """Photograph the printed target (with a one-square white border) through ``camera``; RGB uint8."""
    if target.kind != "chessboard":
        return _render_texture(target, camera, rvec, tvec, min(supersample, 2))
    size = (camera.width_px * supersample, camera.height_px * supersample)
    canvas = np.full((size[1], size[0]), BACKGROUND, np.uint8)
    steps = 8

    def outline(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        t = np.linspace(0.0, 1.0, steps, endpoint=False)
        edges = [
            np.stack([x0 + (x1 - x0) * t, np.full(steps, y0)], axis=1),
            np.stack([np.full(steps, x1), y0 + (y1 - y0) * t], axis=1),
            np.stack([x1 - (x1 - x0) * t, np.full(steps, y1)], axis=1),
            np.stack([np.full(steps, x0), y1 - (y1 - y0) * t], axis=1),
        ]
        plane = np.concatenate(edges) * target.square_mm
        points = np.concatenate([plane, np.zeros((len(plane), 1))], axis=1)
        pixels, _ = cv2.projectPoints(points, rvec, tvec, camera.matrix(), np.array(camera.distortion))
        big = (pixels.reshape(-1, 2) + 0.5) * supersample - 0.5  # pixel centres stay pixel centres
        return np.round(big * 16).astype(np.int32)

    cv2.fillPoly(canvas, [outline(-1, -1, target.columns + 2, target.rows + 2)], PAPER, cv2.LINE_AA, shift=4)
    squares = [
        outline(col, row, col + 1, row + 1) for row in range(target.rows + 1) for col in range(target.columns + 1) if (row + col) % 2 == 0
    ]
    cv2.fillPoly(canvas, squares, INK, cv2.LINE_AA, shift=4)
    grey = cv2.resize(canvas, (camera.width_px, camera.height_px), interpolation=cv2.INTER_AREA)
    return np.repeat(grey[:, :, None], 3, axis=2)


def _render_texture(target: Target, camera: CameraModel, rvec: np.ndarray, tvec: np.ndarray, supersample: int) -> np.ndarray:
    """Trace every (super)pixel's ray to the board plane and sample the printed page there."""
    px_per_mm = 60.0 / target.square_mm
    margin_mm = float(target.square_mm)
    page = board_texture(target, px_per_mm, margin_mm)
    page = np.where(page > 128, PAPER, INK).astype(np.uint8)
    rays = _camera_rays(camera, supersample)
    rotation, _ = cv2.Rodrigues(np.asarray(rvec, np.float64))
    plane_to_ray = np.column_stack([rotation[:, 0], rotation[:, 1], np.asarray(tvec, np.float64)])
    board = rays @ np.linalg.inv(plane_to_ray).T
    ahead = board[..., 2] > 1e-9
    scale = np.where(ahead, board[..., 2], 1.0)
    map_u = np.where(ahead, (board[..., 0] / scale + margin_mm) * px_per_mm - 0.5, -1e5).astype(np.float32)
    map_v = np.where(ahead, (board[..., 1] / scale + margin_mm) * px_per_mm - 0.5, -1e5).astype(np.float32)
    big = cv2.remap(page, map_u, map_v, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=BACKGROUND)
    grey = cv2.resize(big, (camera.width_px, camera.height_px), interpolation=cv2.INTER_AREA)
    return np.repeat(grey[:, :, None], 3, axis=2)


@lru_cache(maxsize=2)
def _camera_rays(camera: CameraModel, supersample: int) -> np.ndarray:
    """(H*s, W*s, 3) rays (x, y, 1) through each supersampled pixel centre, lens distortion removed."""
    width, height = camera.width_px * supersample, camera.height_px * supersample
    xs, ys = np.meshgrid((np.arange(width) + 0.5) / supersample - 0.5, (np.arange(height) + 0.5) / supersample - 0.5)
    pixels = np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-9)
    normal = cv2.undistortPoints(pixels, camera.matrix(), np.array(camera.distortion), criteria=criteria).reshape(height, width, 2)
    return np.concatenate([normal, np.ones((height, width, 1))], axis=2)


def cast_colour(image_rgb: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """Multiply each channel by ``gains`` in linear light (a coloured light and an exposure change); new array."""
    linear = srgb_to_linear(image_rgb) * np.array(gains)
    return np.round(linear_to_srgb(linear)).astype(np.uint8)


def distort_image(image_rgb: np.ndarray, camera: CameraModel) -> np.ndarray:
    """Give an ideal (undistorted) image the lens distortion of ``camera``; new array, same size."""
    height, width = image_rgb.shape[:2]
    matrix = camera.matrix((width, height))
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))
    pixels = np.stack([xs.ravel(), ys.ravel()], axis=1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-6)
    ideal = cv2.undistortPoints(pixels, matrix, np.array(camera.distortion), R=None, P=matrix, criteria=criteria)
    maps = ideal.reshape(height, width, 2).astype(np.float32)
    return cv2.remap(image_rgb, maps[:, :, 0], maps[:, :, 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def _in_view(target: Target, camera: CameraModel, rvec: np.ndarray, tvec: np.ndarray, whole: bool) -> bool:
    if whole:
        corners = (
            np.array(
                [
                    [-1, -1, 0],
                    [target.columns + 2, -1, 0],
                    [target.columns + 2, target.rows + 2, 0],
                    [-1, target.rows + 2, 0],
                ],
                np.float64,
            )
            * target.square_mm
        )
    else:
        corners = target.object_points().astype(np.float64)
    pixels, _ = cv2.projectPoints(corners, rvec, tvec, camera.matrix(), np.zeros(5))
    pixels = pixels.reshape(-1, 2)
    margin = 0.04 * camera.width_px
    inside = (
        (pixels[:, 0] > margin)
        & (pixels[:, 0] < camera.width_px - margin)
        & (pixels[:, 1] > margin)
        & (pixels[:, 1] < camera.height_px - margin)
    )
    return bool(np.all(inside)) if whole else bool(np.mean(inside) >= 0.4)
