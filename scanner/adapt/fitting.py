"""Adapting one model: choose the features, check each head on held-out examples, re-fit the kept ones on all."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scanner.adapt.examples import CROP_COLOUR, CROP_FEATURES, CROP_WALLS, ExampleSet, labelled_rows, with_crop_colour
from scanner.adapt.head import STEPS, HeadFit, accuracy, fit_head, fit_heads, keep_first_class, log_loss
from scanner.adapt.labels import crop_margin, head_crop_features, presence_head
from scanner.adapt.memory import RECALL, RECALL_DOUBT, CellMemory, memory_from_examples
from scanner.errors import AdaptationError
from scanner.model import softmax

EMBEDDING = "embedding"
HOLDOUT_FRACTION = 0.34
MIN_EXAMPLES = 6
L2_CHOICES = (3e-3, 1e-2, 1e-1, 1.0)


@dataclass(frozen=True)
class ModelAdaptation:
    """The residual heads fitted for one shipped model (named, with its sha256), and its memory of corrected cells.

    ``basis`` is the model-wide default basis; a head with a ``basis`` of its own reads that instead.
    ``memory`` (``scanner.adapt.memory``) is looked up by the reader for doubtful cells; ``apply`` does
    not use it.
    """

    model: str
    sha256: str
    basis: tuple[str, ...]
    heads: tuple[HeadFit, ...]
    memory: CellMemory | None = None

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
        margin = crop_margin(self.model) if CROP_WALLS in self.inputs else 0.0
        sources = with_crop_colour(outputs, batch, self.inputs, margin)
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

        return {
            "head": self.head,
            "train": self.train,
            "held_out": self.held_out,
            "before": num(self.before),
            "after": num(self.after),
            "loss_before": num(self.loss_before),
            "loss_after": num(self.loss_after),
            "l2": self.l2,
            "kept": self.kept,
            "reason": self.reason,
            "basis": list(self.basis),
        }


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
    held_out_cells: int = 0  # how many held-out cells the two shares above are of
    remembered: int = 0  # corrected cells the memory keeps (``scanner.adapt.memory``)

    @property
    def kept(self) -> bool:
        """Whether any head's adaptation was kept."""
        return any(h.kept for h in self.heads)

    @property
    def cells_gained(self) -> float:
        """Held-out cells with every head right after, less before (nan without held-out cells)."""
        return (self.cells_after - self.cells_before) * self.held_out_cells

    def to_json(self) -> dict:
        """The report as a JSON object."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 4)

        return {
            "model": self.model,
            "basis": list(self.basis),
            "examples": self.examples,
            "photos": self.photos,
            "cells_before": num(self.cells_before),
            "cells_after": num(self.cells_after),
            "kept": self.kept,
            "remembered": self.remembered,
            "heads": [h.to_json() for h in self.heads],
        }

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
        if self.remembered:
            lines.append(f"  remembers {self.remembered} corrected cells by their look, for cells read doubtfully (checked end to end)")
        return "\n".join(lines)


def split_holdout(
    groups: np.ndarray, fraction: float = HOLDOUT_FRACTION, seed: int = 0, items: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Split example indices into (train, held-out): whole photos when there are several, else whole items.

    ``items`` (default: one per example) keeps the turned copies of one cell on one side.

    >>> import numpy as np
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


def _choose_l2(
    head: str,
    classes: Sequence[str],
    x: np.ndarray,
    z: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    items: np.ndarray,
    temperature: float,
    seed: int,
) -> float:
    """Pick the L2 strength with the lowest 2-fold cross-validated log-loss on the training part."""
    if len(np.unique(items)) < 2 * MIN_EXAMPLES:
        return 0.1
    first, second = split_holdout(groups, 0.5, seed + 1, items)
    losses = np.zeros(len(L2_CHOICES))
    halves = [(fit_idx, test_idx) for fit_idx, test_idx in ((first, second), (second, first)) if len(fit_idx) and len(test_idx)]
    if not halves:
        return L2_CHOICES[0]
    # both halves' heads in one run (``fit_heads``' parts): as fitted one half at a time, a quarter quicker
    fits = fit_heads(head, classes, x, z, y, temperature=temperature, l2s=L2_CHOICES, steps=STEPS // 2, parts=[fit for fit, _ in halves])
    for k, (_, test_idx) in enumerate(halves):
        part = fits[k * len(L2_CHOICES) : (k + 1) * len(L2_CHOICES)]
        losses += [log_loss(fit.adjust(x[test_idx], z[test_idx]), y[test_idx], temperature) * len(test_idx) for fit in part]
    return L2_CHOICES[int(np.argmin(losses))]


MAX_FOLDS = 3  # keeps a run within seconds: each fold fits every head again


def holdout_folds(groups: np.ndarray, items: np.ndarray | None = None, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, held-out) index pairs that hold every example out once, whole photos at a time.

    Two photos or more: each fold holds out whole photos with every cell they show (empty cells
    and the cells read around a board included), at most ``MAX_FOLDS`` folds; a head is judged on
    photos it never saw, as the players' next photos will be. One photo: its cells (each with its
    turned copies) in three folds.

    >>> import numpy as np
    >>> sorted(len(test) for _, test in holdout_folds(np.array([0, 0, 1, 1, 2])))
    [1, 2, 2]
    >>> [len(test) for _, test in holdout_folds(np.array([0, 0, 0, 1, 1, 1]))]
    [3, 3]
    >>> [len(test) for _, test in holdout_folds(np.array([4, 4, 4]))]
    [1, 1, 1]
    """
    index = np.arange(len(groups))
    unique = np.unique(groups)
    rng = np.random.default_rng(seed)
    if len(unique) >= 2:
        folds = [part for part in np.array_split(rng.permutation(unique), min(MAX_FOLDS, len(unique))) if len(part)]
        return [(index[~np.isin(groups, part)], index[np.isin(groups, part)]) for part in folds]
    keys = index if items is None else np.asarray(items)
    distinct = rng.permutation(np.unique(keys))
    parts = [part for part in np.array_split(distinct, min(3, len(distinct))) if len(part)]
    return [(index[~np.isin(keys, part)], index[np.isin(keys, part)]) for part in parts]


