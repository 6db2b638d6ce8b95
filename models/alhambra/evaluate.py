"""Measure the Alhambra models on held-out renders and refresh the model cards' tables.

    python -m models.alhambra.evaluate [--count 200] [--scan-count 60]

Two measurements, both on seeds never used in training or calibration (2,000,000+):
(a) the tile classifier on crops cut with the true lattice (per class accuracy, confusion
matrix, expected calibration error), (b) the whole scanner on rendered photos (tiles right,
palaces entirely right, locator failures, median seconds).
"""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models.alhambra.make_dataset import SEED_BASE, build
from models.alhambra.render import render
from models.cli import CommandParser
from models.metrics import expected_calibration_error
from scanner.alhambra.reader import KINDS, LOCATE_MODEL, TILES_MODEL
from scanner.errors import BoardNotFoundError
from scanner.model import OnnxModel, image_batch, models_dir, softmax
from scanner.pipeline import Scanner

CARD_START = "<!-- evaluate:start -->"
CARD_END = "<!-- evaluate:end -->"
SCAN_SEED = SEED_BASE["test"] + 500_000


def palace_cells(palace: list[dict[str, Any]]) -> dict[tuple[int, int], str]:
    """Map each ``at`` to a comparable value text (``fountain`` or ``type:walls``)."""
    cells = {}
    for item in palace:
        at = (int(item["at"][0]), int(item["at"][1]))
        cells[at] = "fountain" if item.get("tile") == "fountain" else f"{item['type']}:{item['walls']}"
    return cells


def compare_palaces(read: list[dict[str, Any]], truth: list[dict[str, Any]]) -> tuple[int, int]:
    """Return (tiles right, tiles compared): every position in either palace counts once."""
    a, b = palace_cells(read), palace_cells(truth)
    positions = set(a) | set(b)
    return sum(1 for p in positions if a.get(p) == b.get(p)), len(positions)


def evaluate_crops(count: int) -> dict[str, Any]:
    """Classifier accuracy on held-out crops cut with the true lattice."""
    data = build("test", count)
    model = OnnxModel(TILES_MODEL)
    temps = {head: model.manifest.temperature_of(head) for head in ("kind", "walls", "price", "rotation")}
    outs = [model.run(image_batch(data["crops"][i : i + 256])) for i in range(0, len(data["crops"]), 256)]
    kind_p = softmax(np.concatenate([o["kind"] for o in outs]), temps["kind"])
    wall_p = 1 / (1 + np.exp(-np.concatenate([o["walls"] for o in outs]) / temps["walls"]))
    price_p = softmax(np.concatenate([o["price"] for o in outs]), temps["price"])
    rot_p = softmax(np.concatenate([o["rotation"] for o in outs]), temps["rotation"])
    kind = data["kind"]
    pred_kind = kind_p.argmax(1)
    confusion = np.zeros((len(KINDS), len(KINDS)), int)
    np.add.at(confusion, (kind, pred_kind), 1)
    known = data["walls"][:, 0] >= 0
    walls_right = ((wall_p[known] >= 0.5) == (data["walls"][known] == 1)).all(1)
    priced = data["price"] >= 0
    rotated = data["rotation"] >= 0
    wall_conf = np.where(wall_p >= 0.5, wall_p, 1 - wall_p)[known].ravel()
    wall_ok = ((wall_p[known] >= 0.5) == (data["walls"][known] == 1)).ravel()
    return {
        "crops": int(len(kind)),
        "renders": count,
        "kind_accuracy": float((pred_kind == kind).mean()),
        "per_kind": {KINDS[k]: [int(confusion[k, k]), int(confusion[k].sum())] for k in range(len(KINDS))},
        "confusion": confusion.tolist(),
        "walls_all_four_right": float(walls_right.mean()),
        "price_accuracy": float((price_p[priced].argmax(1) == data["price"][priced]).mean()),
        "rotation_accuracy": float((rot_p[rotated].argmax(1) == data["rotation"][rotated]).mean()),
        "ece_kind": expected_calibration_error(kind_p.max(1), pred_kind == kind),
        "ece_walls": expected_calibration_error(wall_conf, wall_ok),
        "ece_price": expected_calibration_error(price_p[priced].max(1), price_p[priced].argmax(1) == data["price"][priced]),
    }


