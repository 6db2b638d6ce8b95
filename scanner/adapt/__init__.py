"""Adapting the shipped classifiers to one game set, from corrected readings, in numpy only.

Renders never look exactly like a given copy of the game under a given lamp. After a few scans have
been corrected in the review screen, ``adapt_model`` re-fits a small *residual head* per classifier
head on those examples::

    adapted_logits = shipped_logits + standardise(features) @ W + b

``features`` are, per head, whichever held-out checking reads best of: the model's ``embedding``
output (its penultimate layer; without one, all its logits concatenated: an affine re-fit), the
crop's own colour features (``crop_colour_features``: a hue histogram and colour statistics of
its centre, which a new printing's colours move in ways a few examples can learn), or both. ``W`` and ``b``
start at zero and are pulled back towards zero (L2, strength chosen by cross-validation), so with
few examples the head stays close to the shipped one. Each example is held out once (whole photos
when there are several) and read by a head fitted without it: a head is kept only when that
held-out accuracy does not drop and the held-out log-loss does (unseen cells read more surely, no
fewer of them right). The kept heads are then re-fitted on every example.

The result, an ``Adaptation``, is saved as an ``.npz`` file (no pickles) beside the calibration
profile that selects it; it records each model's sha256 and classes, and loading refuses a corrupt
file or one fitted for another model. Readers use it through ``adapt_reader`` (which wraps the
reader's ``OnnxModel`` attributes so their ``run`` returns adapted logits) or ``apply_head``; the
shipped model files are never touched, and without an adaptation nothing changes at all.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from scanner.model import OnnxModel
from scoring.errors import TableError

ADAPTATION_FORMAT = "tablescan-adaptation"
ADAPTATION_VERSION = 2  # 2: each head names its own basis, which may include the crop's colour features
EMBEDDING = "embedding"
# not a model output: colour features computed from the crop itself (``crop_colour_features``)
CROP_COLOUR = "crop_colour"
HUE_BINS = 12
HOLDOUT_FRACTION = 0.34
MIN_EXAMPLES = 6
L2_CHOICES = (1e-2, 1e-1, 1.0)
STEPS = 300
LEARNING_RATE = 0.05
SCALE_L2 = 0.01  # pull of the shipped logits' weight back towards 1
# game -> its cell classifier, whose heads the adaptation re-fits
CLASSIFIERS = {"sagrada": "sagrada_dice", "alhambra": "alhambra_tiles"}


class AdaptationError(TableError):
    """An adaptation file is missing, corrupt, or was fitted for another model than the shipped one."""

    exit_code = 2
    http_status = 422


# --------------------------------------------------------------------------------------------
# labels


def head_labels(game: str, value: str) -> dict[str, str]:
    """Return the class each classifier head should give a cell whose (corrected) value is ``value``.

    >>> head_labels("sagrada", "B4")
    {'die': 'die', 'colour': 'B', 'value': '4'}
    >>> head_labels("alhambra", "garden:NS")
    {'kind': 'garden'}

    Raises:
        AdaptationError: the game has no adaptable classifier.
    """
    text = str(value).strip()
    if game == "sagrada":
        if text in ("", "."):
            return {"die": "empty", "colour": "none", "value": "none"}
        if len(text) == 2 and text[0] in "RYGBP" and text[1] in "123456":
            return {"die": "die", "colour": text[0], "value": text[1]}
        return {}
    if game == "alhambra":
        if text in ("", "."):
            return {"kind": "none"}
        return {"kind": text.partition(":")[0]}
    raise AdaptationError(f"game {game!r}: no adaptable classifier (adaptable: {', '.join(sorted(CLASSIFIERS))})")


# --------------------------------------------------------------------------------------------
# examples


@dataclass(frozen=True)
class ExampleSet:
    """Labelled examples for one model: its outputs on the crops, labels per head, photo per example.

    ``labels[head]`` holds class indices into the model's head classes, -1 where unknown. ``items``
    numbers the cells the examples show (a cell seen turned or mirrored gives several examples of
    one item); ``variants`` is 0 for a crop as the reader saw it, 1-7 for its turned/mirrored copies.
    """

    model: str
    outputs: Mapping[str, np.ndarray]
    labels: Mapping[str, np.ndarray]
    groups: np.ndarray
    items: np.ndarray | None = None
    variants: np.ndarray | None = None

    def __post_init__(self) -> None:
        count = len(self.groups)
        extra = {"items": self.items, "variants": self.variants}
        for name, array in {**self.outputs, **self.labels, **extra}.items():
            if array is not None and len(array) != count:
                raise ValueError(f"examples[{name}]: expected {count} rows, got {len(array)}")

    def __len__(self) -> int:
        return len(self.groups)

    @property
    def item_ids(self) -> np.ndarray:
        """The item (cell) of each example: ``items``, or one item per example."""
        return np.arange(len(self)) if self.items is None else np.asarray(self.items)

    @property
    def as_read(self) -> np.ndarray:
        """Which examples are crops as the reader saw them (not turned or mirrored copies)."""
        return np.ones(len(self), bool) if self.variants is None else np.asarray(self.variants) == 0

    def subset(self, index: np.ndarray) -> ExampleSet:
        """Return the examples at ``index`` (a new set)."""
        return ExampleSet(
            self.model,
            {k: v[index] for k, v in self.outputs.items()},
            {k: v[index] for k, v in self.labels.items()},
            self.groups[index],
            self.item_ids[index],
            np.where(self.as_read, 0, 1)[index] if self.variants is None else self.variants[index],
        )

    @staticmethod
    def concatenate(sets: Sequence[ExampleSet]) -> ExampleSet:
        """Join example sets of one model (their groups must already be distinct; items are renumbered).

        Raises:
            ValueError: no sets, or sets of different models or outputs.
        """
        if not sets:
            raise ValueError("examples: expected at least one set")
        first = sets[0]
        if any(s.model != first.model or set(s.outputs) != set(first.outputs) for s in sets):
            raise ValueError("examples: sets of different models cannot be joined")
        heads = sorted({h for s in sets for h in s.labels})
        labels = {
            h: np.concatenate([s.labels.get(h, np.full(len(s), -1, np.int64)) for s in sets]) for h in heads
        }
        items, offset = [], 0
        for s in sets:
            items.append(s.item_ids + offset)
            offset += int(s.item_ids.max()) + 1 if len(s) else 0
        return ExampleSet(
            first.model,
            {k: np.concatenate([s.outputs[k] for s in sets]) for k in first.outputs},
            labels,
            np.concatenate([s.groups for s in sets]),
            np.concatenate(items),
            np.concatenate([np.where(s.as_read, 0, 1) if s.variants is None else s.variants for s in sets]),
        )


def label_indices(classes: Sequence[str], names: Iterable[str | None]) -> np.ndarray:
    """Map class names to indices into ``classes``; unknown or missing names become -1.

    >>> label_indices(("none", "R", "Y"), ["Y", None, "Q"]).tolist()
    [2, -1, -1]
    """
    position = {name: i for i, name in enumerate(classes)}
    return np.array([position.get(name, -1) if name is not None else -1 for name in names], dtype=np.int64)


def dihedral(crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 turns and mirror images of each crop (N, H, W, 3) -> (8N, H, W, 3), and each copy's variant 0-7.

    Variant 0 is the crop itself. A cell's class does not depend on how it is turned (dice pips,
    colours and tile kinds all read the same), so each is another true example of the same label.
    """
    copies, variants = [], []
    for variant in range(8):
        turned = np.rot90(crops, variant % 4, axes=(1, 2))
        copies.append(turned[:, :, ::-1] if variant >= 4 else turned)
        variants.append(np.full(len(crops), variant))
    return np.ascontiguousarray(np.stack(copies, axis=1).reshape(-1, *crops.shape[1:])), np.stack(variants, axis=1).reshape(-1)


