"""Render the Sagrada training data: cell crops, board-finder inputs and corner-refiner patches.

Each render draws its board style from ``STYLES`` (every style but ``styles.NEVER_TRAINED``) and, with
``VIEWS``, its framing and overlay (``render.random_view``). One render gives, through the scanner's own preprocessing (``scanner.sagrada.cells``, ``scanner.sagrada.grid``):
- ``CROP_SETS`` x 20 cell crops cut with the true grid corners plus a small random error (the
  finder is never exact), lifted to the crop plane half a die above the board exactly as the
  scanner does (``scanner.sagrada.cells.lift_corners``), labelled (die?, colour, value): colour and value
  are the die's, or the print's for an empty cell (``none`` where nothing of that kind is printed);
- the whole photo letterboxed to the finder's input with the grid's mask;
- ``PATCHES`` refiner patches around randomly disturbed corners, with the true corners in patch
  pixels and which patch corner the true top-left is.

``python -m models.sagrada.make_dataset --count 200 --seed 1000000`` caches chunks in build/sagrada/.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from models.cli import CommandParser
from models.sagrada import composite
from models.sagrada import styles as board_styles
from models.sagrada.render import random_view, render
from scanner.sagrada import grid as board
from scanner.sagrada.cells import CROP_HEIGHT_MM, cell_crops, die_box_crop, lift_corners, rectify_grid

COLOURS = ("none", "R", "Y", "G", "B", "P")
VALUES = ("none", "1", "2", "3", "4", "5", "6")
CROP_SETS = 2
PATCHES = 4
TRAIN_SEED, VAL_SEED, TEST_SEED = 1_000_000, 2_000_000, 3_000_000
SIZES = ((1600, 1200), (1280, 960), (1024, 768), (768, 1024), (1200, 1600), (960, 1280))
# The training mix: board styles drawn uniformly per render (never ``styles.NEVER_TRAINED``), and whether
# renders also vary their framing (close-ups, photos cut to the grid, off-centre crops) and draw
# camera-guide overlays (``render.random_view``). ``STYLES = ("classic",)`` with ``VIEWS = False``
# gives exactly the examples made before styles existed. Set these before rendering (the cache key
# includes them).
STYLES: tuple[str, ...] = board_styles.TRAINING_STYLES
VIEWS = True
# Share of training renders whose dice are real ones (fold 0 of the loose dice, ``composite.paste_real_dice``;
# drawn where the pool has no such die); 0 keeps every die drawn. Needs ../shared/realdata and the colour labels.
REAL_DICE = 0.2


def cell_labels(value: str, mark: str) -> tuple[int, int, int]:
    """Return (die 0/1, colour index, value index) for a cell showing ``value`` over the print ``mark``."""
    if value != ".":
        return 1, COLOURS.index(value[0]), VALUES.index(value[1])
    if mark in COLOURS:
        return 0, COLOURS.index(mark), 0
    if mark in VALUES:
        return 0, 0, VALUES.index(mark)
    return 0, 0, 0


def training_view(seed: int, styles: tuple[str, ...] | None = None, views: bool | None = None) -> dict[str, Any]:
    """The style, framing and overlay of training render ``seed`` (``STYLES`` and ``VIEWS`` unless given).

    Raises:
        ValueError: a style that is unknown or held out of training.
    """
    styles = STYLES if styles is None else styles
    views = VIEWS if views is None else views
    for name in styles:
        if name not in board_styles.TRAINING_STYLES:
            raise ValueError(f"training styles: {name!r} is not one of {', '.join(board_styles.TRAINING_STYLES)}")
    rng = np.random.default_rng([seed, 11])  # its own stream: the rest of the example does not move
    view: dict[str, Any] = {"style": styles[int(rng.integers(len(styles)))] if len(styles) > 1 else styles[0]}
    if views:
        view.update(random_view(rng))
    return view


def _render_training(seed: int, **options: Any) -> Any:
    """``render`` or, for a ``REAL_DICE`` share of seeds, the same render with real dice pasted in."""
    if REAL_DICE and np.random.default_rng([seed, 12]).random() < REAL_DICE:
        return composite.paste_real_dice(seed, **options)
    return render(seed, **options)


def configure(styles: tuple[str, ...], views: bool, real_dice: float | None = None) -> None:
    """Set the training mix (``STYLES``, ``VIEWS`` and, when given, ``REAL_DICE``) for every render made after this call.

    Raises:
        ValueError: a style that is unknown or held out of training, or a share outside 0-1.
    """
    global STYLES, VIEWS, REAL_DICE
    training_view(0, styles, views)  # checks the styles
    if real_dice is not None and not 0 <= real_dice <= 1:
        raise ValueError(f"real dice: expected a share 0-1, got {real_dice}")
    STYLES, VIEWS = tuple(styles), bool(views)
    if real_dice is not None:
        REAL_DICE = float(real_dice)


def render_one(seed: int, styles: tuple[str, ...] | None = None, views: bool | None = None) -> dict[str, np.ndarray]:
    """Render one photo from ``seed`` (in the training mix) and cut every kind of training example from it."""
    rng = np.random.default_rng([seed, 7])
    size = SIZES[int(rng.integers(len(SIZES)))]
    px_per_mm = max(4.0, 6.0 * max(size) / 1600)
    sample = _render_training(seed, out_size=size, px_per_mm=px_per_mm, **training_view(seed, styles, views))
    image = sample.image_rgb
    corners = np.array(sample.label["render"]["corners"], np.float64)
    cells = sample.label["render"]["cells"]
    labels = np.array([cell_labels(cell["value"], cell["print"]) for cell in cells], np.int64)
    pitch = np.linalg.norm(corners[1] - corners[0]) / 5
    crops, crop_labels = [], []
    for k in range(CROP_SETS):
        if k:  # a finder-like error: a little scale, shift and per-corner noise
            centre = corners.mean(axis=0)
            noisy = (corners - centre) * np.exp(rng.normal(0, 0.05)) + centre + rng.normal(0, 0.04 * pitch, 2)
            noisy = noisy + rng.normal(0, 0.05 * pitch, corners.shape)
        else:
            noisy = corners + rng.normal(0, 0.015 * pitch, corners.shape)
        rectified, _ = rectify_grid(image, lift_corners(noisy, (image.shape[1], image.shape[0]), CROP_HEIGHT_MM))
        crops.append(cell_crops(rectified))
        crop_labels.append(labels)
    finder_input, finder_mask = board.finder_example(image, corners)
    patches, patch_corners, patch_turns = [], [], []
    for _ in range(PATCHES):
        guess = board.disturb_corners(corners, rng)
        turn = int(rng.integers(4))
        guess = np.roll(guess, -turn, axis=0)
        patch, _ = board.refiner_patch(image, guess)
        patches.append(patch)
        patch_corners.append(board.to_patch(np.roll(corners, -turn, axis=0), guess))
        patch_turns.append(turn)
    return {
        "crops": np.concatenate(crops),
        "crop_labels": np.concatenate(crop_labels),
        "finder_input": finder_input[None],
        "finder_mask": finder_mask[None],
        "patches": np.stack(patches),
        "patch_corners": np.stack(patch_corners).astype(np.float32),
        "patch_turns": np.array(patch_turns, np.int64),
    }


REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
REAL_BOX_PER_DIE = 1.5  # the dice photos' boxes are about 1.5 dice wide (looked at, not tuned on accuracy)


def real_dice(fold: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Crops and pip values (1-6) of the real loose dice photos of one fold (0: even photos, 1: odd), or None.

    The dice photos (``../shared/realdata/dice-nellbyler-d6``) are split by photo: fold 0 may be used
    to fine-tune the value head, fold 1 only to measure it.
    """
    folder = REALDATA / "dice-nellbyler-d6"
    if not (folder / "annotations.json").is_file():
        return None
    images = sorted(json.loads((folder / "annotations.json").read_text())["images"], key=lambda item: item["file"])
    crops, values = [], []
    for item in images[fold::2]:
        image = np.asarray(Image.open(folder / "images" / item["file"]).convert("RGB"))
        h, w = image.shape[:2]
        for index, die in enumerate(item["dice"]):
            box = (die["xmin"] * w, die["ymin"] * h, die["xmax"] * w, die["ymax"] * h)
            crops.append(die_box_crop(image, box, box_per_die=REAL_BOX_PER_DIE))
            values.append(composite.value_corrections().get((item["file"], index), int(die["value"])))
    return np.stack(crops), np.array(values, np.int64)


