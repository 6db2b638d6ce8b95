"""Reading the price octagon: the cue every printing of an Alhambra tile shares.

Every building tile carries its price in an octagon in its bottom-right corner, filled with its
type's colour (``../shared/RECOGNITION.md``). The building drawn on the tile differs from one
printing to the next; the octagon's place, its colour and its digits do not. So each tile cell is
looked at in its four corners, each corner's patch turned as the tile would be if the octagon sat
there (``crop_octagons``), and the octagon reader (``models/alhambra_octagon``) says for each patch
whether it shows an upright price octagon, its type (by colour) and its price (the digits).

The four corners vote for which way is up (tiles never turn in the game), and at the corner that
wins, the octagon's type and price become the tile's (``merge_octagons``). That octagon is read
twice: in that corner patch and in a closer patch cut about where its outline is found
(``price_patches``), where the digits are half as tall again; the two readings of its type, and of
its price, are pooled (``pool_readings``). The whole-tile classifier keeps what only it can see:
whether a cell holds a tile at all, the fountain, and the walls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

from scanner.alhambra.tiles import KINDS, PRICES, TilePredictions, crop_squares, rotate_cell_float, rotation_votes
from scanner.model import OnnxModel, image_batch, softmax
from scoring.alhambra.palace import BUILDING_TYPES, CATALOGUE, SIDES

MODEL = "alhambra_octagon"
PATCH_PX = 48
OCTAGON_OFFSET = 0.29  # the octagon's centre from the tile's centre, right and down, in tile pitches
PATCH_HALF = 0.26  # half the side of a patch, in tile pitches: the octagon (radius ~0.14) with room for a lattice ~0.1 off
PATCH_TILE_PX = 1.25 * PATCH_PX / (2 * PATCH_HALF)  # a tile's span in the photo the patches are cut from (never aliased)
TYPE_WEIGHT = 1.0  # how much the octagon's colour counts against the whole tile's look for the type (log-linear)
TILE_TYPE_WEIGHT = 0.25  # ... and the whole-tile classifier's (the building drawing differs between printings)
NORTH_WEIGHT = 1.0  # the octagon's place in the vote for north, beside the tile classifier's rotation
# The price is read again in the upright patch slanted one way and shrunk, and slanted the other way and enlarged
# (shear, scale about the patch centre: a real printing's digit face is not ours; the reader trained on
# faces slanted by up to 0.3 and stretched by up to 15%), and the three looks' log-probabilities are
# averaged. On the upright patches of the transfer sets' tiles (held-out art, 538; training art, 692) the
# digit read 94.4% -> 95.4% and 96.0% -> 97.5%, digits wrong at >= 90% 7 -> 0 and 5 -> 1; four looks
# (both shears at both scales) read no better. Only prices read under ``PRICE_SURE`` are looked at again
# (30-48% of those tiles): the figures are the same as when every one is.
PRICE_LOOKS = ((0.15, 0.92), (-0.15, 1.08))
PRICE_SURE = 0.99
# When the tile classifier's summed votes put north this many nats ahead of the next turn, only that
# corner of each tile is read (a quarter of the reader's work) ...
NORTH_SURE = 10.0
# ... and kept when at least this share of the tiles show an upright octagon there; else all four are read.
NORTH_SEEN = 0.9
ALL_TURNS = (0, 1, 2, 3)
# Where each tile's octagon lies is found in a square of this half-side (pitches) about where the lattice
# puts it, cut at PLACE_PX, by the octagon's outline (colour edges) at each of these radii (centre to
# vertex, pitches: printings differ a little).
PLACE_HALF = 0.3
PLACE_PX = 64
PLACE_RADII = (0.12, 0.135, 0.15)
# The price is read in a closer patch of the same size, cut where the octagon's outline is found
# (``octagon_places``): half a side of this many pitches, the octagon (radius ~0.135) filling it, so
# the digits are 0.26 / 0.17 = 1.5 times as tall as in the corner patches (two digits ~10 px there).
# An outline found further than PRICE_PLACE_MAX from where the lattice puts it is not trusted.
PRICE_HALF = 0.17
PRICE_TILE_PX = 1.25 * PATCH_PX / (2 * PRICE_HALF)
PRICE_PLACE_MAX = 0.16
# The type and the price are each the geometric mean of the close patch's reading and the corner
# patch's (the price with its looks): two looks at one octagon, so their log-probabilities are
# averaged, not added.
CLOSE_WEIGHT = 0.5


PATCH_VIEWS = 2  # the patches of one tile a reading keeps for corrections (``tile_patches``): its corner patch and its close one


def _prices_by_value() -> dict[str, tuple[str, ...]]:
    """Each catalogue tile's reading text ("type:walls") -> the prices printed on the tiles that read so."""
    prices: dict[str, set[str]] = {}
    for tile in CATALOGUE:
        prices.setdefault(f"{tile.type}:{tile.walls}", set()).add(str(tile.price))
    return {value: tuple(sorted(found, key=int)) for value, found in prices.items()}


