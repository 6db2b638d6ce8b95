"""End to end: the Sagrada grid is found from its cells (a photo cut to the grid, guide lines drawn over it),
and photos that show no window are refused or flagged."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner import BoardNotFoundError
from scanner.photo import Photo

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_images"
REAL = ROOT.parent / "shared" / "realdata" / "sagrada-hejmsdz"


@pytest.fixture(scope="module")
def scanner(make_scanner):
    return make_scanner()


def _sample(stem: str) -> tuple[np.ndarray, dict]:
    image = cv2.cvtColor(cv2.imread(str(SAMPLES / f"{stem}.jpg")), cv2.COLOR_BGR2RGB)
    return image, json.loads((SAMPLES / f"{stem}.json").read_text())


def _pitch(corners: np.ndarray) -> float:
    return float(np.linalg.norm(corners[1] - corners[0]) / 5)


@pytest.mark.parametrize("board", ["board1.jpg", "board2.jpg"])
def test_a_real_photo_cut_to_the_grid_is_read_as_the_whole_image(scanner, board):
    if not (REAL / board).is_file():
        pytest.skip("the real photos are not here (../shared/realdata)")
    small = cv2.cvtColor(cv2.imread(str(REAL / board)), cv2.COLOR_BGR2RGB)
    image = cv2.resize(small, (small.shape[1] * 3, small.shape[0] * 3), interpolation=cv2.INTER_CUBIC)  # as a phone app saves it
    height, width = image.shape[:2]
    result = scanner.scan(Photo.from_array(image, board), "sagrada")
    corners = np.array(result.player["scan"]["corners"], np.float64)
    whole = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64) - 0.5
    pitch = width / 5
    errors = [np.abs(np.roll(corners, k, axis=0) - whole).max() / pitch for k in (0, 2)]
    assert min(errors) < 0.25  # the grid is the whole image (either way up: the photo shows no top)


def test_guide_lines_drawn_over_the_photo_leave_the_grid_in_place(scanner):
    image, truth = _sample("sagrada_straight_01")
    lined = image.copy()
    height, width = lined.shape[:2]
    for k in (1, 2):  # another app's rule-of-thirds guides and a frame, thin and white, across the board
        cv2.line(lined, (width * k // 3, 0), (width * k // 3, height), (255, 255, 255), 3, cv2.LINE_AA)
        cv2.line(lined, (0, height * k // 3), (width, height * k // 3), (255, 255, 255), 3, cv2.LINE_AA)
    cv2.rectangle(lined, (width // 5, height // 6), (width * 4 // 5, height * 5 // 6), (240, 240, 240), 3, cv2.LINE_AA)
    result = scanner.scan(Photo.from_array(lined, "lined.jpg"), "sagrada")
    corners = np.array(result.player["scan"]["corners"], np.float64)
    true = np.array(truth["render"]["corners"], np.float64)
    assert np.abs(corners - true).max() < 0.2 * _pitch(true)
    assert not any("grid" in reason for reason in result.review.reasons)  # and the scan is sure of its grid


def test_a_board_without_its_frame_is_found_from_its_cells(scanner):
    image, truth = _sample("sagrada_tilted_02")
    true = np.array(truth["render"]["corners"], np.float64)
    pitch = _pitch(true)
    # keep the grid and a sliver of the card around it; the frame, the strip and the table become plain grey
    keep = np.zeros(image.shape[:2], np.uint8)
    centre = true.mean(axis=0)
    grown = centre + (true - centre) * (1 + 0.3 * pitch / np.linalg.norm(true - centre, axis=1, keepdims=True))
    cv2.fillPoly(keep, [np.round(grown).astype(np.int32)], 255)
    plain = np.where(keep[..., None] > 0, image, np.uint8(128))
    result = scanner.scan(Photo.from_array(plain, "frameless.jpg"), "sagrada")
    corners = np.array(result.player["scan"]["corners"], np.float64)
    errors = [np.abs(np.roll(corners, k, axis=0) - true).max() / pitch for k in (0, 2)]
    assert min(errors) < 0.2


def test_a_grayscale_photo_is_refused_saying_it_has_no_colour(scanner):
    image, _ = _sample("sagrada_straight_01")
    grey = cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    with pytest.raises(BoardNotFoundError, match="no colour"):
        scanner.scan(Photo.from_array(grey, "grey.jpg"), "sagrada")


@pytest.mark.parametrize("stem", ["alhambra_01_straight", "alhambra_03_tilted"])
def test_an_alhambra_palace_is_not_taken_for_a_window(scanner, stem):
    image, _ = _sample(stem)
    try:
        result = scanner.scan(Photo.from_array(image, f"{stem}.jpg"), "sagrada")
    except BoardNotFoundError:
        return
    assert result.review is not None and result.review.needed
