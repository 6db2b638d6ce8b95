"""Sagrada scan benchmark over photos with truth files (prints figures; not a test).

    .venv/bin/python tests/benchmarks/bench_scan_sagrada.py [FOLDER] [--render 50] [--upscale 2.5]

FOLDER holds ``*.jpg`` with same-stem ``.json`` truth (FORMATS.md document, e.g. from ``tablescan synth``);
without it, ``--render N`` held-out renders (seeds 3000000+, never trained on) are written to a
temporary folder first. ``--upscale`` enlarges each photo before saving (2.5 turns the 1600x1200 renders
into 12 MP phone-sized JPEGs). Reports cells right, boards entirely right, median scan time, its ratio
to decoding the same JPEG, and peak memory; then the real windows in ../shared/realdata when present.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scanner import BoardNotFoundError, Scanner  # noqa: E402
from scanner.photo import decode_seconds  # noqa: E402


def render_folder(count: int, folder: Path, upscale: float) -> None:
    """Write ``count`` held-out renders (JPEG + truth) into ``folder``."""
    from models.sagrada.make_dataset import TEST_SEED
    from models.sagrada.render import render

    for seed in range(TEST_SEED, TEST_SEED + count):
        sample = render(seed)
        image = cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR)
        if upscale != 1.0:
            image = cv2.resize(image, None, fx=upscale, fy=upscale, interpolation=cv2.INTER_CUBIC)
        cv2.imwrite(str(folder / f"sagrada_{seed}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        (folder / f"sagrada_{seed}.json").write_text(json.dumps(sample.label))


def bench_folder(folder: Path) -> dict:
    """Scan every photo with a truth file in ``folder``, print the figures and return them."""
    scanner = Scanner()
    photos = sorted(p for p in folder.glob("*.jpg") if p.with_suffix(".json").is_file())
    scanner.scan(photos[0], "sagrada")  # load the models once, outside the timings
    cells = right_cells = boards = right_boards = not_found = 0
    times, ratios, stages = [], [], {}
    for path in photos:
        truth = [v for row in json.loads(path.with_suffix(".json").read_text())["players"][0]["window"] for v in row.split()]
        decode = min(decode_seconds(path) for _ in range(2))
        start = time.perf_counter()
        try:
            result = scanner.scan(path, "sagrada")
        except BoardNotFoundError as error:
            not_found += 1
            cells += 20
            boards += 1
            print(f"  {path.name}: {error}")
            continue
        elapsed = time.perf_counter() - start
        got = [v for row in result.player["window"] for v in row.split()]
        ok = sum(g == t for g, t in zip(got, truth))
        cells += 20
        right_cells += ok
        boards += 1
        right_boards += ok == 20
        if ok < 20:
            print(f"  {path.name}: {20 - ok} cell(s) wrong")
        times.append(elapsed)
        ratios.append(elapsed / decode)
        for stage, seconds in result.seconds.items():
            stages.setdefault(stage, []).append(seconds)
    # Memory in a pass of its own: tracemalloc slows every allocation, so it must not run during the timed scans.
    tracemalloc.start()
    for path in photos[:3]:
        try:
            scanner.scan(path, "sagrada")
        except BoardNotFoundError:
            pass
    _, peak_traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"photos                 {boards} ({not_found} without a window found)")
    print(f"cells right            {right_cells}/{cells} = {100 * right_cells / max(cells, 1):.2f}%")
    print(f"boards entirely right  {right_boards}/{boards} = {100 * right_boards / max(boards, 1):.2f}%")
    if times:
        print(f"median scan time       {1000 * statistics.median(times):.0f} ms")
        print(f"scan / JPEG decode     {statistics.median(ratios):.2f}x (median)")
        print("median stage times     " + ", ".join(f"{k} {1000 * statistics.median(v):.1f} ms" for k, v in stages.items()))
    print(f"peak memory            {peak_rss:.0f} MB resident (process), {peak_traced / 2**20:.0f} MB traced Python/numpy")
    return {
        "photos": boards,
        "not_found": not_found,
        "cells_right": right_cells / max(cells, 1),
        "boards_right": right_boards / max(boards, 1),
        "median_scan_ms": 1000 * statistics.median(times) if times else None,
        "scan_over_decode": statistics.median(ratios) if ratios else None,
        "median_stage_ms": {k: 1000 * statistics.median(v) for k, v in stages.items()},
        "peak_rss_mb": peak_rss,
        "size": list(cv2.imread(str(photos[0])).shape[1::-1]) if photos else None,
    }


def bench_real() -> None:
    """Read the real windows of ../shared/realdata (already cut to the grid) and print cells right."""
    from models.sagrada.evaluate import evaluate_real_dice, evaluate_real_windows
    from scanner.sagrada.reader import SagradaReader

    reader = SagradaReader()
    windows = evaluate_real_windows(reader)
    if windows is None:
        print("real windows: ../shared/realdata not present")
        return
    start = time.perf_counter()
    dice = evaluate_real_dice(reader, fold=1)
    print(f"real windows           {windows['right']}/{windows['cells']} cells right, {windows['dice_right']}/{windows['dice']} dice")
    if dice:
        print(
            f"real dice pip values   {dice['right']}/{dice['dice']} = {100 * dice['accuracy']:.2f}% (held-out fold; {time.perf_counter() - start:.1f} s)"
        )


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description="Sagrada scan benchmark")
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--render", type=int, default=50)
    parser.add_argument("--upscale", type=float, default=1.0)
    parser.add_argument("--save", metavar="KEY", help="store the figures under KEY in models/sagrada/bench.json (the card shows them)")
    args = parser.parse_args()
    if args.folder:
        figures = bench_folder(args.folder)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            render_folder(args.render, Path(tmp), args.upscale)
            figures = bench_folder(Path(tmp))
    bench_real()
    if args.save:
        path = ROOT / "models" / "sagrada" / "bench.json"
        saved = json.loads(path.read_text()) if path.is_file() else {}
        saved[args.save] = figures
        path.write_text(json.dumps(saved, indent=1) + "\n")


if __name__ == "__main__":
    main()
