"""The price octagon reader's patches and how its evidence joins the tile classifier's (``scanner.alhambra.octagon``)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.alhambra import octagon
from scanner.alhambra.decode import TileEvidence, UprightTiles, check_octagons
from scanner.alhambra.octagon import (
    NORTH_SURE,
    OCTAGON_OFFSET,
    PATCH_PX,
    PRICE_HALF,
    PRICE_LOOKS,
    PRICE_SURE,
    OctagonPredictions,
    classifier_north,
    corner_offsets,
    crop_octagons,
    merge_octagons,
    octagon_north,
    octagon_places,
    pool_readings,
    price_looks,
    price_patches,
    read_both_prices,
)
from scanner.alhambra.tiles import KINDS, PRICES, TilePredictions, rotate_cell_float
from scanner.errors import BoardNotFoundError
from scanner.photo import Photo
from scoring.alhambra.palace import BUILDING_TYPES

PITCH = 120.0


def _tiles_photo(turn: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """A grey photo of three tiles in a row, each with a red disc where its octagon is when the art is turned ``turn``."""
    image = np.full((400, 600, 3), 128, np.uint8)
    grid = np.array([[PITCH, 0, 150], [0, PITCH, 200], [0, 0, 1]], np.float64)  # cell (x, y) centred at (150 + 120x, 200 + 120y)
    cells = [(0, 0), (1, 0), (2, 0)]
    dx, dy = corner_offsets()[turn]
    for x, y in cells:
        cx, cy, _ = grid @ np.array([x + dx, y + dy, 1.0])
        cv2.circle(image, (round(cx), round(cy)), 14, (220, 30, 30), -1)
    return image, grid, cells


def test_the_octagon_sits_bottom_right_of_an_upright_tile() -> None:
    # the renderer's octagon centre (art.OCTAGON_CENTRE, 0.79 of the tile) is where the scanner looks
    from models.alhambra.art import OCTAGON_CENTRE

    assert pytest.approx(OCTAGON_CENTRE - 0.5) == OCTAGON_OFFSET
    assert corner_offsets()[0] == pytest.approx((OCTAGON_OFFSET, OCTAGON_OFFSET))


@pytest.mark.parametrize("turn", range(4))
def test_the_patch_of_the_true_turn_holds_the_octagon_centred(turn: int) -> None:
    image, grid, cells = _tiles_photo(turn)
    patches = crop_octagons(image, grid, cells)
    assert patches.shape == (3, 4, PATCH_PX, PATCH_PX, 3)
    middle = slice(PATCH_PX // 2 - 4, PATCH_PX // 2 + 4)
    for i in range(3):
        for k in range(4):
            red = patches[i, k, middle, middle, 0].mean() - patches[i, k, middle, middle, 2].mean()
            if k == turn:
                assert red > 150, f"cell {i}: the octagon is not at the centre of patch {k}"
            else:
                assert red < 20, f"cell {i}: patch {k} shows an octagon that is not there"


def test_patches_are_turned_upright() -> None:
    # a mark above the octagon in the upright art stays above it in the patch, whichever way the tile lies
    for turn in range(4):
        image, grid, cells = _tiles_photo(turn)
        up = np.array(corner_offsets()[turn]) + np.array(rotate_cell_float((0.0, -0.12), -turn))  # the art's up, in the lattice
        for x, y in cells:
            px, py, _ = grid @ np.array([x + up[0], y + up[1], 1.0])
            cv2.circle(image, (round(px), round(py)), 4, (30, 30, 220), -1)
        patch = crop_octagons(image, grid, cells)[0, turn]
        blue = patch[..., 2].astype(int) - patch[..., 0].astype(int)
        ys, xs = np.nonzero(blue > 100)
        assert len(ys) and ys.mean() < PATCH_PX / 2 - 8 and abs(xs.mean() - PATCH_PX / 2) < 4


def _predictions(n: int, rotation: np.ndarray | None = None) -> TilePredictions:
    kind = np.full((n, len(KINDS)), 1.0 / len(KINDS))
    walls = np.full((n, 4), 0.5)
    price = np.full((n, len(PRICES)), 1.0 / len(PRICES))
    rotation = np.full((n, 4), 0.25) if rotation is None else rotation
    return TilePredictions(kind, walls, price, rotation)


def _octagons(present: np.ndarray, kind_at: list[int], price_at: list[int]) -> OctagonPredictions:
    n = len(present)
    kind = np.full((n, 4, len(BUILDING_TYPES)), 0.01)
    price = np.full((n, 4, len(PRICES)), 0.01)
    for i in range(n):
        kind[i, :, kind_at[i]] = 0.95
        price[i, :, price_at[i]] = 0.89
    return OctagonPredictions(present, kind / kind.sum(-1, keepdims=True), price / price.sum(-1, keepdims=True))


def test_the_octagons_choose_north_type_and_price() -> None:
    present = np.array([[0.02, 0.03, 0.97, 0.01], [0.05, 0.02, 0.9, 0.1]])
    merged = merge_octagons(_predictions(3), [0, 2], _octagons(present, [5, 1], [3, 9]))
    assert merged.rotation[[0, 2]].argmax(axis=1).tolist() == [2, 2]
    assert merged.rotation[1].tolist() == [0.25] * 4  # a cell that holds no tile is left alone
    assert KINDS[int(merged.kind[0].argmax())] == BUILDING_TYPES[5]
    assert KINDS[int(merged.kind[2].argmax())] == BUILDING_TYPES[1]
    assert PRICES[int(merged.price[2].argmax())] == PRICES[9]
    # P(no tile) and P(fountain) are the tile classifier's
    assert merged.kind[0, :2].tolist() == pytest.approx([1.0 / len(KINDS)] * 2)
    assert merged.kind.sum(axis=1) == pytest.approx(np.ones(3))
    # with the types pooled with the close patches', those stand in for the corner patch's
    kinds = np.full((2, len(BUILDING_TYPES)), 0.02)
    kinds[:, 3] = 0.9
    pooled = merge_octagons(_predictions(3), [0, 2], _octagons(present, [5, 1], [3, 9]), kinds=kinds / kinds.sum(axis=1, keepdims=True))
    assert [KINDS[int(pooled.kind[row].argmax())] for row in (0, 2)] == [BUILDING_TYPES[3]] * 2
    assert pooled.rotation.tolist() == merged.rotation.tolist() and pooled.price.tolist() == merged.price.tolist()


def test_a_sure_tile_rotation_is_outvoted_only_by_many_octagons() -> None:
    # the classifier sure of turn 0 for one tile; the octagons of three tiles agree on turn 1
    rotation = np.array([[0.9, 0.04, 0.03, 0.03]] + [[0.25] * 4] * 2)
    present = np.array([[0.05, 0.9, 0.05, 0.05]] * 3)
    merged = merge_octagons(_predictions(3, rotation), [0, 1, 2], _octagons(present, [0, 0, 0], [0, 0, 0]))
    assert int(np.log(merged.rotation).sum(axis=0).argmax()) == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0.001, 0.999), min_size=4, max_size=4), min_size=1, max_size=6))
def test_north_votes_are_a_distribution_led_by_the_likeliest_corner(rows: list[list[float]]) -> None:
    present = np.array(rows)
    octagons = _octagons(present, [0] * len(rows), [0] * len(rows))
    votes = np.exp(octagons.north_log_votes())
    assert votes.sum(axis=1) == pytest.approx(np.ones(len(rows)))
    assert (votes.argmax(axis=1) == present.argmax(axis=1)).all() or np.allclose(present.max(axis=1), np.sort(present, axis=1)[:, -2])


def test_wrong_shapes_are_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        OctagonPredictions(np.zeros((2, 4)), np.zeros((2, 4, 5)), np.zeros((2, 4, len(PRICES))))


def _upright(cells: list[tuple[int, int]], north: int) -> UprightTiles:
    ev = TileEvidence(np.full(len(KINDS), 1.0 / len(KINDS)), np.full(4, 0.5), np.full(len(PRICES), 1.0 / len(PRICES)))
    crop = np.zeros((4, 4, 3), np.uint8)
    return UprightTiles(north, dict.fromkeys(cells, ev), {c: (c[0] + 10, c[1]) for c in cells}, dict.fromkeys(cells, crop))


@pytest.mark.parametrize(("with_octagon", "refused"), [(5, False), (3, False), (2, True), (0, True)])
def test_a_reading_whose_buildings_show_no_octagon_is_no_palace(with_octagon: int, refused: bool) -> None:
    # five buildings beside the fountain at (0, 0); north is turn 2, so the octagon must be in patch 2
    cells = [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1)]
    tiles = _upright(cells, north=2)
    present = {}
    for i, cell in enumerate(cells[1:]):
        p = np.full(4, 0.02)
        p[2 if i < with_octagon else 0] = 0.97  # the others: an octagon-like mark, but in the wrong corner
        present[(cell[0] + 10, cell[1])] = p
    present[(10, 0)] = np.full(4, 0.01)  # the fountain has none
    photo = Photo(np.zeros((8, 8, 3), np.uint8), "window.jpg", (8, 8))
    if refused:
        with pytest.raises(BoardNotFoundError, match=rf"window.jpg: no Alhambra palace read: only {with_octagon} of the 5 .*price octagon"):
            check_octagons(photo, tiles, (0, 0), present)
    else:
        check_octagons(photo, tiles, (0, 0), present)


# --------------------------------------------------------------------------------------------- price looks


def _bar_patch() -> np.ndarray:
    """A black patch with a white upright bar through its centre (a digit "1")."""
    patch = np.zeros((PATCH_PX, PATCH_PX, 3), np.uint8)
    patch[8:40, 22:26] = 255
    return patch


def test_a_look_slants_and_scales_about_the_patch_centre() -> None:
    patch = _bar_patch()
    same, slanted, smaller = price_looks(patch[None], ((0.0, 1.0), (0.3, 1.0), (0.0, 0.5)))[0]
    assert np.array_equal(same, patch)
    # slanted: the bar's middle stays put, its bottom moves right and its top left (x' = x + 0.3 (y - centre))
    columns = [float(np.nonzero(slanted[row, :, 0] > 127)[0].mean()) for row in (12, 24, 36)]
    assert columns[2] > columns[1] + 2 > columns[0] + 4
    assert abs(columns[1] - 23.5) < 1.0
    # scaled by 0.5 about the centre: the 32-px bar is 16 px long, still centred
    rows = np.nonzero(smaller[:, 24, 0] > 127)[0]
    assert 14 <= rows.min() <= 17 and 30 <= rows.max() <= 33


class _PriceModel:
    """A stand-in reader: its price logits say how much ink lies right of the patch's middle column."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        self.batches.append(len(batch))
        right = batch[:, 0, :, PATCH_PX // 2 :].mean(axis=(1, 2))
        logits = np.zeros((len(batch), len(PRICES)))
        logits[:, 0] = 40 * right
        return {"price": logits}


def _read_once(model: _PriceModel, patch: np.ndarray) -> np.ndarray:
    logits = model.run(patch.transpose(2, 0, 1)[None].astype(np.float32) / 255.0)["price"][0]
    return logits - np.logaddexp.reduce(logits)


def test_the_price_pools_both_patches_and_reads_only_the_unsure_again_in_one_batch() -> None:
    corner = np.stack([_bar_patch()] * 3)
    close = np.zeros((3, PATCH_PX, PATCH_PX, 3), np.uint8)
    close[:, :, 30:32] = 255  # ink right of the middle: the stand-in reads price "2" at ~0.7
    corner_first = np.full((3, len(PRICES)), 0.001 / (len(PRICES) - 1))
    corner_first[0] = 1e-6 / (len(PRICES) - 1)
    corner_first[0, 0] = 1 - 1e-6  # read "2" surely, as the close patch leans to: stands
    corner_first[1] = 1 / len(PRICES)  # read nothing surely: both patches looked at again
    corner_first[2, 1] = 0.999  # surely "3", against the close patch's "2": looked at again
    model = _PriceModel()
    close_first = np.exp(_read_once(_PriceModel(), close[0]))
    pooled = read_both_prices(model, {"price": 1.0}, corner, corner_first, close, np.stack([close_first] * 3))
    assert model.batches == [2 * 2 * len(PRICE_LOOKS)]  # one batch: the two unsure tiles' patches, each in every look
    assert np.allclose(pooled[0], pool_readings(close_first, corner_first[0]))
    assert pooled[0].max() >= PRICE_SURE
    for row in (1, 2):
        looked = []
        for patch, first in ((corner[row], corner_first[row]), (close[row], close_first)):
            logs = [np.log(np.clip(first, 1e-9, 1))] + [_read_once(_PriceModel(), look) for look in price_looks(patch[None])[0]]
            mean = np.exp(np.mean(logs, axis=0))
            looked.append(mean / mean.sum())
        assert np.allclose(pooled[row], pool_readings(looked[1], looked[0]))
    assert np.allclose(pooled.sum(axis=1), 1.0)
    no_looks = read_both_prices(_PriceModel(), {}, corner, corner_first, close, np.stack([close_first] * 3), looks=())
    assert np.allclose(no_looks, pool_readings(np.stack([close_first] * 3), corner_first))


def test_pooling_two_readings_is_their_normalised_geometric_mean() -> None:
    close = np.array([[0.7, 0.2, 0.1]])
    corner = np.array([[0.1, 0.6, 0.3]])
    pooled = pool_readings(close, corner)
    expected = np.sqrt(close * corner)
    assert np.allclose(pooled, expected / expected.sum())
    assert np.allclose(pool_readings(close, corner, weight=1.0), close)


def test_the_reader_and_the_merge_agree_on_north() -> None:
    rotation = np.full((3, 4), 0.25)
    present = np.full((3, 4), 0.02)
    present[:, 3] = 0.97
    predictions, octagons = _predictions(3, rotation), _octagons(present, [1, 2, 3], [4, 5, 6])
    north, votes = octagon_north(predictions, [0, 1, 2], octagons)
    assert north == 3 and votes.shape == (3, 4)
    prices = np.eye(len(PRICES))[[7, 8, 9]]
    merged = merge_octagons(predictions, [0, 1, 2], octagons, prices)
    assert [int(np.argmax(row)) for row in merged.price] == [7, 8, 9]  # the pooled prices, not the patch's own


@pytest.mark.parametrize("turn", range(4))
def test_one_corner_cut_alone_is_that_corner_of_the_four(turn: int) -> None:
    image, grid, cells = _tiles_photo(turn)
    one = crop_octagons(image, grid, cells, (turn,))
    assert one.shape == (3, 1, PATCH_PX, PATCH_PX, 3)
    difference = np.abs(one[:, 0].astype(int) - crop_octagons(image, grid, cells)[:, turn].astype(int))
    assert difference.mean() < 2  # the same patch, but for the shrink fitted to fewer centres


def test_a_corner_not_read_votes_for_no_turn() -> None:
    present = np.full((2, 4), np.nan)
    present[:, 1] = 0.99
    votes = OctagonPredictions(
        present, np.full((2, 4, len(BUILDING_TYPES)), np.nan), np.full((2, 4, len(PRICES)), np.nan)
    ).north_log_votes()
    assert np.isfinite(votes).all()
    assert np.allclose(np.exp(votes[:, 1]), 99 / (99 + 3))  # the octagon seen against three corners as likely as not
    assert np.allclose(votes[:, [0, 2, 3]], votes[:, [0]])


def test_the_classifier_names_north_only_when_sure() -> None:
    rotation = np.full((3, 4), 0.01)
    rotation[:, 2] = 0.97
    assert classifier_north(_predictions(3, rotation), [0, 1, 2]) == 2  # 3 x log(97) = 13.7 nats ahead
    assert classifier_north(_predictions(3, rotation), [0]) is None  # one tile: 4.6 nats
    assert 3 * np.log(97) >= NORTH_SURE > np.log(97)
    assert classifier_north(_predictions(3), [0, 1, 2]) is None and classifier_north(_predictions(0), []) is None


def test_a_corner_not_read_counts_as_no_octagon_seen() -> None:
    from scanner.alhambra.decode import octagon_seen

    tiles = _upright([(1, 0)], north=2)  # lattice cell (11, 0)
    assert octagon_seen(tiles, {(11, 0): np.array([np.nan, np.nan, 0.8, np.nan])}, (1, 0)) == 0.8
    assert octagon_seen(tiles, {(11, 0): np.array([0.9, 0.1, np.nan, 0.2])}, (1, 0)) == 0.0


def test_an_octagon_seen_in_either_look_at_north_is_seen() -> None:
    from scanner.alhambra.reader import OctagonRead

    present = np.array([[0.02, 0.9, 0.1, 0.0], [0.01, 0.03, 0.2, 0.0], [0.05, np.nan, np.nan, np.nan], [0.0, 0.99, 0.0, 0.0]])
    predictions = OctagonPredictions(present, np.full((4, 4, len(BUILDING_TYPES)), 1 / 6), np.full((4, 4, len(PRICES)), 1 / 12))
    cells = ((0, 0), (1, 0), (2, 0), (3, 0))
    close = np.array([0.3, 0.97, 0.8, 0.1])
    read = OctagonRead(cells, predictions, np.zeros((4, len(PRICES))), 1, np.zeros((4, 2)), np.eye(3), np.zeros((4, 6)), close)
    seen = read.present()
    # at north (corner 1) the larger of the two looks; a corner not read takes the close look; the other corners stay
    assert [float(seen[cell][1]) for cell in cells] == [0.9, 0.97, 0.8, 0.99]
    assert [float(seen[cell][0]) for cell in cells] == [0.02, 0.01, 0.05, 0.0] and np.isnan(seen[(2, 0)][2])
    assert np.array_equal(present[:, 1], [0.9, 0.03, np.nan, 0.99], equal_nan=True)  # the reader's own output is left as read


def _octagon_photo(turn: int, moved: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """A textured photo of a 2x3 palace whose tiles each carry an octagon (turned ``turn``) moved by ``moved`` (grid units)."""
    rng = np.random.default_rng(turn)
    image = cv2.GaussianBlur(rng.integers(90, 170, (520, 700, 3), dtype=np.uint8), (0, 0), 2)
    grid = np.array([[PITCH, 0, 170], [0, PITCH, 160], [0, 0, 1]], np.float64)
    cells = [(x, y) for y in range(2) for x in range(3)]
    dx, dy = corner_offsets()[turn]
    angles = np.deg2rad(22.5 + 45 * np.arange(8))
    for (x, y), (mx, my) in zip(cells, moved):
        cx, cy, _ = grid @ np.array([x + dx + mx, y + dy + my, 1.0])
        points = np.stack([cx + 0.135 * PITCH * np.cos(angles), cy + 0.135 * PITCH * np.sin(angles)], axis=1)
        cv2.fillPoly(image, [np.round(points * 16).astype(np.int32)], (40, 160, 60), cv2.LINE_AA, shift=4)
        cv2.polylines(image, [np.round(points * 16).astype(np.int32)], True, (230, 200, 60), 2, cv2.LINE_AA, shift=4)
    return image, grid, cells


@pytest.mark.parametrize("turn", range(4))
def test_octagon_places_finds_each_octagon_where_it_is(turn: int) -> None:
    moved = [(0.0, 0.0), (0.1, -0.05), (-0.12, 0.08), (0.05, 0.15), (-0.15, -0.1), (0.15, 0.0)]  # the search reaches ~0.16
    image, grid, cells = _octagon_photo(turn, moved)
    places = octagon_places(image, grid, cells, turn)
    assert places.shape == (6, 2)
    assert np.abs(places - np.array(moved)).max() < 0.04  # under 5 px at this pitch


def _fill_centre(patch: np.ndarray) -> np.ndarray:
    """(x, y) of the centroid of an ``_octagon_photo`` octagon's green fill in a patch."""
    green = (patch[..., 1].astype(int) - patch[..., 0].astype(int) > 60) & (patch[..., 1].astype(int) - patch[..., 2].astype(int) > 40)
    ys, xs = np.nonzero(green)
    assert len(xs) > 50, "no octagon in the patch"
    return np.array([xs.mean(), ys.mean()])


@pytest.mark.parametrize("turn", range(4))
def test_the_price_patch_is_cut_about_the_octagon_found_and_close(turn: int) -> None:
    # the lattice puts each octagon up to 0.15 pitch off; the close patch is centred on where it is,
    # and the octagon fills it: about 0.135 / PRICE_HALF of its half-side (the corner patch: 0.135 / 0.26)
    moved = [(0.0, 0.0), (0.1, -0.05), (-0.12, 0.08), (0.05, 0.15), (-0.15, -0.1), (0.15, 0.0)]
    image, grid, cells = _octagon_photo(turn, moved)
    close = price_patches(image, grid, cells, turn)
    assert close.shape == (6, PATCH_PX, PATCH_PX, 3)
    per_pitch = PATCH_PX / (2 * PRICE_HALF)
    for patch in close:
        assert np.abs(_fill_centre(patch) - (PATCH_PX - 1) / 2).max() < 0.04 * per_pitch
        green = (patch[..., 1].astype(int) - patch[..., 0].astype(int) > 60).sum()
        assert green > 0.3 * PATCH_PX**2  # the octagon (2.83 r^2, less its rim): 0.45 of the close patch, 0.19 of a corner patch
    wide = crop_octagons(image, grid, cells, (turn,))[:, 0]
    assert (wide[..., 1].astype(int) - wide[..., 0].astype(int) > 60).sum(axis=(1, 2)).max() < 0.2 * PATCH_PX**2


def test_a_price_patch_far_from_its_found_outline_stays_where_the_lattice_puts_it(monkeypatch) -> None:
    image, grid, cells = _octagon_photo(0, [(0.0, 0.0)] * 6)
    monkeypatch.setattr(octagon, "octagon_places", lambda *args: np.array([[0.3, 0.0]] + [[0.05, 0.0]] * 5))
    close = octagon.price_patches(image, grid, cells, 0)
    per_pitch = PATCH_PX / (2 * PRICE_HALF)
    assert abs(_fill_centre(close[0])[0] - (PATCH_PX - 1) / 2) < 0.03 * per_pitch  # 0.3 is past PRICE_PLACE_MAX: not trusted
    assert _fill_centre(close[1])[0] - (PATCH_PX - 1) / 2 == pytest.approx(-0.05 * per_pitch, abs=0.03 * per_pitch)
    nudged = octagon.price_patches(image, grid, cells, 0, nudge=np.tile([0.0, 0.05], (6, 1)))
    assert _fill_centre(nudged[0])[1] - _fill_centre(close[0])[1] == pytest.approx(-0.05 * per_pitch, abs=0.03 * per_pitch)
