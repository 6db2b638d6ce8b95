"""Corner ordering, warps and cell outlines."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.geometry import grid_polygons, order_corners, parse_corners, project, warp_to_rectangle

QUAD = np.array([[100, 80], [520, 60], [560, 400], [90, 430]], dtype=np.float32)


@pytest.mark.parametrize("permutation", list(itertools.permutations(range(4))))
def test_order_corners_is_tl_tr_br_bl_whatever_the_input_order(permutation) -> None:
    assert np.allclose(order_corners(QUAD[list(permutation)]), QUAD)


@settings(max_examples=60, deadline=None)
@given(
    angle=st.floats(-0.7, 0.7),
    cx=st.floats(300, 700),
    cy=st.floats(300, 700),
    half=st.floats(50, 250),
)
def test_order_corners_on_rotated_squares(angle: float, cx: float, cy: float, half: float) -> None:
    c, s = np.cos(angle), np.sin(angle)
    local = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    square = local @ np.array([[c, s], [-s, c]]) + [cx, cy]
    shuffled = square[[2, 0, 3, 1]]
    assert np.allclose(order_corners(shuffled), square, atol=1e-3)


def test_warp_maps_corners_and_back() -> None:
    image = np.zeros((500, 640, 3), np.uint8)
    rectified, back = warp_to_rectangle(image, QUAD, 250, 200)
    assert rectified.shape == (200, 250, 3)
    assert np.allclose(project([[0, 0], [250, 0], [250, 200], [0, 200]], back), QUAD, atol=1e-3)


def test_grid_polygons_tile_the_board() -> None:
    _, back = warp_to_rectangle(np.zeros((500, 640, 3), np.uint8), QUAD, 500, 400)
    polygons = grid_polygons(4, 5, 500, 400, back)
    assert len(polygons) == 20
    assert np.allclose(polygons[0][0], QUAD[0], atol=0.1)
    assert np.allclose(polygons[4][1], QUAD[1], atol=0.1)
    assert np.allclose(polygons[19][2], QUAD[2], atol=0.1)
    assert np.allclose(polygons[0][2], polygons[6][0], atol=0.1)  # neighbours share corners


@pytest.mark.parametrize(
    ("text", "ok"),
    [("100,80,520,60,560,400,90,430", True), ("1,2,3", False), ("a,b,c,d,e,f,g,h", False)],
)
def test_parse_corners(text: str, ok: bool) -> None:
    if ok:
        assert np.allclose(parse_corners(text), QUAD)
    else:
        with pytest.raises(ValueError, match="expected 8 numbers"):
            parse_corners(text)
