"""Labelled examples for one model: its outputs on cell crops, the heads' labels, and the crops' own colour features."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scanner.adapt.labels import cell_classifier, head_labels
from scanner.adapt.memory import RECALL, unit_rows
from scanner.errors import AdaptationError
from scanner.model import image_batch

# not a model output: colour features computed from the crop itself (``crop_colour_features``)
CROP_COLOUR = "crop_colour"
CROP_SIDES = "crop_sides"
CROP_WALLS = "crop_walls"
CROP_FEATURES = (CROP_COLOUR, CROP_SIDES, CROP_WALLS)
WALL_DEPTH = 0.125  # a strip of ``crop_wall_features``: this share of a cell pitch deep (a printed wall is ~0.085)
HUE_BINS = 12


@dataclass(frozen=True)
class ExampleSet:
    """Labelled examples for one model: its outputs on the crops, labels per head, photo per example.

    ``labels[head]`` holds class indices into the model's head classes, -1 where unknown (a binary
    head's, one 0/1 column per class, -1 where unknown). ``items``
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
        shapes = {h: next(s.labels[h].shape[1:] for s in sets if h in s.labels) for h in heads}
        labels = {h: np.concatenate([s.labels.get(h, np.full((len(s), *shapes[h]), -1, np.int64)) for s in sets]) for h in heads}
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


def examples_from_crops(
    model: Any, crops: np.ndarray, values: Sequence[str], game: str, groups: Sequence[int], *, augment: bool = True
) -> ExampleSet:
    """Run ``model`` on uint8 crops (N, H, W, 3) RGB and label each with its cell value's head classes.

    With ``augment`` each crop is also read turned and mirrored (8 examples per cell, one item).
    Where the game's reader pools views of a doubtful cell (``CellClassifier.recall_views``), every
    example also carries its cell's embedding pooled over them, each way the reader may pool them
    (output ``recall``, (P, D) per example): what an adaptation's memory keeps (``scanner.adapt.memory``).

    Raises:
        AdaptationError: the crops do not have the model's input size.
    """
    crops = _model_images(model, crops, "crops (N,")
    copies = 8 if augment else 1
    original = crops
    if augment:
        crops, variants = dihedral(crops)
    else:
        variants = np.zeros(len(crops), np.int64)
    margin = cell_classifier(game).margin
    joined = _run_in_chunks(
        model,
        crops,
        lambda batch: {
            CROP_COLOUR: crop_colour_features(batch),
            CROP_SIDES: crop_side_features(batch),
            CROP_WALLS: crop_wall_features(batch, margin),
        },
    )
    views = cell_classifier(game).recall_views
    if views is not None and "embedding" in joined:  # each cell's embedding pooled as the reader pools a doubtful one
        joined[RECALL] = np.repeat(pooled_embeddings(model, original, views), copies, axis=0)
    labels = _variant_labels(model.manifest, game, values, variants if augment else None, copies)
    items = np.repeat(np.arange(len(values)), copies)
    return ExampleSet(model.manifest.name, joined, labels, np.repeat(np.asarray(groups, dtype=np.int64), copies), items, variants)


def examples_from_parts(model: Any, patches: np.ndarray, values: Sequence[str], reader: Any, groups: Sequence[int]) -> ExampleSet:
    """Run the part reader ``model`` on each cell's patches (N, V, S, S, 3) uint8 RGB and label them with its cell value.

    Each of a cell's V patches is an example as the reader saw it (one item: held out together),
    labelled by ``reader.head_labels`` (a ``PartReader``).

    Raises:
        AdaptationError: the patches do not have the model's input size.
    """
    patches = _model_images(model, patches, "patches (N, V,")
    count, views = patches.shape[:2]
    joined = _run_in_chunks(model, patches.reshape(count * views, *patches.shape[2:]))
    per_cell = [reader.head_labels(value) for value in values]
    heads = dict(model.manifest.heads)
    labels = {
        head: np.repeat(label_indices(heads[head], [cell.get(head) for cell in per_cell]), views)
        for head in sorted({h for cell in per_cell for h in cell})
        if head in heads
    }
    items = np.repeat(np.arange(count), views)
    groups_per_row = np.repeat(np.asarray(groups, dtype=np.int64), views)
    return ExampleSet(model.manifest.name, joined, labels, groups_per_row, items, np.zeros(count * views, np.int64))


def _model_images(model: Any, images: Any, shape: str) -> np.ndarray:
    """``images`` as an array whose last three axes are the model's input (H, W, 3), with one leading axis per ``N,`` or
    ``V,`` that ``shape`` names (e.g. ``"crops (N,"``).

    Raises:
        AdaptationError: they are not, naming the shape expected.
    """
    images = np.asarray(images)
    expected = tuple(model.manifest.input_shape[2:])
    if images.ndim != shape.count(",") + 3 or images.shape[-1] != 3 or tuple(images.shape[-3:-1]) != expected:
        raise AdaptationError(f"{model.manifest.name}: expected {shape} {expected[0]}, {expected[1]}, 3), got {images.shape}")
    return images


