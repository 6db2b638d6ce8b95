"""Loading photos as phones deliver them: EXIF orientation, ICC profiles, odd modes, size limits."""

from __future__ import annotations

import io
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

from scanner.errors import PhotoError

MAX_PIXELS = 50_000_000
MAX_FILE_BYTES = 200 * 1024 * 1024  # a photo file read past this is refused (a device, a wrong file)
MIN_SIDE_PX = 240

try:  # HEIC/HEIF from iPhones, when the optional wheel is installed
    import pillow_heif
except ImportError:  # pragma: no cover - optional
    pass
else:
    pillow_heif.register_heif_opener()


@dataclass(frozen=True)
class Photo:
    """A decoded photo, upright and in sRGB.

    ``image_rgb`` may be a reduced decode of the file; ``scale`` is how many pixels of the photo
    as loaded at full size (EXIF orientation applied) one pixel of ``image_rgb`` spans.
    """

    image_rgb: np.ndarray
    name: str
    full_size: tuple[int, int]  # (width_px, height_px) at full resolution, upright
    scale: float = 1.0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        image = self.image_rgb
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            got = getattr(image, "shape", type(image).__name__)
            raise ValueError(f"image_rgb: expected (H, W, 3) uint8 RGB, got {got}")
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

    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():  # the explicit size check below gives the clear message
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            warnings.simplefilter("ignore", UserWarning)  # corrupt EXIF: Pillow reads what it can
            image: Image.Image = Image.open(io.BytesIO(data))
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise PhotoError(
                f"{label}: {width}x{height} is {width * height / 1e6:.0f} megapixels, over the "
                f"{MAX_PIXELS // 1_000_000} MP limit; resize it first"
            )
        with warnings.catch_warnings():  # corrupt EXIF: Pillow warns and reads what it can; the photo is still usable
            warnings.simplefilter("ignore", UserWarning)
            orientation = image.getexif().get(0x0112, 1)
        upright = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
        scale = 1.0
        if min_long_side_px and image.format == "JPEG":
            reduce = 1
            while max(width, height) // (reduce * 2) >= min_long_side_px and reduce < 8:
                reduce *= 2
            if reduce > 1:
                image.draft("RGB", (width // reduce, height // reduce))
                scale = width / image.size[0]
        image.load()
    except PhotoError:
        raise
    except Image.DecompressionBombError:
        raise PhotoError(f"{label}: image too large (decompression bomb guard: over {MAX_PIXELS // 1_000_000} MP)") from None
    except UnidentifiedImageError:
        raise PhotoError(f"{label}: not an image Pillow can read (expected JPEG, PNG, WebP or HEIC)") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise PhotoError(f"{label}: corrupt or truncated image ({error})") from None
    finally:
        Image.MAX_IMAGE_PIXELS = previous

    notes: list[str] = []
    if orientation != 1:
        notes.append(f"exif-orientation-{orientation}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        image = ImageOps.exif_transpose(image)
    image, converted = _to_srgb(image)
    if converted:
        notes.append("icc-to-srgb")
    rgb = np.asarray(image, dtype=np.uint8)
    if min(upright) < MIN_SIDE_PX:
        raise PhotoError(f"{label}: {upright[0]}x{upright[1]} px is too small; the short side must be at least {MIN_SIDE_PX} px")
    return Photo(image_rgb=np.ascontiguousarray(rgb), name=label, full_size=upright, scale=scale, notes=tuple(notes))


def _to_srgb(image: Image.Image) -> tuple[Image.Image, bool]:
    """Return an RGB image in sRGB, converting from an embedded ICC profile when present."""
    converted = False
    icc = image.info.get("icc_profile")
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        array = np.asarray(image, dtype=np.float64)
        peak = array.max() or 1.0
        image = Image.fromarray((array * (255.0 / peak)).clip(0, 255).astype(np.uint8), "L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba)
    if image.mode == "CMYK" or image.mode not in ("RGB", "L"):
        image = image.convert("RGB") if image.mode != "CMYK" else image
    if icc and image.mode in ("RGB", "CMYK"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            target = ImageCms.createProfile("sRGB")
            result = ImageCms.profileToProfile(image, source, target, outputMode="RGB")
            if result is not None:  # None only when converting in place
                image, converted = result, True
        except (ImageCms.PyCMSError, OSError, ValueError):
            pass  # unreadable profile: keep the pixels as they are
    return image.convert("RGB"), converted


def decode_seconds(path: str | Path) -> float:
    """Return the time to fully decode ``path`` with Pillow (the benchmark's baseline)."""
    start = time.perf_counter()
    with Image.open(path) as image:
        image.load()
    return time.perf_counter() - start
