"""Camera calibration on synthetic photos with known answers (calibration/camera.py)."""

from __future__ import annotations

from contextlib import nullcontext

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration import CalibrationError, CameraModel, Target, TargetNotFoundError
from calibration.camera import (
    MIN_CHARUCO_CORNERS,
    calibrate_camera,
    distort_points,
    find_target,
    undistort_image,
    undistort_points,
)
from calibration.synthetic import random_poses, render_view
from scoring.errors import Remedy

TARGET = Target(columns=9, rows=6, square_mm=25.0)
BARREL = CameraModel(640, 480, 560.0, 555.0, 330.0, 238.0, (-0.25, 0.08, 0.001, -0.0005, 0.0))
PINCUSHION = CameraModel(640, 480, 700.0, 705.0, 312.0, 251.0, (0.12, -0.05, 0.0, 0.0, 0.0))

# Tolerances the fit must meet on 10 synthetic 640x480 views.
FOCAL_TOLERANCE = 0.01  # relative, fx and fy
CENTRE_TOLERANCE_PX = 0.01 * 640  # cx and cy, 1 % of the width
K1_TOLERANCE = 0.02
MAX_RMS_PX = 0.5


def _views(camera: CameraModel, count: int, seed: int, **pose_options) -> list[tuple[str, np.ndarray]]:
    poses = random_poses(TARGET, camera, count, seed, **pose_options)
    return [(f"view{index:02d}.png", render_view(TARGET, camera, rvec, tvec)) for index, (rvec, tvec) in enumerate(poses)]


