"""The one training loop every network shares: seeded, shuffled mini-batches, AdamW, a learning-rate schedule.

A game's training module keeps each network's settings in one frozen ``FitConfig`` at its top and
hands ``fit`` the network and a ``step`` function that turns a batch of indices into a loss (plus
counts to report, such as right answers). The loop runs on ``models.fast`` (channels-last,
bfloat16 autocast) and hands back the network in evaluation mode. Same seed, same data: the same
weights, bit for bit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from models import fast
from models.fast import NetT

Step = Callable[[nn.Module, torch.Tensor], tuple[torch.Tensor, dict[str, int]]]
"""``step(net, indices) -> (loss, counts)``: the batch's mean loss and per-batch tallies (summed, shown per example)."""


@dataclass(frozen=True)
class FitConfig:
    """One network's training settings.

    ``peak_lr`` set: a one-cycle schedule rising to it over the first ``warmup`` share of the steps;
    ``peak_lr`` None: cosine annealing from ``lr`` to zero. ``frozen_batch_norm`` keeps batch-norm
    statistics as they are (a fine-tune).

    Raises:
        ValueError: a setting is impossible (no epochs, an empty batch, a learning rate not positive).
    """

    name: str
    epochs: int
    batch: int
    lr: float
    seed: int
    weight_decay: float = 1e-4
    peak_lr: float | None = None
    warmup: float = 0.15
    frozen_batch_norm: bool = False

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch < 1:
            raise ValueError(f"{self.name}: expected at least one epoch and one example a batch, got {self.epochs} x {self.batch}")
        if not self.lr > 0 or (self.peak_lr is not None and not self.peak_lr > 0):
            raise ValueError(f"{self.name}: expected positive learning rates, got lr {self.lr}, peak {self.peak_lr}")
        if not 0 < self.warmup < 1:
            raise ValueError(f"{self.name}: expected a warm-up share in (0, 1), got {self.warmup}")

    def steps_per_epoch(self, count: int) -> int:
        """Mini-batches in one pass over ``count`` examples (the last one may be short)."""
        return math.ceil(count / self.batch)


def focal_heat_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss on Gaussian centre targets (peak 1 at each centre): the locators' and the finder's heatmaps."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    positive = target > 0.99
    pos_loss = -torch.log(p) * (1 - p) ** 2 * positive
    neg_loss = -torch.log(1 - p) * p**2 * (1 - target) ** 4 * (~positive)
    return (pos_loss.sum() + neg_loss.sum()) / positive.sum().clamp(min=1)


def seeded(seed: int) -> torch.Generator:
    """Seed torch's global generator (network initialisation) and return a fresh generator for the data order and augmentation."""
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def _schedule(optimizer: torch.optim.Optimizer, config: FitConfig, steps: int) -> torch.optim.lr_scheduler.LRScheduler:
    if config.peak_lr is None:
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    return torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=config.peak_lr, total_steps=steps, pct_start=config.warmup)


def fit(
    net: NetT,
    count: int,
    step: Step,
    config: FitConfig,
    generator: torch.Generator,
    *,
    draw: Callable[[torch.Generator], torch.Tensor] | None = None,
    log: Callable[[str], object] = print,
) -> NetT:
    """Train ``net`` for ``config.epochs`` passes over ``count`` examples and return it in evaluation mode.

    Each epoch draws a new order from ``generator``: a permutation of all ``count`` examples, or,
    with ``draw``, the ``count`` indices ``draw(generator)`` returns (a subset drawn anew each
    epoch); ``step`` gets the network and each batch's indices.

    Raises:
        ValueError: there are no examples to train on, or ``draw`` returned other than ``count`` indices.
    """
    if count < 1:
        raise ValueError(f"{config.name}: no examples to train on")
    net = fast.prepare(net)
    optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = _schedule(optimizer, config, config.epochs * config.steps_per_epoch(count))
    for epoch in range(config.epochs):
        net.train()
        if config.frozen_batch_norm:
            for module in net.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.eval()
        order = torch.randperm(count, generator=generator) if draw is None else draw(generator)
        if len(order) != count:
            raise ValueError(f"{config.name}: an epoch's draw gave {len(order)} examples, expected {count}")
        total, seen, tallies, started = 0.0, 0, dict[str, int](), time.perf_counter()
        for start in range(0, count, config.batch):
            idx = order[start : start + config.batch]
            loss, counts = step(net, idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
            for key, value in counts.items():
                tallies[key] = tallies.get(key, 0) + value
        shown = "".join(f", {key} {value / seen:.4f}" for key, value in tallies.items())
        log(f"{config.name} epoch {epoch + 1}/{config.epochs}: loss {total / seen:.4f}{shown} ({time.perf_counter() - started:.0f} s)")
    return fast.finish(net)
