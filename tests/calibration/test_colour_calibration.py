"""Colour calibration: casts applied to a board-like render are measured and removed (calibration/colour.py)."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from calibration import CalibrationError, ColourCorrection
from calibration.colour import apply_colour, estimate_colour, preview_image, srgb_to_linear
from calibration.synthetic import BOARD_WHITE, cast_colour, window_board
from scoring.errors import Remedy

WHITE = BOARD_WHITE
WHITE_CELL = (10, 10, 40, 40)  # x, y, w, h of the top-left cell, always white

# Stated tolerance: after correction, mean absolute error in 0-255 units over the pixels the
# cast did not clip, and its 99th percentile.
MAX_MAE = 1.5
MAX_P99 = 5.0

CASTS = {
    "warm tungsten": (1.25, 1.0, 0.7),
    "cool shade": (0.8, 0.95, 1.25),
    "one stop under": (0.5, 0.5, 0.5),
    "green fluorescent": (0.9, 1.2, 0.85),
    "dim and warm": (0.7, 0.55, 0.35),
}


board = window_board


def _errors(original: np.ndarray, cast: np.ndarray, corrected: np.ndarray) -> np.ndarray:
    unclipped = (cast.max(axis=2) < 255) & (cast.min(axis=2) > 0)
    return np.abs(corrected.astype(int) - original.astype(int))[unclipped]


@pytest.mark.parametrize("gains", CASTS.values(), ids=CASTS.keys())
@pytest.mark.parametrize("region", [WHITE_CELL, None], ids=["region", "auto"])
def test_cast_is_removed(gains, region) -> None:
    original = board()
    cast = cast_colour(original, gains)
    correction = estimate_colour(cast, region, level=WHITE, name="cast.png")
    corrected = apply_colour(cast, correction)
    before, after = _errors(original, cast, cast), _errors(original, cast, corrected)
    assert after.mean() < MAX_MAE, (before.mean(), after.mean())
    assert np.percentile(after, 99) < MAX_P99
    assert before.mean() > 4 * after.mean()
    assert np.allclose(correction.gains, 1 / np.array(gains), rtol=0.03)


def test_auto_reference_is_the_white_squares() -> None:
    original = board()
    cast = cast_colour(original, CASTS["warm tungsten"])
    region = estimate_colour(cast, WHITE_CELL, level=WHITE)
    auto = estimate_colour(cast, level=WHITE)
    assert np.allclose(auto.gains, region.gains, rtol=0.02)
    assert "brightest low-saturation" in auto.reference and "region 10,10,40,40" in region.reference


def test_exposure_and_white_balance_split_the_gains() -> None:
    correction = ColourCorrection(gains=(2.0, 2.0, 2.0))
    assert correction.exposure_ev == pytest.approx(1.0)
    assert correction.white_balance == pytest.approx((1.0, 1.0, 1.0))
    warm = ColourCorrection(gains=(0.8, 1.0, 1.4))
    assert float(np.dot([0.2126, 0.7152, 0.0722], warm.white_balance)) == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(grey=st.integers(25, 245), level=st.integers(20, 240))
def test_uniform_grey_reference_reaches_the_level(grey: int, level: int) -> None:
    assume(1 / 8 < srgb_to_linear(level) / srgb_to_linear(grey) < 8)
    image = np.full((20, 20, 3), grey, np.uint8)
    correction = estimate_colour(image, (0, 0, 20, 20), level=level)
    out = apply_colour(image, correction)
    assert np.all(np.abs(out.astype(int) - level) <= 1)


@settings(max_examples=30, deadline=None)
@given(gains=st.tuples(*[st.floats(0.2, 5.0)] * 3), reference=st.text(max_size=20))
def test_colour_json_round_trips(gains, reference) -> None:
    correction = ColourCorrection(gains=gains, reference=reference)
    assert ColourCorrection.from_json(correction.to_json()) == correction


def test_identity_correction_changes_nothing_and_never_mutates() -> None:
    image = board(1)
    before = image.copy()
    out = apply_colour(image, ColourCorrection())
    assert out is not image and np.array_equal(out, image) and np.array_equal(image, before)
    apply_colour(image, ColourCorrection(gains=(2.0, 1.0, 0.5)))
    assert np.array_equal(image, before)


@pytest.mark.parametrize(
    "image, region, expectation",
    [
        (board(), (15, 15, 10, 10), nullcontext()),
        (
            board(),
            (240, 0, 20, 10),
            pytest.raises(CalibrationError, match=r"^p\.png: region 240,0,20,10 is not inside the 250x202"),
        ),
        (board(), (0, 0, 0, 5), pytest.raises(CalibrationError, match="not inside")),
        (
            np.full((50, 50, 3), 255, np.uint8),
            (0, 0, 50, 50),
            pytest.raises(CalibrationError, match=r"over-exposed \(100 % clipped\)"),
        ),
        (np.full((50, 50, 3), 2, np.uint8), (0, 0, 50, 50), pytest.raises(CalibrationError, match="too dark")),
        (
            np.full((50, 50, 3), 255, np.uint8),
            None,
            pytest.raises(CalibrationError, match=r"no white or light grey reference found; mark a white or light grey region by hand$"),
        ),
        (
            np.dstack([np.full((50, 50), 200, np.uint8), np.full((50, 50), 40, np.uint8), np.full((50, 50), 40, np.uint8)]),
            (0, 0, 50, 50),
            pytest.raises(CalibrationError, match="beyond"),
        ),
    ],
    ids=["white ok", "outside", "empty", "clipped", "dark", "auto nothing", "red not grey"],
)
def test_unusable_references_are_refused(image, region, expectation) -> None:
    with expectation:
        estimate_colour(image, region, name="p.png")


def test_gains_are_range_checked() -> None:
    with pytest.raises(CalibrationError, match="colour gains"):
        ColourCorrection(gains=(1.0, 20.0, 1.0))


def test_preview_shows_both_side_by_side() -> None:
    image = board()
    preview = preview_image(image, apply_colour(image, ColourCorrection(gains=(1.2, 1.0, 0.8))), WHITE_CELL)
    assert preview.shape == (202, 2 * 250 + 8, 3) and preview.dtype == np.uint8
    assert not np.array_equal(preview[:, :250], preview[:, 258:])


def test_no_reference_names_the_remedy_not_a_flag() -> None:
    with pytest.raises(CalibrationError) as caught:
        estimate_colour(np.full((50, 50, 3), 255, np.uint8), None, name="white.png")
    assert caught.value.remedy is Remedy.GIVE_REGION and "--" not in str(caught.value)  # the CLI words it as --region x,y,w,h