def _corner_errors(found: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-corner distances, in whichever of the two numbering directions the finder used."""
    truth = truth.reshape(-1, 2)
    forward = np.linalg.norm(found - truth, axis=1)
    backward = np.linalg.norm(found[::-1] - truth, axis=1)
    return forward if forward.mean() <= backward.mean() else backward


@pytest.fixture(scope="module")
def barrel_views() -> list[tuple[str, np.ndarray]]:
    return _views(BARREL, 10, seed=1)


@pytest.mark.parametrize("truth, seed", [(BARREL, 1), (PINCUSHION, 2)], ids=["barrel", "pincushion"])
def test_fit_recovers_the_known_camera(truth: CameraModel, seed: int, barrel_views) -> None:
    views = barrel_views if truth is BARREL else _views(truth, 10, seed)
    fit = calibrate_camera(views, TARGET)
    camera = fit.camera
    assert abs(camera.fx / truth.fx - 1) < FOCAL_TOLERANCE
    assert abs(camera.fy / truth.fy - 1) < FOCAL_TOLERANCE
    assert abs(camera.cx - truth.cx) < CENTRE_TOLERANCE_PX
    assert abs(camera.cy - truth.cy) < CENTRE_TOLERANCE_PX
    assert abs(camera.distortion[0] - truth.distortion[0]) < K1_TOLERANCE
    assert camera.rms_px < MAX_RMS_PX
    assert camera.views == 10 and len(fit.view_rms_px) == 10 and fit.skipped == ()
    assert (camera.width_px, camera.height_px) == (640, 480)


def test_found_corners_match_the_projection(barrel_views) -> None:
    poses = random_poses(TARGET, BARREL, 10, seed=1)
    rvec, tvec = poses[3]
    truth, _ = cv2.projectPoints(TARGET.object_points(), rvec, tvec, BARREL.matrix(), np.array(BARREL.distortion))
    found = find_target(barrel_views[3][1], TARGET, "view03.png").image_points
    errors = _corner_errors(found, truth)
    assert errors.mean() < 0.2 and errors.max() < 0.6


def test_large_photos_are_searched_small_and_refined_full_size() -> None:
    camera = CameraModel(2000, 1500, 1750.0, 1750.0, 1000.0, 750.0, (-0.1, 0.0, 0.0, 0.0, 0.0))
    rvec, tvec = random_poses(TARGET, camera, 1, seed=5)[0]
    image = render_view(TARGET, camera, rvec, tvec, supersample=1)
    truth, _ = cv2.projectPoints(TARGET.object_points(), rvec, tvec, camera.matrix(), np.array(camera.distortion))
    found = find_target(image, TARGET, "big.jpg").image_points
    assert _corner_errors(found, truth).mean() < 0.5


def test_undistorted_photo_shows_straight_projection(barrel_views) -> None:
    rvec, tvec = random_poses(TARGET, BARREL, 10, seed=1)[0]
    straight = undistort_image(barrel_views[0][1], BARREL)
    ideal, _ = cv2.projectPoints(TARGET.object_points(), rvec, tvec, BARREL.matrix(), np.zeros(5))
    found = find_target(straight, TARGET, "straight.png").image_points
    assert _corner_errors(found, ideal).mean() < 0.3


def test_undistort_returns_a_new_array_and_leaves_input(barrel_views) -> None:
    image = barrel_views[1][1]
    before = image.copy()
    out = undistort_image(image, BARREL)
    assert out is not image and out.shape == image.shape and out.dtype == np.uint8
    assert np.array_equal(image, before)


def test_portrait_photo_is_undistorted_in_the_sensor_frame(barrel_views) -> None:
    landscape = barrel_views[2][1]
    portrait = np.ascontiguousarray(np.rot90(landscape, -1))  # turned 90 deg clockwise for display
    expected = np.rot90(undistort_image(landscape, BARREL), -1)
    assert np.array_equal(undistort_image(portrait, BARREL), expected)


def test_half_size_photo_uses_the_scaled_camera(barrel_views) -> None:
    small = cv2.resize(barrel_views[4][1], (320, 240), interpolation=cv2.INTER_AREA)
    rvec, tvec = random_poses(TARGET, BARREL, 10, seed=1)[4]
    ideal, _ = cv2.projectPoints(TARGET.object_points(), rvec, tvec, BARREL.matrix(), np.zeros(5))
    found = find_target(undistort_image(small, BARREL), TARGET, "small.png").image_points
    assert _corner_errors((found + 0.5) * 2 - 0.5, ideal).mean() < 0.6


@settings(max_examples=40, deadline=None)
@given(
    x=st.floats(0, 639),
    y=st.floats(0, 479),
    size=st.sampled_from([(640, 480), (320, 240), (480, 640), (1280, 960)]),
)
def test_distort_points_inverts_undistort_points(x: float, y: float, size: tuple[int, int]) -> None:
    point = np.array([[x * size[0] / 640, y * size[1] / 480]])
    there = undistort_points(point, BARREL, size)
    back = distort_points(there, BARREL, size)
    assert np.allclose(back, point, atol=0.01)


def test_points_follow_the_image_when_turned(barrel_views) -> None:
    landscape_point = np.array([[100.0, 60.0]])
    portrait_point = np.array([[480 - 1 - 60.0, 100.0]])  # the same pixel after a clockwise turn
    a = undistort_points(landscape_point, BARREL, (640, 480))[0]
    b = undistort_points(portrait_point, BARREL, (480, 640))[0]
    assert np.allclose(b, [480 - 1 - a[1], a[0]], atol=1e-6)


def test_other_aspect_ratio_is_refused() -> None:
    with pytest.raises(CalibrationError, match=r"500x500 px .* 640x480"):
        undistort_image(np.zeros((500, 500, 3), np.uint8), BARREL)


@pytest.mark.parametrize(
    "case, expectation",
    [
        ("enough", nullcontext()),
        ("too_few", pytest.raises(CalibrationError, match=r"too few views: .* 4 photo")),
        ("duplicates", pytest.raises(CalibrationError, match=r"views too similar: only 2 distinct")),
        ("flat", pytest.raises(CalibrationError, match=r"views too similar: the focal length")),
        ("blank", pytest.raises(TargetNotFoundError, match=r"^blank\.png: calibration target not found")),
        ("sizes", pytest.raises(CalibrationError, match=r"^odd\.png: 320x240 px, but view00\.png is 640x480")),
    ],
)
def test_unfit_view_sets_are_refused(case: str, expectation, barrel_views) -> None:
    views = list(barrel_views[:6])
    if case == "too_few":
        views = views[:4]
    elif case == "duplicates":
        noisy = [(f"copy{i}.png", np.clip(views[i % 2][1].astype(int) + i, 0, 255).astype(np.uint8)) for i in range(6)]
        views = noisy
    elif case == "flat":
        views = _views(BARREL, 6, seed=3, max_tilt_deg=0.5)
    elif case == "blank":
        views = views + [("blank.png", np.full((480, 640, 3), 128, np.uint8))]
    elif case == "sizes":
        views = views + [("odd.png", np.zeros((240, 320, 3), np.uint8))]
    with expectation:
        fit = calibrate_camera(views, TARGET)
        assert fit.camera.views == 6


def test_skip_missing_drops_photos_without_target(barrel_views) -> None:
    views = list(barrel_views[:6]) + [("blank.png", np.full((480, 640, 3), 128, np.uint8))]
    fit = calibrate_camera(views, TARGET, skip_missing=True)
    assert fit.skipped == ("blank.png",) and fit.camera.views == 6


def test_wrong_target_size_is_not_found(barrel_views) -> None:
    with pytest.raises(TargetNotFoundError, match=r"view00\.png: .*7 x 5 inner-corner"):
        find_target(barrel_views[0][1], Target(columns=7, rows=5), "view00.png")


@settings(max_examples=30, deadline=None)
@given(
    size=st.tuples(st.integers(1, 8000), st.integers(1, 8000)),
    focal=st.floats(1.0, 1e5, allow_nan=False),
    distortion=st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 4 + [st.just(0.0)]),
)
def test_camera_json_round_trips(size, focal, distortion) -> None:
    camera = CameraModel(size[0], size[1], focal, focal * 1.01, size[0] / 2, size[1] / 2, distortion, 0.2, 7, TARGET)
    assert CameraModel.from_json(camera.to_json()) == camera


def test_camera_checks_its_values() -> None:
    with pytest.raises(CalibrationError, match="focal length"):
        CameraModel(640, 480, -1.0, 500.0, 320.0, 240.0)
    with pytest.raises(ValueError, match=r"expected \(H, W, 3\) uint8 RGB"):
        find_target(np.zeros((10, 10), np.uint8), TARGET)


CHARUCO = Target(kind="charuco")


@pytest.fixture(scope="module")
def charuco_views() -> list[tuple[str, np.ndarray]]:
    """Close, partial views: the board runs off the frame, its corners reach the image corners."""
    poses = random_poses(CHARUCO, BARREL, 8, seed=3, fill=0.9, spread=0.35, whole=False)
    return [(f"part{index}.png", render_view(CHARUCO, BARREL, rvec, tvec)) for index, (rvec, tvec) in enumerate(poses)]


def test_charuco_partial_views_recover_the_camera(charuco_views) -> None:
    fit = calibrate_camera(charuco_views, CHARUCO)
    camera = fit.camera
    assert abs(camera.fx / BARREL.fx - 1) < FOCAL_TOLERANCE and abs(camera.fy / BARREL.fy - 1) < FOCAL_TOLERANCE
    assert abs(camera.cx - BARREL.cx) < CENTRE_TOLERANCE_PX and abs(camera.cy - BARREL.cy) < CENTRE_TOLERANCE_PX
    assert abs(camera.distortion[0] - BARREL.distortion[0]) < K1_TOLERANCE
    assert camera.rms_px < MAX_RMS_PX and camera.target == CHARUCO


def test_charuco_corners_are_identified(charuco_views) -> None:
    rvec, tvec = random_poses(CHARUCO, BARREL, 8, seed=3, fill=0.9, spread=0.35, whole=False)[0]
    view = find_target(charuco_views[0][1], CHARUCO, "part0.png")
    assert MIN_CHARUCO_CORNERS <= len(view.ids) < 54  # partly in view
    truth, _ = cv2.projectPoints(view.object_points(CHARUCO), rvec, tvec, BARREL.matrix(), np.array(BARREL.distortion))
    assert np.linalg.norm(view.image_points - truth.reshape(-1, 2), axis=1).mean() < 0.3


def test_charuco_board_is_not_a_chessboard(charuco_views) -> None:
    with pytest.raises(TargetNotFoundError, match=r"part1\.png: .*ChArUco board .*at least a third"):
        find_target(np.full((480, 640, 3), 200, np.uint8), CHARUCO, "part1.png")


def test_charuco_photo_searched_as_chessboard_says_so(charuco_views) -> None:
    with pytest.raises(TargetNotFoundError, match=r"part2\.png: .*chessboard.*ArUco markers: .*ChArUco target kind") as caught:
        find_target(charuco_views[2][1], TARGET, "part2.png")
    assert caught.value.remedy is Remedy.USE_CHARUCO and "--" not in str(caught.value)  # the CLI words it as --kind charuco


@pytest.mark.parametrize(
    ("extra", "remedy"),
    [("blank", Remedy.SKIP_MISSING), ("charuco", Remedy.USE_CHARUCO)],
)
def test_photos_without_the_target_name_a_remedy_not_a_flag(barrel_views, charuco_views, extra: str, remedy: Remedy) -> None:
    odd = ("odd.png", np.full((480, 640, 3), 128, np.uint8) if extra == "blank" else charuco_views[2][1])
    with pytest.raises(TargetNotFoundError, match=r"^odd\.png: calibration target not found") as caught:
        calibrate_camera([*barrel_views[:6], odd], TARGET)
    assert caught.value.remedy is remedy and remedy.words in str(caught.value) and "--" not in str(caught.value)