def rows_right(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Which rows a head reads right: the arg-max is the label, or (a binary head) every class is on the right side of 0.

    >>> import numpy as np
    >>> rows_right(np.array([[2.0, -1.0], [0.5, 1.0]]), np.array([[1, 0], [0, 1]])).tolist()
    [True, False]
    """
    if np.ndim(labels) == 2:
        return np.all((np.asarray(logits) >= 0) == (np.asarray(labels) == 1), axis=1)
    return np.argmax(logits, axis=1) == labels


def _verdict(before: float, after: float, loss_before: float, loss_after: float, presence: bool = False) -> tuple[bool, str]:
    """Whether a head passes the held-out check, and why; a ``presence`` head (whether a cell holds anything) only for more cells right."""
    if after < before:
        return False, "held-out accuracy dropped"
    if not loss_after < loss_before:
        return False, "held-out log-loss did not drop"
    if after > before:
        return True, "more held-out cells right"
    if presence:
        return False, "same accuracy: whether a cell holds anything is kept only for more cells right"
    return True, "same accuracy, lower held-out log-loss"


def _standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-6, scale, 1.0)


def _fit_members(
    head: str,
    classes: Sequence[str],
    x: np.ndarray,
    z: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    items: np.ndarray,
    temperature: float,
    seed: int,
    members: Sequence[np.ndarray],
    basis: tuple[str, ...],
) -> tuple[HeadFit, float]:
    """One head on all of ``x``'s columns: the average of residual heads fitted on each member's columns.

    Rows must all be labelled. Each member's L2 is chosen by cross-validation; returns the head and their mean.
    """
    weights = np.zeros((x.shape[1], len(classes)))
    bias = np.zeros(len(classes))
    trust = 0.0
    l2s = []
    binary = np.ndim(y) == 2
    for columns in members:
        l2 = _choose_l2(head, classes, x[:, columns], z, y, groups, items, temperature, seed)
        fit = fit_head(head, classes, x[:, columns], z, y, temperature=temperature, l2=l2)
        weights[columns] += fit.weights / len(members)
        bias += fit.bias / len(members)
        trust += fit.logit_scale / len(members)
        l2s.append(l2)
    mean, scale = _standardiser(x)  # the members standardised each column the same way
    fitted = HeadFit(head, tuple(classes), float(temperature), mean, scale, weights, bias, tuple(basis), float(trust), binary)
    return fitted, float(np.mean(l2s))


def _held_out_logits(
    head: str,
    classes: Sequence[str],
    x_all: np.ndarray,
    z_all: np.ndarray,
    y_all: np.ndarray,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    groups: np.ndarray,
    items: np.ndarray,
    temperature: float,
    seed: int,
    members: Sequence[np.ndarray],
    basis: tuple[str, ...],
) -> tuple[np.ndarray, np.ndarray]:
    """Each fold's held-out rows read by a head fitted on the rest: (logits of every checked row, which were tested)."""
    checked = sum(len(test) for _, test in folds)
    adapted = np.zeros((checked, z_all.shape[1]))
    tested = np.zeros(checked, bool)
    offset = 0
    for train, test in folds:
        adapted[offset : offset + len(test)] = z_all[test]
        tr, te = train[labelled_rows(y_all[train])], labelled_rows(y_all[test])
        if len(np.unique(items[tr])) >= MIN_EXAMPLES and te.any():
            trial, _ = _fit_members(
                head, classes, x_all[tr], z_all[tr], y_all[tr], groups[tr], items[tr], temperature, seed, members, basis
            )
            adapted[offset : offset + len(test)] = trial.adjust(x_all[test], z_all[test])
            tested[offset : offset + len(test)] = te
        offset += len(test)
    return adapted, tested


@dataclass(frozen=True, eq=False)
class HeadTrial:
    """One way of adapting a head, checked on held-out examples: its features and what the check found.

    ``tested`` marks which checked rows were read by a head fitted without them, ``rows`` are those
    rows' example indices and ``adapted`` their adapted logits.
    """

    basis: tuple[str, ...]
    features: np.ndarray
    members: tuple[np.ndarray, ...]
    tested: np.ndarray
    rows: np.ndarray
    adapted: np.ndarray
    before: float
    after: float
    loss_before: float
    loss_after: float
    kept: bool
    reason: str
    kept_first: bool = False

    def __post_init__(self) -> None:
        if len(self.rows) != len(self.adapted) or int(np.count_nonzero(self.tested)) != len(self.rows):
            raise ValueError(
                f"trial: {len(self.rows)} rows, {len(self.adapted)} adapted logits and "
                f"{int(np.count_nonzero(self.tested))} tested rows do not agree"
            )


def holds_right(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Which rows a presence head reads right as to whether the cell holds anything (class 0 is nothing there).

    >>> import numpy as np
    >>> holds_right(np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 3.0]]), np.array([0, 1])).tolist()
    [True, True]
    """
    return (np.argmax(logits, axis=1) == 0) == (np.asarray(labels) == 0)


def _presence_settled(trial: HeadTrial, labels: np.ndarray, shipped: np.ndarray, temperature: float) -> HeadTrial:
    """A presence head kept for more held-out cells right, settled: as fitted where more held-out cells are read right
    as to whether they hold anything at all, else with that left to the shipped logits (``HeadFit.kept_first``).

    Its held-out cells show the corrected photos' tables only: sharpened on them, "nothing there" read tiles on
    other tables (alhambra-other-art after 5 corrected photos, the kind head kept for its tiles' types read
    better: 16 phantom tiles on one of 20 photos).
    """
    if np.ndim(labels) != 1 or np.mean(holds_right(trial.adapted, labels)) > np.mean(holds_right(shipped, labels)):
        return trial
    adapted = keep_first_class(trial.adapted, shipped, temperature)
    after, loss_after = accuracy(adapted, labels), log_loss(adapted, labels, temperature)
    kept, reason = _verdict(trial.before, after, trial.loss_before, loss_after, presence=True)
    if kept:
        reason = f"{reason}; whether a cell holds anything left as shipped"
    return replace(trial, adapted=adapted, after=after, loss_after=loss_after, kept=kept, reason=reason, kept_first=kept)


def _too_few(head: str, labelled: int) -> HeadReport:
    """The report of a head with too few labelled cells to fit and check: not adapted."""
    return HeadReport(
        head, labelled, 0, *(float("nan"),) * 4, 0.0, False, f"too few examples (need {MIN_EXAMPLES} cells to fit and 1 to check)"
    )


def adapt_model(
    model: Any, examples: ExampleSet, *, temperatures: Mapping[str, float] | None = None, seed: int = 0
) -> tuple[ModelAdaptation | None, ModelReport]:
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
    own = choose_basis(examples.outputs.keys(), heads)
    every = own + tuple(name for name in CROP_FEATURES if name in examples.outputs and name not in own)
    x_every = feature_matrix(examples.outputs, every, manifest.name)
    widths = np.cumsum([0] + [np.asarray(examples.outputs[name]).reshape(len(examples), -1).shape[1] for name in every])
    columns = {name: np.arange(widths[i], widths[i + 1]) for i, name in enumerate(every)}

    def strategy(names: tuple[str, ...], member_names: list[tuple[str, ...]]) -> tuple[tuple[str, ...], np.ndarray, list[np.ndarray]]:
        """A basis's feature matrix, and each member's columns within it."""
        chosen = np.concatenate([columns[name] for name in names])
        position = {int(column): i for i, column in enumerate(chosen)}
        members = [np.array([position[int(c)] for name in member for c in columns[name]]) for member in member_names]
        return names, x_every[:, chosen], members

    def head_strategies(head: str) -> list[tuple[tuple[str, ...], np.ndarray, list[np.ndarray]]]:
        """The ways to try a head, in order: the crop features its game names for it alone (a wall is a side's
        colour), else the crops' colour with the model's own features; then the model's own alone."""
        named = head_crop_features(manifest.name, head, ())
        crop = tuple(name for name in (named or member_bases[0]) if name in columns and name not in own)
        if not crop:
            return [strategy(own, [own])] if own else [strategy(basis, member_bases)]
        if named or not own:
            options = [strategy(crop, [crop])]
        else:
            options = [strategy(own + crop, [crop, own + crop])]
        if own:
            options.append(strategy(own, [own]))  # where the crop's features do not help, the model's own alone
        return options

    temperatures = dict(temperatures or {})
    presence = presence_head(manifest.name)  # kept only for more held-out cells right
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
        labelled_items = np.unique(items[labelled_rows(y_all)])
        if len(labelled_items) < MIN_EXAMPLES:
            reports.append(_too_few(head, len(labelled_items)))
            continue
        trials: list[HeadTrial] = []
        for head_basis, x_head, head_members in head_strategies(head):
            adapted, tested = _held_out_logits(
                head, classes, x_head, z_all, y_all, folds, examples.groups, items, temperature, seed, head_members, head_basis
            )
            if not tested.any():
                continue
            rows = checked[tested]
            y_test, z_test, a_test = y_all[rows], z_all[rows], adapted[tested]
            before, after = accuracy(z_test, y_test), accuracy(a_test, y_test)
            loss_before, loss_after = log_loss(z_test, y_test, temperature), log_loss(a_test, y_test, temperature)
            kept, reason = _verdict(before, after, loss_before, loss_after, presence=head == presence)
            trials.append(
                HeadTrial(
                    head_basis, x_head, tuple(head_members), tested, rows, a_test, before, after, loss_before, loss_after, kept, reason
                )
            )
            if kept:
                break
        if not trials:
            reports.append(_too_few(head, len(labelled_items)))
            continue
        chosen = trials[-1] if trials[-1].kept else trials[0]  # the one kept, else the first one's figures
        if chosen.kept and head == presence:
            chosen = _presence_settled(chosen, y_all[chosen.rows], z_all[chosen.rows], temperature)
        head_basis, x_head, head_members, tested, rows = chosen.basis, chosen.features, list(chosen.members), chosen.tested, chosen.rows
        a_test, kept = chosen.adapted, chosen.kept
        y_test, z_test = y_all[rows], z_all[rows]
        final: HeadFit | None = None
        l2 = 0.0
        if kept:  # re-fit on every example
            everything = np.flatnonzero(labelled_rows(y_all))
            final, l2 = _fit_members(
                head,
                classes,
                x_head[everything],
                z_all[everything],
                y_all[everything],
                examples.groups[everything],
                items[everything],
                temperature,
                seed,
                head_members,
                head_basis,
            )
        if final is not None and chosen.kept_first:
            final = replace(final, kept_first=True)
        reports.append(
            HeadReport(
                head,
                len(labelled_items),
                len(rows),
                chosen.before,
                chosen.after,
                chosen.loss_before,
                chosen.loss_after,
                l2,
                kept,
                chosen.reason,
                head_basis,
            )
        )
        any_cells |= tested
        before_right[tested] &= rows_right(z_test, y_test)
        if final is not None:  # kept, and re-fitted on every example
            after_right[tested] &= rows_right(a_test, y_test)
            fitted.append(final)
        else:
            after_right[tested] &= rows_right(z_test, y_test)
    cells_before = float(np.mean(before_right[any_cells])) if any_cells.any() else float("nan")
    cells_after = float(np.mean(after_right[any_cells])) if any_cells.any() else float("nan")
    if fitted and cells_after < cells_before:  # heads better one by one, cells worse together: keep none
        reports = [replace(r, kept=False, reason=f"{r.reason}, but fewer cells had every head right") if r.kept else r for r in reports]
        fitted = []
    report = ModelReport(
        manifest.name,
        basis,
        len(np.unique(items)),
        len(np.unique(examples.groups)),
        tuple(reports),
        cells_before,
        cells_after,
        int(any_cells.sum()),
    )
    memory = remembered(examples, heads, temperatures, float(manifest.temperature or 1.0))
    report = replace(report, remembered=memory.cells if memory is not None else 0)
    if not fitted and memory is None:
        return None, report
    return ModelAdaptation(manifest.name, manifest.sha256, basis, tuple(fitted), memory), report


