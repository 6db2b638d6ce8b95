"""The review screen's own QR encoder: every version and level it offers decodes, with OpenCV's reader, to the text."""

from __future__ import annotations

import random
import string

import cv2
import numpy as np
import pytest

from scoring.errors import StateError
from tablescan.review.qr import BLOCKS, MAX_VERSION, _data_capacity, qr_matrix, qr_png


def byte_capacity(version: int, level: str) -> int:
    """The most bytes a code of that version and level holds (byte mode)."""
    count_bits = 8 if version < 10 else 16
    return (8 * _data_capacity(version, level) - 4 - count_bits) // 8


def decoded(png: bytes) -> str:
    """The text OpenCV reads from the PNG; its classic finder search misses the odd dense code that its
    ArUco-based one finds (the same decoder then reads it), so both are asked."""
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
    text, _points, _straight = cv2.QRCodeDetector().detectAndDecode(image)
    if not text and hasattr(cv2, "QRCodeDetectorAruco"):
        text, _points, _straight = cv2.QRCodeDetectorAruco().detectAndDecode(image)
    return text


@pytest.mark.parametrize("level", sorted(BLOCKS))
@pytest.mark.parametrize("version", range(1, MAX_VERSION + 1))
def test_a_full_code_of_each_version_decodes_to_its_text(version: int, level: str) -> None:
    rng = random.Random(version * 10 + len(level))
    length = byte_capacity(version, level)  # full: one byte more needs the next version
    text = "".join(rng.choice(string.ascii_letters + string.digits + "/:?=.-_") for _ in range(length))
    assert len(qr_matrix(text, level)) == 17 + 4 * version
    if version < MAX_VERSION:
        assert len(qr_matrix(text + "x", level)) == 17 + 4 * (version + 1)
    assert decoded(qr_png(text, level)) == text


def test_a_join_address_with_its_token_decodes() -> None:
    address = "http://192.168.1.23:8000/?token=Qx3-_vR8bT2pLmN0aZ7yW4cK9dE1fG6h"
    assert decoded(qr_png(address)) == address


def test_non_ascii_text_round_trips_as_utf8() -> None:
    assert decoded(qr_png("Zoë's café night", "L")) == "Zoë's café night"


@pytest.mark.parametrize(
    ("text", "level", "message"),
    [("x" * (byte_capacity(MAX_VERSION, "M") + 1), "M", "do not fit"), ("hello", "Q", "level 'Q'")],
)
def test_what_it_cannot_encode_is_refused_with_a_reason(text: str, level: str, message: str) -> None:
    with pytest.raises(StateError, match=message):
        qr_matrix(text, level)
