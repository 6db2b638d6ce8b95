"""One decoder for every layer: calibration reads photos with exactly the scanner's pixels and messages."""

from __future__ import annotations

import io
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image, ImageCms, ImageOps

from calibration.errors import CalibrationError
from calibration.image import DecodedImage, _decode_jpeg_fast, decode_image, load_image, probe_image
from scanner.errors import PhotoError
from scanner.photo import load_photo


def _encode(image: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def _noise(width: int = 320, height: int = 260, mode: str = "RGB") -> Image.Image:
    rgb = np.random.default_rng(7).integers(0, 256, (height, width, 4), dtype=np.uint8)
    return Image.fromarray(rgb, "RGBA").convert(mode)


def _sideways() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6
    return _encode(_noise(), "JPEG", exif=exif, quality=92)


def _with_profile() -> bytes:
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("LAB")).tobytes()
    return _encode(_noise(), "JPEG", quality=92, icc_profile=profile)


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        (_sideways(), (320, 260, 3)),  # EXIF orientation applied
        (_with_profile(), (260, 320, 3)),  # converted from its ICC profile (or kept, identically, when it cannot be)
        (_encode(_noise(mode="RGBA"), "PNG"), (260, 320, 3)),  # composited on white, not on black
        (_encode(_noise(mode="LA"), "PNG"), (260, 320, 3)),
        (_encode(_noise(mode="P"), "PNG"), (260, 320, 3)),
    ],
    ids=["exif", "icc", "rgba", "la", "palette"],
)
def test_calibration_sees_the_scanners_pixels(tmp_path: Path, data: bytes, shape: tuple[int, int, int]) -> None:
    path = tmp_path / "photo.img"
    path.write_bytes(data)
    image = load_image(path)
    assert image.shape == shape
    assert image.tobytes() == load_photo(path).image_rgb.tobytes()


def test_transparency_becomes_white_for_calibration_too(tmp_path: Path) -> None:
    path = tmp_path / "clear.png"
    path.write_bytes(_encode(Image.fromarray(np.zeros((250, 250, 4), np.uint8), "RGBA"), "PNG"))
    assert (load_image(path) == 255).all()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b"hello, not an image", "not an image Pillow can read (expected JPEG, PNG, WebP or HEIC)"),
        (_encode(_noise(), "JPEG")[:300], "corrupt or truncated"),
    ],
    ids=["empty", "text", "truncated"],
)
@pytest.mark.parametrize(("error", "min_side_px"), [(CalibrationError, 1), (PhotoError, 240)])
def test_each_layer_raises_its_own_class_with_the_same_words(data: bytes, message: str, error: type, min_side_px: int) -> None:
    with pytest.raises(error) as caught:
        decode_image(data, "IMG_2.jpg", error=error, min_side_px=min_side_px)
    assert str(caught.value).startswith("IMG_2.jpg: ") and message in str(caught.value)


@pytest.mark.parametrize(
    ("min_side_px", "raises"),
    [(1, False), (100, False), (101, True)],
)
def test_min_side_is_the_callers_policy(min_side_px: int, raises: bool) -> None:
    data = _encode(_noise(150, 100), "PNG")
    if raises:
        with pytest.raises(CalibrationError, match=r"150x100 px is too small; the short side must be at least 101 px"):
            decode_image(data, "small.png", min_side_px=min_side_px)
    else:
        assert decode_image(data, "small.png", min_side_px=min_side_px).full_size == (150, 100)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("gone.png", "gone.png: no such file"),
        ("folder", "folder: is a directory, expected a photo"),
        ("notes.txt", r"notes.txt: not a readable image \(expected JPEG, PNG, WebP or HEIC\)"),
    ],
)
def test_load_image_names_the_file(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(CalibrationError, match=message):
        load_image(tmp_path / name)


def test_decoded_image_rejects_a_grey_array() -> None:
    with pytest.raises(ValueError, match=r"image_rgb: expected \(H, W, 3\) uint8 RGB"):
        DecodedImage(np.zeros((4, 4), np.uint8), (4, 4))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (_encode(_noise(), "PNG"), ("PNG", (320, 260))),
        (_sideways(), ("JPEG", (260, 320))),  # the size as shown, EXIF orientation applied
        (b"%PDF-1.4 not a photo", "not a readable image (not a photo, or damaged); expected "),
        (b"", "empty file"),
    ],
    ids=["png", "sideways", "pdf", "empty"],
)
def test_probe_image_checks_without_decoding(data: bytes, expected) -> None:
    if isinstance(expected, str):
        with pytest.raises(CalibrationError, match=rf"^up\.jpg: {re.escape(expected)}") as refused:
            probe_image(data, "up.jpg")
        assert "Error" not in str(refused.value)  # the file's fault in words, no exception names
    else:
        assert probe_image(data, "up.jpg") == expected


