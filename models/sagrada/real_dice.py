"""The real loose dice with their colour labels: crops, pip values and colours of one fold.

The photos of ``../shared/realdata/dice-nellbyler-d6`` are split by photo (sorted by name): fold 0
(even-numbered photos) may be trained on, fold 1 (odd-numbered) only measures. Crops come from
``make_dataset.real_dice`` (cut by ``scanner.sagrada.cells.die_box_crop``, as a die fills a cell);
colours from ``real_dice_colours.json`` (``label_dice.py``), in the same order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from models.sagrada import make_dataset

LABELS_FILE = Path(__file__).resolve().parent / "real_dice_colours.json"
FOLDS = 2


@dataclass(frozen=True)
class RealDice:
    """One fold of real dice: uint8 crops (N, 48, 48, 3), pip values 1-6, colour indices into
    ``make_dataset.COLOURS`` (1-5; 0 where the die is not one of Sagrada's colours, label ``other``)
    and the photo each die is on.

    Raises:
        ValueError: the arrays disagree in length.
    """

    crops: np.ndarray
    values: np.ndarray
    colours: np.ndarray
    photos: np.ndarray

    def __post_init__(self) -> None:
        if not len(self.crops) == len(self.values) == len(self.colours) == len(self.photos):
            raise ValueError(f"real dice: expected one value, colour and photo per crop, got {len(self.crops)} crops")

    @property
    def coloured(self) -> np.ndarray:
        """Mask of the dice of a Sagrada colour (white pips)."""
        return self.colours > 0


def fold_colours(fold: int) -> tuple[np.ndarray, np.ndarray]:
    """Colour indices (0 for ``other``) and photo numbers of the dice of ``fold``, in ``make_dataset.real_dice`` order."""
    document = json.loads(LABELS_FILE.read_text())["images"]
    colours, photos = [], []
    for number, name in enumerate(sorted(document)[fold::FOLDS]):
        for label in document[name]:
            colours.append(make_dataset.COLOURS.index(label) if label in make_dataset.COLOURS else 0)
            photos.append(number * FOLDS + fold)
    return np.array(colours, np.int64), np.array(photos, np.int64)


def load_real_dice(fold: int) -> RealDice | None:
    """The real dice of ``fold`` (0: may be trained on, 1: held out), or None when the photos are absent.

    Raises:
        ValueError: the labels file does not match the photos' boxes.
    """
    real = make_dataset.real_dice(fold)
    if real is None:
        return None
    colours, photos = fold_colours(fold)
    if len(colours) != len(real[0]):
        raise ValueError(f"{LABELS_FILE.name}: expected {len(real[0])} labels in fold {fold}, got {len(colours)}")
    return RealDice(real[0], real[1], colours, photos)


def die_masks(crops: np.ndarray, near: float = 0.37) -> np.ndarray:
    """Soft masks (N, H, W) float32 of the die in each real crop, to paste it onto other backgrounds.

    The tray around a loose die is light grey: pixels far (in Lab) from the crop's border colour,
    within ``near`` of the crop's side from its centre, are the die's; the largest such region's
    convex hull (pips included), less its outer 2 px (shadow and halo), is the mask, its edge softened.
    """
    n, height, width = crops.shape[:3]
    ys, xs = np.mgrid[:height, :width]
    central = np.hypot(ys - (height - 1) / 2, xs - (width - 1) / 2) < near * height
    masks = np.zeros((n, height, width), np.float32)
    for k, crop in enumerate(crops):
        lab = cv2.cvtColor(crop, cv2.COLOR_RGB2LAB).astype(np.float32)
        border = np.concatenate([lab[:3].reshape(-1, 3), lab[-3:].reshape(-1, 3), lab[:, :3].reshape(-1, 3), lab[:, -3:].reshape(-1, 3)])
        far = (np.linalg.norm(lab - np.median(border, axis=0), axis=2) > 28) & central
        far = cv2.morphologyEx(far.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
        count, labels, stats, _ = cv2.connectedComponentsWithStats(far)
        if count < 2:
            continue
        biggest = 1 + int(stats[1:, cv2.CC_STAT_AREA].argmax())
        points = np.column_stack(np.nonzero(labels == biggest)[::-1]).astype(np.int32)
        hull = np.zeros((height, width), np.uint8)
        cv2.fillConvexPoly(hull, cv2.convexHull(points), 1)
        inner = cv2.erode(hull, np.ones((5, 5), np.uint8))
        masks[k] = cv2.GaussianBlur(inner.astype(np.float32), (3, 3), 0.7)
    return masks


def yellowed(crop: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """``crop`` with its die (soft ``mask``) turned into a yellow one, its pips and the tray kept; None without a die.

    The loose-dice photos hold no yellow die with white pips, and a yellow die is the hardest to
    count: its body is nearly as light as its pips. The body takes a yellow hue and a yellow die's
    lightness (its median brightness raised to 72-92% of white, the marbling kept), so the value
    and colour heads see real dice pixels in Sagrada's fifth colour.
    """
    hsv = cv2.cvtColor(crop, cv2.COLOR_RGB2HSV).astype(np.float32)
    saturation, value = hsv[..., 1], hsv[..., 2]
    inside = mask > 0.5
    if int(inside.sum()) < 20:
        return None
    body_s, body_v = float(np.median(saturation[inside])), float(np.median(value[inside]))
    # pips: lighter and greyer than the body
    pip = np.clip(2 * (value - body_v) / max(255 - body_v, 1), 0, 1) * np.clip(2 * (1 - saturation / max(body_s, 1)), 0, 1)
    gamma = np.log(rng.uniform(0.72, 0.92)) / np.log(max(body_v, 8) / 255)
    body = np.stack(
        [np.full_like(value, rng.uniform(22, 31)), np.clip(saturation * 0.4 + rng.uniform(120, 170), 0, 255), 255 * (value / 255) ** gamma],
        axis=-1,
    )
    yellow = cv2.cvtColor(np.clip(body, 0, 255).astype(np.uint8), cv2.COLOR_HSV2RGB).astype(np.float32)
    weight = (mask * (1 - pip))[..., None]
    return np.clip(crop * (1 - weight) + yellow * weight + 0.5, 0, 255).astype(np.uint8)


def with_yellow_copies(real: RealDice, share: float, seed: int) -> RealDice:
    """``real`` and, for a ``share`` of its dice of Sagrada's colours, a yellowed copy (``yellowed``) labelled yellow."""
    rng = np.random.default_rng(seed)
    chosen = np.flatnonzero(real.coloured & (rng.random(len(real.colours)) < share))
    masks = die_masks(real.crops[chosen])
    copies = [(k, yellowed(real.crops[k], mask, rng)) for k, mask in zip(chosen, masks)]
    kept = [(k, crop) for k, crop in copies if crop is not None]
    if not kept:
        return real
    index = np.array([k for k, _ in kept])
    yellow = make_dataset.COLOURS.index("Y")
    return RealDice(
        np.concatenate([real.crops, np.stack([crop for _, crop in kept])]),
        np.concatenate([real.values, real.values[index]]),
        np.concatenate([real.colours, np.full(len(index), yellow, real.colours.dtype)]),
        np.concatenate([real.photos, real.photos[index]]),
    )
