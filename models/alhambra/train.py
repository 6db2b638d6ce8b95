"""Train every Alhambra model from scratch with fixed seeds and export them.

    python -m models.alhambra.train               # renders, trains, exports, evaluates, updates the cards
    python -m models.alhambra.train --only tiles  # the tile classifier alone; the shipped locator stays

Renders the training set (seeds 0..N-1) and a calibration set (seeds 1,000,000+), trains the
tile locator (``models/alhambra_locate``) and the tile classifier (``models/alhambra_tiles``),
fits temperatures on the calibration set, exports both to ONNX with their manifests, then runs
``models.alhambra.evaluate`` on held-out renders (seeds 2,000,000+).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from torch.nn import functional as F

from models import fast
from models.alhambra import export
from models.alhambra.make_dataset import build
from models.alhambra.net import LocateNet, TileNet
from scanner.alhambra.reader import CROP_MARGIN

SEED = 20261130


def focal_heat_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss on a Gaussian-splatted centre heatmap."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    positive = target > 0.99
    pos_loss = -torch.log(p) * (1 - p) ** 2 * positive
    neg_loss = -torch.log(1 - p) * p**2 * (1 - target) ** 4 * (~positive)
    return (pos_loss.sum() + neg_loss.sum()) / positive.sum().clamp(min=1)


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


def train_locate(data: dict[str, np.ndarray], epochs: int, batch: int = 16) -> LocateNet:
    """Train the locator on (input, heat, mask) triples."""
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    net = fast.prepare(LocateNet())
    images = torch.from_numpy(data["loc_img"]).permute(0, 3, 1, 2).contiguous()
    heat = torch.from_numpy(data["heat"].astype(np.float32))[:, None]
    mask = torch.from_numpy(data["mask"].astype(np.float32))[:, None]
    n = len(images)
    steps = epochs * ((n + batch - 1) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.15)
    net.train()
    start = time.perf_counter()
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            x = _augment_images(images[idx].float() / 255.0, generator)
            flip = torch.rand(1, generator=generator).item()
            hx, mx = heat[idx], mask[idx]
            if flip < 0.25:  # mirror: the locator must not care about handedness
                x, hx, mx = x.flip(3), hx.flip(3), mx.flip(3)
            heat_logits, mask_logits = fast.forward(net, x)
            loss = focal_heat_loss(heat_logits, hx) + F.binary_cross_entropy_with_logits(mask_logits, mx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        print(f"locate epoch {epoch + 1}/{epochs}: loss {total / n:.4f} ({time.perf_counter() - start:.0f} s)", flush=True)
    return fast.finish(net)


# Misaligned crops: the scanner's lattice sits a median 5-8% of a pitch from the true tile centres
# (95th percentile 14-17%), while the cached crops are cut only ~3.5% off. Each training crop is
# moved again by up to SHIFT of a pitch per axis (edge pixels repeated, as crop_cells does),
# rescaled by up to SCALE and turned by up to TURN degrees.
SHIFT = 0.12
SCALE = 0.06
TURN = 3.0
SHIFT_P = 0.85  # share of crops moved (the rest keep the renderer's small offsets)


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


def train_tiles(data: dict[str, np.ndarray], epochs: int, batch: int = 128) -> TileNet:
    """Train the tile classifier on labelled crops."""
    torch.manual_seed(SEED + 1)
    generator = torch.Generator().manual_seed(SEED + 1)
    net = fast.prepare(TileNet())
    crops = torch.from_numpy(data["crops"]).permute(0, 3, 1, 2).contiguous()
    labels = [torch.from_numpy(data[key]) for key in ("kind", "walls", "price", "rotation")]
    n = len(crops)
    steps = epochs * ((n + batch - 1) // batch)
    opt = torch.optim.AdamW(net.parameters(), lr=4e-3, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps, pct_start=0.15)
    net.train()
    start = time.perf_counter()
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for i in range(0, n, batch):
            idx = order[i:i + batch]
            x = _augment_images(_misalign(crops[idx].float() / 255.0, generator), generator)
            loss = tile_losses(fast.forward(net, x), *(label[idx] for label in labels))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        print(f"tiles epoch {epoch + 1}/{epochs}: loss {total / n:.4f} ({time.perf_counter() - start:.0f} s)", flush=True)
    return fast.finish(net)


def fit_temperatures(net: TileNet, data: dict[str, np.ndarray]) -> dict[str, float]:
    """Per-head temperature minimising the negative log-likelihood on held-out crops."""
    with torch.no_grad():
        x = torch.from_numpy(data["crops"]).permute(0, 3, 1, 2).float() / 255.0
        kind_l, wall_l, price_l, rot_l = (torch.cat(parts) for parts in zip(*(net(x[i:i + 512]) for i in range(0, len(x), 512))))
    grid = np.exp(np.linspace(np.log(0.3), np.log(5.0), 60))
    temps = {}
    kind, walls, price, rotation = (torch.from_numpy(data[key]) for key in ("kind", "walls", "price", "rotation"))

    def best(nll) -> float:
        values = [float(nll(t)) for t in grid]
        return float(grid[int(np.argmin(values))])

    temps["kind"] = best(lambda t: F.cross_entropy(kind_l / t, kind))
    known = walls >= 0
    temps["walls"] = best(lambda t: F.binary_cross_entropy_with_logits(wall_l[known] / t, walls[known].float()))
    temps["price"] = best(lambda t: F.cross_entropy(price_l / t, price, ignore_index=-1))
    temps["rotation"] = best(lambda t: F.cross_entropy(rot_l / t, rotation, ignore_index=-1))
    return {key: round(value, 4) for key, value in temps.items()}


def _train_locate_process(train: dict[str, np.ndarray], epochs: int, recipe: dict, threads: int) -> None:
    """Train and export the locator (in a child process while the tile classifier trains)."""
    torch.set_num_threads(threads)
    export.export_locate(train_locate(train, epochs), recipe)


def main(argv: list[str] | None = None) -> None:
    """Render, train, calibrate, export and evaluate every Alhambra model (or only the tile classifier)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-count", type=int, default=1800)
    parser.add_argument("--val-count", type=int, default=300)
    parser.add_argument("--locate-epochs", type=int, default=24)
    parser.add_argument("--tile-epochs", type=int, default=14)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TRAIN_THREADS", "2")))
    parser.add_argument("--only", choices=("all", "tiles"), default="all",
                        help="'tiles': retrain, calibrate and export only the tile classifier (alhambra_locate stays as shipped)")
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    train = build("train", args.train_count, workers=2)
    val = build("val", args.val_count, workers=2)
    recipe = {
        "train_renders": args.train_count,
        "train_seeds": f"0..{args.train_count - 1}",
        "calibration_renders": args.val_count,
        "calibration_seeds": f"1000000..{1000000 + args.val_count - 1}",
        "locate_epochs": args.locate_epochs,
        "tile_epochs": args.tile_epochs,
        "tile_misalign": f"shift +-{SHIFT} pitch, scale +-{SCALE}, turn +-{TURN} deg on {SHIFT_P:.0%} of crops",
        "seed": SEED,
    }
    side = None
    if args.only == "all" and args.threads >= 2:
        # two lanes of one thread each (faster than two threads on one lane): the locator trains
        # in a child process while this one trains the tile classifier
        side = fast.start_lane(_train_locate_process, train, args.locate_epochs, recipe, 1)
    elif args.only == "all":
        _train_locate_process(train, args.locate_epochs, recipe, args.threads)
    else:
        del recipe["locate_epochs"]
    tiles = train_tiles(train, args.tile_epochs)
    temps = fit_temperatures(tiles, val)
    print(f"temperatures: {temps}")
    export.export_tiles(tiles, temps, recipe)
    if side is not None:
        fast.join_lane(side, "locator")
    print(f"trained and exported in {time.perf_counter() - start:.0f} s")
    if not args.skip_evaluate:
        from models.alhambra import evaluate

        evaluate.main([])


if __name__ == "__main__":
    main()
