"""The residual head fitted on top of one classifier head, and the figures it is judged by."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scanner.errors import AdaptationError
from scanner.model import softmax

STEPS = 300
LEARNING_RATE = 0.05
SCALE_L2 = 0.01  # pull of the shipped logits' weight back towards 1


@dataclass(frozen=True, eq=False)
class HeadFit:
    """A residual head: ``logit_scale * logits + ((features - mean) / scale) @ weights + bias``.

    ``basis`` names the outputs its features are read from (empty: its model's basis);
    ``logit_scale`` is how far the shipped logits are still trusted (1: as shipped). A ``binary``
    head's classes are independent yes/no logits (read through a sigmoid, e.g. a tile's walls).
    With ``kept_first`` the probability of the first class (nothing there: ``none``) stays the
    shipped logits' (``keep_first_class``): the head adapts what a cell holds, not whether it holds anything.
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
    binary: bool = False
    kept_first: bool = False

    def __post_init__(self) -> None:
        dims, count = len(self.mean), len(self.classes)
        shapes = {
            "mean": (self.mean, (dims,)),
            "scale": (self.scale, (dims,)),
            "weights": (self.weights, (dims, count)),
            "bias": (self.bias, (count,)),
        }
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
        adapted = self.logit_scale * logits.astype(np.float64) + delta
        if self.kept_first:
            adapted = keep_first_class(adapted, logits, self.temperature)
        return adapted.astype(logits.dtype)