def _run_in_chunks(model: Any, images: np.ndarray, features: Any = None, chunk: int = 256) -> dict[str, np.ndarray]:
    """``model``'s outputs on uint8 ``images`` (N, H, W, 3), read ``chunk`` at a time, and ``features(batch)`` of each
    model batch beside them (name -> array), joined over the chunks."""
    outputs: dict[str, list[np.ndarray]] = {}
    for start in range(0, len(images), chunk):
        batch = image_batch(images[start : start + chunk])
        found = {**model.run(batch), **(features(batch) if features is not None else {})}
        for name, array in found.items():
            outputs.setdefault(name, []).append(np.asarray(array))
    return {name: np.concatenate(parts) for name, parts in outputs.items()}


def pooled_embeddings(model: Any, crops: np.ndarray, views: Any) -> np.ndarray:
    """Each crop's ``embedding`` output (N, P, D), averaged over each pooling of ``views(crops)`` (a list of P
    poolings, each a list of crop arrays, one per view) and scaled to unit length: how the reader pools a doubtful
    cell, each way it may, and what a memory keeps (``scanner.adapt.memory``)."""
    pooled = []
    for pooling in views(crops):
        parts = [np.asarray(model.run(image_batch(view))["embedding"], dtype=np.float32).reshape(len(view), -1) for view in pooling]
        pooled.append(unit_rows(np.mean(parts, axis=0)))
    return np.stack(pooled, axis=1)


def _variant_labels(manifest: Any, game: str, values: Sequence[str], variants: np.ndarray | None, copies: int) -> dict[str, np.ndarray]:
    """Each example's label per head the manifest declares: a class index (-1 unknown), or 0/1 per class for a binary head.

    Copies of a turned or mirrored crop take the labels the game's ``turn_labels`` gives them.
    """
    classifier = cell_classifier(game)
    heads = dict(manifest.heads)
    per_cell = [head_labels(game, value) for value in values]
    rows: list[dict[str, Any]] = []
    for index, cell in enumerate(per_cell):
        for copy in range(copies):
            variant = 0 if variants is None else int(variants[index * copies + copy])
            turn = classifier.turn_labels
            rows.append(cell if variant == 0 or turn is None else turn(cell, variant))
    labels: dict[str, np.ndarray] = {}
    for head in sorted({h for cell in per_cell for h in cell}):
        if head not in heads:
            continue
        classes = heads[head]
        if head in classifier.binary_heads:
            array = np.full((len(rows), len(classes)), -1, np.int64)
            for i, row in enumerate(rows):
                bits = row.get(head)
                if bits is not None and len(bits) == len(classes):
                    array[i] = np.asarray(bits, np.int64)
            labels[head] = array
        else:
            labels[head] = label_indices(classes, [row.get(head) for row in rows])
    return labels


def labelled_rows(labels: np.ndarray) -> np.ndarray:
    """Which examples a head's labels say something about: a class index >= 0, or every bit of a binary head known.

    >>> import numpy as np
    >>> labelled_rows(np.array([2, -1])).tolist(), labelled_rows(np.array([[0, 1], [-1, -1]])).tolist()
    ([True, False], [True, False])
    """
    labels = np.asarray(labels)
    return labels >= 0 if labels.ndim == 1 else np.all(labels >= 0, axis=1)


