"""Photo loading as phones deliver photos: orientation, colour profiles, modes, limits, bad files."""

from __future__ import annotations

import io
import struct
import zlib
from contextlib import nullcontext

import numpy as np
import pytest
from PIL import Image, ImageCms

from scanner.errors import PhotoError
from scanner.photo import MAX_PIXELS, MIN_SIDE_PX, Photo, load_photo


def _encode(image: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def _gradient(width: int = 400, height: int = 300) -> Image.Image:
    x = np.linspace(0, 255, width, dtype=np.uint8)[None, :].repeat(height, axis=0)
    y = np.linspace(0, 255, height, dtype=np.uint8)[:, None].repeat(width, axis=1)
    return Image.fromarray(np.dstack([x, y, np.full_like(x, 90)]), "RGB")


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` (no real pixel data)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


def test_exif_orientation_is_applied() -> None:
    image = _gradient(400, 300)
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: rotate 90 degrees clockwise to view
    photo = load_photo(_encode(image, "JPEG", exif=exif, quality=95), name="side.jpg")
    assert photo.image_rgb.shape == (400, 300, 3)
    assert photo.full_size == (300, 400)
    assert "exif-orientation-6" in photo.notes
    # the top-left of the upright view is the stored bottom-left (dark x, bright y)
    assert photo.image_rgb[2, 2, 1] > 200 and photo.image_rgb[2, 2, 0] < 40


def test_embedded_icc_profile_is_converted_to_srgb() -> None:
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    image = _gradient()
    photo = load_photo(_encode(image, "PNG", icc_profile=profile), name="p3.png")
    assert "icc-to-srgb" in photo.notes
    assert np.abs(photo.image_rgb.astype(int) - np.asarray(image, dtype=int)).max() <= 3


def test_unreadable_icc_profile_is_ignored() -> None:
    photo = load_photo(_encode(_gradient(), "PNG", icc_profile=b"not a profile"), name="odd.png")
    assert "icc-to-srgb" not in photo.notes
    assert photo.image_rgb.shape == (300, 400, 3)


@pytest.mark.parametrize(
    "mode",
    ["L", "LA", "RGBA", "P", "I;16"],
)
def test_unusual_modes_become_rgb(mode: str) -> None:
    base = _gradient()
    if mode == "I;16":
        image = Image.fromarray(np.asarray(base.convert("L"), dtype=np.uint16) * 200)
    else:
        image = base.convert(mode)
    photo = load_photo(_encode(image, "PNG"), name=f"{mode}.png")
    assert photo.image_rgb.dtype == np.uint8 and photo.image_rgb.shape == (300, 400, 3)
    assert photo.image_rgb.max() > 150  # not blacked out


def test_transparent_pixels_are_composited_on_white() -> None:
    rgba = np.zeros((300, 400, 4), dtype=np.uint8)
    photo = load_photo(_encode(Image.fromarray(rgba, "RGBA"), "PNG"))
    assert (photo.image_rgb == 255).all()


def test_reduced_jpeg_decode_keeps_scale() -> None:
    data = _encode(_gradient(3200, 2400), "JPEG", quality=80)
    photo = load_photo(data, min_long_side_px=800)
    assert photo.image_rgb.shape[1] == 800
    assert photo.scale == pytest.approx(4.0)
    assert photo.full_size == (3200, 2400)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b"hello, not an image", "not an image"),
        (_encode(_gradient(), "JPEG")[:400], "corrupt or truncated"),
        (_png_header_only(10_000, 6_000), "megapixels"),
        (_encode(_gradient(MIN_SIDE_PX - 1, 500), "PNG"), f"at least {MIN_SIDE_PX} px"),
    ],
    ids=["empty", "text", "truncated", "too-large", "too-small"],
)
def test_bad_photos_are_refused_with_a_clear_line(data: bytes, message: str) -> None:
    with pytest.raises(PhotoError) as caught:
        load_photo(data, name="IMG_1.jpg")
    text = str(caught.value)
    assert text.startswith("IMG_1.jpg: ") and message in text and "\n" not in text
    assert caught.value.exit_code == 2


def test_missing_file_is_named(tmp_path) -> None:
    with pytest.raises(PhotoError, match=r"gone\.jpg: no such file"):
        load_photo(tmp_path / "gone.jpg")


def test_webp_loads() -> None:
    photo = load_photo(_encode(_gradient(), "WEBP", quality=90))
    assert photo.image_rgb.shape == (300, 400, 3)


@pytest.mark.parametrize(
    ("image", "expectation"),
    [
        (np.zeros((10, 10, 3), np.uint8), nullcontext()),
        (np.zeros((10, 10, 4), np.uint8), pytest.raises(ValueError, match=r"expected \(H, W, 3\) uint8 RGB")),
        (np.zeros((10, 10, 3), np.float32), pytest.raises(ValueError, match="uint8")),
    ],
)
def test_photo_validates_its_array(image, expectation) -> None:
    with expectation:
        Photo.from_array(image)


def test_pixel_cap_matches_the_documented_limit() -> None:
    assert MAX_PIXELS == 50_000_000


def test_heic_from_an_iphone_loads() -> None:
    pillow_heif = pytest.importorskip("pillow_heif")
    pillow_heif.register_heif_opener()
    photo = load_photo(_encode(_gradient(), "HEIF", quality=90), name="IMG_0001.HEIC")
    assert photo.image_rgb.shape == (300, 400, 3)
    assert np.abs(photo.image_rgb.astype(int) - np.asarray(_gradient(), dtype=int)).mean() < 6
