"""Loading photos as phones deliver them: EXIF orientation, ICC profiles, odd modes, size limits.

The decoding itself is ``calibration.image.decode_image``, shared with calibration (the lower
layer) so both see the same pixels; this module reads the file and wraps the result as a ``Photo``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from calibration.image import MAX_PIXELS, decode_image
from scanner.errors import PhotoError

__all__ = ["MAX_FILE_BYTES", "MAX_PIXELS", "MIN_SIDE_PX", "Photo", "decode_seconds", "load_photo"]

MAX_FILE_BYTES = 200 * 1024 * 1024  # a photo file read past this is refused (a device, a wrong file)

MIN_SIDE_PX = 240


@dataclass(frozen=True)
class Photo:
    """A decoded photo, upright and in sRGB.

    ``image_rgb`` may be a reduced decode of the file; ``scale`` is how many pixels of the photo
    as loaded at full size (EXIF orientation applied) one pixel of ``image_rgb`` spans.
    ``fine_rgb``, where not None, is the same picture for reading fine print (a price digit): where
    guide lines were painted out of ``image_rgb``, what they hide solved from the blend instead
    (``scanner.guides.unblend_guide_lines``).
    """

    image_rgb: np.ndarray
    name: str
    full_size: tuple[int, int]  # (width_px, height_px) at full resolution, upright
    scale: float = 1.0
    notes: tuple[str, ...] = field(default=())
    fine_rgb: np.ndarray | None = None

    def __post_init__(self) -> None:
        image = self.image_rgb
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            got = getattr(image, "shape", type(image).__name__)
            raise ValueError(f"image_rgb: expected (H, W, 3) uint8 RGB, got {got}")
        if self.fine_rgb is not None and self.fine_rgb.shape != image.shape:
            raise ValueError(f"fine_rgb: expected the shape of image_rgb {image.shape}, got {self.fine_rgb.shape}")
        if self.scale <= 0:
            raise ValueError(f"scale: expected > 0, got {self.scale}")

    @property
    def width_px(self) -> int:
        """Width of ``image_rgb`` in pixels."""
        return int(self.image_rgb.shape[1])

    @property
    def height_px(self) -> int:
        """Height of ``image_rgb`` in pixels."""
        return int(self.image_rgb.shape[0])

    @property
    def fine_print_rgb(self) -> np.ndarray:
        """The picture to read fine print in: ``fine_rgb`` where there is one, else ``image_rgb``."""
        return self.image_rgb if self.fine_rgb is None else self.fine_rgb

    @classmethod
    def from_array(cls, image_rgb: np.ndarray, name: str = "<array>") -> Photo:
        """Wrap an RGB array (already upright, sRGB) as a full-resolution photo."""
        height, width = image_rgb.shape[:2]
        return cls(image_rgb=np.ascontiguousarray(image_rgb), name=name, full_size=(width, height))


def load_photo(source: str | Path | bytes, *, name: str | None = None, min_long_side_px: int | None = None) -> Photo:
    """Decode a photo file (JPEG, PNG, WebP, HEIC when available) into an upright sRGB ``Photo``.

    With ``min_long_side_px`` a JPEG is decoded at the smallest power-of-two reduction that keeps
    its long side at least that many pixels (much faster for 12 MP phone photos).

    Raises:
        PhotoError: the file is missing, not an image, corrupt, too large or too small.
    """
    label = name or (Path(source).name if not isinstance(source, (bytes, bytearray)) else "<upload>")
    try:
        if isinstance(source, (bytes, bytearray)):
            data = bytes(source)
        else:
            with open(source, "rb") as stream:
                data = stream.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise PhotoError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise PhotoError(f"{label}: is a directory, expected a photo") from None
    except OSError as error:
        raise PhotoError(f"{label}: cannot read ({error.strerror or error})") from None
    if len(data) > MAX_FILE_BYTES:
        raise PhotoError(f"{label}: more than {MAX_FILE_BYTES // (1024 * 1024)} MiB, the limit for a photo; give a JPEG, PNG or WebP photo")
    if not data:
        raise PhotoError(f"{label}: empty file, expected a photo (JPEG, PNG or WebP)")

    decoded = decode_image(data, label, error=PhotoError, min_long_side_px=min_long_side_px, min_side_px=MIN_SIDE_PX)
    return Photo(image_rgb=decoded.image_rgb, name=label, full_size=decoded.full_size, scale=decoded.scale, notes=decoded.notes)


def decode_seconds(path: str | Path) -> float:
    """Return the time to fully decode ``path`` with Pillow (the benchmark's baseline)."""
    start = time.perf_counter()
    with Image.open(path) as image:
        image.load()
    return time.perf_counter() - start
