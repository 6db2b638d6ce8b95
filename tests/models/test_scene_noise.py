"""The renderer's sensor noise: one fixed tile, laid over the photo from a random offset."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models import scene


@settings(max_examples=60, deadline=None)
@given(
    tile_h=st.integers(1, 9),
    tile_w=st.integers(1, 9),
    dy=st.integers(0, 8),
    dx=st.integers(0, 8),
    height=st.integers(1, 40),
    width=st.integers(1, 40),
)
def test_wrapped_tile_repeats_the_tile_from_its_offset(tile_h: int, tile_w: int, dy: int, dx: int, height: int, width: int) -> None:
    tile = np.random.default_rng(tile_h * 10 + tile_w).standard_normal((tile_h, tile_w, 3)).astype(np.float32)
    dy, dx = dy % tile_h, dx % tile_w
    grain = scene._wrapped(tile, (dy, dx), (height, width))
    rows = (np.arange(height) + dy) % tile_h
    cols = (np.arange(width) + dx) % tile_w
    assert grain.shape == (height, width, 3)
    assert np.array_equal(grain, tile[rows][:, cols])


def test_noise_tile_is_shared_and_cannot_be_changed() -> None:
    tile = scene._noise_tile()
    assert tile is scene._noise_tile()
    assert tile.shape == (509, 509, 3) and not tile.flags.writeable
    assert abs(float(tile.mean())) < 0.01 and abs(float(tile.std()) - 1) < 0.01
