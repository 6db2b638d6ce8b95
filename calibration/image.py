"""Decoding photos as phones deliver them, for every layer: EXIF orientation, ICC profiles, odd modes, size limits.

This is the one home of image decoding. It lives in ``calibration`` because that is the lowest
layer that may use Pillow and that both photo readers can import: ``scanner`` may import
``calibration`` but not the reverse, and ``scoring`` is standard library only. So
``scanner.photo.load_photo``, ``load_image`` here and the ``tablescan`` faces all decode through
``decode_image``, and calibration is fitted on exactly the pixels the scanner will see.
Each caller names the error class it raises (``PhotoError`` for the scanner, ``CalibrationError``
here); the messages, which name the file, are the same for all.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

from calibration.errors import CalibrationError
from scoring.errors import TableError

MAX_PIXELS = 50_000_000
FORMATS_WORDS = "JPEG, PNG, WebP or HEIC"

try:  # HEIC/HEIF from iPhones, when the optional wheel is installed
    import pillow_heif
except ImportError:  # pragma: no cover - optional
    pass
else:
    pillow_heif.register_heif_opener()


@dataclass(frozen=True)
class DecodedImage:
    """A decoded image, upright and in sRGB: ``image_rgb`` (H, W, 3) uint8, the upright ``full_size`` (w, h) before any
    reduced decode, ``scale`` (full-size pixels per decoded pixel) and ``notes`` on what was done to it.

    Raises:
        ValueError: the image is not (H, W, 3) uint8 or the scale is not positive.
    """

    image_rgb: np.ndarray
    full_size: tuple[int, int]
    scale: float = 1.0
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        check_image(self.image_rgb)
        if self.scale <= 0:
            raise ValueError(f"scale: expected > 0, got {self.scale}")


def read_image_bytes(path: str | Path, *, error: type[TableError] = CalibrationError) -> bytes:
    """Read an image file's bytes.

    Raises:
        TableError: (of class ``error``) the file is missing, a directory, unreadable or empty; the message names it.
    """
    label = Path(path).name
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{label}: no such file") from None
    except IsADirectoryError:
        raise error(f"{label}: is a directory, expected a photo") from None
    except OSError as failure:
        raise error(f"{label}: cannot read ({failure.strerror or failure})") from None
    if not data:
        raise error(f"{label}: empty file, expected a photo (JPEG, PNG or WebP)")
    return data


def decode_image(
    data: bytes,
    label: str,
    *,
    error: type[TableError] = CalibrationError,
    min_long_side_px: int | None = None,
    min_side_px: int = 1,
    not_an_image: str = "not an image Pillow can read",
) -> DecodedImage:
    """Decode image bytes into an upright sRGB ``DecodedImage``, white behind any transparency.

    With ``min_long_side_px`` a JPEG is decoded at the smallest power-of-two reduction that keeps
    its long side at least that many pixels (much faster for 12 MP phone photos). ``not_an_image``
    is how the message says a file is no image at all (the scanner's and calibration's wordings
    differ, and users' scripts match them).

    Raises:
        TableError: (of class ``error``) empty, not an image, corrupt, over ``MAX_PIXELS`` or with a
            side under ``min_side_px``; the message starts with ``label``.
    """
    if not data:
        raise error(f"{label}: empty file, expected a photo (JPEG, PNG or WebP)")
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():  # the explicit size check below gives the clear message
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            warnings.simplefilter("ignore", UserWarning)  # corrupt EXIF: Pillow reads what it can
            image: Image.Image = Image.open(io.BytesIO(data))
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise error(
                f"{label}: {width}x{height} is {width * height / 1e6:.0f} megapixels, over the "
                f"{MAX_PIXELS // 1_000_000} MP limit; resize it first"
            )
        with warnings.catch_warnings():  # corrupt EXIF: Pillow warns and reads what it can; the photo is still usable
            warnings.simplefilter("ignore", UserWarning)
            orientation = image.getexif().get(0x0112, 1)
        upright = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
        reduce = 1
        if min_long_side_px and image.format == "JPEG":
            while max(width, height) // (reduce * 2) >= min_long_side_px and reduce < 8:
                reduce *= 2
        rgb = _decode_jpeg_fast(data, image, orientation, reduce)  # upright already
        if rgb is None:
            if reduce > 1:
                image.draft("RGB", (width // reduce, height // reduce))
            image.load()
    except TableError:
        raise
    except Image.DecompressionBombError:
        raise error(f"{label}: image too large (decompression bomb guard: over {MAX_PIXELS // 1_000_000} MP)") from None
    except UnidentifiedImageError:
        raise error(f"{label}: {not_an_image} (expected {FORMATS_WORDS})") from None
    except (OSError, SyntaxError, ValueError) as failure:
        raise error(f"{label}: corrupt or truncated image ({failure})") from None
    finally:
        Image.MAX_IMAGE_PIXELS = previous

    notes: list[str] = [f"exif-orientation-{orientation}"] if orientation != 1 else []
    if rgb is None:
        if orientation != 1:  # upright photos skip it: it would copy the whole image for nothing
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                image = ImageOps.exif_transpose(image)
        image, converted = _to_srgb(image)
        if converted:
            notes.append("icc-to-srgb")
        rgb = np.asarray(image, dtype=np.uint8)
    if min(upright) < min_side_px:
        raise error(f"{label}: {upright[0]}x{upright[1]} px is too small; the short side must be at least {min_side_px} px")
    scale = width / rgb.shape[0 if orientation in (5, 6, 7, 8) else 1]  # full-size pixels per decoded pixel, as stored
    return DecodedImage(np.ascontiguousarray(rgb), upright, scale, tuple(notes))


def _decode_jpeg_fast(data: bytes, image: Image.Image, orientation: int, reduce: int) -> np.ndarray | None:
    """The plain JPEG ``image`` decoded by OpenCV, upright and reduced ``reduce`` times (None: leave it to Pillow).

    Both decode with libjpeg at the same scale and give the same pixels; OpenCV writes straight into
    the array, which saves Pillow's copy through bytes (a third of the decode of a 12 MP photo). Only
    a complete (ending in its end-of-image marker) YCbCr JPEG without a colour profile comes here;
    anything else, and any decode that does not give the expected size, goes through Pillow, which
    says what is wrong with it. A damaged file that still ends properly is read as Pillow read it,
    but libjpeg prints its own warning ("Corrupt JPEG data: ...") on stderr, where Pillow said nothing.
    """
    flags = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}
    if image.format != "JPEG" or image.mode != "RGB" or image.info.get("icc_profile") or reduce not in flags:
        return None
    if not data.rstrip(b"\0").endswith(b"\xff\xd9") or orientation not in range(1, 9):
        return None
    bgr = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), flags[reduce] | cv2.IMREAD_IGNORE_ORIENTATION)
    width, height = image.size
    if bgr is None or bgr.shape[:2] != (-(-height // reduce), -(-width // reduce)):
        return None
    return _exif_upright(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), orientation)  # made contiguous once, by decode_image


def _exif_upright(image_rgb: np.ndarray, orientation: int) -> np.ndarray:
    """``image_rgb`` as stored, turned upright by its EXIF orientation (1-8), as ``ImageOps.exif_transpose`` turns it."""
    if orientation in (5, 6, 7, 8):
        image_rgb = image_rgb.transpose(1, 0, 2)  # 5: transposed as stored
        orientation = {5: 1, 6: 2, 7: 3, 8: 4}[orientation]  # what is left after the transpose
    if orientation in (2, 3):
        image_rgb = image_rgb[:, ::-1]
    if orientation in (3, 4):
        image_rgb = image_rgb[::-1]
    return image_rgb


def probe_image(data: bytes, label: str, *, error: type[TableError] = CalibrationError) -> tuple[str, tuple[int, int]]:
    """Return image bytes' format (Pillow's name, e.g. ``"JPEG"``) and upright size (w, h), checked but not decoded.

    Raises:
        TableError: (of class ``error``) empty, not an image, corrupt or over ``MAX_PIXELS``; the message starts with ``label``.
    """
    if not data:
        raise error(f"{label}: empty file, expected a photo (JPEG, PNG or WebP)")
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            warnings.simplefilter("ignore", UserWarning)  # corrupt EXIF: Pillow reads what it can
            with Image.open(io.BytesIO(data)) as probe:
                probe.verify()
            with Image.open(io.BytesIO(data)) as image:
                kind, (width, height) = str(image.format), image.size
                turned = image.getexif().get(0x0112, 1) in (5, 6, 7, 8)
    except Image.DecompressionBombError:
        raise error(f"{label}: image too large (decompression bomb guard: over {MAX_PIXELS // 1_000_000} MP)") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):  # in words: never a Python exception's name
        raise error(f"{label}: not a readable image (not a photo, or damaged); expected {FORMATS_WORDS}") from None
    finally:
        Image.MAX_IMAGE_PIXELS = previous
    if width * height > MAX_PIXELS:
        raise error(
            f"{label}: {width}x{height} is {width * height / 1e6:.0f} megapixels, over the {MAX_PIXELS // 1_000_000} MP limit; resize it first"
        )
    return kind, ((height, width) if turned else (width, height))


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
    return (image if image.mode == "RGB" else image.convert("RGB")), converted  # converting RGB to RGB would copy it


def load_image(path: str | Path) -> np.ndarray:
    """Decode a photo file to an upright sRGB (H, W, 3) uint8 array, exactly as the scanner decodes it (``decode_image``).

    Raises:
        CalibrationError: the file is missing, unreadable, empty, not an image, corrupt or too large, naming it.
    """
    return decode_image(read_image_bytes(path), Path(path).name, not_an_image="not a readable image").image_rgb


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
