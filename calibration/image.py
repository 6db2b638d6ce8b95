"""Reading and writing the photos calibration works on (upright RGB, as the scanner sees them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from calibration.errors import CalibrationError


def load_image(path: str | Path) -> np.ndarray:
    """Decode a photo to an upright (EXIF orientation applied) RGB uint8 array.

    Raises:
        CalibrationError: the file is missing, unreadable or not an image, naming it.
    """
    path = Path(path)
    try:
        with Image.open(path) as image:
            upright = ImageOps.exif_transpose(image)
            return np.asarray(upright.convert("RGB"), np.uint8).copy()
    except FileNotFoundError:
        raise CalibrationError(f"{path.name}: no such file") from None
    except IsADirectoryError:
        raise CalibrationError(f"{path.name}: is a directory, expected a photo") from None
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise CalibrationError(f"{path.name}: not a readable image ({error.__class__.__name__})") from None


def save_image(path: str | Path, image_rgb: np.ndarray) -> Path:
    """Write an RGB uint8 array as an image file (format from the suffix).

    Raises:
        CalibrationError: the file cannot be written or the suffix is not an image format.
    """
    path = Path(path)
    try:
        Image.fromarray(np.ascontiguousarray(image_rgb)).save(path)
    except (OSError, ValueError, KeyError) as error:
        raise CalibrationError(f"{path}: cannot write image ({error.__class__.__name__}: {error})") from None
    return path


def check_image(image_rgb: np.ndarray) -> np.ndarray:
    """Return ``image_rgb`` if it is an (H, W, 3) uint8 RGB array.

    Raises:
        ValueError: any other array or object.
    """
    if not isinstance(image_rgb, np.ndarray) or image_rgb.dtype != np.uint8 or image_rgb.ndim != 3 or image_rgb.shape[2] != 3:
        got = getattr(image_rgb, "shape", type(image_rgb).__name__)
        raise ValueError(f"image_rgb: expected (H, W, 3) uint8 RGB, got {got}")
    return image_rgb