def evaluate_scans(count: int, folder: Path | None = None) -> dict[str, Any]:
    """Scan held-out rendered photos (JPEG bytes) end to end and compare with their truth."""
    scanner = Scanner()
    right = total = boards = failures = overrides = 0
    seconds: list[float] = []
    wrong: list[str] = []
    confidences: list[float] = []
    correct: list[bool] = []
    for index in range(count):
        seed = SCAN_SEED + index
        sample = render(seed)
        ok, data = cv2.imencode(".jpg", cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])
        truth = sample.label["players"][0]["palace"]
        start = time.perf_counter()
        try:
            result = scanner.scan(data.tobytes(), "alhambra", name=f"render-{seed}.jpg")
        except BoardNotFoundError as error:
            failures += 1
            total += len(truth)
            wrong.append(f"{seed}: {error}")
            continue
        seconds.append(time.perf_counter() - start)
        got = result.player["palace"]
        truth_cells = palace_cells(truth)
        for cell in result.cells:
            confidences.append(cell.confidence)
            correct.append(truth_cells.get((cell.cell[0], cell.cell[1])) == cell.value)
        r, t = compare_palaces(got, truth)
        right, total = right + r, total + t
        boards += r == t
        overrides += len(result.overrides)
        if r != t:
            wrong.append(f"{seed}: {t - r} of {t} tiles wrong")
    return {
        "photos": count,
        "tiles_right": right,
        "tiles": total,
        "boards_right": boards,
        "not_found": failures,
        "overrides": overrides,
        "median_seconds": statistics.median(seconds) if seconds else None,
        "cell_ece": expected_calibration_error(np.array(confidences), np.array(correct)) if confidences else None,
        "cells_read": len(confidences),
        "wrong": wrong[:20],
    }


def card_tables(crops: dict[str, Any] | None, scans: dict[str, Any] | None) -> str:
    """Markdown tables for the model cards (crop tables only when ``crops`` is given)."""
    lines = [CARD_START, ""]
    if crops:
        lines += _crop_tables(crops)
    if scans:
        lines += _scan_tables(scans)
    lines.append(CARD_END)
    return "\n".join(lines)


def _crop_tables(crops: dict[str, Any]) -> list[str]:
    lines = [f"Held-out crops: {crops['crops']} crops from {crops['renders']} renders (seeds {SEED_BASE['test']}+), true lattice.", ""]
    lines += ["| head | accuracy | ECE (after temperature) |", "|---|---|---|"]
    lines.append(f"| kind (8 classes) | {crops['kind_accuracy']:.4f} | {crops['ece_kind']:.4f} |")
    lines.append(f"| walls (all four sides right) | {crops['walls_all_four_right']:.4f} | {crops['ece_walls']:.4f} (per side) |")
    lines.append(f"| price (2-13) | {crops['price_accuracy']:.4f} | {crops['ece_price']:.4f} |")
    lines.append(f"| rotation (quarter turns) | {crops['rotation_accuracy']:.4f} | |")
    lines += ["", "Per kind (right / total):", "", "| " + " | ".join(KINDS) + " |", "|" + "---|" * len(KINDS)]
    lines.append("| " + " | ".join(f"{r}/{n}" for r, n in crops["per_kind"].values()) + " |")
    lines += ["", "Confusion matrix (rows truth, columns read; order as above):", "", "```"]
    lines += [" ".join(f"{v:5d}" for v in row) for row in crops["confusion"]]
    lines += ["```", ""]
    return lines


def _scan_tables(scans: dict[str, Any]) -> list[str]:
    lines = []
    if scans:
        tiles = scans["tiles_right"] / max(scans["tiles"], 1)
        boards = scans["boards_right"] / max(scans["photos"], 1)
        lines += [
            f"Whole scanner on {scans['photos']} held-out rendered photos (1600x1200 JPEG, seeds {SCAN_SEED}+):",
            "",
            "| tiles right | palaces entirely right | palace not found | rule overrides | ECE of cell confidences | median scan s |",
            "|---|---|---|---|---|---|",
            f"| {scans['tiles_right']}/{scans['tiles']} ({tiles:.4f}) | {scans['boards_right']}/{scans['photos']} ({boards:.3f}) | "
            f"{scans['not_found']} | {scans['overrides']} | {scans['cell_ece'] or 0:.4f} ({scans['cells_read']} cells) | {scans['median_seconds'] or 0:.3f} |",
            "",
        ]
        if scans["wrong"]:
            lines += ["Misread photos (seed: what went wrong):", ""] + [f"- {w}" for w in scans["wrong"]] + [""]
    return lines


def update_card(path: Path, tables: str) -> None:
    """Replace the evaluation block of a model card (or append one)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if CARD_START in text:
        text = re.sub(re.escape(CARD_START) + ".*?" + re.escape(CARD_END), lambda _: tables, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n## Accuracy\n\n" + tables + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Command line: evaluate and refresh ``models/alhambra_tiles/MODEL_CARD.md``."""
    parser = CommandParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200, help="held-out renders for the crop measurement")
    parser.add_argument("--scan-count", type=int, default=60, help="held-out photos scanned end to end")
    args = parser.parse_args(argv)
    crops = evaluate_crops(args.count)
    scans = evaluate_scans(args.scan_count) if args.scan_count else None
    print(json.dumps({"crops": {k: v for k, v in crops.items() if k != "confusion"}, "scans": scans}, indent=1))
    update_card(Path(__file__).resolve().parents[1] / "alhambra_tiles" / "MODEL_CARD.md", card_tables(crops, scans))
    if scans:
        update_card(models_dir() / LOCATE_MODEL / "MODEL_CARD.md", card_tables(None, scans))
    (Path(__file__).with_name("metrics.json")).write_text(json.dumps({"crops": crops, "scans": scans}, indent=1) + "\n")


if __name__ == "__main__":
    main()
