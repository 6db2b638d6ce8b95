"""A memory of the players' corrected cells: a doubtful cell that looks like one of them leans to its label.

A residual head learns what many corrected cells share; one odd die of a player's set (a marbled
yellow 2 whose body shows the pips of the faces below) is one example among a hundred and moves it
little. Yet that very die comes back in every game. The memory keeps each corrected die's
*pooled embedding*: the model's ``embedding`` averaged over the views the reader pools for a
doubtful cell (``CellClassifier.recall_views``: a Sagrada crop in its four quarter turns, as cut and
closer), scaled to unit length, once for each way the reader may pool them (a doubtful Sagrada board
is read as cut or 1.2 or 1.4 times closer, and its cells pooled about that look: a key per look, or a
die corrected on one board and read doubtfully on a board read closer is looked up among keys of
views it was not read in). A doubtful cell read later is pooled the same way; where its
nearest remembered die lies within ``bar`` (cosine) and nearer, by ``margin``, than any remembered
die of another label, each head's log-probability of that die's class gains ``boost`` nats. A cell
read surely is never looked up, so the memory can only settle doubts.

Which dice are remembered, and when a memory is kept, are ``fitting.remembered`` and
``tablescan.adapt.judge_end_to_end``: corrected dice the shipped heads read doubtfully, and only
where the photos held out read no worse with it and it reads better or surer.

How the three numbers were chosen (2026-12-06). First on the cell model's likeliest state before the
rules, keys from photos 0-4 of ``bench_adapt_loop.py``'s sets, read on photos 5-24: one copy's real
dice (``sagrada-real-set``) 4 misread cells fixed and none broken at bar 0.95 and margin 0.04; a
lower bar fixed more and broke more (0.85: 12 fixed, 14 broken without a margin); two other copies,
the real dice drawn from all 366 and the held-out board style broke none. A gain rising from nothing
at the bar was too weak for dice recalled just over it (board1's marbled Y2 at cosine 0.969 still read
Y5), so a recalled die gains the whole ``boost``. End to end, the bar went to 0.96 after a B1 drawn
to a corrected B2 at cosine 0.952 (another copy of the game); over the doubtful cells of those four
sets' photos, 2 of 293 recalls at 0.95 named another label than the truth, 1 of 249 at 0.96.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scanner.errors import AdaptationError

RECALL = "recall"  # not a model output: each crop's pooled embedding, as ExampleSet.outputs carries it
RECALL_BAR = 0.96
RECALL_MARGIN = 0.04
RECALL_BOOST = 4.0
RECALL_DOUBT = 0.95  # a corrected cell is remembered where the shipped heads read it under this (``fitting.remembered``)


def unit_rows(x: Any) -> np.ndarray:
    """Rows scaled to unit length (float32; an all-zero row stays zero).

    >>> unit_rows([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    x = np.asarray(x, dtype=np.float32).reshape(len(x), -1)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


@dataclass(frozen=True, eq=False)
class CellMemory:
    """Remembered cells: pooled embeddings ``keys`` (K, D; kept at unit length) and each one's class per head (-1: the head
    not taught); ``poolings`` keys per cell, one per way the reader pools a doubtful cell (a cell's keys in a row)."""

    keys: np.ndarray
    labels: Mapping[str, np.ndarray]
    bar: float = RECALL_BAR
    margin: float = RECALL_MARGIN
    boost: float = RECALL_BOOST
    poolings: int = 1

    def __post_init__(self) -> None:
        if self.keys.ndim != 2 or not len(self.keys) or not np.all(np.isfinite(self.keys)):
            raise AdaptationError(f"memory keys: expected a finite (K, D) array, got shape {self.keys.shape}")
        object.__setattr__(self, "keys", unit_rows(self.keys))  # cosines: keys of unit length
        for head, labels in self.labels.items():
            if np.shape(labels) != (len(self.keys),):
                raise AdaptationError(f"memory labels[{head}]: expected {len(self.keys)} class indices, got shape {np.shape(labels)}")
        if not (0.0 < self.bar < 1.0 and 0.0 <= self.margin < 1.0 and self.boost > 0.0):
            raise AdaptationError(f"memory: bar {self.bar}, margin {self.margin}, boost {self.boost} out of range")
        if self.poolings < 1 or len(self.keys) % self.poolings:
            raise AdaptationError(f"memory: {len(self.keys)} keys are not {self.poolings} per cell")

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def cells(self) -> int:
        """How many corrected cells are remembered (each by ``poolings`` keys)."""
        return len(self.keys) // self.poolings

    def nearest(self, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each pooled embedding (N, D): the key it leans to (-1: none) and how many nats it gains (``boost`` or 0).

        A key is recalled when its cosine is at least ``bar`` and exceeds by ``margin`` that of every
        key whose labels differ.

        Raises:
            AdaptationError: the embeddings are not of the keys' width.
        """
        query = unit_rows(embeddings)
        if query.shape[1] != self.keys.shape[1]:
            raise AdaptationError(f"memory: expected embeddings of width {self.keys.shape[1]}, got {query.shape[1]}")
        cosine = query @ self.keys.T  # (N, K)
        best = cosine.argmax(axis=1)
        top = cosine[np.arange(len(query)), best]
        signature = np.stack([np.asarray(v) for v in self.labels.values()], axis=1) if self.labels else np.zeros((len(self), 0))
        rival = np.array([np.max(row[np.any(signature != signature[j], axis=1)], initial=-1.0) for row, j in zip(cosine, best)])
        recalled = (top >= self.bar) & (top - rival >= self.margin)
        gain = np.where(recalled, self.boost, 0.0)
        return np.where(recalled, best, -1), gain

    def apply(
        self, log_probs: Mapping[str, np.ndarray], embeddings: np.ndarray, recalled: tuple[np.ndarray, np.ndarray] | None = None
    ) -> dict[str, np.ndarray]:
        """Each head's (N, C) log-probabilities with the recalled classes raised and renormalised (a new dict).

        A head the memory does not teach, or a cell that recalls nothing, comes back as it was. ``recalled`` is what
        ``nearest`` gave ``embeddings``, where the caller has it already.
        """
        key, gain = self.nearest(embeddings) if recalled is None else recalled
        rows = np.flatnonzero(key >= 0)
        out = {head: np.array(values, dtype=np.float64) for head, values in log_probs.items()}
        for head, values in out.items():
            labels = self.labels.get(head)
            if labels is None or not len(rows):
                continue
            classes = np.asarray(labels)[key[rows]]
            taught = classes >= 0
            values[rows[taught], classes[taught]] += gain[rows[taught]]
            values[rows] -= np.logaddexp.reduce(values[rows], axis=1, keepdims=True)
        return out


def memory_from_examples(
    recall: np.ndarray, labels: Mapping[str, np.ndarray], as_read: np.ndarray, remember: np.ndarray
) -> CellMemory | None:
    """The memory of the examples read as cut (``as_read``) that ``remember`` marks, by their ``recall`` rows; None if none.

    ``recall`` holds an example's pooled embedding (N, D), or one per way the reader pools a doubtful cell
    (N, P, D): each is a key, labelled as its example. ``labels`` are the examples' class indices per head
    (one column each; -1 unknown).
    """
    rows = np.flatnonzero(np.asarray(as_read, bool) & np.asarray(remember, bool))
    if not len(rows):
        return None
    keys = np.asarray(recall)[rows]
    poolings = keys.shape[1] if keys.ndim == 3 else 1
    return CellMemory(
        unit_rows(keys.reshape(len(rows) * poolings, -1)),
        {head: np.repeat(np.asarray(values)[rows].astype(np.int64), poolings) for head, values in labels.items()},
        poolings=poolings,
    )