def _init_worker() -> None:
    cv2.setNumThreads(1)


def make_dataset(first_seed: int, count: int, workers: int = 1) -> dict[str, np.ndarray]:
    """Render ``count`` photos from seeds ``first_seed...`` and stack their examples."""
    seeds = range(first_seed, first_seed + count)
    if workers > 1:
        with get_context("fork").Pool(workers, initializer=_init_worker) as pool:
            parts = pool.map(render_one, seeds, chunksize=8)
    else:
        _init_worker()
        parts = [render_one(seed) for seed in seeds]
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


CHUNK = 100
CACHE = Path("build/sagrada")


def code_version() -> str:
    """A short hash of the code that makes the examples (renderer, scene, crops, board inputs, this file)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for name in (
        "models/scene.py",
        "models/sagrada/render.py",
        "models/sagrada/styles.py",
        "models/sagrada/composite.py",
        "scanner/sagrada/cells.py",
        "scanner/sagrada/grid.py",
        "models/sagrada/make_dataset.py",
        "models/sagrada/real_dice_colours.json",  # the labels of the real dice pasted into REAL_DICE of the renders
    ):
        digest.update((root / name).read_bytes())
    digest.update(repr((STYLES, VIEWS, REAL_DICE)).encode())
    return digest.hexdigest()[:10]


def load_or_make(first_seed: int, count: int, workers: int = 1, cache: Path = CACHE) -> dict[str, np.ndarray]:
    """Return the examples of seeds ``first_seed...`` (``count`` photos), rendering missing chunks into ``cache``.

    Chunks are cached per version of the code that makes them, so a changed renderer re-renders.
    """
    parts = []
    version = code_version()
    for start in range(first_seed, first_seed + count, CHUNK):
        size = min(CHUNK, first_seed + count - start)
        path = cache / version / f"render_{start}_{size}.npz"
        if path.is_file():
            with np.load(path) as data:
                parts.append({key: data[key] for key in data.files})
            continue
        began = time.perf_counter()
        data = make_dataset(start, size, workers)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = data
        np.savez(path, **arrays)
        print(f"rendered {size} photos from seed {start} in {time.perf_counter() - began:.0f} s -> {path}", flush=True)
        parts.append(data)
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def main() -> None:
    """Command line: render a dataset into an .npz file."""
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=TRAIN_SEED)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--styles", default=",".join(STYLES), help="training board styles, comma-separated")
    parser.add_argument("--no-views", action="store_true", help="whole-table photos only, no overlays")
    parser.add_argument("--real-dice", type=float, default=REAL_DICE, help="share of renders with real fold-0 dice pasted in")
    args = parser.parse_args()
    configure(tuple(args.styles.split(",")), not args.no_views, args.real_dice)
    load_or_make(args.seed, args.count, args.workers, args.cache)


if __name__ == "__main__":
    main()
