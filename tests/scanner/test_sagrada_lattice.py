"""The Sagrada grid fitted from its cells' centres (``scanner.sagrada.lattice``): known grids come back."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.sagrada.lattice import (
    COLS,
    LOCATE_SIZE,
    OUT_SIZE,
    ROWS,
    Centres,
    cell_centres,
    find_peaks,
    fit_window,
    grid_homography,
    locate_input,
    locate_targets,
    output_to_input,
)


def _camera_grid(tilt_deg: float, roll_deg: float, size: tuple[int, int] = (1600, 1200)) -> np.ndarray:
    """Corners TL, TR, BR, BL of a 5x4 grid seen by a pinhole camera tilted ``tilt_deg`` and turned ``roll_deg``."""
    width, height = size
    focal = 0.8 * max(size)
    tilt, roll = np.radians(tilt_deg), np.radians(roll_deg)
    rx = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    rz = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0], [0, 0, 1]])
    grid = np.array([[-2.5, -2.0, 0], [2.5, -2.0, 0], [2.5, 2.0, 0], [-2.5, 2.0, 0]])
    cam = (rx @ (rz @ grid.T)).T + [0, 0, 12.0]
    return np.stack([focal * cam[:, 0] / cam[:, 2] + width / 2, focal * cam[:, 1] / cam[:, 2] + height / 2], axis=1)


def _centres(points: np.ndarray, heights: np.ndarray | None = None, grid: np.ndarray | None = None) -> Centres:
    """Centres as the locator gives them, its grid mask (output px of 20 photo px each) over ``grid``'s corners when given."""
    heights = np.full(len(points), 0.9) if heights is None else heights
    mask = np.zeros(OUT_SIZE[::-1], np.float32)
    if grid is not None:
        cv2.fillPoly(mask, [np.round(np.asarray(grid) / 20 * 16).astype(np.int32)], 1.0, cv2.LINE_AA, shift=4)
    to_photo = np.diag([20.0, 20.0, 1.0])
    return Centres(np.asarray(points, np.float64), np.asarray(heights, np.float64), mask, to_photo)


def _corner_error(found: np.ndarray, true: np.ndarray) -> float:
    """The largest corner error in cell pitches, for the better of the two orientations of a 4x5 grid (its 5-cell side first)."""
    pitch = np.linalg.norm(true[1] - true[0]) / COLS
    errors = [np.linalg.norm(np.roll(found, k, axis=0) - true, axis=1).max() for k in (0, 2)]
    return float(min(errors) / pitch)


