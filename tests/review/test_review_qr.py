"""The review screen's own QR encoder: every version and level it offers decodes, with OpenCV's reader, to the text."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.errors import StateError
from tablescan.review.qr import _EXP, BLOCKS, MAX_VERSION, _data_capacity, _multiply, error_codewords, qr_matrix, qr_png


def byte_capacity(version: int, level: str) -> int:
    """The most bytes a code of that version and level holds (byte mode)."""
    count_bits = 8 if version < 10 else 16
    return (8 * _data_capacity(version, level) - 4 - count_bits) // 8


@pytest.mark.parametrize("level", sorted(BLOCKS))
@pytest.mark.parametrize("version", range(1, MAX_VERSION + 1))
def test_a_full_code_of_each_version_decodes_to_its_text(version: int, level: str, read_qr) -> None:
    rng = random.Random(version * 10 + len(level))
    length = byte_capacity(version, level)  # full: one byte more needs the next version
    text = "".join(rng.choice(string.ascii_letters + string.digits + "/:?=.-_") for _ in range(length))
    assert len(qr_matrix(text, level)) == 17 + 4 * version
    if version < MAX_VERSION:
        assert len(qr_matrix(text + "x", level)) == 17 + 4 * (version + 1)
    assert read_qr(qr_png(text, level)) == text


def test_a_join_address_with_its_token_decodes(read_qr) -> None:
    address = "http://192.168.1.23:8000/?token=Qx3-_vR8bT2pLmN0aZ7yW4cK9dE1fG6h"
    assert read_qr(qr_png(address)) == address


def test_non_ascii_text_round_trips_as_utf8(read_qr) -> None:
    assert read_qr(qr_png("Zoë's café night", "L")) == "Zoë's café night"


def test_the_join_address_decodes_whatever_port_the_screen_got(read_qr) -> None:
    """The screen serves on whatever port is free; CI once drew one (51311) whose code OpenCV's classic
    search alone misses. Sweep ports, those two included, so every such code is read."""
    ports = [51311, 51318, *random.Random(7).sample(range(1024, 65536), 150)]
    unread = [
        port
        for port in ports
        if read_qr(qr_png(f"http://127.0.0.1:{port}/?token=night-token")) != f"http://127.0.0.1:{port}/?token=night-token"
    ]
    assert unread == []


def _value_at(codeword: list[int], x: int) -> int:
    value = 0
    for coefficient in codeword:
        value = _multiply(value, x) ^ coefficient
    return value


@given(
    data=st.lists(st.integers(0, 255), min_size=1, max_size=120),
    degree=st.sampled_from(sorted({degree for level in BLOCKS.values() for degree, _ in level.values()})),
)
def test_each_block_with_its_error_codewords_is_a_reed_solomon_codeword(data: list[int], degree: int) -> None:
    """Whatever a decoder makes of it, a block and its codewords vanish at the generator's roots a^0..a^(d-1)."""
    codeword = data + error_codewords(data, degree)
    assert [_value_at(codeword, _EXP[power]) for power in range(degree)] == [0] * degree


@pytest.mark.parametrize(
    ("text", "level", "message"),
    [("x" * (byte_capacity(MAX_VERSION, "M") + 1), "M", "do not fit"), ("hello", "Q", "level 'Q'")],
)
def test_what_it_cannot_encode_is_refused_with_a_reason(text: str, level: str, message: str) -> None:
    with pytest.raises(StateError, match=message):
        qr_matrix(text, level)
