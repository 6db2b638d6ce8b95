"""Locating the tiles: the locator net's heatmap and mask, their peaks, and the checks on what it saw."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from scanner.errors import BoardNotFoundError, Remedy
from scanner.geometry import area_resize
from scanner.model import OnnxModel, image_batch
from scanner.photo import Photo

LOCATE_MODEL = "alhambra_locate"
LOCATE_SIZE = (320, 240)  # (width, height) of the detector input, landscape
LOCATE_STRIDE = 4
PEAK_THRESHOLD = 0.35
GOOD_TILE_OUT_PX = 6.0  # a second look enlarges the palace so tiles span about this many output px
TOO_DARK = 12  # mean brightness (0-255) under which a photo is refused as too dark
DIM = 40  # mean brightness under which a photo without any tile found is blamed on the light
BLURRED = 15  # variance of the Laplacian (photo 320 px wide) under which a photo without tiles is blamed on focus ...
EVEN = 4.0  # ... unless it is even at a coarse look (grey levels' spread, 40 px wide): then nothing is there to focus on
HINT = f"retake from above with the whole palace in frame, or {Remedy.SET_CORNERS.words}"


@dataclass(frozen=True)
class Located:
    """One locator pass: heatmap and mask (output px), peaks (output px and photo px), the map between."""

    heat: np.ndarray
    mask: np.ndarray
    peaks: np.ndarray
    heights: np.ndarray
    points: np.ndarray
    to_photo: np.ndarray
    zoom: float


def locate_input(image_rgb: np.ndarray, zoom: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Return the detector batch (1, 3, 240, 320) float32 and the 3x3 map from input px to image px.

    Portrait photos are transposed first so the input is always landscape. ``zoom`` > 1 shrinks
    the photo that much more (tiles too big for the locator), centred on a plain median-colour ground.
    """
    height, width = image_rgb.shape[:2]
    transposed = height > width
    if transposed:
        height, width = width, height
    out_w, out_h = LOCATE_SIZE
    scale = min(out_w / width, out_h / height) / zoom
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    # shrunk as it lies, then turned: a transposed 3 MP photo would be copied whole first (~25 ms);
    # the same input as turning first, but for a grey level's rounding on a few pixels
    small = area_resize(image_rgb, (new_h, new_w) if transposed else (new_w, new_h))
    if transposed:
        small = small.transpose(1, 0, 2)
    canvas = np.zeros((out_h, out_w, 3), dtype=np.uint8)
    x0 = y0 = 0
    if zoom > 1.0:
        canvas[:] = np.median(small.reshape(-1, 3), axis=0).astype(np.uint8)
        x0, y0 = (out_w - new_w) // 2, (out_h - new_h) // 2
    canvas[y0 : y0 + new_h, x0 : x0 + new_w] = small
    batch = image_batch(canvas[None])
    to_image = np.array([[width / new_w, 0, -x0 * width / new_w], [0, height / new_h, -y0 * height / new_h], [0, 0, 1]], dtype=np.float64)
    if transposed:
        to_image = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float64) @ to_image
    return batch, to_image


