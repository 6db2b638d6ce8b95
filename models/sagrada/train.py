"""Train every Sagrada model from scratch (fixed seeds), export them to ONNX and refresh the cards.

``python -m models.sagrada.train`` renders the data (cached in build/sagrada/), trains the cell
classifier (``sagrada_dice``: ``CONFIG.cell_members`` networks trained side by side, shipped as one;
``--cell-members N`` for another count), the grid finder (``sagrada_finder``) and the corner refiner
(``sagrada_refiner``), fits the cell model's temperature on held-out renders, exports the three
ONNX files with their manifests, then runs ``evaluate`` to rewrite the model cards' tables.
Every setting is in ``CONFIG`` below; the loop is ``models.fit``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from models import fast
from models.cli import CommandParser
from models.fit import FitConfig, fit, focal_heat_loss, seeded
from models.sagrada import evaluate, export, locate_data, make_dataset
from models.sagrada.nets import CellEnsemble, CellNet, FinderNet, LocateNet, RefinerNet
from models.sagrada.real_dice import RealDice, die_masks, load_real_dice, with_yellow_copies
from scanner.sagrada.grid import heat_targets

SEED = 20261130


@dataclass(frozen=True)
class SagradaTraining:
    """Every setting of ``python -m models.sagrada.train``: data sizes and one ``FitConfig`` per network.

    Raises:
        ValueError: a data size is not positive.
    """

    train_photos: int = 1000  # renders of seeds make_dataset.TRAIN_SEED+
    val_photos: int = 150  # calibration renders (the cell temperature), seeds make_dataset.VAL_SEED+
    cells: FitConfig = FitConfig("cells", epochs=6, batch=128, lr=3e-3, peak_lr=4e-3, seed=SEED)
    # the fine-tune: rendered crops mixed with the real dice (fold 0), each real die repeated; the
    # value and die heads learn from every real die, the colour head from those of Sagrada's colours
    fine_tune: FitConfig = FitConfig("cells fine-tune (real dice)", epochs=16, batch=128, lr=3e-3, seed=SEED + 3, frozen_batch_norm=True)
    fine_tune_synthetic: int = 12_000
    fine_tune_real_repeat: int = 20
    fine_tune_paste: float = 0.6  # share of real dice pasted onto rendered empty cells (the rest keep their tray)
    fine_tune_yellow: float = 0.5  # share of the real dice of Sagrada's colours also shown as a yellow die (real_dice.yellowed)
    # cell networks trained side by side on the same augmented batches (each from its own initial
    # weights) and shipped as one ensemble (nets.CellEnsemble); 1: a single network. Two read the held-out
    # board style better (CHANGELOG); one is shipped until the training command is timed with two
    cell_members: int = 1
    finder: FitConfig = FitConfig("finder", epochs=60, batch=32, lr=3e-3, peak_lr=4e-3, seed=SEED + 1)
    refiner: FitConfig = FitConfig("refiner", epochs=48, batch=64, lr=3e-3, peak_lr=4e-3, seed=SEED + 2)
    # the cell-centre locator: random views (locate_data.random_view) of its own renders, each epoch new views
    locate: FitConfig = FitConfig("locate", epochs=30, batch=16, lr=3e-3, peak_lr=3e-3, seed=SEED + 4)
    locate_renders: int = 960  # seeds LOCATE_SEED+
    locate_views: int = 1440  # views per epoch
    locate_styled: bool = True  # renders of every training board style (models.sagrada.styles); False: ours only
    locate_real_share: float = 0.5  # share of those renders whose dice are real fold-0 dice (composite.training_pool)
    locate_mosaic_share: float = 0.15  # share of them that are only dice on a plain dark card (composite.mosaic_window)

    def __post_init__(self) -> None:
        for field in (
            "train_photos",
            "val_photos",
            "fine_tune_synthetic",
            "fine_tune_real_repeat",
            "cell_members",
            "locate_renders",
            "locate_views",
        ):
            if getattr(self, field) < 1:
                raise ValueError(f"{field}: expected a positive count, got {getattr(self, field)}")
        for share in ("fine_tune_paste", "fine_tune_yellow", "locate_real_share", "locate_mosaic_share"):
            if not 0 <= getattr(self, share) <= 1:
                raise ValueError(f"{share}: expected a share in [0, 1], got {getattr(self, share)}")


CONFIG = SagradaTraining()
Log = Callable[[str], object]


def _threads(count: int) -> None:
    torch.set_num_threads(count)


def _colour_jitter(x: torch.Tensor, generator: torch.Generator, strength: float = 1.0) -> torch.Tensor:
    """Random per-sample brightness, contrast, channel gains and noise on a float batch in [0, 1]."""
    n = x.shape[0]
    gain = 1 + strength * 0.12 * (torch.rand(n, 3, 1, 1, generator=generator) * 2 - 1)
    bright = 1 + strength * 0.25 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    contrast = 1 + strength * 0.2 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * contrast + mean
    x = x * gain * bright
    x = x + torch.randn(x.shape, generator=generator) * (0.02 * torch.rand(n, 1, 1, 1, generator=generator))
    return x.clamp(0, 1)


_P3_TO_SRGB = torch.tensor([[1.2249, -0.2247, 0.0], [-0.0420, 1.0419, 0.0], [-0.0197, -0.0786, 1.0979]])
_SRGB_TO_P3 = torch.linalg.inv(_P3_TO_SRGB)


def _relight(x: torch.Tensor, generator: torch.Generator, share: float = 0.8) -> torch.Tensor:
    """Random light and camera colour for a share of a float batch in [0, 1].

    Colour temperature (red and blue gains moving apart) and tint, gamma, a Display-P3 / sRGB
    mix-up (P3 pixels read as sRGB or the other way, partly), saturation, and a light gradient
    across the crop. The pips stay the lightest, most neutral pixels only as far as the light keeps them.
    """
    pick = torch.nonzero(torch.rand(x.shape[0], generator=generator) < share).flatten()
    if len(pick) == 0:
        return x
    n, height, width = len(pick), int(x.shape[2]), int(x.shape[3])

    def spread(amount: float) -> torch.Tensor:
        return ((torch.rand(n, generator=generator) * 2 - 1) * amount)[:, None, None, None]

    warm, tint = spread(0.3), spread(0.12)
    lit = x[pick] * torch.cat([1 + warm, 1 + tint, 1 - warm], 1)
    linear = lit.clamp(1e-4, 1) ** (2 * torch.exp(spread(0.3)))  # a gamma change, then to linear light (gamma 2)
    mix = spread(1.0)
    towards = torch.where(mix > 0, torch.einsum("ij,njhw->nihw", _P3_TO_SRGB, linear), torch.einsum("ij,njhw->nihw", _SRGB_TO_P3, linear))
    out = (linear + mix.abs() * (towards - linear)).clamp(0, 1).sqrt()
    grey = out.mean(dim=1, keepdim=True)
    out = grey + (out - grey) * (1 + spread(0.4))
    angle = torch.rand(n, generator=generator)[:, None, None] * 2 * math.pi
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, height), torch.linspace(-1, 1, width), indexing="ij")
    ramp = torch.cos(angle) * xs + torch.sin(angle) * ys
    out = out * (1 + spread(0.25)[:, 0] * ramp)[:, None]
    x = x.clone()
    x[pick] = out.clamp(0, 1)
    return x


def _random_affine(
    x: torch.Tensor, generator: torch.Generator, scale: float = 0.08, shift: float = 0.06, angle: float = 0.12
) -> torch.Tensor:
    """Random zoom, shift and rotation (up to ``angle`` radians either way) per sample.

    The finder is never exact and dice sit anywhere in their cells; loose dice lie at every angle.
    """
    n = x.shape[0]
    zoom = torch.exp((torch.rand(n, generator=generator) * 2 - 1) * scale)
    turn = (torch.rand(n, generator=generator) * 2 - 1) * angle
    cos, sin = torch.cos(turn) / zoom, torch.sin(turn) / zoom
    tx, ty = (torch.rand(2, n, generator=generator) * 2 - 1) * shift * 2
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
    grid = nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
    return nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def _recolour(x: torch.Tensor, generator: torch.Generator, share: float = 0.25) -> tuple[torch.Tensor, torch.Tensor]:
    """Swap colour channels and sometimes invert a share of the batch, so pips are counted whatever their colours.

    Returns the batch and a 0/1 weight per sample: 0 where the colour label no longer holds.
    """
    n = x.shape[0]
    chosen = torch.rand(n, generator=generator) < share
    if not chosen.any():
        return x, torch.ones(n)
    x = x.clone()
    perm = torch.randperm(3, generator=generator)
    picked = x[chosen][:, perm]
    invert = torch.rand(int(chosen.sum()), generator=generator) < 0.4
    picked[invert] = 1 - picked[invert]
    x[chosen] = picked
    return x, (~chosen).float()


def _to_float(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2))).float().div_(255.0)


def _quarter_turned(x_all: torch.Tensor, idx: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """The float batch ``idx`` of uint8 NHWC crops, turned by a random quarter turn and maybe mirrored (classes do not care)."""
    x = x_all[idx].permute(0, 3, 1, 2).float().div_(255.0)
    k = int(torch.randint(4, (1,), generator=generator))
    x = torch.rot90(x, k, dims=(2, 3))
    if torch.rand(1, generator=generator) < 0.5:
        x = torch.flip(x, dims=(3,))
    return x


def _heads_loss(outputs: tuple[torch.Tensor, ...], y: torch.Tensor, colour_weight: torch.Tensor) -> torch.Tensor:
    """Die + colour + value cross-entropy; the colour term only over samples of weight 1 (colour known and kept)."""
    die, colour, value = outputs
    colour_loss = (_LOSS_EACH(colour, y[:, 1]) * colour_weight).sum() / colour_weight.sum().clamp(min=1)
    return _LOSS(die, y[:, 0]) + colour_loss + _LOSS(value, y[:, 2])


_LOSS = nn.CrossEntropyLoss(label_smoothing=0.02)
_LOSS_EACH = nn.CrossEntropyLoss(label_smoothing=0.02, reduction="none")


# --------------------------------------------------------------------------------------------- cells


def cell_networks(members: int = 1) -> CellNet | CellEnsemble:
    """A new cell network, or ``members`` of them as one ensemble, each drawn its own initial weights from torch's generator."""
    if members == 1:
        return CellNet()
    return CellEnsemble([CellNet() for _ in range(members)])