_PRICES_BY_VALUE = _prices_by_value()


def part_labels(value: str) -> dict[str, str]:
    """The class each head of the octagon reader should give the octagon of a tile whose (corrected) value is ``value``.

    The type is the tile's; the price is the one printed on the catalogue tile of that type and
    those walls, where only one is (four wall-less types come in two prices: theirs is not known).
    A fountain, an empty cell or a value no catalogue tile reads as says nothing.

    >>> part_labels("garden:WSE")
    {'kind': 'garden', 'price': '6'}
    >>> part_labels("tower:")
    {'kind': 'tower'}
    >>> part_labels("fountain"), part_labels(""), part_labels("tower:NESW")
    ({}, {}, {})
    """
    kind, _, walls = str(value).strip().partition(":")
    if kind not in BUILDING_TYPES or any(side not in SIDES for side in walls):
        return {}
    prices = _PRICES_BY_VALUE.get(f"{kind}:{''.join(side for side in SIDES if side in walls)}")
    if prices is None:
        return {}
    return {"kind": kind, "price": prices[0]} if len(prices) == 1 else {"kind": kind}


def corner_offsets() -> tuple[tuple[float, float], ...]:
    """Where the octagon lies from a cell's centre (grid units) when its crop is turned k quarter turns, k = 0..3.

    >>> [tuple(round(v, 2) for v in o) for o in corner_offsets()]
    [(0.29, 0.29), (0.29, -0.29), (-0.29, -0.29), (-0.29, 0.29)]
    """
    return tuple(rotate_cell_float((OCTAGON_OFFSET, OCTAGON_OFFSET), -k) for k in range(4))


def crop_octagons(
    image_rgb: np.ndarray, grid_to_image: np.ndarray, cells: Sequence[tuple[float, float]], turns: Sequence[int] = ALL_TURNS
) -> np.ndarray:
    """(N, len(turns), PATCH_PX, PATCH_PX, 3) uint8: for each cell and each k of ``turns``, the patch where the octagon would be, turned upright.

    Patch ``[i, j]`` is what the bottom-right corner of cell ``i`` shows if its crop is turned
    ``k = turns[j]`` quarter turns counter-clockwise from upright (``ROTATIONS``), turned back so
    that such an octagon stands upright in it.
    """
    if not cells:
        return np.zeros((0, len(turns), PATCH_PX, PATCH_PX, 3), dtype=np.uint8)
    offsets = corner_offsets()
    centres = [(x + offsets[k][0], y + offsets[k][1]) for x, y in cells for k in turns]
    patches = crop_squares(image_rgb, grid_to_image, centres, PATCH_HALF, PATCH_PX, tile_px=PATCH_TILE_PX)
    patches = patches.reshape(len(cells), len(turns), PATCH_PX, PATCH_PX, 3)
    return np.ascontiguousarray(np.stack([np.rot90(patches[:, j], -k, axes=(1, 2)) for j, k in enumerate(turns)], axis=1))


