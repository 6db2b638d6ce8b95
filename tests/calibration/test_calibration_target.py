"""The printable target: drawn to scale, findable, saved as PNG or PDF (calibration/target.py)."""

from __future__ import annotations

import re
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from calibration import CalibrationError, Target
from calibration.camera import find_target
from calibration.target import render_target, save_target


def test_rendered_target_is_found_at_its_printed_scale() -> None:
    target = Target(columns=9, rows=6, square_mm=25.0)
    dpi = 100
    page = render_target(target, dpi)
    assert page.shape == (round(210 * dpi / 25.4), round(297 * dpi / 25.4))  # A4 landscape
    corners = find_target(np.dstack([page] * 3), target, "page.png").image_points
    steps = np.linalg.norm(np.diff(corners.reshape(6, 9, 2), axis=1), axis=2)
    assert steps.mean() == pytest.approx(25.0 * dpi / 25.4, abs=0.2)


def test_rendered_charuco_page_shows_every_corner_at_scale() -> None:
    target = Target(kind="charuco")
    page = render_target(target, 100)
    view = find_target(np.dstack([page] * 3), target, "charuco.png")
    assert sorted(view.ids.tolist()) == list(range(54))
    order = np.argsort(view.ids)
    steps = np.linalg.norm(np.diff(view.image_points[order].reshape(6, 9, 2), axis=1), axis=2)
    assert steps.mean() == pytest.approx(25.0 * 100 / 25.4, abs=0.3)


def test_bigger_targets_get_a_bigger_page() -> None:
    page = render_target(Target(columns=13, rows=8, square_mm=30.0), 72)
    height_mm, width_mm = (side * 25.4 / 72 for side in page.shape)
    assert width_mm == pytest.approx(14 * 30 + 20, abs=1) and height_mm > 210


@pytest.mark.parametrize("suffix", [".png", ".PDF"])
def test_saved_target_keeps_its_scale(suffix: str, tmp_path: Path) -> None:
    path = save_target(tmp_path / f"target{suffix}", Target(), dpi=100)
    if suffix == ".png":
        with Image.open(path) as image:
            assert image.info["dpi"] == pytest.approx((100, 100), abs=0.01)
    else:
        box = re.search(rb"/MediaBox \[ 0 0 ([\d.]+) ([\d.]+) \]", path.read_bytes())
        assert box and float(box[1]) == pytest.approx(297 / 25.4 * 72, abs=1) and float(box[2]) == pytest.approx(210 / 25.4 * 72, abs=1)


@pytest.mark.parametrize(
    "kwargs, expectation",
    [
        ({}, nullcontext()),
        ({"columns": 2}, pytest.raises(CalibrationError, match="target columns: expected 3-40 inner corners, got 2")),
        ({"rows": 41}, pytest.raises(CalibrationError, match="target rows")),
        ({"square_mm": 0.5}, pytest.raises(CalibrationError, match="square_mm: expected 1-500 mm")),
        ({"kind": "charuco"}, nullcontext()),
        ({"kind": "charuco", "marker_mm": 15.0, "dictionary": "DICT_4X4_100"}, nullcontext()),
        (
            {"kind": "circles"},
            pytest.raises(CalibrationError, match="target kind: expected one of chessboard, charuco"),
        ),
        (
            {"kind": "charuco", "marker_mm": 25.0},
            pytest.raises(CalibrationError, match="marker_mm: expected less than the square"),
        ),
        ({"kind": "charuco", "dictionary": "DICT_9X9"}, pytest.raises(CalibrationError, match="target dictionary")),
        (
            {"kind": "charuco", "columns": 20, "rows": 12, "dictionary": "DICT_4X4_100"},
            pytest.raises(CalibrationError, match="136 markers needed, DICT_4X4_100 has 100"),
        ),
    ],
)
def test_target_checks_its_numbers(kwargs, expectation) -> None:
    with expectation:
        target = Target(**kwargs)
        assert Target.from_json(target.to_json()) == target


@pytest.mark.parametrize(
    "name, dpi, message",
    [
        ("t.jpg", 300, r"t\.jpg: expected a \.png or \.pdf file name, got '\.jpg'"),
        ("t.png", 20, "dpi: expected 72-1200, got 20"),
    ],
)
def test_bad_target_requests(name: str, dpi: int, message: str, tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match=message):
        save_target(tmp_path / name, Target(), dpi)


def test_object_points_are_in_millimetres() -> None:
    points = Target(columns=4, rows=3, square_mm=20.0).object_points()
    assert points.shape == (12, 3) and points.dtype == np.float32
    assert points[0].tolist() == [20.0, 20.0, 0.0] and points[5].tolist() == [40.0, 40.0, 0.0] and points[-1].tolist() == [80.0, 60.0, 0.0]