def _each_member(net: nn.Module, x: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
    """Every member's (die, colour, value) logits of one batch (a single network is its own only member)."""
    members = list(net.members) if isinstance(net, CellEnsemble) else [net]
    return [fast.forward(member, x) for member in members]


def train_cells(
    crops: np.ndarray, labels: np.ndarray, config: FitConfig = CONFIG.cells, *, members: int = 1, log: Log = print
) -> CellNet | CellEnsemble:
    """Train the cell classifier on uint8 crops (N, 48, 48, 3) with (die, colour, value) labels.

    With ``members`` over 1, that many networks (``cell_networks``) learn side by side: each batch is
    drawn and augmented once and every network learns from it, its loss its own (one optimiser over
    disjoint weights is one per network). They differ by their initial weights. The augmentation is
    done once for all: two networks' step took 1.46 times one network's (float32, one thread).
    """
    generator = seeded(config.seed)
    net = cell_networks(members)
    x_all = torch.from_numpy(crops)
    y_all = torch.from_numpy(labels)

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = _quarter_turned(x_all, idx, generator)
        y = y_all[idx]
        x = _random_affine(x, generator)
        x = _relight(_colour_jitter(x, generator), generator)
        x, colour_known = _recolour(x, generator)
        outputs = _each_member(net, x)
        with torch.no_grad():  # the first network's tally
            die, colour, value = outputs[0]
            ok = (die.argmax(1) == y[:, 0]) & (colour.argmax(1) == y[:, 1]) & (value.argmax(1) == y[:, 2])
        loss = torch.stack([_heads_loss(each, y, colour_known) for each in outputs]).sum()
        return loss, {"train cells right": int(ok.sum())}

    return fit(net, len(crops), step, config, generator, log=log)


def _low_resolution(x: torch.Tensor, generator: torch.Generator, share: float = 0.3) -> torch.Tensor:
    """Shrink a share of the batch to 45-95% and blow it back up (small, soft dice of a phone photo cut to the grid)."""
    pick = torch.nonzero(torch.rand(x.shape[0], generator=generator) < share).flatten()
    if len(pick) == 0:
        return x
    side = x.shape[-1]
    small = int(side * float(0.45 + 0.5 * torch.rand(1, generator=generator)))
    out = x.clone()
    reduced = nn.functional.interpolate(x[pick], size=(small, small), mode="area")
    out[pick] = nn.functional.interpolate(reduced, size=(side, side), mode="bilinear", align_corners=False)
    return out


def _streaks(x: torch.Tensor, generator: torch.Generator, share: float = 0.3) -> torch.Tensor:
    """Paint 1-3 soft, whitish, curved streaks near the middle of a share of the batch.

    Real translucent dice show bright marbling and glints that the renders lack; they are not pips.
    """
    side = x.shape[-1]
    ys, xs = torch.meshgrid(torch.arange(float(side)), torch.arange(float(side)), indexing="ij")
    out = x.clone()
    for i in torch.nonzero(torch.rand(x.shape[0], generator=generator) < share).flatten().tolist():
        for _ in range(int(torch.randint(1, 4, (1,), generator=generator))):
            cx, cy = (side * (0.3 + 0.4 * torch.rand(2, generator=generator))).tolist()
            angle = float(torch.rand(1, generator=generator) * math.pi)
            bend = float((torch.rand(1, generator=generator) * 2 - 1) * 0.08)
            width = float(0.8 + 1.8 * torch.rand(1, generator=generator))
            length = float(5 + 12 * torch.rand(1, generator=generator))
            along = (xs - cx) * math.cos(angle) + (ys - cy) * math.sin(angle)
            across = -(xs - cx) * math.sin(angle) + (ys - cy) * math.cos(angle) - bend * along * along
            alpha = torch.exp(-((across / width) ** 2)) * torch.sigmoid((length - along.abs()) * 1.5)
            alpha = alpha * float(0.25 + 0.5 * torch.rand(1, generator=generator))
            tint = out[i].mean(dim=(1, 2), keepdim=True) * 0.3 + 0.7
            out[i] = out[i] * (1 - alpha) + tint * alpha
    return out.clamp(0, 1)


def fine_tune_real(
    net: CellNet | CellEnsemble,
    crops: np.ndarray,
    labels: np.ndarray,
    real: RealDice,
    config: FitConfig = CONFIG.fine_tune,
    *,
    synthetic: int = CONFIG.fine_tune_synthetic,
    real_repeat: int = CONFIG.fine_tune_real_repeat,
    paste: float = CONFIG.fine_tune_paste,
    log: Log = print,
) -> CellNet | CellEnsemble:
    """Continue training on a share of the synthetic crops mixed with real loose dice (fold 0).

    Every real die teaches the value and die heads; those of Sagrada's colours (``real.colours`` > 0)
    the colour head too. Real dice are turned by any angle and scaled, and a share ``paste`` of them
    is cut out (``real_dice.die_masks``) and pasted onto rendered empty cells (any pattern print);
    renders get marbling streaks; every crop may be seen at a lower resolution and is relit.
    Batch-norm statistics stay as the synthetic training left them. An ensemble's networks learn side
    by side from the same batches, as in ``train_cells``.
    """
    generator = seeded(config.seed)
    pick = torch.randperm(len(crops), generator=generator)[:synthetic].numpy()
    backgrounds = torch.from_numpy(crops[labels[:, 0] == 0])
    real_labels = np.stack([np.ones_like(real.values), real.colours, real.values], axis=1)
    masks = (die_masks(real.crops) * 255).round().astype(np.uint8)[..., None]
    real_rgba = np.concatenate([real.crops, masks], axis=3)
    rendered_rgba = np.concatenate([crops[pick], np.zeros((len(pick), *crops.shape[1:3], 1), np.uint8)], axis=3)
    x_all = torch.from_numpy(np.concatenate([rendered_rgba, np.repeat(real_rgba, real_repeat, axis=0)]))
    y_all = torch.from_numpy(np.concatenate([labels[pick], np.repeat(real_labels, real_repeat, axis=0)]))
    rendered = torch.cat([torch.ones(len(pick)), torch.zeros(real_repeat * len(real.crops))]).bool()
    colour_known = torch.cat([torch.ones(len(pick)), torch.from_numpy(np.repeat(real.coloured, real_repeat)).float()])

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x4 = _quarter_turned(x_all, idx, generator)
        x = x4[:, :3].clone()
        y = y_all[idx]
        synthetic_rows = rendered[idx]
        if synthetic_rows.any():
            x[synthetic_rows] = _streaks(_random_affine(x[synthetic_rows], generator), generator)
        if (~synthetic_rows).any():
            turned = _random_affine(x4[~synthetic_rows], generator, scale=0.15, angle=math.pi)
            die, mask = turned[:, :3], turned[:, 3:]
            pasted = (torch.rand(len(die), generator=generator) < paste).float()[:, None, None, None] * mask
            under = backgrounds[torch.randint(len(backgrounds), (len(die),), generator=generator)]
            under = torch.rot90(
                under.permute(0, 3, 1, 2).float().div_(255.0), int(torch.randint(4, (1,), generator=generator)), dims=(2, 3)
            )
            x[~synthetic_rows] = die * (1 - pasted) + (die * mask + under * (1 - mask)) * pasted
        x = _relight(_colour_jitter(_low_resolution(x, generator), generator), generator)
        x, recoloured = _recolour(x, generator)
        weight = colour_known[idx] * recoloured
        outputs = _each_member(net, x)
        return torch.stack([_heads_loss(each, y, weight) for each in outputs]).sum(), {}

    return fit(net, len(x_all), step, config, generator, log=log)


def train_cell_networks(
    crops: np.ndarray, labels: np.ndarray, real: RealDice | None, config: SagradaTraining = CONFIG, *, log: Log = print
) -> CellNet | CellEnsemble:
    """The cell model: ``config.cell_members`` networks trained on the rendered crops, then fine-tuned on ``real`` dice when given."""
    net = train_cells(crops, labels, config.cells, members=config.cell_members, log=log)
    if real is None:
        return net
    return fine_tune_real(
        net,
        crops,
        labels,
        real,
        config.fine_tune,
        synthetic=config.fine_tune_synthetic,
        real_repeat=config.fine_tune_real_repeat,
        paste=config.fine_tune_paste,
        log=log,
    )


def cell_logits(net: CellNet | CellEnsemble, crops: np.ndarray, batch: int = 512) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the three heads' logits for uint8 crops."""
    outs: list[list[np.ndarray]] = [[], [], []]
    with torch.no_grad():
        for start in range(0, len(crops), batch):
            for index, out in enumerate(net(_to_float(crops[start : start + batch]))):
                outs[index].append(out.numpy())
    return tuple(np.concatenate(o) for o in outs)  # type: ignore[return-value]


def fit_temperature(logits: tuple[np.ndarray, ...], labels: np.ndarray) -> float:
    """Return the one temperature (shared by the heads) minimising held-out negative log-likelihood."""
    best, best_t = math.inf, 1.0
    for t in np.exp(np.linspace(np.log(0.3), np.log(5.0), 120)):
        nll = 0.0
        for head, logit in enumerate(logits):
            z = logit / t
            z = z - z.max(axis=1, keepdims=True)
            logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            nll -= logp[np.arange(len(labels)), labels[:, head]].mean()
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


# --------------------------------------------------------------------------------------------- finder


def train_finder(images: np.ndarray, masks: np.ndarray, config: FitConfig = CONFIG.finder, *, log: Log = print) -> FinderNet:
    """Train the grid-area segmenter on letterboxed photos and their 1/4-resolution masks."""
    generator = seeded(config.seed)
    net = FinderNet()
    x_all = torch.from_numpy(images)
    m_all = torch.from_numpy(masks)

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = x_all[idx].permute(0, 3, 1, 2).float().div_(255.0)
        m = m_all[idx].float().div_(255.0)
        k = int(torch.randint(4, (1,), generator=generator))
        x, m = torch.rot90(x, k, dims=(2, 3)), torch.rot90(m, k, dims=(1, 2))
        if torch.rand(1, generator=generator) < 0.5:
            x, m = torch.flip(x, dims=(3,)), torch.flip(m, dims=(2,))
        x = _colour_jitter(x, generator)
        logits = fast.forward(net, x)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, m)
        prob = torch.sigmoid(logits)
        dice = 1 - (2 * (prob * m).sum((1, 2)) + 1) / (prob.sum((1, 2)) + m.sum((1, 2)) + 1)
        return loss + 0.5 * dice.mean(), {}

    return fit(net, len(images), step, config, generator, log=log)


