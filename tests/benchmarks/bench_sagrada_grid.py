"""Sagrada grid benchmark: the grid found from its cells against the outline finder (prints figures; not a test).

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_sagrada_grid.py [--renders 30] [--seed 3000000]

Each held-out render (seeds 3000000+, never trained on) is read in four forms: as rendered; cut to the
grid (rectified, a little margin, as apps save it); with thin white guide lines and a guide frame
drawn over it; with everything beyond the grid's card replaced by a plain colour (a board of
another design, or no frame seen). For each form and each way of finding the grid it prints: grids
found, the corner error in cell pitches (median, and how many are off by more than a quarter cell,
either way up), the orientation right, and, for the content grid read end to end, cells right,
boards right and right boards left unflagged. Then the real windows cut to the grid
(``../shared/realdata/sagrada-hejmsdz``), read from the photo alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from models.sagrada.render import render  # noqa: E402
from scanner.errors import BoardNotFoundError  # noqa: E402
from scanner.photo import Photo  # noqa: E402
from scanner.sagrada import grid as board  # noqa: E402
from scanner.sagrada.reader import SagradaReader  # noqa: E402
from scanner.sagrada.verdict import VERDICT  # noqa: E402
from scanner.verdict import judge  # noqa: E402

REAL = ROOT.parent / "shared" / "realdata" / "sagrada-hejmsdz"


def _cut_to_grid(image: np.ndarray, corners: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    margin = float(rng.uniform(0.0, 0.15))
    pitch_px = 64
    w, h = int((5 + 2 * margin) * pitch_px), int((4 + 2 * margin) * pitch_px)
    m = margin * pitch_px
    target = np.array([[m, m], [w - m, m], [w - m, h - m], [m, h - m]], np.float32)
    warp = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
    return cv2.warpPerspective(image, warp, (w, h), flags=cv2.INTER_AREA), target.astype(np.float64)


def _lined(image: np.ndarray) -> np.ndarray:
    out = image.copy()
    h, w = out.shape[:2]
    for k in (1, 2):
        cv2.line(out, (w * k // 3, 0), (w * k // 3, h), (255, 255, 255), 3, cv2.LINE_AA)
        cv2.line(out, (0, h * k // 3), (w, h * k // 3), (255, 255, 255), 3, cv2.LINE_AA)
    cv2.rectangle(out, (w // 6, h // 6), (w * 5 // 6, h * 5 // 6), (245, 245, 245), 2, cv2.LINE_AA)
    return out


def _frameless(image: np.ndarray, corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    pitch = np.linalg.norm(corners[1] - corners[0]) / 5
    centre = corners.mean(axis=0)
    grown = centre + (corners - centre) * (1 + 0.25 * pitch / np.linalg.norm(corners - centre, axis=1, keepdims=True))
    keep = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(keep, [np.round(grown).astype(np.int32)], 255)
    colour = rng.uniform(0, 255, 3).astype(np.uint8)
    return np.where(keep[..., None] > 0, image, colour)


def _errors(found: np.ndarray, true: np.ndarray) -> tuple[float, float]:
    """Largest corner error in pitches as oriented, and either way up."""
    pitch = np.linalg.norm(true[1] - true[0]) / 5
    oriented = float(np.linalg.norm(found - true, axis=1).max() / pitch)
    turned = float(np.linalg.norm(np.roll(found, 2, axis=0) - true, axis=1).max() / pitch)
    return oriented, min(oriented, turned)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--renders", type=int, default=30)
    parser.add_argument("--seed", type=int, default=3_000_000)
    args = parser.parse_args()
    reader = SagradaReader()
    rng = np.random.default_rng(args.seed)
    forms = ("as rendered", "cut to the grid", "guide lines", "frameless")
    stats: dict[str, dict[str, list]] = {f"{form} / {way}": {} for form in forms for way in ("outline finder", "content grid")}
    seconds = []
    for seed in range(args.seed, args.seed + args.renders):
        sample = render(seed)
        true = np.array(sample.label["render"]["corners"], np.float64)
        truth = [v for row in sample.label["players"][0]["window"] for v in row.split()]
        cut, cut_true = _cut_to_grid(sample.image_rgb, true, rng)
        variants = {
            "as rendered": (sample.image_rgb, true),
            "cut to the grid": (cut, cut_true),
            "guide lines": (_lined(sample.image_rgb), true),
            "frameless": (_frameless(sample.image_rgb, true, rng), true),
        }
        for form, (image, corners) in variants.items():
            old = stats[f"{form} / outline finder"]
            try:
                location = board.find_grid(image, reader.finder, reader.refiner)
                oriented, either = _errors(location.corners, corners)
                old.setdefault("error", []).append(either)
                old.setdefault("oriented", []).append(oriented < 0.25)
            except BoardNotFoundError:
                old.setdefault("missed", []).append(1)
            new = stats[f"{form} / content grid"]
            try:
                started = time.perf_counter()
                reading = reader.read(Photo.from_array(image, f"render-{seed}"))
                seconds.append(time.perf_counter() - started)
            except BoardNotFoundError:
                new.setdefault("missed", []).append(1)
                continue
            oriented, either = _errors(reading.corners, corners)
            new.setdefault("error", []).append(either)
            new.setdefault("oriented", []).append(oriented < 0.25)
            right = [cell.value == t for cell, t in zip(reading.cells, truth)]
            review = judge(reading.cells, VERDICT.wording, VERDICT.thresholds, overrides=reading.overrides, grid=reading.grid)
            new.setdefault("cells", []).append(sum(right))
            new.setdefault("boards", []).append(all(right))
            if all(right):
                new.setdefault("right_unflagged", []).append(not review.needed)
            else:
                new.setdefault("wrong_flagged", []).append(review.needed)
    report = {}
    for key, s in stats.items():
        n = args.renders
        errors = s.get("error", [])
        row = {
            "found": f"{len(errors)}/{n}",
            "corner error median (pitches)": round(float(np.median(errors)), 3) if errors else None,
            "off by > 1/4 cell": sum(e > 0.25 for e in errors),
            "right way up": f"{sum(s.get('oriented', []))}/{len(errors)}",
        }
        if "cells" in s or "content" in key:
            row["cells right"] = f"{sum(s.get('cells', []))}/{20 * n}"
            row["boards right"] = f"{sum(s.get('boards', []))}/{n}"
            row["right boards unflagged"] = f"{sum(s.get('right_unflagged', []))}/{len(s.get('right_unflagged', []))}"
            row["wrong boards flagged"] = f"{sum(s.get('wrong_flagged', []))}/{len(s.get('wrong_flagged', []))}"
        report[key] = row
    real = {}
    for name in ("board1.jpg", "board2.jpg"):
        if not (REAL / name).is_file():
            continue
        labels = json.loads((REAL / "labels.json").read_text())["images"][name]
        small = cv2.cvtColor(cv2.imread(str(REAL / name)), cv2.COLOR_BGR2RGB)
        image = cv2.resize(small, (small.shape[1] * 3, small.shape[0] * 3), interpolation=cv2.INTER_CUBIC)
        h, w = image.shape[:2]
        whole = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64) - 0.5
        try:
            reading = reader.read(Photo.from_array(image, name))
        except BoardNotFoundError as error:
            real[name] = str(error)
            continue
        oriented, either = _errors(reading.corners, whole)
        truth = [v or "." for row in labels for v in row]
        real[name] = {
            "corner error (pitches, as read / either way up)": [round(oriented, 3), round(either, 3)],
            "cells right": f"{sum(c.value == t for c, t in zip(reading.cells, truth))}/20",
        }
    report["real windows cut to the grid (x3), from the photo alone"] = real
    report["content read seconds, median"] = round(float(np.median(seconds)), 3) if seconds else None
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