def crop_price_patches(image_rgb: np.ndarray, grid_to_image: np.ndarray, centres: Sequence[tuple[float, float]], turn: int) -> np.ndarray:
    """(N, PATCH_PX, PATCH_PX, 3) uint8: the close patch (``PRICE_HALF``) about each octagon centre (grid units), turned upright.

    ``turn`` is the crops' quarter turn from upright (north), as in ``crop_octagons``.
    """
    if not len(centres):
        return np.zeros((0, PATCH_PX, PATCH_PX, 3), dtype=np.uint8)
    points = [(float(x), float(y)) for x, y in centres]
    patches = crop_squares(image_rgb, grid_to_image, points, PRICE_HALF, PATCH_PX, tile_px=PRICE_TILE_PX)
    return np.ascontiguousarray(np.rot90(patches, -turn, axes=(1, 2)))


def price_patches(
    image_rgb: np.ndarray,
    grid_to_image: np.ndarray,
    cells: Sequence[tuple[float, float]],
    turn: int,
    nudge: np.ndarray | None = None,
    places: np.ndarray | None = None,
) -> np.ndarray:
    """The close price patch of each tile ``cells``, its crops turned ``turn``: cut where its octagon's outline is found.

    ``places`` are ``octagon_places`` of these cells and turn when already found. Where the outline
    is found further than ``PRICE_PLACE_MAX`` from where the lattice puts the octagon (a table's
    edge, a drawing), the lattice's place stands. ``nudge`` (N, 2 grid units) moves each patch from
    there (training cuts patches a little off, as places are found).
    """
    if not len(cells):
        return np.zeros((0, PATCH_PX, PATCH_PX, 3), dtype=np.uint8)
    places = octagon_places(image_rgb, grid_to_image, cells, turn) if places is None else np.array(places, dtype=np.float64)
    places[np.abs(places).max(axis=1) > PRICE_PLACE_MAX] = 0.0
    centres = np.asarray(cells, dtype=np.float64) + np.asarray(corner_offsets()[turn % 4]) + places
    if nudge is not None:
        centres = centres + nudge
    return crop_price_patches(image_rgb, grid_to_image, [(float(x), float(y)) for x, y in centres], turn)


@dataclass(frozen=True, eq=False)
class OctagonPredictions:
    """Calibrated readings of each cell's four corner patches: ``present`` (N, 4), ``kind`` (N, 4, 6), ``price`` (N, 4, 12).

    ``present[i, k]`` is P(an upright price octagon in patch k of cell i); ``kind`` is over
    ``BUILDING_TYPES`` and ``price`` over ``PRICES``, as the octagon in that patch reads. A patch
    not read (``read_octagons`` with fewer turns) is NaN in all three; its vote for north is neutral.
    """

    present: np.ndarray
    kind: np.ndarray
    price: np.ndarray

    def __post_init__(self) -> None:
        count = len(self.present)
        for name, array, shape in (
            ("present", self.present, (count, 4)),
            ("kind", self.kind, (count, 4, len(BUILDING_TYPES))),
            ("price", self.price, (count, 4, len(PRICES))),
        ):
            if array.shape != shape:
                raise ValueError(f"{name}: expected {shape} probabilities, got {array.shape}")

    def north_log_votes(self) -> np.ndarray:
        """(N, 4) log P(the crop is turned k | this cell's octagon patches): one octagon, in exactly one corner."""
        p = np.clip(np.nan_to_num(self.present, nan=0.5), 1e-6, 1 - 1e-6)  # a patch not read: as likely as not
        absent = np.log(1 - p).sum(axis=1, keepdims=True)
        score = np.log(p) - np.log(1 - p) + absent
        return score - np.logaddexp.reduce(score, axis=1, keepdims=True)


def presence(logits: np.ndarray, temperatures: Mapping[str, float]) -> np.ndarray:
    """P(an upright octagon) of each patch, flat, from the reader's ``present`` logits and its calibrated temperature."""
    return 1.0 / (1.0 + np.exp(-np.asarray(logits).reshape(-1) / temperatures.get("present", 1.0)))