# --------------------------------------------------------------------------------------------- refiner


def train_refiner(
    patches: np.ndarray, corners: np.ndarray, turns: np.ndarray, config: FitConfig = CONFIG.refiner, *, log: Log = print
) -> RefinerNet:
    """Train the corner refiner on patches, the true corners in patch px and the top-left's turn."""
    generator = seeded(config.seed)
    net = RefinerNet()
    x_all = torch.from_numpy(patches)
    targets = torch.from_numpy(np.stack([heat_targets(c) for c in corners]))
    t_all = torch.from_numpy(turns)

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        x = _colour_jitter(x_all[idx].permute(0, 3, 1, 2).float().div_(255.0), generator)
        heat, turn = fast.forward(net, x)
        logp = nn.functional.log_softmax(heat.flatten(2), dim=2)
        heat_loss = -(targets[idx].flatten(2) * logp).sum(2).mean()
        loss = heat_loss + 0.5 * nn.functional.cross_entropy(turn, t_all[idx])
        return loss, {"turn right": int((turn.argmax(1) == t_all[idx]).sum())}

    return fit(net, len(patches), step, config, generator, log=log)


# --------------------------------------------------------------------------------------------- locator

LOCATE_SEED = 4_000_000


def train_locate(
    images: list[np.ndarray], corners: np.ndarray, config: FitConfig = CONFIG.locate, *, views: int = CONFIG.locate_views, log: Log = print
) -> LocateNet:
    """Train the cell-centre locator on random views of renders (``locate_data.random_view``), new views every epoch."""
    generator = seeded(config.seed)
    rng = np.random.default_rng(config.seed)
    net = LocateNet()

    def step(net: nn.Module, idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, int]]:
        parts = [locate_data.random_view(images[int(i) % len(images)], corners[int(i) % len(images)], rng) for i in idx]
        x = _to_float(np.stack([p[0] for p in parts]))
        heat = torch.from_numpy(np.stack([p[1] for p in parts]))[:, None]
        mask = torch.from_numpy(np.stack([p[2] for p in parts]))[:, None]
        if torch.rand(1, generator=generator) < 0.3:  # dice come in other colours: swap the channels
            x = x[:, torch.randperm(3, generator=generator)]
        x = _colour_jitter(x, generator, strength=1.5)
        heat_logits, mask_logits = fast.forward(net, x)
        return focal_heat_loss(heat_logits, heat) + nn.functional.binary_cross_entropy_with_logits(mask_logits, mask), {}

    return fit(net, views, step, config, generator, log=log)