@settings(max_examples=60, deadline=None)
@given(
    tilt=st.floats(0, 40),
    roll=st.floats(-180, 180),
    noise=st.floats(0, 0.05),
    missing=st.sets(st.integers(0, ROWS * COLS - 1), max_size=6),
    outliers=st.integers(0, 6),
    seed=st.integers(0, 2**31 - 1),
)
def test_the_lattice_recovers_a_known_grid_from_noisy_centres_with_outliers_and_missing_cells(
    tilt: float, roll: float, noise: float, missing: set[int], outliers: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    true = _camera_grid(tilt, roll)
    to_photo = grid_homography(true)
    centres = cell_centres(to_photo)
    pitch = np.linalg.norm(true[1] - true[0]) / COLS
    # the locator's error scales with a cell's apparent size: noise in the grid's own units (cells)
    on_grid = np.array([p for i, p in enumerate(cell_centres(np.eye(3))) if i not in missing])
    on_grid = on_grid + np.clip(rng.normal(0, noise, on_grid.shape), -2 * noise, 2 * noise)  # bounded, or the search finds a 5-sigma draw
    kept = cv2.perspectiveTransform(on_grid.reshape(-1, 1, 2), to_photo).reshape(-1, 2)
    # outliers: loose dice or marks well away from the grid's lattice points (off the board, or between cells)
    far = true.mean(axis=0) + rng.uniform(-1, 1, (outliers, 2)) * pitch * 8
    off = np.array([p for p in far if np.linalg.norm(centres - p, axis=1).min() > 0.45 * pitch]).reshape(-1, 2)
    off = off[np.linalg.norm(off - true.mean(axis=0), axis=1) > 4 * pitch]  # not inside the grid
    points = np.concatenate([kept, off])
    heights = np.concatenate([np.full(len(kept), 0.9), np.full(len(off), 0.5)])
    fit = fit_window(_centres(points, heights, true), (1600, 1200))
    assert fit is not None
    # a missing corner or edge row is extrapolated from up to 6 cells fewer: its error grows past the centres' noise
    assert _corner_error(fit.corners, true) < 0.08 + 5 * noise
    assert fit.seen == ROWS * COLS - len(missing)
    assert cv2.contourArea(fit.corners.astype(np.float32), oriented=True) > 0  # clockwise on screen


@pytest.mark.parametrize(
    ("tilt", "roll", "noise", "missing", "seed"),
    [
        (39.2, 74.5, 0.036, {0, 3, 7, 13, 14, 17}, 1369337899),
        (36.1, 88.9, 0.039, {0, 2, 6, 12, 15, 16}, 48845661),
        (29.7, 31.3, 0.041, {4, 6, 8, 12, 16}, 19468541),
        (35.1, 50.9, 0.047, {0, 1, 12, 15, 16}, 2019661312),
    ],
)
def test_a_lattice_linked_along_a_diagonal_is_turned_back_to_rows_and_columns(
    tilt: float, roll: float, noise: float, missing: set[int], seed: int
) -> None:
    # cells missing where the first links are made send them along a diagonal: every centre still
    # sits on a lattice point, but in a sheared basis whose 4x5 blocks are slanted bands
    rng = np.random.default_rng(seed)
    true = _camera_grid(tilt, roll)
    pitch = np.linalg.norm(true[1] - true[0]) / COLS
    kept = np.array([p for i, p in enumerate(cell_centres(grid_homography(true))) if i not in missing])
    kept = kept + rng.normal(0, noise * pitch, kept.shape)
    fit = fit_window(_centres(kept, np.full(len(kept), 0.9), true), (1600, 1200))
    assert fit is not None
    assert _corner_error(fit.corners, true) < 0.3
    assert fit.seen == ROWS * COLS - len(missing)


def test_an_extra_row_of_marks_does_not_move_the_grid_and_shows_as_outside() -> None:
    true = _camera_grid(20, 10)
    h = grid_homography(true)
    centres = cell_centres(h)
    extra = cv2.perspectiveTransform(np.array([[c + 0.5, -0.5] for c in range(3)], np.float64).reshape(-1, 1, 2), h).reshape(-1, 2)
    fit = fit_window(_centres(np.concatenate([centres, extra]), np.concatenate([np.full(20, 0.9), np.full(3, 0.4)])))
    assert fit is not None
    assert _corner_error(fit.corners, true) < 0.05
    assert fit.outside == 3
    assert fit.confidence < fit.seen / 20


def test_scattered_points_form_no_window() -> None:
    rng = np.random.default_rng(3)
    assert fit_window(_centres(rng.uniform(0, 1000, (30, 2)))) is None
    assert fit_window(_centres(rng.uniform(0, 1000, (5, 2)))) is None


@pytest.mark.parametrize("size", [(1600, 1200), (900, 1600), (160, 128)])
def test_the_input_map_and_the_targets_agree(size: tuple[int, int]) -> None:
    image = np.zeros((size[1], size[0], 3), np.uint8)
    batch, to_photo = locate_input(image)
    assert batch.shape == (1, 3, LOCATE_SIZE[1], LOCATE_SIZE[0])
    corners_photo = np.array([[0.2, 0.2], [0.8, 0.25], [0.75, 0.8], [0.25, 0.75]]) * size
    corners_in = cv2.perspectiveTransform(corners_photo.reshape(-1, 1, 2), np.linalg.inv(to_photo)).reshape(4, 2)
    heat, mask = locate_targets(corners_in)
    peaks, _ = find_peaks(heat, 0.5)
    assert len(peaks) == ROWS * COLS
    back = cv2.perspectiveTransform(peaks.reshape(-1, 1, 2), to_photo @ output_to_input()).reshape(-1, 2)
    true = cell_centres(grid_homography(corners_photo))
    pitch = np.linalg.norm(corners_photo[1] - corners_photo[0]) / COLS
    assert max(np.linalg.norm(true - p, axis=1).min() for p in back) < 0.12 * pitch
    assert 0.3 < mask.mean() < 0.5 if size[0] > size[1] else mask.mean() > 0.1