def _jpeg_with_orientation(orientation: int, *, width: int = 640, height: int = 480, tail: bytes = b"") -> bytes:
    """A JPEG of blurred noise (every pixel differs) stored with EXIF ``orientation``; ``tail`` is appended."""
    rng = np.random.default_rng(orientation)
    noise = cv2.GaussianBlur(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), (0, 0), 1.5)
    exif = Image.Exif()
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    Image.fromarray(noise, "RGB").save(buffer, format="JPEG", quality=90, exif=exif)
    return buffer.getvalue() + tail


def _pillow_reference(data: bytes, reduce: int) -> np.ndarray:
    """What Pillow alone decodes: drafted ``reduce`` times smaller, turned upright by ``ImageOps.exif_transpose``."""
    with Image.open(io.BytesIO(data)) as image:
        if reduce > 1:
            image.draft("RGB", (image.size[0] // reduce, image.size[1] // reduce))
        return np.asarray(ImageOps.exif_transpose(image).convert("RGB"))


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize(("min_long_side_px", "reduce"), [(None, 1), (300, 2), (150, 4)])
def test_plain_jpegs_decode_through_opencv_to_pillows_pixels(orientation: int, min_long_side_px: int | None, reduce: int) -> None:
    data = _jpeg_with_orientation(orientation)
    expected = _pillow_reference(data, reduce)
    with Image.open(io.BytesIO(data)) as image:
        fast = _decode_jpeg_fast(data, image, orientation, reduce)
    assert fast is not None and fast.tobytes() == expected.tobytes()
    decoded = decode_image(data, "side.jpg", min_long_side_px=min_long_side_px)
    assert decoded.image_rgb.tobytes() == expected.tobytes()
    assert decoded.full_size == ((480, 640) if orientation >= 5 else (640, 480))
    assert decoded.scale == reduce
    assert decoded.notes == (() if orientation == 1 else (f"exif-orientation-{orientation}",))


def test_a_truncated_jpeg_is_left_to_pillow_which_refuses_it() -> None:
    data = _jpeg_with_orientation(1)[:-300]  # no end-of-image marker
    with Image.open(io.BytesIO(data)) as image:
        assert _decode_jpeg_fast(data, image, 1, 2) is None
    with pytest.raises(CalibrationError, match="corrupt or truncated"):
        decode_image(data, "cut.jpg", min_long_side_px=300)


def test_an_odd_sized_jpeg_reduces_as_pillow_rounds_it() -> None:
    data = _jpeg_with_orientation(6, width=641, height=479, tail=b"\0\0")  # padding after the end-of-image marker
    with Image.open(io.BytesIO(data)) as image:
        assert _decode_jpeg_fast(data, image, 6, 2) is not None
    decoded = decode_image(data, "odd.jpg", min_long_side_px=300)
    assert decoded.image_rgb.shape == (321, 240, 3)  # upright; the sides round up, as libjpeg scales them
    assert decoded.image_rgb.tobytes() == _pillow_reference(data, 2).tobytes()
    assert decoded.scale == 641 / 321