def examples_from_crops(model: Any, crops: np.ndarray, values: Sequence[str], game: str, groups: Sequence[int], *,
                        augment: bool = True) -> ExampleSet:
    """Run ``model`` on uint8 crops (N, H, W, 3) RGB and label each with its cell value's head classes.

    With ``augment`` each crop is also read turned and mirrored (8 examples per cell, one item).

    Raises:
        AdaptationError: the crops do not have the model's input size.
    """
    crops = np.asarray(crops)
    expected = tuple(model.manifest.input_shape[2:])
    if crops.ndim != 4 or crops.shape[3] != 3 or tuple(crops.shape[1:3]) != expected:
        raise AdaptationError(f"{model.manifest.name}: expected crops (N, {expected[0]}, {expected[1]}, 3), got {crops.shape}")
    copies = 8 if augment else 1
    if augment:
        crops, variants = dihedral(crops)
    else:
        variants = np.zeros(len(crops), np.int64)
    outputs: dict[str, list[np.ndarray]] = {}
    for start in range(0, len(crops), 256):
        chunk = crops[start:start + 256]
        batch = np.ascontiguousarray(chunk.transpose(0, 3, 1, 2), dtype=np.float32) / np.float32(255.0)
        for name, array in model.run(batch).items():
            outputs.setdefault(name, []).append(np.asarray(array))
        outputs.setdefault(CROP_COLOUR, []).append(crop_colour_features(batch))
    joined = {name: np.concatenate(parts) for name, parts in outputs.items()}
    heads = dict(model.manifest.heads)
    per_cell = [head_labels(game, value) for value in values]
    labels = {head: np.repeat(label_indices(heads[head], [cell.get(head) for cell in per_cell]), copies)
              for head in sorted({h for cell in per_cell for h in cell}) if head in heads}
    items = np.repeat(np.arange(len(values)), copies)
    return ExampleSet(model.manifest.name, joined, labels, np.repeat(np.asarray(groups, dtype=np.int64), copies), items, variants)


