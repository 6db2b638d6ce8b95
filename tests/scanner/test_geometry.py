"""Corner ordering, warps and cell outlines."""

from __future__ import annotations

import itertools
import threading
from unittest import mock

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner import geometry
from scanner.geometry import (
    PixelCentres,
    area_resize,
    band_cut,
    block_aligned_end,
    grid_polygons,
    link_lattice,
    order_corners,
    parse_corners,
    project,
    quick_reduce,
    resize_area,
    shrink_photo,
    warp_to_rectangle,
)

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


def _ramps(width: int, height: int) -> np.ndarray:
    """A float32 image whose channels are each pixel's x and y index (and zero): area means read back as positions."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    return np.dstack([xs, ys, np.zeros_like(xs)])


@pytest.mark.parametrize("reduce", [resize_area, quick_reduce])
@given(
    width=st.integers(40, 700),
    height=st.integers(40, 700),
    shrink=st.floats(1.0, 9.0),
)
@settings(max_examples=60, deadline=None)
def test_quick_reductions_keep_area_geometry_and_every_pixel(reduce, width: int, height: int, shrink: float) -> None:
    image = _ramps(width, height)
    size = (max(1, round(width / shrink)), max(1, round(height / shrink)))
    out = reduce(image, size)
    direct = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    assert out.shape == direct.shape
    error = (out - direct)[..., :2]  # on a ramp, area means are positions (photo px)
    assert abs(float(error.mean())) < 0.05  # no shift: a block off by one would move every pixel
    assert float(np.abs(error).max()) <= shrink / 2 + 0.05  # a block straddling a pixel's edge blurs it a little
    # a single lit pixel is never lost (bilinear taps under twofold leave no row or column out)
    dot = np.zeros((height, width), np.float32)
    dot[height // 2, width // 3] = 1.0
    assert float(reduce(dot, size).max()) > 0


def test_quick_reduce_is_bilinear_under_twofold_and_area_beyond() -> None:
    image = np.random.default_rng(4).integers(0, 256, (300, 400, 3), dtype=np.uint8)
    assert np.array_equal(quick_reduce(image, (267, 200)), cv2.resize(image, (267, 200), interpolation=cv2.INTER_LINEAR))
    assert np.array_equal(quick_reduce(image, (160, 120)), geometry.resize_area(image, (160, 120)))


@given(
    width=st.integers(8, 400),
    height=st.integers(8, 400),
    out_width=st.integers(1, 200),
    out_height=st.integers(1, 200),
    channels=st.sampled_from([1, 3]),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=150, deadline=None)
def test_area_resize_is_cv2_area_resize_to_the_bit(
    width: int, height: int, out_width: int, out_height: int, channels: int, seed: int
) -> None:
    image = np.random.default_rng(seed).integers(0, 256, (height, width, channels), dtype=np.uint8)
    if channels == 1:
        image = image[..., 0]
    size = (min(out_width, width), min(out_height, height))
    handed = []
    with mock.patch.object(geometry, "BANDS_MIN_PIXELS", 0), mock.patch.object(geometry, "_helper", _counting_helper(handed)):
        out = area_resize(image, size)
    assert np.array_equal(out, cv2.resize(image, size, interpolation=cv2.INTER_AREA))
    split = band_cut(height, size[1]) is not None or band_cut(width, size[0]) is not None
    assert len(handed) == int(split)  # half the work went to the other thread whenever it could


def _counting_helper(handed: list[object]):
    pool = geometry._helper()

    class Counting:
        def submit(self, *args):
            handed.append(args)
            return pool.submit(*args)

    return lambda: Counting()


def _reduce_in_child(queue) -> None:
    image = np.random.default_rng(3).integers(0, 256, (1500, 2000, 3), dtype=np.uint8)
    queue.put(area_resize(image, (320, 240)).sum())


def test_area_resize_works_in_a_child_forked_after_it_ran():
    import multiprocessing

    image = np.random.default_rng(3).integers(0, 256, (1500, 2000, 3), dtype=np.uint8)
    expected = area_resize(image, (320, 240)).sum()  # the parent's helper thread now exists
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_reduce_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the child hung on the parent's dead helper thread"
    assert queue.get(timeout=5) == expected


@pytest.mark.parametrize(("height", "out_height"), [(1500, 240), (1512, 240), (3000, 480), (1100, 366), (2250, 240)])
def test_band_cut_falls_on_a_whole_image_row_near_the_middle(height: int, out_height: int) -> None:
    cut = band_cut(height, out_height)
    assert cut is not None
    assert cut * height % out_height == 0
    assert abs(cut - out_height / 2) <= out_height // np.gcd(height, out_height) / 2


@given(
    box=st.tuples(st.integers(0, 300), st.integers(0, 200), st.integers(20, 500), st.integers(20, 400)),
    factor=st.floats(0.1, 0.9),
)
@settings(max_examples=60, deadline=None)
def test_shrink_photo_in_blocks_maps_photo_pixels_exactly(box: tuple[int, int, int, int], factor: float) -> None:
    image = _ramps(801, 601)
    x0, y0 = box[0], box[1]
    x1, y1 = min(801, x0 + box[2]), min(601, y0 + box[3])
    shrunk = shrink_photo(image, box=(x0, y0, x1, y1), factor=factor, centres=PixelCentres.CENTRES, blocks=True)
    height, width = shrunk.image_rgb.shape[:2]
    assert width >= round((x1 - x0) * factor) and height >= round((y1 - y0) * factor)  # widened, never narrowed
    ys, xs = np.mgrid[0:height, 0:width]
    spots = project(np.stack([xs.ravel(), ys.ravel()], axis=1).astype(np.float64), np.linalg.inv(shrunk.from_photo))
    error = shrunk.image_rgb[..., :2].reshape(-1, 2) - spots  # on a ramp, area means are positions (photo px)
    assert abs(float(error.mean())) < 0.05  # the homography follows the widened box: no shift
    assert float(np.abs(error).max()) <= 0.5 / factor + 0.05
    assert spots[:, 0].max() < 801 and spots[:, 1].max() < 601  # the widening stays inside the photo


@pytest.mark.parametrize(
    ("box", "factor", "expected"),
    [
        ((0, 0, 2000, 1500), 0.16, (2000, 1500)),  # divides already
        ((10, 20, 1011, 1020), 0.24, (1014, 1020)),  # 1001 wide: out to 1004 (blocks of 4)
        ((10, 20, 799, 600), 0.24, (799, 600)),  # at the photo's edge with no block that fits: as it was
        ((10, 20, 1011, 1020), 0.6, (1011, 1020)),  # under a twofold reduction: no blocks
    ],
)
def test_block_aligned_end_widens_inside_the_photo(box, factor, expected) -> None:
    shape = (600, 799, 3) if box[2] == 799 else (1600, 2000, 3)
    assert block_aligned_end(box, shape, factor) == expected


def test_in_pair_runs_the_second_on_the_helper_thread_and_returns_both_in_order() -> None:
    names = geometry.in_pair(lambda: threading.current_thread().name, lambda: threading.current_thread().name)
    assert names[0] == threading.current_thread().name
    assert names[1].startswith(geometry.HELPER_THREAD)
    # asked again from the helper thread (a reduction inside work handed over), it runs both there instead of waiting on itself
    nested = geometry.in_pair(lambda: 1, lambda: geometry.in_pair(lambda: threading.current_thread().name, lambda: 3))
    assert nested[0] == 1 and nested[1][0].startswith(geometry.HELPER_THREAD) and nested[1][1] == 3


def test_in_pair_raises_an_error_of_either_half() -> None:
    def broken() -> int:
        raise ValueError("half failed")

    with pytest.raises(ValueError, match="half failed"):
        geometry.in_pair(lambda: 1, broken)
    with pytest.raises(ValueError, match="half failed"):
        geometry.in_pair(broken, lambda: 1)


@settings(max_examples=60, deadline=None)
@given(
    cols=st.integers(2, 7),
    rows=st.integers(2, 7),
    tilt=st.floats(-0.0015, 0.0015),
    turn=st.floats(-0.6, 0.6),
    noise=st.floats(0, 2),
    seed=st.integers(0, 10_000),
)
def test_link_lattice_gives_each_centre_its_cell(cols, rows, tilt, turn, noise, seed) -> None:
    """Centres of a turned, tilted lattice (some missing, a spare one off it) each get their own cell."""
    rng = np.random.default_rng(seed)
    cells = np.array([(x, y) for y in range(rows) for x in range(cols)], np.float64)
    c, s = np.cos(turn), np.sin(turn)
    to_photo = np.array([[40 * c, -40 * s, 300], [40 * s, 40 * c, 300], [tilt, tilt / 2, 1]])

    def at(xy: np.ndarray) -> np.ndarray:
        seen = np.c_[xy, np.ones(len(xy))] @ to_photo.T
        return seen[:, :2] / seen[:, 2:]

    kept = np.flatnonzero((rng.random(len(cells)) >= 0.15) | (np.arange(len(cells)) == 0))
    points = np.vstack([at(cells[kept]) + rng.normal(0, noise, (len(kept), 2)), [[-500.0, -500.0]]])
    origin, along, down = at(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    coords = link_lattice(points, 0, along - origin, down - origin, tolerance=0.35, reaches=(1, 2))
    assert len(points) - 1 not in coords  # the spare centre, off the lattice, is not linked
    for index, cell in coords.items():
        assert cell == tuple(int(k) for k in cells[kept[index]])
    # and every centre reached from the start by steps of one or two cells along a row or column is linked
    shown = {tuple(int(k) for k in cells[i]) for i in kept}
    reached, frontier = {(0, 0)}, [(0, 0)]
    while frontier:
        x, y = frontier.pop()
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            near = next((n for n in ((x + dx, y + dy), (x + 2 * dx, y + 2 * dy)) if n in shown), None)
            if near is not None and near not in reached:
                reached.add(near)
                frontier.append(near)
    assert set(coords.values()) == reached


def test_a_lit_pixel_survives_a_reduction_twofold_one_way_and_less_the_other() -> None:
    """147 x 149 to 74 x 74: the rows shrink by over two, the columns by under two (found by the property test above)."""
    dot = np.zeros((149, 147), np.float32)
    dot[149 // 2, 147 // 3] = 1.0
    assert float(quick_reduce(dot, (74, 74)).max()) > 0
