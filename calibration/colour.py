"""Colour calibration: white balance and exposure from a white or grey reference in the photo.

The correction is a gain per channel in linear light (sRGB decoded), so it models what a
different light colour and a different exposure do to a photo. It is applied as one lookup
table per channel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.errors import CalibrationError
from calibration.jsonfields import expect_numbers
from scoring.errors import Remedy
from scoring.fields import child, expect_object, expect_str, field

DEFAULT_LEVEL = 230  # sRGB value a white board square or white paper should read after correction
GREY_CARD_LEVEL = 118  # an 18 % grey card
CLIPPED = 250  # a channel at or above this is treated as clipped
MIN_REFERENCE_PIXELS = 50
MAX_GAIN = 8.0
MAX_REFERENCE_SATURATION = 0.5  # (max - min) / max of a white under a strongly coloured light
BRIGHTEST_PERCENT = 3.0
CHROMA_TOLERANCE = 0.02  # how far in (r, g) share a pixel may lie from the reference's colour
LUMA = np.array([0.2126, 0.7152, 0.0722])


def _decode_table() -> np.ndarray:
    values = np.arange(256) / 255.0
    return np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)


SRGB_TO_LINEAR = _decode_table()


def srgb_to_linear(values: npt.ArrayLike) -> np.ndarray:
    """Decode sRGB values (0-255, any shape) to linear light (0-1).

    >>> srgb_to_linear([0, 118, 255]).round(3).tolist()
    [0.0, 0.181, 1.0]
    """
    values = np.asarray(values, np.float64) / 255.0
    return np.where(values <= 0.04045, values / 12.92, ((values + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(values: npt.ArrayLike) -> np.ndarray:
    """Encode linear light (0-1, any shape) as sRGB values 0-255 (floats, clipped to the range).

    >>> linear_to_srgb([-0.5, 0.18, 2.0]).round(1).tolist()
    [0.0, 117.6, 255.0]
    """
    values = np.clip(np.asarray(values, np.float64), 0.0, 1.0)
    encoded = np.where(values <= 0.0031308, values * 12.92, 1.055 * values ** (1 / 2.4) - 0.055)
    return encoded * 255.0


@dataclass(frozen=True)
class ColourCorrection:
    """Per-channel gains (R, G, B) in linear light; ``reference`` says what they were measured on."""

    gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
    reference: str = ""

    def __post_init__(self) -> None:
        if len(self.gains) != 3 or not all(1 / MAX_GAIN <= g <= MAX_GAIN for g in self.gains):
            raise CalibrationError(f"colour gains: expected 3 values within 1/{MAX_GAIN:g}-{MAX_GAIN:g}, got {self.gains}")

    @property
    def exposure_ev(self) -> float:
        """The brightness part of the correction in stops (+1 doubles the light)."""
        return math.log2(float(np.dot(LUMA, self.gains)))

    @property
    def white_balance(self) -> tuple[float, float, float]:
        """The colour part of the correction: the gains with the brightness change divided out."""
        total = float(np.dot(LUMA, self.gains))
        red, green, blue = self.gains
        return (red / total, green / total, blue / total)

    def tables(self) -> np.ndarray:
        """The 256-entry lookup table of each channel, uint8 (256, 1, 3)."""
        out = linear_to_srgb(SRGB_TO_LINEAR[:, None] * np.array(self.gains)[None, :])
        return np.round(out).astype(np.uint8).reshape(256, 1, 3)

    def to_json(self) -> dict:
        """The correction as a JSON object (``from_json`` is its inverse)."""
        return {"gains": list(self.gains), "reference": self.reference}

    @classmethod
    def from_json(cls, doc: Any, path: str = "colour") -> ColourCorrection:
        """Read a correction written by ``to_json``.

        Raises:
            StateError: a key is missing or has the wrong type, naming its JSON path.
            CalibrationError: a gain is out of range.
        """
        obj = expect_object(doc, path)
        red, green, blue = expect_numbers(field(obj, "gains", path), child(path, "gains"), 3, positive=True)
        return cls(
            gains=(red, green, blue),
            reference=expect_str(field(obj, "reference", path, ""), child(path, "reference")),
        )


def apply_colour(image_rgb: np.ndarray, colour: ColourCorrection) -> np.ndarray:
    """Apply a colour correction to an RGB uint8 image; returns a new array."""
    return cv2.LUT(np.ascontiguousarray(image_rgb), colour.tables())


def estimate_colour(
    image_rgb: np.ndarray,
    region: tuple[int, int, int, int] | None = None,
    *,
    level: float = DEFAULT_LEVEL,
    name: str = "<image>",
) -> ColourCorrection:
    """Measure the correction that turns a white/grey reference into neutral grey of sRGB ``level``.

    The reference is ``region`` = (x, y, width, height) in pixels, or, when omitted, the
    brightest low-saturation pixels of the photo (the Sagrada window's white squares, the
    Alhambra tiles' sandy ground, white paper). Clipped pixels are ignored.

    Raises:
        CalibrationError: the region lies outside the photo, is over-exposed or too dark, or no
            usable reference is found, naming the photo.
    """
    if not 10 <= level <= 245:
        raise CalibrationError(f"level: expected an sRGB value 10-245, got {level}")
    height, width = image_rgb.shape[:2]
    if region is not None:
        x, y, w, h = region
        if w < 1 or h < 1 or x < 0 or y < 0 or x + w > width or y + h > height:
            raise CalibrationError(f"{name}: region {x},{y},{w},{h} is not inside the {width}x{height} px photo; give x,y,w,h in pixels")
        patch = image_rgb[y : y + h, x : x + w].reshape(-1, 3)
        usable = patch[(patch.max(axis=1) < CLIPPED)]
        if len(usable) < max(1, min(MIN_REFERENCE_PIXELS, len(patch) // 2)):
            raise CalibrationError(
                f"{name}: region {x},{y},{w},{h} is over-exposed ({100 - 100 * len(usable) // len(patch)} % clipped); "
                "take the photo darker or pick a region that is not blown out"
            )
        reference = f"region {x},{y},{w},{h} of {name}"
    else:
        usable = _bright_neutral_pixels(image_rgb.reshape(-1, 3))
        if len(usable) < MIN_REFERENCE_PIXELS:
            raise CalibrationError(f"{name}: no white or light grey reference found; {Remedy.GIVE_REGION.words}", remedy=Remedy.GIVE_REGION)
        reference = f"brightest low-saturation pixels of {name}"
    linear = _trimmed_mean(srgb_to_linear(usable))
    if np.min(linear) < 0.005:
        raise CalibrationError(
            f"{name}: the reference is too dark to measure "
            f"(sRGB {np.round(linear_to_srgb(linear)).astype(int).tolist()}); pick a white or light grey region"
        )
    red, green, blue = (float(g) for g in srgb_to_linear(level) / linear)
    gains = (red, green, blue)
    if not all(1 / MAX_GAIN <= g <= MAX_GAIN for g in gains):
        raise CalibrationError(
            f"{name}: the reference needs gains {tuple(round(g, 2) for g in gains)}, "
            f"beyond 1/{MAX_GAIN:g}-{MAX_GAIN:g}; pick a white or light grey region, or retake under less coloured light"
        )
    return ColourCorrection(gains=gains, reference=reference)


def preview_image(before_rgb: np.ndarray, after_rgb: np.ndarray, region: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """The before and after photos side by side (labelled, reference region outlined), RGB uint8."""
    height, width = before_rgb.shape[:2]
    scale = min(1.0, 1200 / max(height, width))
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    panels = []
    for label, image in (("before", before_rgb), ("after", after_rgb)):
        panel = cv2.resize(image, size, interpolation=cv2.INTER_AREA) if scale != 1.0 else image.copy()
        if region is not None:
            x, y, w, h = (round(v * scale) for v in region)
            cv2.rectangle(panel, (x, y), (x + max(w, 1), y + max(h, 1)), (255, 0, 255), 2)
        text_scale = max(0.5, size[0] / 900)
        cv2.putText(panel, label, (10, int(30 * text_scale)), cv2.FONT_HERSHEY_SIMPLEX, text_scale, (0, 0, 0), 4, cv2.LINE_AA)
        cv2.putText(
            panel,
            label,
            (10, int(30 * text_scale)),
            cv2.FONT_HERSHEY_SIMPLEX,
            text_scale,
            (255, 255, 255),
            1,
            cv2.LINE_AA,
        )
        panels.append(panel)
    gap = np.full((size[1], 8, 3), 255, np.uint8)
    return np.concatenate([panels[0], gap, panels[1]], axis=1)


def _bright_neutral_pixels(pixels: np.ndarray) -> np.ndarray:
    """The colour cluster of the brightest neutral pixels: white squares, paper, a grey card.

    Usable pixels are not clipped, not near black and not strongly coloured (a white under any
    plausible light stays below ``MAX_REFERENCE_SATURATION``; a yellow table does not). A seed
    comes from the brightest ``BRIGHTEST_PERCENT`` of them, so a large table or frame that a cast
    happens to make grey is never taken: their least saturated 40 %, of those the brightest half
    (white squares rather than light grey ones). The result is every usable pixel of the seed's
    colour and about its brightness.
    """
    top = pixels.max(axis=1).astype(np.float64)
    saturation = (top - pixels.min(axis=1)) / np.maximum(top, 1.0)
    valid = (top < CLIPPED) & (top >= 20) & (saturation <= MAX_REFERENCE_SATURATION)
    candidates, saturation = pixels[valid], saturation[valid]
    if len(candidates) < MIN_REFERENCE_PIXELS:
        return candidates
    luma = srgb_to_linear(candidates) @ LUMA
    bright = luma >= np.percentile(luma, 100 - BRIGHTEST_PERCENT)
    low = saturation[bright] <= np.percentile(saturation[bright], 40)
    seed_luma = luma[bright][low]
    seed = candidates[bright][low][seed_luma >= np.percentile(seed_luma, 50)]
    # Take the whole cluster around the seed's colour: choosing by low saturation alone would
    # prefer pixels whose noise happens to lean against the cast, and bias the gains.
    chroma = _chromaticity(candidates)
    centre = np.median(_chromaticity(seed), axis=0)
    near = np.linalg.norm(chroma - centre, axis=1) <= CHROMA_TOLERANCE
    return candidates[near & (luma >= 0.85 * np.median(srgb_to_linear(seed) @ LUMA))]


def _chromaticity(pixels: np.ndarray) -> np.ndarray:
    """The (r, g) shares of linear light of each pixel."""
    linear = srgb_to_linear(pixels) + 1e-6
    return linear[:, :2] / linear.sum(axis=1, keepdims=True)


def _trimmed_mean(linear: np.ndarray, cut: float = 0.1) -> np.ndarray:
    """Per-channel mean of the values between the ``cut`` and ``1 - cut`` quantiles."""
    low, high = np.quantile(linear, [cut, 1 - cut], axis=0)
    means = []
    for channel in range(3):
        values = linear[:, channel]
        kept = values[(values >= low[channel]) & (values <= high[channel])]
        means.append(kept.mean() if len(kept) else values.mean())
    return np.array(means)