def _train_locate_process(config: SagradaTraining, workers: int) -> None:
    """Render the locator's scenes, train it and export it."""
    started = time.perf_counter()
    images, corners = locate_data.load_or_render(
        LOCATE_SEED,
        config.locate_renders,
        workers=workers,
        styled=config.locate_styled,
        real_share=config.locate_real_share,
        mosaic_share=config.locate_mosaic_share,
    )
    print(f"locator: {len(images)} renders in {time.perf_counter() - started:.0f} s", flush=True)
    _threads(1)
    export.export_locate(train_locate(images, corners, config.locate, views=config.locate_views))


# --------------------------------------------------------------------------------------------- main


def _train_grid_models(train: dict[str, Any], only: set[str], config: SagradaTraining, threads: int = 1) -> None:
    """Train and export the refiner, then the finder (in a child process while the cell model trains)."""
    _threads(threads)
    if "refiner" in only:
        export.export_refiner(train_refiner(train["patches"], train["patch_corners"], train["patch_turns"], config.refiner))
    if "finder" in only:
        export.export_finder(train_finder(train["finder_input"], train["finder_mask"], config.finder))


def main(argv: list[str] | None = None) -> None:
    """Command line: render, train, calibrate, export and evaluate every Sagrada model."""
    parser = CommandParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--cache", type=Path, default=make_dataset.CACHE, help="where rendered data are cached")
    parser.add_argument("--photos", type=int, default=CONFIG.train_photos, help="training renders")
    parser.add_argument("--only", choices=["cells", "finder", "refiner", "locate"], action="append", help="train only these")
    parser.add_argument("--cell-epochs", type=int, default=CONFIG.cells.epochs)
    parser.add_argument(
        "--cell-members", type=int, default=CONFIG.cell_members, help="cell networks trained side by side and shipped as one"
    )
    parser.add_argument("--finder-epochs", type=int, default=CONFIG.finder.epochs)
    parser.add_argument("--refiner-epochs", type=int, default=CONFIG.refiner.epochs)
    parser.add_argument("--locate-epochs", type=int, default=CONFIG.locate.epochs)
    parser.add_argument("--synthetic-only", action="store_true", help="skip the fine-tune on real dice (fold 0)")
    parser.add_argument("--skip-evaluate", action="store_true")
    args = parser.parse_args(argv)
    try:
        config = dataclasses.replace(
            CONFIG,
            train_photos=args.photos,
            cell_members=args.cell_members,
            cells=dataclasses.replace(CONFIG.cells, epochs=args.cell_epochs),
            finder=dataclasses.replace(CONFIG.finder, epochs=args.finder_epochs),
            refiner=dataclasses.replace(CONFIG.refiner, epochs=args.refiner_epochs),
            locate=dataclasses.replace(CONFIG.locate, epochs=args.locate_epochs),
        )
    except ValueError as error:  # a count or an epoch number below one: one line, exit 2
        parser.error(str(error))
    _threads(args.threads)
    fast.keep_freed_memory()  # before the render workers and lanes are forked: they inherit it
    started = time.perf_counter()
    only = set(args.only or ["cells", "finder", "refiner", "locate"])
    if only == {"locate"}:
        _train_locate_process(config, args.threads)
        print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
        if not args.skip_evaluate:
            evaluate.main([])
        return
    locate_lane = fast.start_lane(_train_locate_process, config, 1) if "locate" in only else None
    train = make_dataset.load_or_make(make_dataset.TRAIN_SEED, config.train_photos, workers=args.threads, cache=args.cache)
    val = make_dataset.load_or_make(make_dataset.VAL_SEED, config.val_photos, workers=args.threads, cache=args.cache)
    print(
        f"data ready: {len(train['crops'])} crops, {len(train['finder_input'])} photos, {len(train['patches'])} patches "
        f"({time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    grid_models = only & {"finder", "refiner"}
    side = None
    if grid_models and "cells" in only and args.threads >= 2:
        # two lanes of one thread each (faster than two threads on one lane): the refiner and then
        # the finder train in a child process while this one trains the cell model
        side = fast.start_lane(_train_grid_models, train, grid_models, config)
    if "cells" in only:
        real = None if args.synthetic_only else load_real_dice(fold=0)
        if real is not None:
            real = with_yellow_copies(real, config.fine_tune_yellow, SEED + 5)
        else:
            print("no real dice photos found (or --synthetic-only): the cell model is trained on renders only", flush=True)
        cells = train_cell_networks(train["crops"], train["crop_labels"], real, config)
        temperature = fit_temperature(cell_logits(cells, val["crops"]), val["crop_labels"])
        print(f"cell temperature {temperature:.3f}", flush=True)
        export.export_cells(cells, temperature)
    if side is not None:
        fast.join_lane(side, "finder/refiner")
    elif grid_models:
        _train_grid_models(train, grid_models, config, args.threads)
    if locate_lane is not None:
        fast.join_lane(locate_lane, "locate")
    print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    if not args.skip_evaluate:
        evaluate.main([])


if __name__ == "__main__":
    main()
