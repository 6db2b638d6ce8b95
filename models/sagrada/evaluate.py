"""Measure the Sagrada models and refresh their cards' tables.

- held-out renders (seeds from ``TEST_SEED``, never used in training or calibration), read end to
  end by the scanner's ``SagradaReader`` from the photo alone: grid found, cells right, boards
  entirely right, pattern named, calibration (ECE) of the cell confidences;
- the real windows of ``../shared/realdata/sagrada-hejmsdz`` (already cut to the grid): cells right;
- the real dice of ``../shared/realdata/dice-nellbyler-d6``: pip values right (value head only).

``python -m models.sagrada.evaluate [--renders 100]`` writes ``evaluation.json`` beside this
file and rewrites the three model cards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from models.cli import CommandParser
from models.metrics import expected_calibration_error, machine
from models.sagrada import cards, make_dataset
from models.sagrada.real_dice import load_real_dice
from models.sagrada.render import render
from scanner.errors import BoardNotFoundError
from scanner.model import OnnxModel, image_batch, softmax
from scanner.photo import Photo, load_photo
from scanner.sagrada.cells import CROP_PX, grid_image_crops
from scanner.sagrada.grid import PATCH_PX, REFINE_VIEWS
from scanner.sagrada.lattice import LOCATE_SIZE
from scanner.sagrada.reader import STATES, SagradaReader, cell_text, decode_window, value_probabilities

HERE = Path(__file__).resolve().parent
REALDATA = HERE.parents[2] / "shared" / "realdata"
COLOUR_NAMES = ["R", "Y", "G", "B", "P", "."]


def _colour_of(value: str) -> str:
    return "." if value == "." else value[0]


def _confusion(pairs: list[tuple[str, str]], labels: list[str]) -> list[list[int]]:
    index = {label: k for k, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for truth, got in pairs:
        if truth in index and got in index:
            matrix[index[truth]][index[got]] += 1
    return matrix


def evaluate_renders(count: int, reader: SagradaReader, first_seed: int = make_dataset.TEST_SEED) -> dict:
    """Read ``count`` held-out renders end to end and compare with their truth."""
    cells_right = boards_right = found = patterns_right = 0
    corner_errors: list[float] = []
    confidences: list[float] = []
    correct: list[float] = []
    colour_pairs: list[tuple[str, str]] = []
    value_pairs: list[tuple[str, str]] = []
    overrides_total = overrides_right = raw_right = 0
    seconds, steps, reads, looks = [], [], [], []
    board_crops: list[np.ndarray] = []  # each board's 20 cell crops as read: what the cell model's timing reads
    for seed in range(first_seed, first_seed + count):
        sample = render(seed)
        truth_rows = sample.label["players"][0]["window"]
        truth = [v for row in truth_rows for v in row.split()]
        photo = Photo.from_array(sample.image_rgb, name=f"render-{seed}")
        started = time.perf_counter()
        runs_before = getattr(reader.refiner, "runs", 0)  # a _CountingModel counts the refiner's runs
        reads_before = getattr(reader.read_cells, "runs", 0)  # and the reads of the 20 cells (more than one when grid retries are judged)
        looks_before = getattr(reader.locator, "runs", 0)  # and the locator's looks (a second one at a small grid)
        try:
            reading = reader.read(photo)
        except BoardNotFoundError:
            confidences.extend([1.0] * 20)
            correct.extend([0] * 20)
            continue
        seconds.append(time.perf_counter() - started)
        steps.append(getattr(reader.refiner, "runs", 0) - runs_before)
        reads.append(getattr(reader.read_cells, "runs", 0) - reads_before)
        board_crops.append(np.stack([cell.crop for cell in reading.cells if cell.crop is not None]))
        looks.append(getattr(reader.locator, "runs", 0) - looks_before)
        found += 1
        true_corners = np.array(sample.label["render"]["corners"])
        pitch = np.linalg.norm(true_corners[1] - true_corners[0]) / 5
        corner_errors.append(float(np.linalg.norm(reading.corners - true_corners, axis=1).max() / pitch))
        got = [cell.value for cell in reading.cells]
        right = [g == t for g, t in zip(got, truth)]
        cells_right += sum(right)
        boards_right += all(right)
        patterns_right += reading.player.to_json().get("pattern") == sample.label["players"][0]["pattern"]
        confidences.extend(cell.confidence for cell in reading.cells)
        correct.extend(right)
        colour_pairs.extend((_colour_of(t), _colour_of(g)) for t, g in zip(truth, got))
        value_pairs.extend((t[-1] if t != "." else ".", g[-1] if g != "." else ".") for t, g in zip(truth, got))
        for override in reading.overrides:
            r, c = override.cell
            overrides_total += 1
            overrides_right += override.chosen_value == truth[r * 5 + c]
        raw = {tuple(o.cell): o.model_value for o in reading.overrides}
        raw_right += sum((raw.get(cell.cell, cell.value) == t) for cell, t in zip(reading.cells, truth))
    return {
        "photos": count,
        "first_seed": first_seed,
        "grid_found": found,
        "cells_right": cells_right / (20 * count),
        "boards_right": boards_right / count,
        "cells_right_before_rules": raw_right / (20 * count),
        "pattern_named_right": patterns_right / count,
        "overrides": overrides_total,
        "overrides_right": overrides_right,
        "corner_error_pitch_median": float(np.median(corner_errors)) if corner_errors else None,
        "corner_error_pitch_max": float(np.max(corner_errors)) if corner_errors else None,
        "ece": expected_calibration_error(np.array(confidences), np.array(correct)),
        "read_seconds_median": float(np.median(seconds)) if seconds else None,
        "refine_steps": steps,
        "cell_reads": reads,
        "locator_looks": looks,
        "board_crops": board_crops,
        "colour_confusion": {"labels": COLOUR_NAMES, "matrix": _confusion(colour_pairs, COLOUR_NAMES)},
        "value_confusion": {"labels": list("123456."), "matrix": _confusion(value_pairs, list("123456."))},
    }


def evaluate_real_windows(reader: SagradaReader) -> dict | None:
    """Read the two real windows (already cut to the grid) and compare with their labels."""
    folder = REALDATA / "sagrada-hejmsdz"
    if not (folder / "labels.json").is_file():
        return None
    labels = json.loads((folder / "labels.json").read_text())["images"]
    result: dict[str, Any] = {"boards": {}, "cells": 0, "right": 0, "right_before_rules": 0, "dice": 0, "dice_right": 0, "errors": []}
    pairs = []
    for name, rows in sorted(labels.items()):
        grid = np.asarray(Image.open(folder / name).convert("RGB"))
        states = reader.classify(grid_image_crops(grid))
        decoded = decode_window(states)
        truth = [v or "." for row in rows for v in row]
        got = [cell_text(s) for s in decoded.states]
        raw = [max(value_probabilities(p).items(), key=lambda kv: kv[1])[0] for p in states]
        right = sum(g == t for g, t in zip(got, truth))
        result["boards"][name] = {"right": right, "of": 20, "pattern": decoded.pattern}
        result["cells"] += 20
        result["right"] += right
        result["right_before_rules"] += sum(g == t for g, t in zip(raw, truth))
        for index, (t, g) in enumerate(zip(truth, got)):
            if t != ".":
                result["dice"] += 1
                result["dice_right"] += g == t
            if g != t:
                result["errors"].append({"board": name, "cell": list(divmod(index, 5)), "truth": t, "read": g})
            pairs.append((_colour_of(t), _colour_of(g)))
    result["colour_confusion"] = {"labels": COLOUR_NAMES, "matrix": _confusion(pairs, COLOUR_NAMES)}
    return result


def evaluate_real_dice(reader: SagradaReader, fold: int = 1) -> dict | None:
    """Pip values of the real loose dice of one fold, read by the value head (argmax over 1-6).

    Fold 1 (odd photos) is never trained on; fold 0 may have been used to fine-tune the value head.
    """
    real = load_real_dice(fold)
    if real is None:
        return None
    crops, truth_arr = real.crops, real.values
    out = reader.dice.run(image_batch(crops))
    got = out["value"][:, 1:].argmax(axis=1) + 1
    per_value = {str(v): float((got[truth_arr == v] == v).mean()) for v in range(1, 7)}
    # as the scanner reads a board's cells (``read_by_photo``), the 30 die states summed over colour
    states = read_by_photo(reader, crops, real.photos)[:, :30].reshape(len(crops), 5, 6).sum(axis=1)
    scanner_right = int((states.argmax(axis=1) + 1 == truth_arr).sum())
    return {
        "fold": fold,
        "scanner_right": scanner_right,
        "scanner_accuracy": scanner_right / len(truth_arr),
        "photos": "odd-numbered (held out)" if fold else "even-numbered (fine-tuning fold)",
        "dice": int(len(truth_arr)),
        "right": int((got == truth_arr).sum()),
        "accuracy": float((got == truth_arr).mean()),
        "per_value": per_value,
        "confusion": {"labels": list("123456"), "matrix": _confusion([(str(t), str(g)) for t, g in zip(truth_arr, got)], list("123456"))},
    }


def read_by_photo(reader: SagradaReader, crops: np.ndarray, photos: np.ndarray) -> np.ndarray:
    """Cell states of loose dice read as the scanner reads a board's cells (``SagradaReader.classify``: a doubtful crop
    in its four quarter turns and 1.2 times closer, the whole board closer where it reads surer there), each photo's
    dice together as one board (one camera and light, as a window's 20 dice)."""
    states = np.empty((len(crops), len(STATES)))
    for photo in np.unique(photos):
        at = photos == photo
        states[at] = reader.classify(crops[at])
    return states


def evaluate_real_dice_colours(reader: SagradaReader, fold: int = 1) -> dict | None:
    """Colours (and values) of the real loose dice of Sagrada's colours in one fold (``real_dice_colours.json``).

    One view: the colour head's first choice over its six classes (``none`` counts as wrong). As the
    scanner reads a cell (a doubtful crop in its four quarter turns, and 1.2 times closer), the likeliest of the 42 cell states (an
    empty state counts as wrong, shown as ``.``). ``confident_wrong``: wrong readings at >= 90%.
    """
    real = load_real_dice(fold)
    if real is None:
        return None
    mask = real.coloured
    crops, colours, values = real.crops[mask], real.colours[mask], real.values[mask]
    truth = [make_dataset.COLOURS[c] for c in colours]
    out = reader.dice.run(image_batch(crops))
    colour_p = softmax(out["colour"] / reader.dice.manifest.temperature)
    head = [make_dataset.COLOURS[k] for k in colour_p.argmax(axis=1)]
    head_right = np.array([h == t for h, t in zip(head, truth)])
    states = read_by_photo(reader, crops, real.photos[mask])
    best = states.argmax(axis=1)
    read = [cell_text(STATES[k]) for k in best]
    read_colour = [_colour_of(r) for r in read]
    colour_right = np.array([g == t for g, t in zip(read_colour, truth)])
    die_right = np.array([r == f"{t}{v}" for r, t, v in zip(read, truth, values)])
    dice_p = states[:, :30].reshape(len(crops), 5, 6)
    colour_marginal = np.concatenate([dice_p.sum(axis=2), states[:, 30:].sum(axis=1, keepdims=True)], axis=1)
    colour_conf = colour_marginal.max(axis=1)
    per_colour = {c: float(colour_right[np.array(truth) == c].mean()) for c in "RYGBP" if c in truth}
    return {
        "fold": fold,
        "dice": int(mask.sum()),
        "per_label": {c: int((np.array(truth) == c).sum()) for c in "RYGBP"},
        "colour_head_accuracy": float(head_right.mean()),
        "colour_head_confident_wrong": int(((colour_p.max(axis=1) >= 0.9) & ~head_right).sum()),
        "colour_accuracy": float(colour_right.mean()),
        "colour_per_label": per_colour,
        "colour_confident_wrong": int(((colour_conf >= 0.9) & ~colour_right).sum()),
        "die_accuracy": float(die_right.mean()),
        "die_confident_wrong": int(((states.max(axis=1) >= 0.9) & ~die_right).sum()),
        "value_accuracy": float(np.mean([r != "." and r[1] == str(v) for r, v in zip(read, values)])),
        "colour_confusion": {"labels": COLOUR_NAMES, "matrix": _confusion(list(zip(truth, read_colour)), COLOUR_NAMES)},
        "colour_head_confusion": {
            "labels": ["R", "Y", "G", "B", "P", "none"],
            "matrix": _confusion(list(zip(truth, head)), ["R", "Y", "G", "B", "P", "none"]),
        },
    }


def evaluate_no_window(reader: SagradaReader) -> dict | None:
    """How many of the real dice-tray photos (no Sagrada window in them) are wrongly read as a window."""
    folder = REALDATA / "dice-nellbyler-d6" / "images"
    if not folder.is_dir():
        return None
    photos = sorted(folder.glob("*.jpg"))
    wrong = 0
    for path in photos:
        try:
            reader.read(load_photo(path, min_long_side_px=1600))
            wrong += 1
        except BoardNotFoundError:
            pass
    return {"photos": len(photos), "read_as_window": wrong}


class _CountingReads:
    """Counts the reads of a board's cells (``SagradaReader.read_cells`` calls: one a read, more when grid retries are judged)."""

    def __init__(self, read_cells: Callable[..., Any]) -> None:
        self.read_cells = read_cells
        self.runs = 0

    def __call__(self, crops: np.ndarray, *args: Any, **options: Any) -> Any:
        self.runs += 1
        return self.read_cells(crops, *args, **options)


class _CountingModel:
    """Counts the runs of a model (the refiner: one per refinement step; the cell model: one per read of the 20 cells)."""

    def __init__(self, model) -> None:
        self.model = model
        self.runs = 0

    def run(self, batch: np.ndarray) -> dict:
        self.runs += 1
        return self.model.run(batch)

    def __getattr__(self, name: str):
        return getattr(self.model, name)


def model_latency(
    reader: SagradaReader,
    runs: int = 60,
    steps: list[int] | None = None,
    reads: list[int] | None = None,
    looks: list[int] | None = None,
    board_crops: list[np.ndarray] | None = None,
) -> dict:
    """Wall time of all model work for one board: locator looks, refiner runs (4 views each), reads of the 20 cells.

    ``steps``, ``reads`` and ``looks`` hold how many times each board's scan ran the refiner, read
    its 20 cells and ran the locator (measured on the renders: one refiner run for which side is up,
    one read, one look, a second when the grid is small in the photo). A read of the cells costs
    what its crops ask (``SagradaReader.classify`` reads a doubtful crop in more views), so it is
    timed on each board's own crops (``board_crops``, median of 3); without them, on 20 crops of
    noise, every one doubtful (the worst case). The locator and refiner are timed ``runs`` times; a
    board's model work is the sum of each part's time times its count. Returns the median board's
    (``total``) and the 90th percentile board's (``total_p90``) model work in ms, the parts' medians
    and the mean counts.
    """
    steps = steps or [1]
    reads = reads or [1] * len(steps)
    looks = looks or [1] * len(steps)
    rng = np.random.default_rng(0)
    width, height = LOCATE_SIZE
    locate_in = rng.random((1, 3, height, width), dtype=np.float32)
    patch_in = rng.random((REFINE_VIEWS, 3, PATCH_PX, PATCH_PX), dtype=np.float32)
    crops = board_crops or [rng.integers(0, 256, (20, CROP_PX, CROP_PX, 3), dtype=np.uint8)]
    parts: dict[str, list[float]] = {"locator": [], "refiner": []}
    for _ in range(runs):
        start = time.perf_counter()
        reader.locator.run(locate_in)
        mid = time.perf_counter()
        reader.refiner.run(patch_in)
        parts["locator"].append(mid - start)
        parts["refiner"].append(time.perf_counter() - mid)
    per_board = []
    for index in range(max(len(steps), len(crops))):
        timed = []
        for _ in range(3):
            start = time.perf_counter()
            reader.classify(crops[index % len(crops)])
            timed.append(time.perf_counter() - start)
        per_board.append(1000 * float(np.median(timed)))
    medians = {k: 1000 * float(np.median(v)) for k, v in parts.items()}
    medians["dice"] = float(np.median(per_board))
    dice = np.resize(np.asarray(per_board, np.float64), len(steps))
    boards = (
        medians["locator"] * np.asarray(looks, np.float64)
        + dice * np.asarray(reads, np.float64)
        + medians["refiner"] * np.asarray(steps, np.float64)
    )
    medians["locator"] *= float(np.median(looks))  # the median board's looks
    medians["refiner"] *= float(np.median(steps))
    medians["dice"] *= float(np.median(reads))
    medians["total"] = float(np.median(boards))
    medians["total_p90"] = float(np.percentile(boards, 90))
    medians["refine_steps"] = float(np.mean(steps))
    medians["refine_steps_median"] = float(np.median(steps))
    medians["cell_reads"] = float(np.mean(reads))
    medians["locator_looks"] = float(np.mean(looks))
    return medians


def main(argv: list[str] | None = None) -> dict:
    """Command line: evaluate and rewrite the model cards."""
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=100)
    args = parser.parse_args(argv)
    reader = SagradaReader()
    counting, looking = _CountingModel(reader.refiner), _CountingModel(reader.locator)
    reader._refiner, reader._locator = cast(OnnxModel, counting), cast(OnnxModel, looking)  # counting stand-ins
    setattr(reader, "read_cells", _CountingReads(reader.read_cells))  # noqa: B010 - counts the reads of the 20 cells
    renders = evaluate_renders(args.renders, reader)
    steps, reads, looks = renders.pop("refine_steps"), renders.pop("cell_reads"), renders.pop("locator_looks")
    board_crops = renders.pop("board_crops")
    reader._refiner, reader._locator = counting.model, looking.model
    del reader.read_cells
    results: dict[str, Any] = {
        "renders": renders,
        "real_windows": evaluate_real_windows(reader),
        "real_dice": evaluate_real_dice(reader, fold=1),
        "real_dice_fold0": evaluate_real_dice(reader, fold=0),
        "real_dice_colours": evaluate_real_dice_colours(reader, fold=1),
        "real_dice_colours_fold0": evaluate_real_dice_colours(reader, fold=0),
        "latency_ms": model_latency(reader, steps=steps, reads=reads, looks=looks, board_crops=board_crops),
        "no_window": evaluate_no_window(reader),
        "machine": f"{machine()}, {time.strftime('%Y-%m-%d', time.gmtime())}",
    }
    (HERE / "evaluation.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    cards.write_cards(results)
    print(
        json.dumps(
            {
                k: (v if k != "renders" else {kk: vv for kk, vv in v.items() if "confusion" not in kk})
                for k, v in results.items()
                if v is not None
            },
            indent=1,
            default=str,
        )[:3000]
    )
    return results


if __name__ == "__main__":
    main()