def read_octagons(
    model: OnnxModel, temperatures: Mapping[str, float], patches: np.ndarray, turns: Sequence[int] = ALL_TURNS
) -> OctagonPredictions:
    """Run the octagon reader on ``crop_octagons`` patches (N, len(turns), S, S, 3) of those ``turns``; the other turns are NaN.

    Raises:
        ModelError: the reader cannot run.
    """
    n, columns = len(patches), list(turns)
    present = np.full((n, 4), np.nan)
    kind = np.full((n, 4, len(BUILDING_TYPES)), np.nan)
    price = np.full((n, 4, len(PRICES)), np.nan)
    if n == 0:
        return OctagonPredictions(present, kind, price)
    flat = patches.reshape(n * len(columns), *patches.shape[2:])
    out = model.run(image_batch(flat))
    present[:, columns] = presence(out["present"], temperatures).reshape(n, len(columns))
    kind[:, columns] = softmax(out["kind"], temperatures.get("kind", 1.0)).reshape(n, len(columns), -1)
    price[:, columns] = softmax(out["price"], temperatures.get("price", 1.0)).reshape(n, len(columns), -1)
    return OctagonPredictions(present, kind, price)


def octagon_places(image_rgb: np.ndarray, grid_to_image: np.ndarray, cells: Sequence[tuple[float, float]], turn: int) -> np.ndarray:
    """(N, 2) how far each tile's octagon lies from where the lattice puts it (grid units), the crops turned ``turn``.

    The octagon is the one shape every printing puts in the same place on every tile, so where it is
    says where the tile is better than the tile's look (a drawing can pull a locator's centre toward
    it). In a square about the expected place, the octagon's outline is matched against the edges of
    colour (Lab gradient magnitude); an octagon is the same under quarter turns, so one outline serves
    every turn.
    """
    if not len(cells):
        return np.zeros((0, 2))
    offset = np.asarray(corner_offsets()[turn % 4])
    centres = [tuple(np.asarray(cell, dtype=np.float64) + offset) for cell in cells]
    patches = crop_squares(image_rgb, grid_to_image, centres, PLACE_HALF, PLACE_PX, tile_px=1.25 * PLACE_PX / (2 * PLACE_HALF))
    per_pitch = PLACE_PX / (2 * PLACE_HALF)
    places = np.zeros((len(cells), 2))
    for index, patch in enumerate(patches):
        edges = _colour_edges(patch)
        best = -np.inf
        for radius in PLACE_RADII:
            outline = _outline(int(round(radius * per_pitch * 4)))
            match = cv2.matchTemplate(edges, outline, cv2.TM_CCORR)
            _, value, _, (x, y) = cv2.minMaxLoc(match)
            value /= float(np.abs(outline).sum())
            if value > best:
                best = value
                middle = outline.shape[0] // 2
                places[index] = ((x + middle + 0.5) - PLACE_PX / 2, (y + middle + 0.5) - PLACE_PX / 2)
    return places / per_pitch


def _colour_edges(patch: np.ndarray) -> np.ndarray:
    """Gradient magnitude of a uint8 RGB patch over its three Lab channels, float32."""
    lab = cv2.GaussianBlur(cv2.cvtColor(patch, cv2.COLOR_RGB2LAB).astype(np.float32), (0, 0), 0.8)
    squared = np.zeros(patch.shape[:2], dtype=np.float32)
    for channel in range(3):
        gx = cv2.Sobel(lab[..., channel], cv2.CV_32F, 1, 0)
        gy = cv2.Sobel(lab[..., channel], cv2.CV_32F, 0, 1)
        squared += gx * gx + gy * gy
    return np.sqrt(squared)