def find_peaks(heat: np.ndarray, threshold: float = PEAK_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """Return sub-pixel (x, y) local maxima of a heatmap above ``threshold`` and their heights."""
    dilated = cv2.dilate(heat, np.ones((5, 5), np.uint8))
    ys, xs = np.nonzero((heat >= dilated) & (heat > threshold))
    points, scores = [], []
    height, width = heat.shape
    for x, y in zip(xs, ys):
        x0, x1, y0, y1 = max(0, x - 1), min(width, x + 2), max(0, y - 1), min(height, y + 2)
        patch = heat[y0:y1, x0:x1]
        gy, gx = np.mgrid[y0:y1, x0:x1]
        total = float(patch.sum())
        points.append(((gx * patch).sum() / total, (gy * patch).sum() / total))
        scores.append(float(heat[y, x]))
    order = np.argsort(scores)[::-1]
    pts = np.array(points, dtype=np.float64).reshape(-1, 2)[order]
    return pts, np.array(scores, dtype=np.float64)[order]


def search_area(image_rgb: np.ndarray, corners: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The part of the photo to search (``corners`` grown by 10%, or all of it) and its offset in the photo."""
    if corners is None:
        return image_rgb, np.zeros(2)
    x0, y0 = np.floor(np.asarray(corners).min(axis=0)).astype(int)
    x1, y1 = np.ceil(np.asarray(corners).max(axis=0)).astype(int)
    pad = int(0.1 * max(x1 - x0, y1 - y0))
    x0, y0 = max(0, x0 - pad), max(0, y0 - pad)
    x1, y1 = min(image_rgb.shape[1], x1 + pad), min(image_rgb.shape[0], y1 + pad)
    return image_rgb[y0:y1, x0:x1], np.array([x0, y0], dtype=np.float64)


def locate_tiles(model: OnnxModel, search: np.ndarray, offset: np.ndarray, zoom: float) -> Located:
    """Run the locator on ``search`` (at ``offset`` in the photo) shrunk by ``zoom``.

    Raises:
        ModelError: the locator cannot run.
    """
    batch, to_image = locate_input(search, zoom)
    outputs = model.run(batch)
    heat = sigmoid(outputs["heat"][0, 0])
    mask = sigmoid(outputs["mask"][0, 0])
    peaks, heights = find_peaks(heat)
    shift = np.array([[1, 0, offset[0]], [0, 1, offset[1]], [0, 0, 1]])
    to_photo = shift @ to_image @ np.diag([LOCATE_STRIDE, LOCATE_STRIDE, 1.0]) @ np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
    points = cv2.perspectiveTransform(peaks.reshape(-1, 1, 2), to_photo).reshape(-1, 2) if len(peaks) else peaks
    return Located(heat, mask, peaks, heights, points, to_photo, zoom)


def zoom_in(search: np.ndarray, offset: np.ndarray, found: Located, pitch_px: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Arguments for a second locator pass on the palace's area, enlarged so tiles span ~6 output px (None: no area)."""
    rows, cols = np.nonzero(found.mask > 0.5)
    if not len(rows):
        return None
    corners_out = np.array([[cols.min(), rows.min()], [cols.max() + 1, rows.max() + 1]], dtype=np.float64) - 0.5
    box = cv2.perspectiveTransform(corners_out.reshape(-1, 1, 2), found.to_photo).reshape(-1, 2) - offset
    lo, hi = box.min(axis=0), box.max(axis=0)
    grow = np.maximum(0.15 * (hi - lo), pitch_px)
    x0, y0 = np.maximum(np.floor(lo - grow), 0).astype(int)
    x1, y1 = np.minimum(np.ceil(hi + grow), [search.shape[1], search.shape[0]]).astype(int)
    if x1 - x0 < 16 or y1 - y0 < 16:
        return None
    crop = search[y0:y1, x0:x1]
    long_side, short_side = max(crop.shape[:2]), min(crop.shape[:2])
    scale = min(LOCATE_SIZE[0] / long_side, LOCATE_SIZE[1] / short_side)
    zoom = max(1.0, pitch_px * scale / LOCATE_STRIDE / GOOD_TILE_OUT_PX)
    return crop, offset + [x0, y0], zoom


def check_photo(photo: Photo, image: np.ndarray, mask: np.ndarray, peaks: int) -> None:
    """Refuse photos too dark, too blurred or without tiles, saying what was seen.

    A photo without tiles and without fine detail is blamed on focus when it still shows shapes at a
    coarse look (a blurred palace keeps its outline), and said to show an even surface when it does not.

    Raises:
        BoardNotFoundError: the photo is too dark or blurred, or shows no tiles.
    """
    brightness = float(image[::8, ::8].mean())
    if brightness < TOO_DARK:
        raise BoardNotFoundError(f"{photo.name}: photo too dark (mean brightness {brightness:.0f}/255); retake with more light")
    if peaks == 0:
        if brightness < DIM:
            raise BoardNotFoundError(
                f"{photo.name}: no tiles found in a dark photo (mean brightness {brightness:.0f}/255); retake with more light"
            )
        grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        small = cv2.resize(grey, (320, max(1, round(320 * grey.shape[0] / grey.shape[1]))), interpolation=cv2.INTER_AREA)
        sharpness = float(cv2.Laplacian(small, cv2.CV_64F).var())
        if sharpness < BLURRED:
            coarse = cv2.resize(small, (40, max(1, round(40 * small.shape[0] / small.shape[1]))), interpolation=cv2.INTER_AREA)
            if float(coarse.std()) < EVEN:
                raise BoardNotFoundError(
                    f"{photo.name}: no Alhambra palace found: the photo shows an even surface with nothing on it; {HINT}",
                    remedy=Remedy.SET_CORNERS,
                )
            raise BoardNotFoundError(
                f"{photo.name}: photo too blurred to find tiles (sharpness {sharpness:.0f}); hold still, focus and retake"
            )
        raise BoardNotFoundError(f"{photo.name}: no Alhambra palace found (no tile centres seen); {HINT}", remedy=Remedy.SET_CORNERS)


def palace_touches_edge(mask: np.ndarray, peaks: np.ndarray, shape: tuple[int, int], zoom: float = 1.0) -> bool:
    """True when the palace's part of the tile mask (the blobs holding tile centres) reaches the photo's border."""
    height, width = shape
    if height > width:
        height, width = width, height
    scale = min(LOCATE_SIZE[0] / width, LOCATE_SIZE[1] / height) / zoom
    new_w, new_h = int(round(width * scale)), int(round(height * scale))
    x0 = y0 = 0
    if zoom > 1.0:
        x0, y0 = (LOCATE_SIZE[0] - new_w) // 2, (LOCATE_SIZE[1] - new_h) // 2
    c0, r0 = x0 // LOCATE_STRIDE, y0 // LOCATE_STRIDE
    c1, r1 = max(c0 + 1, (x0 + new_w) // LOCATE_STRIDE), max(r0 + 1, (y0 + new_h) // LOCATE_STRIDE)
    count, labels = cv2.connectedComponents((mask > 0.5).astype(np.uint8), connectivity=8)
    palace = {int(labels[int(round(y)), int(round(x))]) for x, y in peaks} - {0}
    if not palace:
        return False
    area = np.isin(labels[r0:r1, c0:c1], list(palace))
    border = np.concatenate([area[0], area[-1], area[:, 0], area[:, -1]])
    return int(border.sum()) >= 2


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))