def crop_colour_features(batch: np.ndarray) -> np.ndarray:
    """Colour features of each crop's centre (the middle half, where the die or tile is), (N, 20) float64.

    A soft 12-bin hue histogram weighted by saturation x value (dark pips and grey background
    count little), then mean and spread of R, G, B, mean saturation and mean value. ``batch`` is
    what the model reads: (N, 3, H, W) float RGB in 0-1. Turning a crop hardly changes them.

    >>> crop_colour_features(np.zeros((2, 3, 48, 48), np.float32)).shape
    (2, 20)

    Raises:
        AdaptationError: the batch is not (N, 3, H, W).
    """
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AdaptationError(f"crop colour features: expected a (N, 3, H, W) RGB batch, got {batch.shape}")
    height, width = batch.shape[2:]
    centre = batch[:, :, height // 4:height - height // 4, width // 4:width - width // 4].astype(np.float64)
    count = len(batch)
    red, green, blue = centre[:, 0], centre[:, 1], centre[:, 2]
    high = np.maximum(np.maximum(red, green), blue)
    low = np.minimum(np.minimum(red, green), blue)
    spread = high - low + 1e-6
    hue = np.where(high == red, ((green - blue) / spread) % 6,
                   np.where(high == green, (blue - red) / spread + 2, (red - green) / spread + 4)) / 6.0
    saturation = (high - low) / (high + 1e-6)
    weight = (saturation * high).reshape(count, -1)
    position = hue.reshape(count, -1) * HUE_BINS - 0.5  # shared between the two nearest bin centres (circular)
    first = np.floor(position).astype(np.int64)
    share = position - first
    histogram = np.zeros((count, HUE_BINS))
    rows = np.repeat(np.arange(count), position.shape[1])
    np.add.at(histogram, (rows, (first % HUE_BINS).ravel()), (weight * (1 - share)).ravel())
    np.add.at(histogram, (rows, ((first + 1) % HUE_BINS).ravel()), (weight * share).ravel())
    histogram /= weight.sum(axis=1, keepdims=True) + 1e-6
    pixels = centre.reshape(count, 3, -1)
    return np.concatenate([histogram, pixels.mean(axis=2), pixels.std(axis=2),
                           saturation.reshape(count, -1).mean(axis=1, keepdims=True),
                           high.reshape(count, -1).mean(axis=1, keepdims=True)], axis=1)


def with_crop_colour(outputs: Mapping[str, np.ndarray], batch: np.ndarray | None, basis: Iterable[str]) -> Mapping[str, np.ndarray]:
    """``outputs`` plus the crop colour features of ``batch`` when ``basis`` needs them (a new dict then).

    Raises:
        AdaptationError: they are needed and there is no batch to compute them from.
    """
    if CROP_COLOUR not in set(basis) or CROP_COLOUR in outputs:
        return outputs
    if batch is None:
        raise AdaptationError("an adapted head reads the crops' colour; pass the model's input batch")
    return {**outputs, CROP_COLOUR: crop_colour_features(batch)}


# --------------------------------------------------------------------------------------------
# the residual head


@dataclass(frozen=True, eq=False)
class HeadFit:
    """A residual head: ``logit_scale * logits + ((features - mean) / scale) @ weights + bias``.

    ``basis`` names the outputs its features are read from (empty: its model's basis);
    ``logit_scale`` is how far the shipped logits are still trusted (1: as shipped).
    """

    head: str
    classes: tuple[str, ...]
    temperature: float
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    basis: tuple[str, ...] = ()
    logit_scale: float = 1.0

    def __post_init__(self) -> None:
        dims, count = len(self.mean), len(self.classes)
        shapes = {"mean": (self.mean, (dims,)), "scale": (self.scale, (dims,)), "weights": (self.weights, (dims, count)),
                  "bias": (self.bias, (count,))}
        for name, (array, shape) in shapes.items():
            if not isinstance(array, np.ndarray) or array.shape != shape:
                got = getattr(array, "shape", type(array).__name__)
                raise AdaptationError(f"head {self.head}.{name}: expected shape {shape}, got {got}")
            if not np.all(np.isfinite(array)):
                raise AdaptationError(f"head {self.head}.{name}: not finite")
        if not np.all(self.scale > 0) or not (self.temperature > 0):
            raise AdaptationError(f"head {self.head}: scale and temperature must be positive")
        if not (isinstance(self.logit_scale, float) and math.isfinite(self.logit_scale)):
            raise AdaptationError(f"head {self.head}.logit_scale: expected a finite number, got {self.logit_scale!r}")

    def adjust(self, features: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """Return adapted logits (a new array, the logits' dtype).

        Raises:
            AdaptationError: features or logits do not have this head's sizes.
        """
        if features.ndim != 2 or features.shape[1] != len(self.mean):
            raise AdaptationError(f"head {self.head}: expected features (N, {len(self.mean)}), got {features.shape}")
        if logits.shape != (len(features), len(self.classes)):
            raise AdaptationError(f"head {self.head}: expected logits ({len(features)}, {len(self.classes)}), got {logits.shape}")
        delta = ((features.astype(np.float64) - self.mean) / self.scale) @ self.weights + self.bias
        return (self.logit_scale * logits.astype(np.float64) + delta).astype(logits.dtype)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def log_loss(logits: np.ndarray, labels: np.ndarray, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of ``labels`` under ``softmax(logits / temperature)``.

    >>> round(log_loss(np.array([[0.0, 0.0]]), np.array([1])), 4)
    0.6931
    """
    if len(labels) == 0:
        return float("nan")
    p = _softmax(logits.astype(np.float64) / temperature)
    return float(-np.mean(np.log(np.clip(p[np.arange(len(labels)), labels], 1e-12, 1.0))))


def accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows whose arg-max is the label (nan for no rows).

    >>> accuracy(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 0]))
    0.5
    """
    if len(labels) == 0:
        return float("nan")
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def fit_head(head: str, classes: Sequence[str], features: np.ndarray, logits: np.ndarray, labels: np.ndarray, *,
             temperature: float = 1.0, l2: float = 0.01, steps: int = STEPS, basis: Sequence[str] = (),
             fit_scale: bool = True) -> HeadFit:
    """Fit a residual head on labelled rows by full-batch Adam on log-loss + ``l2`` * |W|^2 / 2.

    With ``fit_scale`` the shipped logits' weight is fitted too (from 1, pulled back to 1 by
    ``SCALE_L2``): a new game copy the shipped model reads confidently wrong needs them trusted less.
    Deterministic: the weights start at zero, there is no sampling.

    Raises:
        ValueError: no labelled rows, or sizes that do not agree.
    """
    keep = labels >= 0
    x, z, y = features[keep].astype(np.float64), logits[keep].astype(np.float64), labels[keep]
    if len(y) == 0:
        raise ValueError(f"head {head}: no labelled examples")
    if z.shape[1] != len(classes) or len(x) != len(z):
        raise ValueError(f"head {head}: features {x.shape}, logits {z.shape} and {len(classes)} classes do not agree")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale = np.where(scale > 1e-6, scale, 1.0)
    xs = (x - mean) / scale
    onehot = np.eye(len(classes))[y]
    weights = np.zeros((x.shape[1], len(classes)))
    bias = np.zeros(len(classes))
    trust = np.ones(1)
    params = [weights, bias, trust]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    beta1, beta2 = 0.9, 0.999
    for step in range(1, steps + 1):
        p = _softmax((trust[0] * z + xs @ weights + bias) / temperature)
        error = (p - onehot) / (temperature * len(y))
        grads = [xs.T @ error + l2 * weights, error.sum(axis=0) + l2 * bias,
                 np.array([float(np.sum(error * z)) + SCALE_L2 * (trust[0] - 1.0)]) if fit_scale else np.zeros(1)]
        for param, grad, m, v in zip(params, grads, moments, squares):
            m *= beta1
            m += (1 - beta1) * grad
            v *= beta2
            v += (1 - beta2) * grad * grad
            param -= LEARNING_RATE * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + 1e-8)
    return HeadFit(head, tuple(classes), float(temperature), mean, scale, weights, bias, tuple(basis), float(trust[0]))


# --------------------------------------------------------------------------------------------
# one model's adaptation


@dataclass(frozen=True)
class ModelAdaptation:
    """The residual heads fitted for one shipped model (named, with its sha256).

    ``basis`` is the model-wide default basis; a head with a ``basis`` of its own reads that instead.
    """

    model: str
    sha256: str
    basis: tuple[str, ...]
    heads: tuple[HeadFit, ...]

    def head_basis(self, fit: HeadFit) -> tuple[str, ...]:
        """The outputs head ``fit`` reads its features from."""
        return fit.basis or self.basis

    @property
    def inputs(self) -> tuple[str, ...]:
        """Every output (or ``CROP_COLOUR``) some head reads, sorted."""
        return tuple(sorted({name for fit in self.heads for name in self.head_basis(fit)}))

    def features(self, outputs: Mapping[str, np.ndarray], basis: Sequence[str] | None = None) -> np.ndarray:
        """Return the feature matrix (N, D) read from a model's outputs (``basis``, default the model's).

        Raises:
            AdaptationError: an output the basis needs is missing.
        """
        return feature_matrix(outputs, self.basis if basis is None else basis, self.model)

    def apply(self, outputs: Mapping[str, np.ndarray], batch: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Return the outputs with every adapted head's logits replaced (a new dict; others unchanged).

        ``batch`` is the model's input, needed by heads that read the crops' colour.

        Raises:
            AdaptationError: outputs do not match the fitted sizes, or a needed batch is missing.
        """
        sources = with_crop_colour(outputs, batch, self.inputs)
        adapted = dict(outputs)
        cache: dict[tuple[str, ...], np.ndarray] = {}
        for fit in self.heads:
            if fit.head not in outputs:
                raise AdaptationError(f"{self.model}: adapted head {fit.head!r} is not among the model's outputs {sorted(outputs)}")
            basis = self.head_basis(fit)
            if basis not in cache:
                cache[basis] = self.features(sources, basis)
            adapted[fit.head] = fit.adjust(cache[basis], np.asarray(outputs[fit.head]))
        return adapted


def feature_matrix(outputs: Mapping[str, np.ndarray], basis: Sequence[str], model: str = "model") -> np.ndarray:
    """Concatenate the named outputs, each flattened to (N, -1), into one float64 matrix.

    Raises:
        AdaptationError: an output is missing.
    """
    missing = [name for name in basis if name not in outputs]
    if missing:
        raise AdaptationError(f"{model}: outputs {missing} missing (has {sorted(outputs)}); adapt again with this model")
    return np.concatenate([np.asarray(outputs[name], dtype=np.float64).reshape(len(outputs[name]), -1) for name in basis], axis=1)


def choose_basis(output_names: Iterable[str], heads: Iterable[str]) -> tuple[str, ...]:
    """The model's own features: ``embedding`` when the model has it, else every head's logits (sorted).

    >>> choose_basis(["die", "colour", "embedding"], ["die", "colour"])
    ('embedding',)
    >>> choose_basis(["kind", "walls"], ["kind", "walls"])
    ('kind', 'walls')
    """
    names = list(output_names)
    if EMBEDDING in names:
        return (EMBEDDING,)
    return tuple(sorted(name for name in names if name in set(heads)))


def fitting_basis(output_names: Iterable[str], heads: Iterable[str]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The basis an adapted head reads, and the member bases whose residual heads it averages.

    With the crops' colour features: the basis is the model's own features plus them, and a head is
    the average of one fitted on the crop colour alone and one fitted on both (the colour-only member
    generalises from few examples to dice it has not seen, e.g. a value never seen in that colour).
    Without them, one head on the model's own features.

    >>> fitting_basis(["die", "embedding", "crop_colour"], ["die"])
    (('embedding', 'crop_colour'), [('crop_colour',), ('embedding', 'crop_colour')])
    >>> fitting_basis(["kind", "embedding"], ["kind"])
    (('embedding',), [('embedding',)])
    """
    names = list(output_names)
    own = choose_basis(names, heads)
    if CROP_COLOUR not in names:
        return own, [own]
    if not own:
        return (CROP_COLOUR,), [(CROP_COLOUR,)]
    both = own + (CROP_COLOUR,)
    return both, [(CROP_COLOUR,), both]


@dataclass(frozen=True)
class HeadReport:
    """Held-out figures for one head: shipped vs adapted, and whether the adaptation was kept."""

    head: str
    train: int
    held_out: int
    before: float
    after: float
    loss_before: float
    loss_after: float
    l2: float
    kept: bool
    reason: str
    basis: tuple[str, ...] = ()

    def to_json(self) -> dict:
        """The figures as a JSON object (nan as null)."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 4)
        return {"head": self.head, "train": self.train, "held_out": self.held_out, "before": num(self.before),
                "after": num(self.after), "loss_before": num(self.loss_before), "loss_after": num(self.loss_after),
                "l2": self.l2, "kept": self.kept, "reason": self.reason, "basis": list(self.basis)}


@dataclass(frozen=True)
class ModelReport:
    """What adapting one model did: examples, photos, basis, per-head figures, all-heads-right accuracy."""

    model: str
    basis: tuple[str, ...]
    examples: int
    photos: int
    heads: tuple[HeadReport, ...]
    cells_before: float = float("nan")
    cells_after: float = float("nan")

    @property
    def kept(self) -> bool:
        """Whether any head's adaptation was kept."""
        return any(h.kept for h in self.heads)

    def to_json(self) -> dict:
        """The report as a JSON object."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 4)
        return {"model": self.model, "basis": list(self.basis), "examples": self.examples, "photos": self.photos,
                "cells_before": num(self.cells_before), "cells_after": num(self.cells_after), "kept": self.kept,
                "heads": [h.to_json() for h in self.heads]}

    def to_text(self) -> str:
        """A few lines for people."""
        def pct(x: float) -> str:
            return "  n/a " if math.isnan(x) else f"{100 * x:5.1f}%"
        lines = [f"{self.model}: {self.examples} labelled cells from {self.photos} photos, features {'+'.join(self.basis)}"]
        for h in self.heads:
            verdict = "kept" if h.kept else "not kept"
            reads = f" on {'+'.join(h.basis)}" if h.basis and h.basis != self.basis else ""
            lines.append(f"  {h.head:<9} held-out {h.held_out:>4}: {pct(h.before)} -> {pct(h.after)}  {verdict}{reads} ({h.reason})")
        if not math.isnan(self.cells_before):
            lines.append(f"  every head right, held-out cells: {pct(self.cells_before)} -> {pct(self.cells_after)} (with the heads kept)")
        return "\n".join(lines)


def split_holdout(groups: np.ndarray, fraction: float = HOLDOUT_FRACTION, seed: int = 0,
                  items: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Split example indices into (train, held-out): whole photos when there are several, else whole items.

    ``items`` (default: one per example) keeps the turned copies of one cell on one side.

    >>> groups = np.array([1, 1, 2, 2, 3, 3])
    >>> train, test = split_holdout(groups)
    >>> len(set(groups[test].tolist())), len(train)
    (1, 4)
    """
    rng = np.random.default_rng(seed)
    index = np.arange(len(groups))
    unique = np.unique(groups)
    if len(unique) >= 2:
        held = rng.permutation(unique)[: max(1, round(fraction * len(unique)))]
    else:
        items = index if items is None else np.asarray(items)
        groups = items
        distinct = np.unique(items)
        held = rng.permutation(distinct)[: max(1, int(np.ceil(fraction * len(distinct))))]
    test = np.isin(groups, held)
    return index[~test], index[test]


def _choose_l2(head: str, classes: Sequence[str], x: np.ndarray, z: np.ndarray, y: np.ndarray, groups: np.ndarray,
               items: np.ndarray, temperature: float, seed: int) -> float:
    """Pick the L2 strength with the lowest 2-fold cross-validated log-loss on the training part."""
    if len(np.unique(items)) < 2 * MIN_EXAMPLES:
        return 0.1
    first, second = split_holdout(groups, 0.5, seed + 1, items)
    losses = []
    for l2 in L2_CHOICES:
        total = 0.0
        for fit_idx, test_idx in ((first, second), (second, first)):
            if len(fit_idx) == 0 or len(test_idx) == 0:
                continue
            fit = fit_head(head, classes, x[fit_idx], z[fit_idx], y[fit_idx], temperature=temperature, l2=l2, steps=STEPS // 2)
            total += log_loss(fit.adjust(x[test_idx], z[test_idx]), y[test_idx], temperature) * len(test_idx)
        losses.append(total)
    return L2_CHOICES[int(np.argmin(losses))]


def holdout_folds(groups: np.ndarray, items: np.ndarray | None = None, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, held-out) index pairs that hold every example out once when data are few.

    One to four photos: their cells (each with its turned copies) in three folds, so that each
    check trains on two thirds of every photo; holding out a whole photo of two would fit on one
    photo's 20 cells, often without a colour or value at all, and refuse what the two photos
    together teach. Five or more: one split holding out a third of the photos.

    >>> [len(test) for _, test in holdout_folds(np.array([0, 0, 1, 1, 2]))]
    [2, 2, 1]
    >>> [len(test) for _, test in holdout_folds(np.array([0, 0, 0, 1, 1, 1]))]
    [2, 2, 2]
    """
    index = np.arange(len(groups))
    unique = np.unique(groups)
    if len(unique) >= 5:
        return [split_holdout(groups, seed=seed, items=items)]
    keys = index if items is None else np.asarray(items)
    distinct = np.random.default_rng(seed).permutation(np.unique(keys))
    folds = [part for part in np.array_split(distinct, min(3, len(distinct))) if len(part)]
    return [(index[~np.isin(keys, part)], index[np.isin(keys, part)]) for part in folds]


def _verdict(before: float, after: float, loss_before: float, loss_after: float) -> tuple[bool, str]:
    if after < before:
        return False, "held-out accuracy dropped"
    if not loss_after < loss_before:
        return False, "held-out log-loss did not drop"
    if after > before:
        return True, "more held-out cells right"
    return True, "same accuracy, lower held-out log-loss"


def _standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-6, scale, 1.0)


def _fit_members(head: str, classes: Sequence[str], x: np.ndarray, z: np.ndarray, y: np.ndarray, groups: np.ndarray,
                 items: np.ndarray, temperature: float, seed: int, members: Sequence[np.ndarray],
                 basis: tuple[str, ...]) -> tuple[HeadFit, float]:
    """One head on all of ``x``'s columns: the average of residual heads fitted on each member's columns.

    Rows must all be labelled. Each member's L2 is chosen by cross-validation; returns the head and their mean.
    """
    weights = np.zeros((x.shape[1], len(classes)))
    bias = np.zeros(len(classes))
    trust = 0.0
    l2s = []
    for columns in members:
        l2 = _choose_l2(head, classes, x[:, columns], z, y, groups, items, temperature, seed)
        fit = fit_head(head, classes, x[:, columns], z, y, temperature=temperature, l2=l2)
        weights[columns] += fit.weights / len(members)
        bias += fit.bias / len(members)
        trust += fit.logit_scale / len(members)
        l2s.append(l2)
    mean, scale = _standardiser(x)  # the members standardised each column the same way
    return (HeadFit(head, tuple(classes), float(temperature), mean, scale, weights, bias, tuple(basis), float(trust)),
            float(np.mean(l2s)))


def _held_out_logits(head: str, classes: Sequence[str], x_all: np.ndarray, z_all: np.ndarray, y_all: np.ndarray,
                     folds: Sequence[tuple[np.ndarray, np.ndarray]], groups: np.ndarray, items: np.ndarray, temperature: float,
                     seed: int, members: Sequence[np.ndarray], basis: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each fold's held-out rows read by a head fitted on the rest: (logits of every checked row, which were tested)."""
    checked = sum(len(test) for _, test in folds)
    adapted = np.zeros((checked, z_all.shape[1]))
    tested = np.zeros(checked, bool)
    offset = 0
    for train, test in folds:
        adapted[offset:offset + len(test)] = z_all[test]
        tr, te = train[y_all[train] >= 0], y_all[test] >= 0
        if len(np.unique(items[tr])) >= MIN_EXAMPLES and te.any():
            trial, _ = _fit_members(head, classes, x_all[tr], z_all[tr], y_all[tr], groups[tr], items[tr], temperature, seed,
                                    members, basis)
            adapted[offset:offset + len(test)] = trial.adjust(x_all[test], z_all[test])
            tested[offset:offset + len(test)] = te
        offset += len(test)
    return adapted, tested


def adapt_model(model: Any, examples: ExampleSet, *, temperatures: Mapping[str, float] | None = None,
                seed: int = 0) -> tuple[ModelAdaptation | None, ModelReport]:
    """Fit, check on held-out examples and (where it helps) re-fit on all, every labelled head of ``model``.

    Each example is held out once (``holdout_folds``) and read by a head fitted without it; the
    figures pool those readings of crops as the reader saw them. Heads read the features
    ``fitting_basis`` names (with the crops' colour, an average of two residual heads); a head
    that does not pass the check so is tried again on the model's own features alone. ``model``
    is an ``OnnxModel`` (or anything with its ``manifest``). Returns the adaptation (None when no
    head was kept) and the report.

    Raises:
        AdaptationError: the examples are of another model, or lack the outputs the basis needs.
    """
    manifest = model.manifest
    if examples.model != manifest.name:
        raise AdaptationError(f"examples are of model {examples.model!r}, not {manifest.name!r}")
    heads = dict(manifest.heads) or {name: manifest.classes for name in examples.labels}
    basis, member_bases = fitting_basis(examples.outputs.keys(), heads)
    if not basis:
        raise AdaptationError(f"{manifest.name}: examples hold no features to fit on (outputs {sorted(examples.outputs)})")
    x_all = feature_matrix(examples.outputs, basis, manifest.name)
    widths = np.cumsum([0] + [np.asarray(examples.outputs[name]).reshape(len(examples), -1).shape[1] for name in basis])
    columns = {name: np.arange(widths[i], widths[i + 1]) for i, name in enumerate(basis)}
    members = [np.concatenate([columns[name] for name in member]) for member in member_bases]
    # the crops' colour first; where that does not help a head, the model's own features alone (as before it)
    own = choose_basis(examples.outputs.keys(), heads)
    strategies = [(basis, x_all, members)]
    if own and own != basis:
        own_columns = np.concatenate([columns[name] for name in own])
        strategies.append((own, x_all[:, own_columns], [np.arange(len(own_columns))]))
    temperatures = dict(temperatures or {})
    items = examples.item_ids
    folds = [(train, test[examples.as_read[test]]) for train, test in holdout_folds(examples.groups, items, seed)]
    checked = np.concatenate([test for _, test in folds]) if folds else np.zeros(0, np.int64)
    reports: list[HeadReport] = []
    fitted: list[HeadFit] = []
    before_right = np.ones(len(checked), bool)
    after_right = np.ones(len(checked), bool)
    any_cells = np.zeros(len(checked), bool)
    for head in sorted(examples.labels):
        if head not in heads or head not in examples.outputs:
            continue
        classes = tuple(heads[head])
        y_all = examples.labels[head]
        z_all = np.asarray(examples.outputs[head], dtype=np.float64)
        temperature = float(temperatures.get(head, manifest.temperature or 1.0))
        labelled_items = np.unique(items[y_all >= 0])
        if len(labelled_items) < MIN_EXAMPLES:
            reports.append(HeadReport(head, len(labelled_items), 0, *(float("nan"),) * 4, 0.0, False,
                                      f"too few examples (need {MIN_EXAMPLES} cells to fit and 1 to check)"))
            continue
        trials = []
        for head_basis, x_head, head_members in strategies:
            adapted, tested = _held_out_logits(head, classes, x_head, z_all, y_all, folds, examples.groups, items, temperature,
                                               seed, head_members, head_basis)
            if not tested.any():
                continue
            rows = checked[tested]
            y_test, z_test, a_test = y_all[rows], z_all[rows], adapted[tested]
            before, after = accuracy(z_test, y_test), accuracy(a_test, y_test)
            loss_before, loss_after = log_loss(z_test, y_test, temperature), log_loss(a_test, y_test, temperature)
            kept, reason = _verdict(before, after, loss_before, loss_after)
            trials.append((head_basis, x_head, head_members, tested, rows, a_test, before, after, loss_before, loss_after, kept, reason))
            if kept:
                break
        if not trials:
            reports.append(HeadReport(head, len(labelled_items), 0, *(float("nan"),) * 4, 0.0, False,
                                      f"too few examples (need {MIN_EXAMPLES} cells to fit and 1 to check)"))
            continue
        chosen = trials[-1] if trials[-1][10] else trials[0]  # the one kept, else the first one's figures
        head_basis, x_head, head_members, tested, rows, a_test, before, after, loss_before, loss_after, kept, reason = chosen
        y_test, z_test = y_all[rows], z_all[rows]
        final, l2 = None, 0.0
        if kept:  # re-fit on every example
            everything = np.flatnonzero(y_all >= 0)
            final, l2 = _fit_members(head, classes, x_head[everything], z_all[everything], y_all[everything],
                                     examples.groups[everything], items[everything], temperature, seed, head_members, head_basis)
        reports.append(HeadReport(head, len(labelled_items), len(rows), before, after, loss_before, loss_after, l2, kept, reason,
                                  head_basis))
        any_cells |= tested
        before_right[tested] &= np.argmax(z_test, axis=1) == y_test
        if kept:
            after_right[tested] &= np.argmax(a_test, axis=1) == y_test
            fitted.append(final)
        else:
            after_right[tested] &= np.argmax(z_test, axis=1) == y_test
    cells_before = float(np.mean(before_right[any_cells])) if any_cells.any() else float("nan")
    cells_after = float(np.mean(after_right[any_cells])) if any_cells.any() else float("nan")
    if fitted and cells_after < cells_before:  # heads better one by one, cells worse together: keep none
        reports = [replace(r, kept=False, reason=f"{r.reason}, but fewer cells had every head right") if r.kept else r
                   for r in reports]
        fitted = []
    report = ModelReport(manifest.name, basis, len(np.unique(items)),
                         len(np.unique(examples.groups)), tuple(reports), cells_before, cells_after)
    if not fitted:
        return None, report
    return ModelAdaptation(manifest.name, manifest.sha256, basis, tuple(fitted)), report


# --------------------------------------------------------------------------------------------
# every model's adaptation, saved and loaded


@dataclass(frozen=True)
class Adaptation:
    """The adapted heads of one or more models, as one profile selects them."""

    models: tuple[ModelAdaptation, ...]
    created_at: str = ""
    report: tuple[dict, ...] = ()
    source: str = field(default="adaptation", compare=False)
    profile: str | None = field(default=None, compare=False)

    def model(self, name: str) -> ModelAdaptation | None:
        """Return the adaptation of model ``name``, or None."""
        return next((m for m in self.models if m.model == name), None)

    def merged(self, other: Adaptation) -> Adaptation:
        """Return this adaptation with ``other``'s models replacing or adding to its own."""
        names = {m.model for m in other.models}
        models = tuple(m for m in self.models if m.model not in names) + other.models
        reports = tuple(r for r in self.report if r.get("model") not in names) + other.report
        return Adaptation(models, other.created_at or self.created_at, reports, self.source, self.profile)


def apply_head(adaptation: Adaptation | None, model_name: str, outputs: Mapping[str, np.ndarray],
               batch: np.ndarray | None = None) -> Mapping[str, np.ndarray]:
    """The hook readers call on a model's outputs (and its input ``batch``): adapted logits when ``adaptation`` covers the model.

    Without an adaptation (or one for other models) the very same outputs come back.

    Raises:
        AdaptationError: the outputs do not match what the adaptation was fitted on, or a needed batch is missing.
    """
    fitted = None if adaptation is None else adaptation.model(model_name)
    return outputs if fitted is None else fitted.apply(outputs, batch)


def _corrupt(path: Path | str, what: str) -> AdaptationError:
    return AdaptationError(f"{path}: corrupt adaptation file ({what}); run `tablescan adapt` again, or `tablescan adapt --reset`")


def to_npz_bytes(adaptation: Adaptation) -> bytes:
    """Serialise ``adaptation`` as ``.npz`` bytes: a JSON ``meta`` plus one array per fitted number."""
    arrays: dict[str, np.ndarray] = {}
    models = []
    for i, fitted in enumerate(adaptation.models):
        heads = []
        for j, fit in enumerate(fitted.heads):
            for part in ("mean", "scale", "weights", "bias"):
                arrays[f"m{i}_h{j}_{part}"] = np.asarray(getattr(fit, part), dtype=np.float64)
            heads.append({"head": fit.head, "classes": list(fit.classes), "temperature": fit.temperature,
                          "basis": list(fit.basis), "logit_scale": fit.logit_scale})
        models.append({"model": fitted.model, "sha256": fitted.sha256, "basis": list(fitted.basis), "heads": heads})
    meta = {"format": ADAPTATION_FORMAT, "version": ADAPTATION_VERSION, "created_at": adaptation.created_at,
            "models": models, "report": list(adaptation.report)}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def from_npz_bytes(data: bytes, source: str = "adaptation") -> Adaptation:
    """Read what ``to_npz_bytes`` wrote.

    Raises:
        AdaptationError: not such a file, a newer version, or inconsistent contents (naming ``source``).
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:  # the kinds a damaged .npz raises
        raise _corrupt(source, f"not a readable .npz: {error.__class__.__name__}") from None
    if "meta" not in arrays:
        raise _corrupt(source, "no meta record")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _corrupt(source, f"meta is not JSON: {error}") from None
    if not isinstance(meta, dict) or meta.get("format") != ADAPTATION_FORMAT:
        raise _corrupt(source, f"expected format {ADAPTATION_FORMAT!r}")
    version = meta.get("version")
    if not isinstance(version, int) or version > ADAPTATION_VERSION:
        raise AdaptationError(f"{source}: adaptation version {version!r} is newer than this tablescan knows "
                              f"({ADAPTATION_VERSION}); upgrade tablescan or run `tablescan adapt --reset`")
    try:
        models = []
        for i, entry in enumerate(meta["models"]):
            heads = []
            for j, head in enumerate(entry["heads"]):
                parts = {part: arrays[f"m{i}_h{j}_{part}"] for part in ("mean", "scale", "weights", "bias")}
                heads.append(HeadFit(str(head["head"]), tuple(str(c) for c in head["classes"]), float(head["temperature"]), **parts,
                                     basis=tuple(str(b) for b in head.get("basis", ())),
                                     logit_scale=float(head.get("logit_scale", 1.0))))
            models.append(ModelAdaptation(str(entry["model"]), str(entry["sha256"]), tuple(str(b) for b in entry["basis"]), tuple(heads)))
        report = tuple(r for r in meta.get("report", []) if isinstance(r, dict))
        return Adaptation(tuple(models), str(meta.get("created_at", "")), report, source)
    except AdaptationError as error:
        raise _corrupt(source, str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        raise _corrupt(source, f"{error.__class__.__name__}: {error}") from None


def file_sha256(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def save_adaptation(adaptation: Adaptation, path: str | Path) -> str:
    """Write ``adaptation`` to ``path`` atomically and return the file's sha256.

    Raises:
        AdaptationError: the file cannot be written.
    """
    path = Path(path)
    data = to_npz_bytes(adaptation)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as error:
        raise AdaptationError(f"{path}: cannot write the adaptation ({error.__class__.__name__}: {error})") from None
    return file_sha256(data)


def load_adaptation(path: str | Path, sha256: str | None = None) -> Adaptation:
    """Read an adaptation file, checking its sha256 when the profile recorded one.

    Raises:
        AdaptationError: missing, changed since it was written, or corrupt.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AdaptationError(f"{path}: adaptation file missing; run `tablescan adapt` again, or `tablescan adapt --reset`") from None
    except OSError as error:
        raise AdaptationError(f"{path}: cannot read the adaptation ({error.__class__.__name__})") from None
    if sha256 is not None and file_sha256(data) != sha256:
        raise _corrupt(path, f"sha256 {file_sha256(data)[:12]}... is not the recorded {str(sha256)[:12]}...")
    return from_npz_bytes(data, str(path))


def check_model(fitted: ModelAdaptation, model: Any, source: str = "adaptation", profile: str | None = None) -> None:
    """Refuse an adaptation fitted for another version of ``model`` (sha256, classes or outputs differ).

    Raises:
        AdaptationError: the adaptation does not belong to this model file.
    """
    manifest = model.manifest
    option = "" if profile is None else f" --profile {profile}"
    redo = f"run `tablescan adapt{option}` again to re-fit it, or `tablescan adapt{option} --reset` to use the shipped models"
    if fitted.model != manifest.name:
        raise AdaptationError(f"{source}: adapted for model {fitted.model!r}, not {manifest.name!r}; {redo}")
    if fitted.sha256 != manifest.sha256:
        raise AdaptationError(f"{source}: adapted for {fitted.model} sha256 {fitted.sha256[:12]}..., but the shipped model is "
                              f"{manifest.sha256[:12]}... (retrained since); {redo}")
    heads = dict(manifest.heads) or {fit.head: manifest.classes for fit in fitted.heads}
    for fit in fitted.heads:
        if tuple(heads.get(fit.head, ())) != fit.classes:
            raise AdaptationError(f"{source}: head {fit.head!r} of {fitted.model} has classes {list(heads.get(fit.head, ()))}, "
                                  f"the adaptation {list(fit.classes)}; {redo}")
    outputs = set(getattr(model, "output_names", ())) or None
    if outputs is not None:
        missing = sorted(set(fitted.inputs) - outputs - {CROP_COLOUR})
        if missing:
            raise AdaptationError(f"{source}: {fitted.model} has no outputs {missing}; {redo}")


class AdaptedModel:
    """An ``OnnxModel`` whose ``run`` returns the adapted logits; everything else is the shipped model's."""

    def __init__(self, model: Any, fitted: ModelAdaptation, source: str = "adaptation", profile: str | None = None) -> None:
        check_model(fitted, model, source, profile)
        self.model = model
        self.fitted = fitted
        # reports name the model "<name> <version>+adapted (sha256 ...)": a scan says it used adapted heads
        self.manifest = replace(model.manifest, version=f"{model.manifest.version}+adapted")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def run(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Run the shipped model and adapt its logits.

        Raises:
            ModelError: the batch does not match the model's input.
        """
        return self.fitted.apply(self.model.run(batch), batch)


def adapt_reader(reader: Any, adaptation: Adaptation | None) -> Any:
    """Return a copy of ``reader`` whose ``OnnxModel`` attributes covered by ``adaptation`` are adapted.

    ``None`` (or an adaptation of other models) returns ``reader`` itself: the shipped behaviour.

    Raises:
        AdaptationError: the adaptation was fitted for another version of a model the reader uses.
    """
    if adaptation is None:
        return reader
    swaps = {}
    for attribute, value in vars(reader).items():
        if isinstance(value, OnnxModel):
            fitted = adaptation.model(value.manifest.name)
            if fitted is not None:
                swaps[attribute] = AdaptedModel(value, fitted, adaptation.source, adaptation.profile)
    if not swaps:
        return reader
    adapted = copy.copy(reader)
    for attribute, value in swaps.items():
        setattr(adapted, attribute, value)
    return adapted


# --------------------------------------------------------------------------------------------
# profiles


def adaptation_file(profile_name: str, directory: str | Path | None = None) -> Path:
    """Where profile ``profile_name``'s adaptation is saved: beside the profile, ``<name>.adapt.npz``.

    Raises:
        CalibrationError: the name is not a valid profile name.
    """
    from calibration.profile import profile_path

    path = profile_path(profile_name, directory)
    return path.with_name(f"{path.stem}.adapt.npz")


def profile_reference(path: Path, sha256: str, adaptation: Adaptation) -> dict:
    """The JSON object a profile's ``adaptation`` slot holds for a saved adaptation file."""
    return {"file": str(Path(path).resolve()), "sha256": sha256, "models": [m.model for m in adaptation.models],
            "created_at": adaptation.created_at}


def profile_adaptation(profile: Any, directory: str | Path | None = None) -> Adaptation | None:
    """Load the adaptation a calibration profile selects (None when it selects none).

    The slot holds ``{"file", "sha256", ...}`` or a path; a file no longer where it was is looked for
    in the profile folder.

    Raises:
        AdaptationError: the slot is malformed, or the file is missing, changed or corrupt.
    """
    slot = getattr(profile, "adaptation", None)
    if slot is None:
        return None
    from calibration.profile import profile_dir

    folder = Path(directory or profile_dir())
    name = getattr(profile, "name", "?")
    if isinstance(slot, str):
        file, sha256 = slot, None
    elif isinstance(slot, dict) and isinstance(slot.get("file"), str):
        file, sha256 = slot["file"], slot.get("sha256")
        if sha256 is not None and not isinstance(sha256, str):
            raise AdaptationError(f"profile '{name}': adaptation.sha256: expected a string, got {sha256!r}")
    else:
        raise AdaptationError(f"profile '{name}': adaptation: expected a file name or {{\"file\": ...}}, got {slot!r}; "
                              "run `tablescan adapt --reset`")
    path = Path(file)
    if not path.is_absolute() or not path.exists():  # relative, or the profile folder has moved
        path = folder / path.name
    try:
        adaptation = load_adaptation(path, sha256)
    except AdaptationError as error:
        raise AdaptationError(f"profile '{name}': {error}".replace("`tablescan adapt", f"`tablescan adapt --profile {name}")) from None
    return replace(adaptation, source=f"profile '{name}': {path}", profile=name)


def without_adaptation(profile: Any) -> Any:
    """The same profile with its adaptation slot emptied (a new object)."""
    return replace(profile, adaptation=None)


# --------------------------------------------------------------------------------------------
# examples from corrected photos and from exported crops


@dataclass(frozen=True)
class LabelledPhoto:
    """A photo with its board corners and the players' final value per cell (by centre, full-photo px)."""

    source: str | Path
    game: str
    corners: tuple[tuple[float, float], ...] | None
    cells: tuple[tuple[tuple[float, float], str], ...]
    group: int
    name: str | None = None
    player_id: int | None = None


def _centre_and_size(polygon: Sequence[Sequence[float]], scale: float) -> tuple[np.ndarray, float]:
    points = np.asarray(polygon, dtype=np.float64).reshape(-1, 2) * scale
    x, y = points[:, 0], points[:, 1]
    area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    return points.mean(axis=0), float(np.sqrt(area))


def encode_crop(crop: np.ndarray) -> bytes:
    """A uint8 RGB crop (H, W, 3) as PNG bytes (lossless, as stored in the review database).

    Raises:
        AdaptationError: not an (H, W, 3) uint8 image.
    """
    import cv2

    crop = np.asarray(crop)
    if crop.dtype != np.uint8 or crop.ndim != 3 or crop.shape[2] != 3:
        raise AdaptationError(f"crop: expected (H, W, 3) uint8 RGB, got {crop.shape} {crop.dtype}")
    ok, data = cv2.imencode(".png", np.ascontiguousarray(crop[:, :, ::-1]))
    if not ok:
        raise AdaptationError(f"crop: cannot encode {crop.shape} as PNG")
    return data.tobytes()


def decode_crop(data: bytes, source: str = "crop") -> np.ndarray:
    """PNG bytes (as ``encode_crop`` writes them) back to a uint8 RGB crop (H, W, 3).

    Raises:
        AdaptationError: the bytes are not a readable colour image.
    """
    import cv2

    image = cv2.imdecode(np.frombuffer(bytes(data), np.uint8), cv2.IMREAD_COLOR) if data else None
    if image is None:
        raise AdaptationError(f"{source}: not a readable PNG crop")
    return np.ascontiguousarray(image[:, :, ::-1])


def classifier_manifest(scanner: Any, game: str) -> Any:
    """The manifest of the cell classifier ``scanner`` reads ``game`` with (adapted or shipped), or None."""
    name = CLASSIFIERS.get(game)
    try:
        reader = scanner.reader(game)
    except (TableError, AttributeError):
        return None
    for value in vars(reader).values():
        manifest = getattr(value, "manifest", None)
        if manifest is not None and getattr(manifest, "name", None) == name:
            return manifest
    return None


def scan_examples(result: Any, game: str, manifest: Any = None) -> list[dict]:
    """One stored example per read cell of a scan: ``cell`` ("row,col" / "x,y", as the review keys cells),
    ``crop`` (PNG bytes of the crop the classifier read), ``read``, ``confidence``, ``model``, ``model_sha256``.

    Games without an adaptable classifier, and cells without a crop, give none.
    """
    if game not in CLASSIFIERS:
        return []
    label = None if manifest is None else manifest.label
    sha256 = None if manifest is None else manifest.sha256
    examples = []
    for reading in result.cells:
        if reading.crop is None:
            continue
        examples.append({"cell": ",".join(str(int(v)) for v in reading.cell), "crop": encode_crop(reading.crop),
                         "read": reading.value, "confidence": float(reading.confidence), "model": label, "model_sha256": sha256})
    return examples


def read_labelled_photo(scanner: Any, photo: LabelledPhoto) -> tuple[list[tuple[Any, str]], str | None]:
    """Re-read ``photo`` and pair each read cell (a ``CellReading`` with its crop) with the labelled cell at its centre.

    Returns the pairs and a note when the photo could not be used (its own error never stops the caller).
    """
    label = photo.name or Path(str(photo.source)).name
    targets = [(np.asarray(centre, dtype=np.float64), value) for centre, value in photo.cells]
    # read as the first scan did (the reader finds the board); the stored corners only as a fallback,
    # since a reader may order given corners by position and so lose a turned board's orientation
    attempts = [None] if photo.corners is None else [None, np.asarray(photo.corners, dtype=np.float64)]
    best: list[tuple[Any, str]] = []
    errors = []
    for corners in attempts:
        try:
            result = scanner.scan(photo.source, photo.game, corners=corners, name=label)
        except TableError as error:
            errors.append(str(error))
            continue
        matched = _match_cells(result, targets)
        if len(matched) > len(best):
            best = matched
        if len(best) >= min(len(targets), len(result.cells)):
            break
    if not best and len(errors) == len(attempts):
        return [], f"{label}: skipped ({errors[0]})"
    if not best:
        return [], f"{label}: skipped (no read cell matches a labelled cell; rescan it in the review screen)"
    return best, None


def examples_from_photos(scanner: Any, photos: Sequence[LabelledPhoto], load: Any = None) -> tuple[dict[str, ExampleSet], list[str]]:
    """Re-read each photo with ``scanner`` (shipped models) and label its cell crops from ``photos``.

    Each read cell takes the value of the labelled cell whose centre lies within half a cell of its
    own; cells without one are left out. Returns example sets per classifier model and notes about
    photos that could not be used (a photo's own error never stops the others).

    Raises:
        AdaptationError: a game has no adaptable classifier.
    """
    if load is None:
        from scanner.model import load_model as load
    crops: dict[str, list[np.ndarray]] = {}
    values: dict[str, list[str]] = {}
    groups: dict[str, list[int]] = {}
    notes: list[str] = []
    for photo in photos:
        if photo.game not in CLASSIFIERS:
            head_labels(photo.game, "")  # raises the "no adaptable classifier" error
        pairs, note = read_labelled_photo(scanner, photo)
        if note is not None:
            notes.append(note)
        for reading, value in pairs:
            crops.setdefault(photo.game, []).append(np.asarray(reading.crop))
            values.setdefault(photo.game, []).append(value)
            groups.setdefault(photo.game, []).append(photo.group)
    sets = {}
    for game, game_crops in crops.items():
        model = load(CLASSIFIERS[game])
        sets[model.manifest.name] = examples_from_crops(model, np.stack(game_crops), values[game], game, groups[game])
    return sets, notes


def _match_cells(result: Any, targets: Sequence[tuple[np.ndarray, str]]) -> list[tuple[Any, str]]:
    """(reading, label) for every read cell with a crop whose centre lies within half a cell of a labelled cell's."""
    matched = []
    for reading in result.cells:
        if reading.crop is None or not targets:
            continue
        centre, size = _centre_and_size(reading.polygon, result.photo.scale)
        distances = [float(np.linalg.norm(centre - t)) for t, _ in targets]
        best = int(np.argmin(distances))
        if distances[best] <= 0.5 * size:
            matched.append((reading, targets[best][1]))
    return matched


def crop_margin(model_name: str) -> float:
    """The context margin (in cell pitches, each side) of the crops ``model_name`` reads.

    Raises:
        AdaptationError: the model is not an adaptable classifier.
    """
    if model_name == CLASSIFIERS["sagrada"]:
        from scanner.sagrada.cells import MARGIN

        return float(MARGIN)
    if model_name == CLASSIFIERS["alhambra"]:
        from scanner.alhambra.reader import CROP_MARGIN

        return float(CROP_MARGIN)
    raise AdaptationError(f"model {model_name!r}: not an adaptable classifier")


def pad_cell_crop(cell_rgb: np.ndarray, crop_px: int, margin: float) -> np.ndarray:
    """Turn a crop of exactly one cell into a model crop: resize, then repeat its border as the margin.

    An approximation of the real crop (which shows the neighbours in the margin), for exported
    datasets that kept only the cell.
    """
    import cv2

    inner = max(1, round(crop_px / (1 + 2 * margin)))
    pad = crop_px - inner
    small = cv2.resize(np.asarray(cell_rgb, dtype=np.uint8), (inner, inner), interpolation=cv2.INTER_AREA)
    return cv2.copyMakeBorder(small, pad // 2, pad - pad // 2, pad // 2, pad - pad // 2, cv2.BORDER_REPLICATE)