def remembered(
    examples: ExampleSet,
    heads: Mapping[str, Sequence[str]],
    temperatures: Mapping[str, float] | None = None,
    default_temperature: float = 1.0,
) -> CellMemory | None:
    """The memory of the examples' cells that show something to every head (each head's class 0 is its nothing:
    ``empty``, ``none``) and that the shipped heads read doubtfully, by their pooled embedding; None where
    there are none, or the examples carry no pooled embeddings (``examples.RECALL``).

    A cell is read doubtfully where the heads' joint probability of its corrected labels, the crop as
    cut, is under ``RECALL_DOUBT`` (the reader's own bar for a closer look): the dice the scanner has
    trouble with, the ones worth remembering. A die read surely teaches the memory nothing, and as a
    key it could only draw another die of its colour to its value (a B1 drawn to a corrected B2:
    one copy's real dice, 2026-12-06).

    It is not checked here: a cell's own look is all it holds, so only re-reading whole photos held out
    shows what it does (``tablescan.adapt``).
    """
    if RECALL not in examples.outputs:
        return None
    labels = {head: np.asarray(examples.labels[head]) for head in heads if head in examples.labels and np.ndim(examples.labels[head]) == 1}
    if not labels or any(head not in examples.outputs for head in labels):
        return None
    something = np.all(np.stack([values > 0 for values in labels.values()]), axis=0)
    joint = np.ones(len(examples))
    for head, values in labels.items():
        t = float((temperatures or {}).get(head, default_temperature))
        probabilities = softmax(np.asarray(examples.outputs[head], dtype=np.float64) / t)
        joint *= probabilities[np.arange(len(examples)), np.maximum(values, 0)]
    return memory_from_examples(examples.outputs[RECALL], labels, examples.as_read, something & (joint < RECALL_DOUBT))