def keep_first_class(adapted: np.ndarray, shipped: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """``adapted`` logits (N, C) changed so that class 0's probability under ``softmax(logits / temperature)`` is the
    ``shipped`` logits' and the other classes keep the adapted odds among themselves.

    >>> import numpy as np
    >>> from scanner.model import softmax
    >>> shipped, adapted = np.array([[2.0, 1.0, 0.0]]), np.array([[-3.0, 0.0, 4.0]])
    >>> kept = softmax(keep_first_class(adapted, shipped))
    >>> bool(np.isclose(kept[0, 0], softmax(shipped)[0, 0])), bool(np.isclose(kept[0, 2] / kept[0, 1], np.exp(4.0)))
    (True, True)
    """
    shipped = np.asarray(shipped, dtype=np.float64)
    out = np.array(adapted, dtype=np.float64)
    rest_shipped = np.logaddexp.reduce(shipped[:, 1:] / temperature, axis=1)
    rest_adapted = np.logaddexp.reduce(out[:, 1:] / temperature, axis=1)
    out[:, 1:] += temperature * (rest_shipped - rest_adapted)[:, None]
    out[:, 0] = shipped[:, 0]
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def log_loss(logits: np.ndarray, labels: np.ndarray, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of ``labels`` under ``softmax(logits / temperature)``.

    Labels (N, C) of 0/1 are a binary head's: the per-row sum of each class's sigmoid log-loss.

    >>> import numpy as np
    >>> round(log_loss(np.array([[0.0, 0.0]]), np.array([1])), 4)
    0.6931
    >>> round(log_loss(np.array([[0.0, 0.0]]), np.array([[1, 0]])), 4)
    1.3863
    """
    if len(labels) == 0:
        return float("nan")
    if np.ndim(labels) == 2:
        p = np.clip(_sigmoid(np.asarray(logits, np.float64) / temperature), 1e-12, 1 - 1e-12)
        return float(-np.mean(np.sum(labels * np.log(p) + (1 - labels) * np.log(1 - p), axis=1)))
    p = softmax(logits, temperature)
    return float(-np.mean(np.log(np.clip(p[np.arange(len(labels)), labels], 1e-12, 1.0))))


def accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows whose arg-max is the label (nan for no rows).

    >>> import numpy as np
    >>> accuracy(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 0]))
    0.5

    A binary head's row is right when every class is (logit >= 0 exactly where the label is 1).
    """
    if len(labels) == 0:
        return float("nan")
    if np.ndim(labels) == 2:
        return float(np.mean(np.all((np.asarray(logits) >= 0) == (np.asarray(labels) == 1), axis=1)))
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def fit_head(
    head: str,
    classes: Sequence[str],
    features: np.ndarray,
    logits: np.ndarray,
    labels: np.ndarray,
    *,
    temperature: float = 1.0,
    l2: float = 0.01,
    steps: int = STEPS,
    basis: Sequence[str] = (),
    fit_scale: bool = True,
    binary: bool = False,
) -> HeadFit:
    """Fit a residual head on labelled rows by full-batch Adam on log-loss + ``l2`` * |W|^2 / 2.

    With ``fit_scale`` the shipped logits' weight is fitted too (from 1, pulled back to 1 by
    ``SCALE_L2``): a new game copy the shipped model reads confidently wrong needs them trusted less.
    A ``binary`` head (labels (N, C) of 0/1) is fitted on each class's sigmoid log-loss. Deterministic: the weights start at zero, there is no sampling.

    Raises:
        ValueError: no labelled rows, or sizes that do not agree.
    """
    return fit_heads(
        head,
        classes,
        features,
        logits,
        labels,
        temperature=temperature,
        l2s=(l2,),
        steps=steps,
        basis=basis,
        fit_scale=fit_scale,
        binary=binary,
    )[0]


def fit_heads(
    head: str,
    classes: Sequence[str],
    features: np.ndarray,
    logits: np.ndarray,
    labels: np.ndarray,
    *,
    temperature: float = 1.0,
    l2s: Sequence[float] = (0.01,),
    steps: int = STEPS,
    basis: Sequence[str] = (),
    fit_scale: bool = True,
    binary: bool = False,
    parts: Sequence[np.ndarray] | None = None,
) -> list[HeadFit]:
    """``fit_head`` at each of the L2 strengths ``l2s``, side by side: one head per strength, in their order.

    With ``parts`` (row indices), one head per part and strength, part by part, each fitted on that
    part's rows alone, as if called once per part (a cross-validation's folds in one run).

    The heads learn independently, as fitted one by one; each step reads the features once for
    all of them (one matrix product over their weights side by side), which is where choosing a
    head's L2 spends its time. The numbers are kept class first (part, class, head, row), so a
    softmax's max and sum run along rows of heads x rows (three times quicker than over a last axis
    of 6 classes), and every parameter lives in one array, so each Adam step is a few operations
    over it.

    Raises:
        ValueError: no labelled rows (in a part), no strengths, or sizes that do not agree.
    """
    binary = binary or np.ndim(labels) == 2
    keep = np.all(labels >= 0, axis=1) if binary else labels >= 0
    if np.shape(logits)[1:] != (len(classes),) or len(features) != len(logits) or len(logits) != len(labels):
        raise ValueError(f"head {head}: features {np.shape(features)}, logits {np.shape(logits)} and {len(classes)} classes do not agree")
    if not len(l2s):
        raise ValueError(f"head {head}: no L2 strengths to fit at")
    chosen = [np.arange(len(labels))] if parts is None else [np.asarray(part, dtype=np.int64) for part in parts]
    rows_of = [part[keep[part]] for part in chosen]
    if not chosen or any(len(rows) == 0 for rows in rows_of):
        raise ValueError(f"head {head}: no labelled examples")
    count, fits, dims, kinds = len(classes), len(l2s), np.shape(features)[1], len(chosen)
    rows = max(len(part_rows) for part_rows in rows_of)  # each part's rows side by side, the shorter padded (read as nothing)
    means, scales = np.zeros((kinds, dims)), np.ones((kinds, dims))
    xs, shipped = np.zeros((kinds, rows, dims)), np.zeros((kinds, count, rows))
    target, inside = np.zeros((kinds, count, 1, rows)), np.zeros((kinds, 1, 1, rows))
    for k, part_rows in enumerate(rows_of):
        x, n = features[part_rows].astype(np.float64), len(part_rows)
        means[k] = x.mean(axis=0)
        scale = x.std(axis=0)
        scales[k] = np.where(scale > 1e-6, scale, 1.0)
        xs[k, :n] = (x - means[k]) / scales[k]
        shipped[k, :, :n] = logits[part_rows].astype(np.float64).T
        target[k, :, 0, :n] = labels[part_rows].astype(np.float64).T if binary else np.eye(count)[:, labels[part_rows]]
        inside[k, 0, 0, :n] = 1.0 / (temperature * n)
    xs_t = np.ascontiguousarray(xs.transpose(0, 2, 1))
    strength = np.asarray(l2s, dtype=np.float64)
    sizes = np.cumsum([kinds * count * fits * dims, kinds * count * fits, kinds * fits])
    params = np.zeros(sizes[-1])
    weights, bias, trust = (
        params[: sizes[0]].reshape(kinds, count * fits, dims),
        params[sizes[0] : sizes[1]].reshape(kinds, count, fits, 1),
        params[sizes[1] :].reshape(kinds, 1, fits, 1),
    )
    trust[:] = 1.0
    grads = np.zeros_like(params)
    grad_weights, grad_bias, grad_trust = (
        grads[: sizes[0]].reshape(kinds, count * fits, dims),
        grads[sizes[0] : sizes[1]].reshape(kinds, count, fits),
        grads[sizes[1] :].reshape(kinds, fits),
    )
    pull_weights = np.repeat(np.tile(strength, kinds * count), dims).reshape(kinds, count * fits, dims)
    pull_bias = strength[None, None, :]
    moment, square = np.zeros_like(params), np.zeros_like(params)
    beta1, beta2 = 0.9, 0.999
    for step in range(1, steps + 1):
        adapted = trust * shipped[:, :, None, :] + np.matmul(weights, xs_t).reshape(kinds, count, fits, rows) + bias
        adapted /= temperature
        if binary:
            p = _sigmoid(adapted)
        else:
            adapted -= adapted.max(axis=1, keepdims=True)
            p = np.exp(adapted, out=adapted)
            p /= p.sum(axis=1, keepdims=True)
        error = (p - target) * inside
        np.matmul(error.reshape(kinds, count * fits, rows), xs, out=grad_weights)
        grad_weights += pull_weights * weights
        np.sum(error, axis=3, out=grad_bias)
        grad_bias += pull_bias * bias[..., 0]
        if fit_scale:
            grad_trust[:] = np.einsum("kcfn,kcn->kf", error, shipped)
            grad_trust += SCALE_L2 * (trust[:, 0, :, 0] - 1.0)
        moment *= beta1
        moment += (1 - beta1) * grads
        square *= beta2
        square += (1 - beta2) * grads * grads
        params -= LEARNING_RATE * (moment / (1 - beta1**step)) / (np.sqrt(square / (1 - beta2**step)) + 1e-8)
    fitted = weights.reshape(kinds, count, fits, dims)
    return [
        HeadFit(
            head,
            tuple(classes),
            float(temperature),
            means[k].copy(),
            scales[k].copy(),
            np.ascontiguousarray(fitted[k, :, i].T),
            bias[k, :, i, 0].copy(),
            tuple(basis),
            float(trust[k, 0, i, 0]),
            binary,
        )
        for k in range(kinds)
        for i in range(fits)
    ]