def crop_colour_features(batch: np.ndarray) -> np.ndarray:
    """Colour features of each crop's centre (the middle half, where the die or tile is), (N, 20) float64.

    A soft 12-bin hue histogram weighted by saturation x value (dark pips and grey background
    count little), then mean and spread of R, G, B, mean saturation and mean value. ``batch`` is
    what the model reads: (N, 3, H, W) float RGB in 0-1. Turning a crop hardly changes them.

    >>> import numpy as np
    >>> crop_colour_features(np.zeros((2, 3, 48, 48), np.float32)).shape
    (2, 20)

    Raises:
        AdaptationError: the batch is not (N, 3, H, W).
    """
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AdaptationError(f"crop colour features: expected a (N, 3, H, W) RGB batch, got {batch.shape}")
    height, width = batch.shape[2:]
    centre = batch[:, :, height // 4 : height - height // 4, width // 4 : width - width // 4].astype(np.float64)
    count = len(batch)
    red, green, blue = centre[:, 0], centre[:, 1], centre[:, 2]
    high = np.maximum(np.maximum(red, green), blue)
    low = np.minimum(np.minimum(red, green), blue)
    spread = high - low + 1e-6
    hue = (
        np.where(high == red, ((green - blue) / spread) % 6, np.where(high == green, (blue - red) / spread + 2, (red - green) / spread + 4))
        / 6.0
    )
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
    return np.concatenate(
        [
            histogram,
            pixels.mean(axis=2),
            pixels.std(axis=2),
            saturation.reshape(count, -1).mean(axis=1, keepdims=True),
            high.reshape(count, -1).mean(axis=1, keepdims=True),
        ],
        axis=1,
    )


def crop_side_features(batch: np.ndarray) -> np.ndarray:
    """Colour of a band along each side of each crop (top, right, bottom, left): mean and spread of R, G, B, (N, 24).

    The bands are an eighth of the crop deep and leave the corners out; turning the crop turns them with it.

    >>> import numpy as np
    >>> crop_side_features(np.zeros((2, 3, 64, 64), np.float32)).shape
    (2, 24)

    Raises:
        AdaptationError: the batch is not (N, 3, H, W).
    """
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AdaptationError(f"crop side features: expected a (N, 3, H, W) RGB batch, got {batch.shape}")
    height, width = batch.shape[2:]
    deep_y, deep_x = max(1, height // 8), max(1, width // 8)
    span_y, span_x = slice(height // 8, height - height // 8), slice(width // 8, width - width // 8)
    bands = (
        batch[:, :, :deep_y, span_x],
        batch[:, :, span_y, width - deep_x :],
        batch[:, :, height - deep_y :, span_x],
        batch[:, :, span_y, :deep_x],
    )
    parts = []
    for band in bands:
        pixels = band.astype(np.float64).reshape(len(batch), 3, -1)
        parts += [pixels.mean(axis=2), pixels.std(axis=2)]
    return np.concatenate(parts, axis=1)


def crop_wall_features(batch: np.ndarray, margin: float) -> np.ndarray:
    """Colour of a strip just inside each side of the cell each crop shows (top, right, bottom, left): mean and spread
    of R, G, B and the mean less the cell's middle, (N, 36).

    A crop shows its cell and ``margin`` (cell pitches) beyond it on every side; each strip lies along
    the cell's own edge, ``WALL_DEPTH`` of a pitch deep, corners left out, where a tile prints its
    walls. (``crop_side_features`` reads the crop's outer eighth: with a margin that is mostly the
    gap and the neighbour beyond the cell.) Turning the crop turns the strips with it.

    >>> import numpy as np
    >>> crop = np.full((1, 3, 52, 52), 0.8, np.float32)
    >>> crop[:, :, 6:11, 10:42] = 0.2  # a dark strip along the top, inside a 0.15-pitch margin
    >>> features = crop_wall_features(crop, 0.15)
    >>> features.shape, [round(float(v), 2) for v in features[0, 6:9]], [round(float(v), 2) for v in features[0, 15:18]]
    ((1, 36), [-0.6, -0.6, -0.6], [0.0, 0.0, 0.0])

    Raises:
        AdaptationError: the batch is not (N, 3, H, W), or the margin leaves no cell.
    """
    batch = np.asarray(batch)
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AdaptationError(f"crop wall features: expected a (N, 3, H, W) RGB batch, got {batch.shape}")
    if not 0 <= margin < 1:
        raise AdaptationError(f"crop wall features: expected a margin of 0-1 cell pitches, got {margin}")
    count, _, height, width = batch.shape
    span = 1 + 2 * margin  # the crop's side in cell pitches
    edge_y, edge_x = int(round(margin / span * height)), int(round(margin / span * width))
    deep_y, deep_x = max(1, int(round(WALL_DEPTH / span * height))), max(1, int(round(WALL_DEPTH / span * width)))
    along_y, along_x = slice(edge_y + deep_y, height - edge_y - deep_y), slice(edge_x + deep_x, width - edge_x - deep_x)
    strips = (
        batch[:, :, edge_y : edge_y + deep_y, along_x],
        batch[:, :, along_y, width - edge_x - deep_x : width - edge_x],
        batch[:, :, height - edge_y - deep_y : height - edge_y, along_x],
        batch[:, :, along_y, edge_x : edge_x + deep_x],
    )
    middle = batch[:, :, along_y, along_x].astype(np.float64).reshape(count, 3, -1).mean(axis=2)
    parts = []
    for strip in strips:
        pixels = strip.astype(np.float64).reshape(count, 3, -1)
        parts += [pixels.mean(axis=2), pixels.std(axis=2), pixels.mean(axis=2) - middle]
    return np.concatenate(parts, axis=1)


def with_crop_colour(
    outputs: Mapping[str, np.ndarray], batch: np.ndarray | None, basis: Iterable[str], margin: float = 0.0
) -> Mapping[str, np.ndarray]:
    """``outputs`` plus the crop colour features of ``batch`` when ``basis`` needs them (a new dict then); ``margin``
    is the crops' context beyond their cell, in cell pitches (``crop_wall_features``).

    Raises:
        AdaptationError: they are needed and there is no batch to compute them from.
    """
    wanted = [name for name in CROP_FEATURES if name in set(basis) and name not in outputs]
    if not wanted:
        return outputs
    if batch is None:
        raise AdaptationError("an adapted head reads the crops' colour; pass the model's input batch")
    compute = {CROP_COLOUR: crop_colour_features, CROP_SIDES: crop_side_features, CROP_WALLS: lambda x: crop_wall_features(x, margin)}
    return {**outputs, **{name: compute[name](batch) for name in wanted}}