@cache
def _outline(radius_quarter_px: int) -> np.ndarray:
    """A zero-mean template of an octagon's outline (flat sides up, down and aside) of radius ``radius_quarter_px`` / 4 px."""
    radius = radius_quarter_px / 4
    side = int(np.ceil(radius * 1.3)) * 2 + 1
    template = np.zeros((side, side), dtype=np.float32)
    angles = np.deg2rad(22.5 + 45 * np.arange(8))
    middle = side // 2
    points = np.stack([middle + radius * np.cos(angles), middle + radius * np.sin(angles)], axis=1)
    cv2.polylines(template, [np.round(points * 16).astype(np.int32)], True, 1.0, 1, cv2.LINE_AA, shift=4)
    return template - template.mean()


def classifier_north(predictions: TilePredictions, rows: Sequence[int]) -> int | None:
    """North (the crops' quarter turn) when the tile classifier's rotations in ``rows`` put it ``NORTH_SURE`` nats ahead of the next, else None."""
    if not len(rows):
        return None
    votes = rotation_votes(predictions.rotation[list(rows)])
    second, first = np.sort(votes)[-2:]
    return int(np.argmax(votes)) if first - second >= NORTH_SURE else None


def price_looks(patches: np.ndarray, looks: Sequence[tuple[float, float]] = PRICE_LOOKS) -> np.ndarray:
    """(N, len(looks), S, S, 3) uint8: each upright patch's content slanted by ``shear`` and scaled by ``scale`` about its centre.

    A point ``y`` pixels below the centre moves ``shear * y`` to the right; ``scale`` under 1 shows
    the digit smaller. Edge pixels are repeated, as the crops repeat them.
    """
    size = patches.shape[1]
    centre = (size - 1) / 2
    out = np.empty((len(patches), len(looks), *patches.shape[1:]), np.uint8)
    for index, (shear, scale) in enumerate(looks):
        matrix = np.array([[scale, shear * scale, 0.0], [0.0, scale, 0.0]])
        matrix[:, 2] = (centre - scale * centre - shear * scale * centre, centre - scale * centre)
        for n, patch in enumerate(patches):
            out[n, index] = cv2.warpAffine(patch, matrix, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out


def read_close(model: OnnxModel, temperatures: Mapping[str, float], close: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, 6) type, (N, 12) price and (N,) presence probabilities, calibrated, of upright close patches (N, S, S, 3), each read once.

    The presence is P(an upright octagon) in the close patch, read as in the corner patches.

    Raises:
        ModelError: the reader cannot run.
    """
    if not len(close):
        return np.zeros((0, len(BUILDING_TYPES))), np.zeros((0, len(PRICES))), np.zeros(0)
    out = model.run(image_batch(close))
    kind, price = softmax(out["kind"], temperatures.get("kind", 1.0)), softmax(out["price"], temperatures.get("price", 1.0))
    return kind, price, presence(out["present"], temperatures)


def read_both_prices(
    model: OnnxModel,
    temperatures: Mapping[str, float],
    corner: np.ndarray,
    corner_first: np.ndarray,
    close: np.ndarray,
    close_first: np.ndarray,
    looks: Sequence[tuple[float, float]] | None = None,
) -> np.ndarray:
    """(N, 12) price probabilities of N tiles from their upright corner patches and close patches (each (N, S, S, 3)).

    ``corner_first`` and ``close_first`` are the reader's price readings of the two (not read
    again). They are pooled (``pool_readings``); where that is under ``PRICE_SURE``, both patches
    are read again in ``looks`` (default ``PRICE_LOOKS``), each patch's looks' log-probabilities
    averaged with its first reading's before the two are pooled. One run of the reader at most.

    Raises:
        ModelError: the reader cannot run.
    """
    looks = PRICE_LOOKS if looks is None else looks
    pooled = pool_readings(close_first, corner_first)
    unsure = np.flatnonzero(pooled.max(axis=1) < PRICE_SURE)
    if not len(unsure) or not looks:
        return pooled
    both = np.concatenate([corner[unsure], close[unsure]])
    flat = price_looks(both, looks).reshape(-1, *both.shape[1:])
    again = softmax(model.run(image_batch(flat))["price"], temperatures.get("price", 1.0)).reshape(2, len(unsure), len(looks), -1)
    logs = np.log(np.clip(again, 1e-9, 1))
    firsts = np.log(np.clip(np.stack([corner_first[unsure], close_first[unsure]]), 1e-9, 1))[:, :, None]
    corner_looked, close_looked = (softmax(np.concatenate([firsts[k], logs[k]], axis=1).mean(axis=1)) for k in range(2))
    pooled[unsure] = pool_readings(close_looked, corner_looked)
    return pooled


def pool_readings(close: np.ndarray, corner: np.ndarray, weight: float = CLOSE_WEIGHT) -> np.ndarray:
    """(N, C) probabilities (price or type): the close patches' reading ``close`` and the corner patches' ``corner``, log-linearly pooled.

    ``weight`` is the close reading's share (``CLOSE_WEIGHT``), the corner's the rest.
    """
    logs = weight * np.log(np.clip(close, 1e-9, 1)) + (1 - weight) * np.log(np.clip(corner, 1e-9, 1))
    return softmax(logs)


def octagon_north(predictions: TilePredictions, rows: Sequence[int], octagons: OctagonPredictions) -> tuple[int, np.ndarray]:
    """North (the crops' quarter turn ``k``) the tiles ``rows`` vote for with their octagons, and their (len(rows), 4) log votes.

    Each tile's vote is the tile classifier's rotation times the octagon's place (``NORTH_WEIGHT``).
    """
    eps = 1e-6
    log_rot = np.log(np.clip(predictions.rotation[list(rows)], eps, 1)) + NORTH_WEIGHT * octagons.north_log_votes()
    log_rot -= np.logaddexp.reduce(log_rot, axis=1, keepdims=True)
    return int(np.argmax(log_rot.sum(axis=0))), log_rot


def merge_octagons(
    predictions: TilePredictions,
    rows: Sequence[int],
    octagons: OctagonPredictions,
    prices: np.ndarray | None = None,
    kinds: np.ndarray | None = None,
) -> TilePredictions:
    """The tile predictions with the octagons' evidence in cells ``rows`` (the tiles; ``octagons[j]`` reads cell ``rows[j]``).

    Rotation: the tile classifier's, times the octagon's place (``octagon_north``); the tiles' votes
    then choose north as ``decode.turn_upright`` does. Building type: the octagon's colour in the
    patch of that north (or ``kinds[j]`` when given: that pooled with the close patch's,
    ``pool_readings``), log-linearly pooled with the tile classifier's (``TYPE_WEIGHT``,
    ``TILE_TYPE_WEIGHT``); P(no tile) and P(fountain) stay the classifier's. Price: ``prices[j]``
    when given (``read_both_prices`` of the tiles at that north), else the octagon's digits in that
    patch. Walls stay the classifier's.
    """
    if not len(rows):
        return predictions
    rows = list(rows)
    eps = 1e-6
    rotation = predictions.rotation.copy()
    north, log_rot = octagon_north(predictions, rows, octagons)
    rotation[rows] = np.exp(log_rot)
    kind = predictions.kind.copy()
    price = predictions.price.copy()
    buildings = slice(KINDS.index(BUILDING_TYPES[0]), KINDS.index(BUILDING_TYPES[-1]) + 1)
    for j, row in enumerate(rows):
        octagon_kind = octagons.kind[j, north] if kinds is None else kinds[j]
        pooled = TYPE_WEIGHT * np.log(np.clip(octagon_kind, eps, 1))
        pooled = pooled + TILE_TYPE_WEIGHT * np.log(np.clip(kind[row, buildings], eps, 1))
        pooled = np.exp(pooled - pooled.max())
        share = kind[row, buildings].sum()
        kind[row, buildings] = share * pooled / pooled.sum()
        price[row] = octagons.price[j, north] if prices is None else prices[j]
    return TilePredictions(kind, predictions.walls, price, rotation)
