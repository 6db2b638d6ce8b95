"""Render the Alhambra training and held-out sets: locator inputs/targets and tile crops.

Every crop goes through ``scanner.alhambra.reader.crop_cells`` and every locator input through
``scanner.alhambra.reader.locate_input``, so training sees exactly what the scanner sees.

The tile art of each render comes from ``ART_MIX``: which styles (never ``styles.NEVER_TRAINED``,
the ones the transfer benchmark reads), how often the buildings are randomised (unrelated to their
types), how often the tiles are card stock. ``CLASSIC_ONLY`` renders as before the styles existed.

    python -m models.alhambra.make_dataset --split train --count 1500 [--art classic-only]
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.alhambra.art import TRAINING_FONTS, usable
from models.alhambra.render import ART_STYLES, render
from models.alhambra.styles import NEVER_TRAINED
from models.cli import CommandParser
from scanner.alhambra.octagon import crop_octagons, price_patches
from scanner.alhambra.reader import KINDS, LOCATE_SIZE, LOCATE_STRIDE, PRICES, crop_cells, locate_input, upright_walls_to_crop
from scoring.alhambra.palace import BUILDING_TYPES

CACHE = Path(__file__).resolve().parents[2] / "build" / "alhambra"
SEED_BASE = {"train": 0, "octagon": 500_000, "val": 1_000_000, "test": 2_000_000}
# The "octagon" split: photos as a phone takes them (2000x1500, tiles drawn at 160 px as the transfer
# benchmark's are), where the price digits are sharp; the octagon reader learns its digits there
# (the other splits' photos are small, most of their digits a blur). Its locator and tile arrays are
# not used.
OCTAGON_SIZE = (2000, 1500)
OCTAGON_TILE_PX = 160
OCTAGON_RENDER: dict[str, Any] = {"out_size": OCTAGON_SIZE, "tile_px": OCTAGON_TILE_PX}
TILE_VIEWS = 2
OCTAGON_SHIFT = 0.06  # sd of a cell's centre from the truth when its octagon patches are cut, in pitches (clipped at 2.5 sd)
# What one render gives (the arrays and how they are cut); a change makes it a new version, so no cache of the old one is read.
# 2: the octagons' second look is the close price patch (was the corner patch again)
# 3: tiles of the learning splits printed partly off the catalogue (``OFF_CATALOGUE``)
DATA_VERSION = 3
# The share of building tiles in the renders the readers learn from (not in those that calibrate or
# measure them) printed with a price drawn from 2-13, and apart the share with walls drawn at random.
# In the catalogue a type's colour and the walls beside the octagon all but name the price; a reader
# trained on catalogue tiles alone read the price from them: on held-out art tiles printed with
# another digit, 40-44% of prices right (98% on catalogue tiles), a third of them wrong at >= 90%.
OFF_CATALOGUE = {"train": 0.5, "octagon": 0.5}
PRICE_NUDGE = 0.015  # sd of a close price patch's centre from where its octagon's outline is found, in pitches (clipped at 2 sd)
HEAT_SHAPE = (LOCATE_SIZE[1] // LOCATE_STRIDE, LOCATE_SIZE[0] // LOCATE_STRIDE)


@dataclass(frozen=True)
class ArtMix:
    """The tile art of a training set: style -> share of renders, and the shares randomised and on card stock.

    Raises:
        ValueError: a style is unknown or held out, or a share is outside 0-1.
    """

    styles: tuple[tuple[str, float], ...] = (("classic", 0.3), ("woodcut", 0.35), ("collage", 0.35))
    randomise: float = 0.8  # renders whose buildings are unrelated to their types (styles.py); the rest as printed sets
    card: float = 0.7  # renders whose tiles are card stock (grain, glare, rounded corners, thickness)

    def __post_init__(self) -> None:
        for name, weight in self.styles:
            if name not in ART_STYLES:
                raise ValueError(f"styles: expected names from {', '.join(ART_STYLES)}, got {name!r}")
            if name in NEVER_TRAINED:
                raise ValueError(f"styles: {name!r} is held out; the transfer benchmark must never see it in training")
            if weight <= 0:
                raise ValueError(f"styles[{name!r}]: expected a positive share, got {weight}")
        for field_name in ("randomise", "card"):
            if not 0 <= getattr(self, field_name) <= 1:
                raise ValueError(f"{field_name}: expected a share from 0 to 1, got {getattr(self, field_name)}")

    @property
    def tag(self) -> str:
        """A short name of this mix for cache files ("" for the classic-only mix)."""
        if self == CLASSIC_ONLY:
            return ""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:8]

    def art_for(self, seed: int) -> dict[str, Any]:
        """The ``render`` keywords of training seed ``seed`` (its own generator: the render's stays as it was)."""
        if self == CLASSIC_ONLY:
            return {}
        rng = np.random.default_rng([seed, 4_242_424])
        names = [name for name, _ in self.styles]
        weights = np.array([weight for _, weight in self.styles], np.float64)
        style = names[int(rng.choice(len(names), p=weights / weights.sum()))]
        randomise = bool(rng.random() < self.randomise)
        return {"style": style, "randomise": randomise, "card": bool(rng.random() < self.card)}


CLASSIC_ONLY = ArtMix(styles=(("classic", 1.0),), randomise=0.0, card=0.0)
ART_MIX = ArtMix()
ART_MIXES = {"mix": ART_MIX, "classic-only": CLASSIC_ONLY}


def out_size_for(seed: int) -> tuple[int, int]:
    """Photo size of a training render: 800x600, 1280x960 or 1600x1200 (the price digits sharp enough to learn), some portrait."""
    rng = np.random.default_rng(seed + 7_777_777)
    pick = rng.random()
    width, height = (800, 600) if pick < 0.4 else (1280, 960) if pick < 0.7 else (1600, 1200)
    return (height, width) if rng.random() < 0.2 else (width, height)


def _lattice_jitter(rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """A slightly wrong lattice for cutting crops: grid -> grid turned by ~1.5 degrees and scaled by ~3% (3x3), its angle and scale."""
    angle = np.radians(rng.normal(0, 1.5))
    scale = 1 + rng.normal(0, 0.03)
    turn = np.array([[scale * np.cos(angle), -scale * np.sin(angle), 0], [scale * np.sin(angle), scale * np.cos(angle), 0], [0, 0, 1]])
    return turn, float(angle), float(scale)


def sample_arrays(seed: int, art: ArtMix = ART_MIX, *, sharp: bool = False, off_catalogue: float = 0.0) -> dict[str, np.ndarray]:
    """Render one seed (its tile art from ``art``) and return its locator input/targets and labelled tile and octagon crops.

    ``sharp``: a phone-sized photo (``OCTAGON_RENDER``) instead of ``out_size_for(seed)``; ``off_catalogue``:
    the share of tiles printed with another price, and apart with other walls (``render``).
    """
    cv2.setNumThreads(1)
    if sharp:
        width, height = OCTAGON_SIZE
        size = (height, width) if np.random.default_rng(seed + 7_777_777).random() < 0.2 else (width, height)
        sample = render(seed, out_size=size, tile_px=OCTAGON_TILE_PX, off_catalogue=off_catalogue, **art.art_for(seed))
    else:
        sample = render(seed, out_size=out_size_for(seed), off_catalogue=off_catalogue, **art.art_for(seed))
    rng = np.random.default_rng(seed + 99_999_999)
    image = sample.image_rgb
    info = sample.label["render"]
    batch, to_image = locate_input(image)
    loc_img = (batch[0].transpose(1, 2, 0) * 255 + 0.5).astype(np.uint8)
    to_input = np.linalg.inv(to_image)
    to_out = np.array([[1 / LOCATE_STRIDE, 0, -0.5], [0, 1 / LOCATE_STRIDE, -0.5], [0, 0, 1]]) @ to_input
    heat = np.zeros(HEAT_SHAPE, np.float32)
    mask = np.zeros(HEAT_SHAPE, np.uint8)
    ys, xs = np.mgrid[0 : HEAT_SHAPE[0], 0 : HEAT_SHAPE[1]].astype(np.float32)
    grid = np.asarray(info["grid_to_photo"], dtype=np.float64)
    for cell in info["cells"]:
        poly = cv2.perspectiveTransform(np.asarray(cell["polygon"], np.float64).reshape(-1, 1, 2), to_out).reshape(-1, 2)
        cx, cy = cv2.perspectiveTransform(np.asarray(cell["centre"], np.float64).reshape(1, 1, 2), to_out).reshape(2)
        side = float(np.sqrt(abs(cv2.contourArea(poly.astype(np.float32)))))
        sigma = float(np.clip(0.18 * side, 0.8, 4.0))
        heat = np.maximum(heat, np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma**2)))
        ix, iy = int(round(cx)), int(round(cy))
        if 0 <= ix < HEAT_SHAPE[1] and 0 <= iy < HEAT_SHAPE[0]:
            heat[iy, ix] = 1.0  # the peak pixel is the positive of the focal loss
        cv2.fillPoly(mask, [np.round((poly + 0.5) * 16).astype(np.int32)], 1, cv2.LINE_8, shift=4)

    # tile crops through the scanner's own crop function, with a lattice slightly off
    at_cells = [tuple(cell["at"]) for cell in info["cells"]]
    occupied = set(at_cells)
    ring = sorted({(x + dx, y + dy) for x, y in occupied for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))} - occupied)
    height, width = image.shape[:2]
    inside = []
    for x, y in ring:
        pts = cv2.perspectiveTransform(
            np.array([[[x - 0.3, y - 0.3]], [[x + 0.3, y + 0.3]], [[x - 0.3, y + 0.3]], [[x + 0.3, y - 0.3]]], np.float64), grid
        ).reshape(-1, 2)
        if (pts >= 0).all() and (pts[:, 0] < width).all() and (pts[:, 1] < height).all():
            inside.append((x, y))
    rng.shuffle(inside)
    none_cells = inside[: max(2, len(at_cells) // 2)]
    kinds, walls, prices, rotations = [], [], [], []
    out_crops = []
    for view in range(TILE_VIEWS):  # each tile seen through differently wrong lattices and turns
        jitter, angle, scale = _lattice_jitter(rng)
        cells = at_cells + (none_cells if view == 0 else [])
        shifted = [(x + rng.normal(0, 0.035), y + rng.normal(0, 0.035)) for x, y in cells]
        inverse = [
            ((c[0] * np.cos(angle) + c[1] * np.sin(angle)) / scale, (-c[0] * np.sin(angle) + c[1] * np.cos(angle)) / scale) for c in shifted
        ]
        crops = crop_cells(image, grid @ jitter, inverse)
        for index in range(len(cells)):
            k = int(rng.integers(4))
            out_crops.append(np.rot90(crops[index], k))
            if index < len(at_cells):
                value = info["cells"][index]["value"]
                if value == "fountain":
                    kinds.append(KINDS.index("fountain"))
                    walls.append(upright_walls_to_crop("", k))
                    prices.append(-1)
                else:
                    kind, tile_walls = value.split(":")
                    kinds.append(KINDS.index(kind))
                    walls.append(upright_walls_to_crop(tile_walls, k))
                    prices.append(PRICES.index(str(info["cells"][index]["price"])))
                rotations.append(k)
            else:
                kinds.append(0)
                walls.append([-1, -1, -1, -1])
                prices.append(-1)
                rotations.append(-1)
    octagons = _octagon_arrays(image, grid, info["cells"], none_cells, rng)
    return {
        **octagons,
        "loc_img": loc_img[None],
        "heat": heat.astype(np.float16)[None],
        "mask": mask[None],
        "crops": np.ascontiguousarray(np.stack(out_crops)),
        "kind": np.array(kinds, np.int64),
        "walls": np.array(walls, np.int64).reshape(-1, 4),
        "price": np.array(prices, np.int64),
        "rotation": np.array(rotations, np.int64),
        "board": np.full(len(kinds), seed, np.int64),
    }


def _octagon_arrays(
    image: np.ndarray, grid: np.ndarray, cells: list[dict[str, Any]], none_cells: list[tuple[int, int]], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The octagon reader's patches of one render, through a lattice a little off.

    The render's grid is upright, so patch 0 of a building tile (``scanner.alhambra.octagon.crop_octagons``)
    shows its octagon upright and patches 1-3 show its other corners as the scanner would turn them:
    the negatives. The fountain and the empty cells beside the palace give negatives only. A second
    look cuts each building's close price patch (``price_patches``: where its outline is found)
    through another wrong lattice, moved a little further (``PRICE_NUDGE``).
    """
    at = [tuple(cell["at"]) for cell in cells]
    buildings = [index for index, cell in enumerate(cells) if cell["value"] != "fountain"]
    patches, present, kinds, prices = [], [], [], []
    for view in range(2):
        turn, _, _ = _lattice_jitter(rng)
        chosen = list(range(len(at))) + [len(at) + i for i in range(len(none_cells))] if view == 0 else buildings
        places = [(at + none_cells)[index] for index in chosen]
        shifted = [
            (x + s_x, y + s_y) for (x, y), (s_x, s_y) in zip(places, np.clip(rng.normal(0, OCTAGON_SHIFT, (len(places), 2)), -0.15, 0.15))
        ]
        inverse = np.linalg.inv(turn)
        moved = cv2.perspectiveTransform(np.asarray(shifted, np.float64).reshape(-1, 1, 2), inverse).reshape(-1, 2)
        if view == 0:
            cut = crop_octagons(image, grid @ turn, [tuple(point) for point in moved])
        else:
            nudge = np.clip(rng.normal(0, PRICE_NUDGE, (len(moved), 2)), -2 * PRICE_NUDGE, 2 * PRICE_NUDGE)
            cut = price_patches(image, grid @ turn, [tuple(point) for point in moved], 0, nudge)[:, None]
        for row, index in enumerate(chosen):
            is_building = index < len(at) and index in buildings
            for k in range(4) if view == 0 else (0,):
                patches.append(cut[row, k])
                upright = is_building and k == 0
                present.append(int(upright))
                if upright:
                    kind, _, _ = cells[index]["value"].partition(":")
                    kinds.append(BUILDING_TYPES.index(kind))
                    prices.append(PRICES.index(str(cells[index]["price"])))
                else:
                    kinds.append(-1)
                    prices.append(-1)
    return {
        "oct_patches": np.stack(patches),
        "oct_present": np.array(present, np.int64),
        "oct_kind": np.array(kinds, np.int64),
        "oct_price": np.array(prices, np.int64),
    }


def fonts_tag() -> str:
    """A short digest of the digit faces this machine draws in training renders (``usable(TRAINING_FONTS)``).

    A machine with other font packages draws other digits from the same seeds: other data, another cache file.
    """
    names = " ".join(f"{font.kind}:{font.name}" for font in usable(TRAINING_FONTS))
    return hashlib.sha256(names.encode()).hexdigest()[:6]


def cache_path(split: str, count: int, cache: Path = CACHE, art: ArtMix = ART_MIX) -> Path:
    """Where ``build`` keeps ``count`` renders of ``split``: named by the art mix, the digit faces drawn and ``DATA_VERSION``."""
    return cache / "_".join(part for part in (split, str(count), art.tag, f"f{fonts_tag()}", f"v{DATA_VERSION}.npz") if part)


def _split_kind(split: str) -> dict[str, Any]:
    """How ``split``'s renders are drawn: the octagon split sharp; the learning splits partly off the catalogue."""
    return {"sharp": split == "octagon", "off_catalogue": OFF_CATALOGUE.get(split, 0.0)}


def build(split: str, count: int, workers: int = 2, cache: Path = CACHE, art: ArtMix = ART_MIX) -> dict[str, np.ndarray]:
    """Render ``count`` samples of ``split`` (seeds ``SEED_BASE[split] + i``, tile art from ``art``), cached as .npz (``cache_path``)."""
    path = cache_path(split, count, cache, art)
    if path.is_file():
        with np.load(path) as data:
            return {key: data[key] for key in data.files}
    cache.mkdir(parents=True, exist_ok=True)
    seeds = [SEED_BASE[split] + i for i in range(count)]
    start = time.perf_counter()
    if workers > 1:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(functools.partial(sample_arrays, art=art, **_split_kind(split)), seeds, chunksize=8)
    else:
        parts = [sample_arrays(seed, art, **_split_kind(split)) for seed in seeds]
    data = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    np.savez(path, **data)
    print(f"{split}: {count} renders, {len(data['kind'])} crops in {time.perf_counter() - start:.0f} s -> {path}")
    return data


def main() -> None:
    """Command line: render one split into the cache."""
    parser = CommandParser(description=__doc__)
    parser.add_argument("--split", choices=sorted(SEED_BASE), default="train")
    parser.add_argument("--count", type=int, default=1500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--art", choices=sorted(ART_MIXES), default="mix", help="tile art: the style mix (default) or the classic icons only"
    )
    args = parser.parse_args()
    build(args.split, args.count, args.workers, art=ART_MIXES[args.art])


if __name__ == "__main__":
    main()
