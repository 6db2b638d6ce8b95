"""Train every Alhambra model from scratch with fixed seeds and export them.

    python -m models.alhambra.train                 # renders, trains, exports, evaluates, updates the cards
    python -m models.alhambra.train --only readers  # the tile classifier and the octagon reader; the shipped locator stays

Renders the training set (seeds 0..N-1, the tile art of ``make_dataset.ART_MIX``), a calibration
set (seeds 1,000,000+) and phone-sized photos for the price digits (seeds 500,000+), trains the
tile locator (``models/alhambra_locate``), the tile classifier (``models/alhambra_tiles``) and the
price octagon reader (``models/alhambra_octagon``), fits temperatures on the calibration set,
exports them to ONNX with their manifests, then runs ``models.alhambra.evaluate`` on held-out
renders (seeds 2,000,000+). Every setting is in ``CONFIG`` below; the loop is ``models.fit``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from models import fast
from models.alhambra import evaluate, export
from models.alhambra.art import TRAINING_FONTS, usable
from models.alhambra.make_dataset import ART_MIX, DATA_VERSION, PRICE_NUDGE, build, fonts_tag
from models.alhambra.net import LocateNet, OctagonNet, TileNet
from models.cli import CommandParser
from models.fit import FitConfig, fit, focal_heat_loss, seeded
from scanner.alhambra.reader import CROP_MARGIN
from scanner.model import RecipeValue

SEED = 20261130
# Misaligned crops: the scanner's lattice sits a median 5-8% of a pitch from the true tile centres
# (95th percentile 14-17%), and through the few centres of a small palace 15-40% off at one corner,
# while the cached crops are cut only ~3.5% off. Each training crop is moved again by up to SHIFT of
# a pitch per axis (edge pixels repeated, as crop_cells does), rescaled by up to SCALE and turned by
# up to TURN degrees; with the crop's margin (CROP_MARGIN) a wall strip stays in view.
SHIFT = 0.18
SCALE = 0.08
TURN = 4.0
SHIFT_P = 0.85  # share of crops moved (the rest keep the renderer's small offsets)


@dataclass(frozen=True)
class AlhambraTraining:
    """Every setting of ``python -m models.alhambra.train``: data sizes and one ``FitConfig`` per network.

    Raises:
        ValueError: a data size is not positive.
    """

    train_renders: int = 1800  # seeds 0..train_renders-1
    calibration_renders: int = 300  # seeds 1,000,000+: the tile temperatures
    octagon_renders: int = 2500  # seeds 500,000+: phone-sized photos whose price digits are sharp (octagon reader only)
    locate: FitConfig = FitConfig("locate", epochs=24, batch=16, lr=3e-3, peak_lr=3e-3, seed=SEED)
    tiles: FitConfig = FitConfig("tiles", epochs=14, batch=128, lr=4e-3, peak_lr=4e-3, weight_decay=5e-4, seed=SEED + 1)
    octagon: FitConfig = FitConfig("octagon", epochs=8, batch=128, lr=4e-3, peak_lr=4e-3, weight_decay=5e-4, seed=SEED + 2)
    # each octagon epoch sees every upright octagon but only this share of the other patches (the
    # easy negatives, 73% of all), drawn anew and weighted up to match: half the work a pass
    octagon_negative_share: float = 1 / 3

    def __post_init__(self) -> None:
        if not 0 < self.octagon_negative_share <= 1:
            raise ValueError(f"expected a share of octagon negatives in (0, 1], got {self.octagon_negative_share}")
        if min(self.train_renders, self.calibration_renders, self.octagon_renders) < 1:
            raise ValueError(
                f"expected positive render counts, got {self.train_renders}, {self.calibration_renders} and {self.octagon_renders}"
            )

    def recipe(self, *, locate: bool = True) -> dict[str, RecipeValue]:
        """The training recipe the manifests record (without the locator's epochs when it is not trained)."""
        recipe: dict[str, RecipeValue] = {
            "train_renders": self.train_renders,
            "train_seeds": f"0..{self.train_renders - 1}",
            "calibration_renders": self.calibration_renders,
            "calibration_seeds": f"1000000..{1000000 + self.calibration_renders - 1}",
            "locate_epochs": self.locate.epochs,
            "tile_epochs": self.tiles.epochs,
            "octagon_epochs": self.octagon.epochs,
            "octagon_negative_share": round(self.octagon_negative_share, 4),
            "octagon_renders": self.octagon_renders,
            "octagon_seeds": f"500000..{500000 + self.octagon_renders - 1}",
            "art": "styles "
            + " ".join(f"{name} {share}" for name, share in ART_MIX.styles)
            + f", buildings randomised {ART_MIX.randomise}, card stock {ART_MIX.card}",
            "digit_faces": f"{len(usable(TRAINING_FONTS))} (art.TRAINING_FONTS found here, digest {fonts_tag()})",
            "octagon_second_look": f"the close price patch (data version {DATA_VERSION}), nudged by sd {PRICE_NUDGE} pitch",
            "tile_misalign": f"shift +-{SHIFT} pitch, scale +-{SCALE}, turn +-{TURN} deg on {SHIFT_P:.0%} of crops",
            "octagon_glyph_warp": f"shear +-{GLYPH_SHEAR}, stretch +-{GLYPH_STRETCH} on {GLYPH_P:.0%}, ink +-1 px on {INK_P:.0%}, "
            f"bent by {ELASTIC} on {ELASTIC_P:.0%} of patches",
            "seed": SEED,
        }
        if not locate:
            del recipe["locate_epochs"]
        return recipe


CONFIG = AlhambraTraining()


def _augment_images(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Colour/brightness/contrast jitter and noise on a 0-1 batch (on top of the renderer's own)."""
    n = x.shape[0]
    gain = 1 + 0.12 * (torch.rand(n, 3, 1, 1, generator=generator) * 2 - 1)
    bright = 0.08 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    contrast = 1 + 0.2 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * contrast + mean
    x = x * gain + bright
    x = x + 0.02 * torch.rand(n, 1, 1, 1, generator=generator) * torch.randn(x.shape, generator=generator)
    return x.clamp(0, 1)


def train_locate(data: dict[str, np.ndarray], config: FitConfig = CONFIG.locate, *, log: Callable[[str], object] = print) -> LocateNet:
    """Train the locator on (input, heat, mask) triples."""
    generator = seeded(config.seed)
    net = LocateNet()
    images = torch.from_numpy(data["loc_img"]).permute(0, 3, 1, 2).contiguous()
    heat = torch.from_numpy(data["heat"].astype(np.float32))[:, None]
    mask = torch.from_numpy(data["mask"].astype(np.float32))[:, None]

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = _augment_images(images[idx].float() / 255.0, generator)
        flip = torch.rand(1, generator=generator).item()
        hx, mx = heat[idx], mask[idx]
        if flip < 0.25:  # mirror: the locator must not care about handedness
            x, hx, mx = x.flip(3), hx.flip(3), mx.flip(3)
        heat_logits, mask_logits = fast.forward(net, x)
        return focal_heat_loss(heat_logits, hx) + F.binary_cross_entropy_with_logits(mask_logits, mx), {}

    return fit(net, len(images), step, config, generator, log=log)


def _misalign(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Shift/scale/turn each crop of a batch by a random small amount (in tile pitches)."""
    n = x.shape[0]
    pitch = 2.0 / (1.0 + 2 * CROP_MARGIN)  # one tile pitch in affine_grid units (the crop spans [-1, 1])
    moved = (torch.rand(n, generator=generator) < SHIFT_P).float()
    shift = (torch.rand(n, 2, generator=generator) * 2 - 1) * SHIFT * pitch * moved[:, None]
    scale = 1 + (torch.rand(n, generator=generator) * 2 - 1) * SCALE * moved
    angle = torch.deg2rad((torch.rand(n, generator=generator) * 2 - 1) * TURN) * moved
    cos, sin = torch.cos(angle) * scale, torch.sin(angle) * scale
    theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1), torch.stack([sin, cos, shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def tile_losses(outputs, kind, walls, price, rotation) -> torch.Tensor:
    """Sum of the four heads' losses; ignored labels are -1."""
    kind_logits, wall_logits, price_logits, rot_logits = outputs
    loss = F.cross_entropy(kind_logits, kind)
    known = walls >= 0
    if known.any():
        loss = loss + F.binary_cross_entropy_with_logits(wall_logits[known], walls[known].float()) * 2.0
    if (price >= 0).any():
        loss = loss + 0.5 * F.cross_entropy(price_logits, price, ignore_index=-1)
    if (rotation >= 0).any():
        loss = loss + F.cross_entropy(rot_logits, rotation, ignore_index=-1)
    return loss


def train_tiles(data: dict[str, np.ndarray], config: FitConfig = CONFIG.tiles, *, log: Callable[[str], object] = print) -> TileNet:
    """Train the tile classifier on labelled crops."""
    generator = seeded(config.seed)
    net = TileNet()
    crops = torch.from_numpy(data["crops"]).permute(0, 3, 1, 2).contiguous()
    labels = [torch.from_numpy(data[key]) for key in ("kind", "walls", "price", "rotation")]

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = _augment_images(_misalign(crops[idx].float() / 255.0, generator), generator)
        return tile_losses(fast.forward(net, x), *(label[idx] for label in labels)), {}

    return fit(net, len(crops), step, config, generator, log=log)


OCTAGON_KEYS = ("oct_patches", "oct_present", "oct_kind", "oct_price")


def octagon_losses(outputs, present, kind, price, negative_weight: float = 1.0) -> torch.Tensor:
    """The octagon reader's loss: is an upright octagon there, and where one is, its type and price (ignored labels are -1).

    ``negative_weight`` weighs the patches without an octagon in the presence term (a weighted
    mean), making up for negatives left out of the batch.
    """
    present_logits, kind_logits, price_logits = outputs
    weight = torch.where(present > 0, 1.0, negative_weight)
    loss = (weight * F.binary_cross_entropy_with_logits(present_logits, present.float(), reduction="none")).sum() / weight.sum()
    if (kind >= 0).any():
        loss = loss + F.cross_entropy(kind_logits, kind, ignore_index=-1) + F.cross_entropy(price_logits, price, ignore_index=-1)
    return loss


GLYPH_SHEAR = 0.3  # the patches are slanted either way by up to this (italic faces), on GLYPH_P of them
GLYPH_STRETCH = 0.15  # ... and widened or narrowed by up to this share (condensed and extended faces)
GLYPH_P = 0.6
INK_P = 0.2  # patches whose dark strokes are made a pixel thicker or thinner (bold and light faces)
ELASTIC = 0.05  # sd of a smooth displacement (4x4 knots) in patch half-widths, about 1.2 px: glyph shapes no face draws
ELASTIC_P = 0.5


def _glyph_warp(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Slant, stretch, bend (``ELASTIC``) and thicken or thin some patches: digit faces the renderer does not draw."""
    n = x.shape[0]
    on = (torch.rand(n, generator=generator) < GLYPH_P).float()
    shear = (torch.rand(n, generator=generator) * 2 - 1) * GLYPH_SHEAR * on
    stretch = 1 + (torch.rand(n, generator=generator) * 2 - 1) * GLYPH_STRETCH * on
    zero, one = torch.zeros(n), torch.ones(n)
    theta = torch.stack([torch.stack([1 / stretch, shear, zero], 1), torch.stack([zero, one, zero], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    bent = (torch.rand(n, 1, 1, 1, generator=generator) < ELASTIC_P).float()
    field = torch.randn(n, 2, 4, 4, generator=generator) * ELASTIC * bent
    grid = grid + F.interpolate(field, size=x.shape[2:], mode="bicubic", align_corners=False).permute(0, 2, 3, 1)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    pick = torch.rand(n, generator=generator)
    bolder, lighter = pick < INK_P / 2, (pick >= INK_P / 2) & (pick < INK_P)
    if bolder.any():  # dark ink spreads: a 3x3 minimum
        x[bolder] = -F.max_pool2d(-x[bolder], 3, 1, 1)
    if lighter.any():
        x[lighter] = F.max_pool2d(x[lighter], 3, 1, 1)
    return x


def _patch_augment(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Slant, stretch or re-ink some patches, blur a third a little (a photo of the table from further away), then the shared jitter."""
    x = _glyph_warp(x, generator)
    n = x.shape[0]
    soft = torch.rand(n, generator=generator) < 0.33
    if soft.any():
        small = F.interpolate(x[soft], scale_factor=0.5, mode="bilinear", align_corners=False, antialias=True)
        x = x.clone()
        x[soft] = F.interpolate(small, size=x.shape[2:], mode="bilinear", align_corners=False)
    return _augment_images(x, generator)


def train_octagon(
    data: dict[str, np.ndarray],
    config: FitConfig = CONFIG.octagon,
    *,
    negative_share: float = CONFIG.octagon_negative_share,
    log: Callable[[str], object] = print,
) -> OctagonNet:
    """Train the price octagon reader on the corner patches (``make_dataset._octagon_arrays``).

    Each epoch takes every patch with an upright octagon and ``negative_share`` of the others,
    drawn anew, their presence loss weighted by its inverse.
    """
    generator = seeded(config.seed)
    net = OctagonNet()
    patches = torch.from_numpy(data["oct_patches"]).permute(0, 3, 1, 2).contiguous()
    labels = [torch.from_numpy(data[key]) for key in ("oct_present", "oct_kind", "oct_price")]
    positives, negatives = torch.nonzero(labels[0] > 0).flatten(), torch.nonzero(labels[0] == 0).flatten()
    kept = max(1, round(len(negatives) * negative_share)) if len(negatives) else 0

    def draw(generator: torch.Generator) -> torch.Tensor:
        chosen = torch.cat([positives, negatives[torch.randperm(len(negatives), generator=generator)[:kept]]])
        return chosen[torch.randperm(len(chosen), generator=generator)]

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = _patch_augment(patches[idx].float() / 255.0, generator)
        outputs = fast.forward(net, x)
        present, kind, price = (label[idx] for label in labels)
        upright = kind >= 0
        counts = {
            "present right": int(((outputs[0] > 0) == (present > 0)).sum()),
            "price right": int((outputs[2].argmax(1)[upright] == price[upright]).sum()),
        }
        return octagon_losses(outputs, present, kind, price, 1 / negative_share), counts

    return fit(net, len(positives) + kept, step, config, generator, draw=draw, log=log)


def _best_temperature(nll: Callable[[float], torch.Tensor]) -> float:
    """The temperature on a log grid from 0.3 to 5 that minimises ``nll(t)``."""
    grid = np.exp(np.linspace(np.log(0.3), np.log(5.0), 60))
    return float(grid[int(np.argmin([float(nll(float(t))) for t in grid]))])


def fit_octagon_temperatures(net: OctagonNet, data: dict[str, np.ndarray]) -> dict[str, float]:
    """Per-head temperatures of the octagon reader minimising the negative log-likelihood on the calibration patches."""
    with torch.no_grad():
        x = torch.from_numpy(data["oct_patches"]).permute(0, 3, 1, 2).float() / 255.0
        present_l, kind_l, price_l = (torch.cat(parts) for parts in zip(*(net(x[i : i + 1024]) for i in range(0, len(x), 1024))))
    present, kind, price = (torch.from_numpy(data[key]) for key in ("oct_present", "oct_kind", "oct_price"))
    best = _best_temperature
    temps = {
        "present": best(lambda t: F.binary_cross_entropy_with_logits(present_l / t, present.float())),
        "kind": best(lambda t: F.cross_entropy(kind_l / t, kind, ignore_index=-1)),
        "price": best(lambda t: F.cross_entropy(price_l / t, price, ignore_index=-1)),
    }
    return {key: round(value, 4) for key, value in temps.items()}


def fit_temperatures(net: TileNet, data: dict[str, np.ndarray]) -> dict[str, float]:
    """Per-head temperature minimising the negative log-likelihood on held-out crops."""
    with torch.no_grad():
        x = torch.from_numpy(data["crops"]).permute(0, 3, 1, 2).float() / 255.0
        kind_l, wall_l, price_l, rot_l = (torch.cat(parts) for parts in zip(*(net(x[i : i + 512]) for i in range(0, len(x), 512))))
    temps = {}
    kind, walls, price, rotation = (torch.from_numpy(data[key]) for key in ("kind", "walls", "price", "rotation"))
    best = _best_temperature

    temps["kind"] = best(lambda t: F.cross_entropy(kind_l / t, kind))
    known = walls >= 0
    temps["walls"] = best(lambda t: F.binary_cross_entropy_with_logits(wall_l[known] / t, walls[known].float()))
    temps["price"] = best(lambda t: F.cross_entropy(price_l / t, price, ignore_index=-1))
    temps["rotation"] = best(lambda t: F.cross_entropy(rot_l / t, rotation, ignore_index=-1))
    return {key: round(value, 4) for key, value in temps.items()}


def _train_jobs(
    train: dict[str, np.ndarray],
    val: dict[str, np.ndarray],
    config: AlhambraTraining,
    recipe: dict[str, RecipeValue],
    jobs: tuple[str, ...],
    threads: int,
) -> None:
    """Train, calibrate and export ``jobs`` in turn (``tiles``, ``locate``, ``octagon``) on ``threads`` threads."""
    torch.set_num_threads(threads)
    if "tiles" in jobs:
        tiles = train_tiles(train, config.tiles)
        temps = fit_temperatures(tiles, val)
        print(f"temperatures: {temps}")
        export.export_tiles(tiles, temps, recipe)
    if "locate" in jobs:
        export.export_locate(train_locate(train, config.locate), recipe)
    if "octagon" in jobs:
        sharp = build("octagon", config.octagon_renders, workers=max(1, threads))
        patches = {key: np.concatenate([train[key], sharp[key]]) for key in OCTAGON_KEYS}
        del sharp
        octagon = train_octagon(patches, config.octagon, negative_share=config.octagon_negative_share)
        temps = fit_octagon_temperatures(octagon, val)
        print(f"octagon temperatures: {temps}")
        export.export_octagon(octagon, temps, recipe)


ONLY = {"all": ("locate", "tiles", "octagon"), "readers": ("tiles", "octagon"), "tiles": ("tiles",), "octagon": ("octagon",)}


def main(argv: list[str] | None = None) -> None:
    """Render, train, calibrate, export and evaluate every Alhambra model (or only some of them)."""
    parser = CommandParser(description=__doc__)
    parser.add_argument("--train-count", type=int, default=CONFIG.train_renders)
    parser.add_argument("--val-count", type=int, default=CONFIG.calibration_renders)
    parser.add_argument("--octagon-count", type=int, default=CONFIG.octagon_renders)
    parser.add_argument("--locate-epochs", type=int, default=CONFIG.locate.epochs)
    parser.add_argument("--tile-epochs", type=int, default=CONFIG.tiles.epochs)
    parser.add_argument("--octagon-epochs", type=int, default=CONFIG.octagon.epochs)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TRAIN_THREADS", "2")))
    parser.add_argument(
        "--only",
        choices=sorted(ONLY),
        default="all",
        help="'readers': the tile classifier and the octagon reader (alhambra_locate stays as shipped); 'tiles', 'octagon': that one alone",
    )
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args(argv)
    config = dataclasses.replace(
        CONFIG,
        train_renders=args.train_count,
        calibration_renders=args.val_count,
        octagon_renders=args.octagon_count,
        locate=dataclasses.replace(CONFIG.locate, epochs=args.locate_epochs),
        tiles=dataclasses.replace(CONFIG.tiles, epochs=args.tile_epochs),
        octagon=dataclasses.replace(CONFIG.octagon, epochs=args.octagon_epochs),
    )
    jobs = ONLY[args.only]
    torch.set_num_threads(args.threads)
    fast.keep_freed_memory()  # before the render workers and lanes are forked: they inherit it
    start = time.perf_counter()
    train = build("train", config.train_renders, workers=2)
    val = build("val", config.calibration_renders, workers=2)
    recipe = config.recipe(locate="locate" in jobs)
    if "octagon" in jobs:
        build("octagon", config.octagon_renders, workers=2)  # on both cores now; the lane that trains it reads the cache
    if len(jobs) > 1 and args.threads >= 2:
        # two lanes of one thread each (faster than two threads on one lane): the octagon reader, the
        # longest (8 epochs of 212k of its 414k patches), in this process; the others in turn in a child process
        longest = "octagon" if "octagon" in jobs else jobs[0]
        rest = tuple(job for job in jobs if job != longest)
        side = fast.start_lane(_train_jobs, train, val, config, recipe, rest, 1)
        _train_jobs(train, val, config, recipe, (longest,), 1)
        fast.join_lane(side, " and ".join(rest))
    else:
        _train_jobs(train, val, config, recipe, jobs, args.threads)
    print(f"trained and exported in {time.perf_counter() - start:.0f} s")
    if not args.skip_evaluate:
        evaluate.main([])


if __name__ == "__main__":
    main()
