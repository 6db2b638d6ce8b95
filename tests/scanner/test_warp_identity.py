"""The one shrink-then-warp (``scanner.geometry.shrink_then_warp``) gives bit-identical pixels to each warp it replaced.

The shipped models were trained on each old warp's exact pixels, so the old formulas are frozen
below, written out as they stood before #15's clean-up, and compared byte for byte on random
photos and quadrilaterals, small ones (no reduction) and large ones (reduced first). One exception:
the tile crops of a reduced palace are now reduced quickly (``scanner.geometry.quick_reduce``: bilinear
under twofold, in blocks first beyond, for 12 MP photos); they are checked to stay near the old pixels.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from scanner.alhambra.classifier import CROP_MARGIN
from scanner.alhambra.lattice import local_pitch
from scanner.alhambra.tiles import CROP_PX, crop_cells
from scanner.geometry import PixelCentres, Shrunk, cell_square, project, shrink_photo, shrink_then_warp, warp_to_rectangle
from scanner.sagrada.cells import COLS, MARGIN, PITCH_PX, ROWS, rectify_grid
from scanner.sagrada.grid import PATCH_PX, patch_homography, reduced_source, refiner_patch, warp_reduced

CASES = 24


# ------------------------------------------------------------------------------------ frozen formulas


def old_rectify_grid(image_rgb: np.ndarray, corners: np.ndarray, pitch_px: int = PITCH_PX, margin: float = MARGIN) -> np.ndarray:
    """``scanner.sagrada.cells.rectify_grid`` before the merge (the dice model's crops)."""
    corners = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    margin_px = margin * pitch_px
    width, height = COLS * pitch_px + 2 * margin_px, ROWS * pitch_px + 2 * margin_px
    target = np.array(
        [[margin_px, margin_px], [width - margin_px, margin_px], [width - margin_px, height - margin_px], [margin_px, height - margin_px]],
        dtype=np.float64,
    )
    to_rect = cv2.getPerspectiveTransform(corners.astype(np.float32), target.astype(np.float32)).astype(np.float64)
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    scale = max(sides[0] / (COLS * pitch_px), sides[2] / (COLS * pitch_px), sides[1] / (ROWS * pitch_px), sides[3] / (ROWS * pitch_px))
    source = image_rgb
    offset = np.eye(3)
    if scale > 1.6:
        out_w, out_h = int(round(width)), int(round(height))
        back = np.linalg.inv(to_rect)
        box = cv2.perspectiveTransform(np.array([[[0, 0]], [[out_w, 0]], [[out_w, out_h]], [[0, out_h]]], np.float64), back).reshape(-1, 2)
        x0, y0 = np.floor(box.min(axis=0) - 2).astype(int).clip(0, None)
        x1, y1 = np.ceil(box.max(axis=0) + 2).astype(int)
        x1, y1 = min(x1, image_rgb.shape[1]), min(y1, image_rgb.shape[0])
        if x1 - x0 > 4 and y1 - y0 > 4:
            factor = 1.0 / (scale / 1.2)
            region = image_rgb[y0:y1, x0:x1]
            new_w, new_h = max(2, int(round(region.shape[1] * factor))), max(2, int(round(region.shape[0] * factor)))
            source = cv2.resize(region, (new_w, new_h), interpolation=cv2.INTER_AREA)
            sx, sy = new_w / region.shape[1], new_h / region.shape[0]
            offset = np.array([[sx, 0, -x0 * sx], [0, sy, -y0 * sy], [0, 0, 1]])
    warp = to_rect @ np.linalg.inv(offset)
    return cv2.warpPerspective(
        source, warp, (int(round(width)), int(round(height))), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def old_reduced_source(
    image_rgb: np.ndarray, to_out: np.ndarray, size: tuple[int, int], whole: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``scanner.sagrada.grid.reduced_source`` before the merge (the refiner's patches)."""
    width, height = size
    back = np.linalg.inv(to_out)
    box = cv2.perspectiveTransform(np.array([[[0, 0]], [[width, 0]], [[width, height]], [[0, height]]], np.float64), back).reshape(-1, 2)
    span = box.max(axis=0) - box.min(axis=0)
    scale = max(span[0] / width, span[1] / height)
    if scale > 1.6:
        x0, y0 = np.floor(box.min(axis=0) - 2).astype(int).clip(0, None)
        x1 = int(min(np.ceil(box[:, 0].max() + 2), image_rgb.shape[1]))
        y1 = int(min(np.ceil(box[:, 1].max() + 2), image_rgb.shape[0]))
        if whole:
            x0, y0, x1, y1 = 0, 0, image_rgb.shape[1], image_rgb.shape[0]
        if x1 - x0 > 4 and y1 - y0 > 4:
            factor = 1.2 / scale
            region = image_rgb[y0:y1, x0:x1]
            new_w, new_h = max(2, int(round(region.shape[1] * factor))), max(2, int(round(region.shape[0] * factor)))
            source = cv2.resize(region, (new_w, new_h), interpolation=cv2.INTER_AREA)
            sx, sy = new_w / region.shape[1], new_h / region.shape[0]
            offset = np.array([[sx, 0, -x0 * sx + 0.5 * sx - 0.5], [0, sy, -y0 * sy + 0.5 * sy - 0.5], [0, 0, 1]])
            return source, offset
    return image_rgb, np.eye(3)


def old_warp_reduced(image_rgb: np.ndarray, to_out: np.ndarray, size: tuple[int, int], border: int, whole: bool = False) -> np.ndarray:
    """``scanner.sagrada.grid.warp_reduced`` before the merge."""
    source, offset = old_reduced_source(image_rgb, to_out, size, whole)
    return cv2.warpPerspective(source, to_out @ np.linalg.inv(offset), size, flags=cv2.INTER_LINEAR, borderMode=border)


def old_crop_cells(image_rgb: np.ndarray, grid_to_image: np.ndarray, cells: list[tuple[float, float]], size: int = CROP_PX) -> np.ndarray:
    """``scanner.alhambra.tiles.crop_cells`` before the merge (the tiles model's crops)."""
    centres = np.asarray(cells, dtype=np.float64)
    homography = np.asarray(grid_to_image, dtype=np.float64)
    reach = np.concatenate([centres + [dx, dy] for dx in (-1, 1) for dy in (-1, 1)])
    spots = cv2.perspectiveTransform(reach.reshape(-1, 1, 2), homography).reshape(-1, 2)
    x0, y0 = np.clip(np.floor(spots.min(axis=0)).astype(int), 0, [image_rgb.shape[1] - 1, image_rgb.shape[0] - 1])
    x1, y1 = np.clip(np.ceil(spots.max(axis=0)).astype(int), [x0 + 1, y0 + 1], [image_rgb.shape[1], image_rgb.shape[0]])
    image = image_rgb[y0:y1, x0:x1]
    homography = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], dtype=np.float64) @ homography
    pitch = local_pitch(homography, centres)
    shrink = float(np.median(pitch)) / (size * 1.25)
    if shrink > 1.2:
        factor = 1.0 / shrink
        small = cv2.resize(
            image, (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor))), interpolation=cv2.INTER_AREA
        )
        homography = np.diag([small.shape[1] / image.shape[1], small.shape[0] / image.shape[0], 1.0]) @ homography
        image = small
    half = 0.5 + CROP_MARGIN
    target = np.array([[0, 0], [size, 0], [size, size], [0, size]], dtype=np.float32)
    crops = np.empty((len(centres), size, size, 3), dtype=np.uint8)
    for index, (x, y) in enumerate(centres):
        source = project(cell_square(x, y, half), homography).astype(np.float32)
        warp = cv2.getPerspectiveTransform(source, target)
        crops[index] = cv2.warpPerspective(image, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return crops


def old_warp_to_rectangle(image_rgb: np.ndarray, corners: np.ndarray, width_px: int, height_px: int) -> np.ndarray:
    """``scanner.geometry.warp_to_rectangle`` before the merge."""
    target = np.array([[0, 0], [width_px, 0], [width_px, height_px], [0, height_px]], dtype=np.float32)
    forward = cv2.getPerspectiveTransform(np.asarray(corners, dtype=np.float32), target)
    return cv2.warpPerspective(image_rgb, forward, (width_px, height_px), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


# ------------------------------------------------------------------------------------ random cases


def random_photo(rng: np.random.Generator) -> np.ndarray:
    """Noise plus smooth shading: every pixel differs, so any shifted sample or rounding shows."""
    height, width = int(rng.integers(300, 1400)), int(rng.integers(300, 1400))
    noise = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    return cv2.GaussianBlur(noise, (0, 0), float(rng.uniform(0.3, 3.0)))


def random_quad(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """A convex-ish TL, TR, BR, BL quadrilateral of random size, sometimes reaching past the photo's edge."""
    height, width = image.shape[:2]
    span = float(np.exp(rng.uniform(np.log(0.04), np.log(1.1)))) * min(width, height)  # small (not reduced) to large
    centre = rng.uniform([0.2 * width, 0.2 * height], [0.8 * width, 0.8 * height])
    base = np.array([[-1, -0.8], [1, -0.8], [1, 0.8], [-1, 0.8]]) * span / 2
    angle = float(rng.uniform(-0.4, 0.4))
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return (base @ rotation.T + centre + rng.normal(0, span * 0.04, (4, 2))).astype(np.float64)


@pytest.mark.parametrize("seed", range(CASES))
def test_rectify_grid_matches_the_dice_models_warp(seed: int) -> None:
    rng = np.random.default_rng(seed)
    image = random_photo(rng)
    corners = random_quad(rng, image)
    rectified, _ = rectify_grid(image, corners)
    assert rectified.tobytes() == old_rectify_grid(image, corners).tobytes()


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("border", [cv2.BORDER_CONSTANT, cv2.BORDER_REPLICATE])
def test_warp_reduced_matches_the_refiners_warp(seed: int, whole: bool, border: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    image = random_photo(rng)
    to_patch = patch_homography(random_quad(rng, image))
    size = (PATCH_PX, PATCH_PX)
    new = warp_reduced(image, to_patch, size, border=border, reduced=reduced_source(image, to_patch, size, whole=whole))
    assert new.tobytes() == old_warp_reduced(image, to_patch, size, border, whole).tobytes()


@pytest.mark.parametrize("seed", range(CASES))
def test_refiner_patch_matches_the_refiners_warp(seed: int) -> None:
    rng = np.random.default_rng(2000 + seed)
    image = random_photo(rng)
    guess = random_quad(rng, image)
    patch, _ = refiner_patch(image, guess)
    assert patch.tobytes() == old_warp_reduced(image, patch_homography(guess), (PATCH_PX, PATCH_PX), cv2.BORDER_CONSTANT).tobytes()


@pytest.mark.parametrize("seed", range(CASES))
def test_crop_cells_matches_the_tiles_models_warp(seed: int) -> None:
    rng = np.random.default_rng(3000 + seed)
    image = random_photo(rng)
    quad = random_quad(rng, image)
    cols, rows = int(rng.integers(2, 7)), int(rng.integers(2, 7))
    grid = np.array([[-0.5, -0.5], [cols - 0.5, -0.5], [cols - 0.5, rows - 0.5], [-0.5, rows - 0.5]], np.float32)
    grid_to_image = cv2.getPerspectiveTransform(grid, quad.astype(np.float32)).astype(np.float64)
    cells = [(float(x), float(y)) for x in range(cols) for y in range(rows) if rng.random() < 0.8] or [(0.0, 0.0)]
    new, old = crop_cells(image, grid_to_image, cells), old_crop_cells(image, grid_to_image, cells)
    if tile_shrink(grid_to_image, cells) <= 1.2:  # not reduced: the very pixels the model was trained on
        assert new.tobytes() == old.tobytes()
    else:  # reduced: under twofold bilinearly (``quick_reduce``), more in blocks first; near the old pixels
        difference = new.astype(np.int16) - old.astype(np.int16)
        assert abs(float(difference.mean())) < 0.3  # no shift, no brightening
        # grey levels of 255 on noise blurred by as little as 0.3 px (12 MP renders' crops: 0.3-0.6)
        assert float(np.abs(difference).mean()) < 6.0


def tile_shrink(grid_to_image: np.ndarray, cells: list[tuple[float, float]]) -> float:
    """How much ``crop_cells`` reduces the photo before it warps (over 1.2: it does)."""
    return float(np.median(local_pitch(grid_to_image, np.asarray(cells, dtype=np.float64)))) / (CROP_PX * 1.25)


@pytest.mark.parametrize("seed", range(CASES))
def test_warp_to_rectangle_matches_its_old_warp(seed: int) -> None:
    rng = np.random.default_rng(4000 + seed)
    image = random_photo(rng)
    corners = random_quad(rng, image)
    width, height = int(rng.integers(20, 600)), int(rng.integers(20, 600))
    rectified, _ = warp_to_rectangle(image, corners, width, height)
    assert rectified.tobytes() == old_warp_to_rectangle(image, corners, width, height).tobytes()


# ------------------------------------------------------------------------------------ the settings themselves


@pytest.mark.parametrize(
    ("centres", "expected_shift"),
    [(PixelCentres.CORNERS, 0.0), (PixelCentres.CENTRES, 0.5 * 0.5 - 0.5)],
)
def test_pixel_centres_set_the_half_pixel_offset(centres: PixelCentres, expected_shift: float) -> None:
    shrunk = shrink_photo(np.zeros((40, 60, 3), np.uint8), box=(10, 20, 50, 40), factor=0.5, centres=centres)
    assert shrunk.image_rgb.shape == (10, 20, 3)
    assert np.allclose(
        project([[10, 20], [12, 24]], shrunk.from_photo), [[expected_shift, expected_shift], [1 + expected_shift, 2 + expected_shift]]
    )


@pytest.mark.parametrize(
    ("to_out", "quad"),
    [(None, None), (np.eye(3), np.zeros((4, 2)))],
)
def test_shrink_then_warp_wants_exactly_one_warp(to_out: np.ndarray | None, quad: np.ndarray | None) -> None:
    with pytest.raises(ValueError, match="exactly one of to_out and quad"):
        shrink_then_warp(np.zeros((10, 10, 3), np.uint8), (5, 5), to_out=to_out, quad=quad)


def test_shrunk_rejects_a_flat_image() -> None:
    with pytest.raises(ValueError, match=r"image_rgb: expected \(H, W, C\)"):
        Shrunk(np.zeros((10, 10), np.uint8), np.eye(3))


@pytest.mark.parametrize("seed", range(6))
def test_crop_cells_of_a_big_photo_stay_near_the_tiles_models_warp(seed: int) -> None:
    """Tiles spanning over twice the crop are averaged in blocks first (``resize_area``): near, not equal, to the old pixels."""
    rng = np.random.default_rng(5000 + seed)
    image = cv2.GaussianBlur(rng.integers(0, 256, (1500, 2000, 3), dtype=np.uint8), (0, 0), float(rng.uniform(1.0, 3.0)))
    cols, rows = int(rng.integers(3, 6)), int(rng.integers(2, 5))
    pitch = float(rng.uniform(2.2, 4.0)) * CROP_PX * 1.25  # a tile spans 2.2-4 times what the classifier wants
    x0, y0 = float(rng.uniform(0, 2000 - cols * pitch)), float(rng.uniform(0, 1500 - rows * pitch))
    grid = np.array([[-0.5, -0.5], [cols - 0.5, -0.5], [cols - 0.5, rows - 0.5], [-0.5, rows - 0.5]], np.float32)
    quad = np.array([[x0, y0], [x0 + cols * pitch, y0], [x0 + cols * pitch, y0 + rows * pitch], [x0, y0 + rows * pitch]], np.float32)
    grid_to_image = cv2.getPerspectiveTransform(grid, quad).astype(np.float64)
    cells = [(float(x), float(y)) for x in range(cols) for y in range(rows)]
    new, old = crop_cells(image, grid_to_image, cells).astype(np.int16), old_crop_cells(image, grid_to_image, cells).astype(np.int16)
    assert abs(float((new - old).mean())) < 0.2  # no shift, no brightening
    assert float(np.abs(new - old).mean()) < 4.0  # grey levels of 255, on noise blurred by 1-3 px (the worst case: photos differ less)
