"""Model work per Sagrada board on the transfer sets' photos (prints figures; not a test).

    .venv/bin/python tests/benchmarks/bench_model_work_sagrada.py [--sets composites,composites_walnut,real_windows] [--count 40]

Scans the first ``--count`` photos of each set of ``models.sagrada.transfer`` end to end, as ``tablescan
scan`` does, timing every call into onnxruntime (``OnnxModel.run``): the model work per board that the
issue's budget counts (30 ms). Prints per set the median and 90th-percentile board, the cell crops the
cell model read per board, and the median scan. The composites and the real windows need the real dice
in ``../shared/realdata``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scan_alhambra import clock_models  # noqa: E402

from models.sagrada import composite, transfer  # noqa: E402
from scanner.errors import PhotoError  # noqa: E402
from scanner.photo import Photo  # noqa: E402
from scanner.pipeline import Scanner  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="composites,composites_walnut,real_windows")
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    spent = clock_models()
    scanner = Scanner()
    pool = composite.load_pool() if composite.real_dice_present() else None
    print("| set | photos | model work per board, median / 90th percentile | cell crops read, median / 90th percentile | scan, median |")
    print("|---|---|---|---|---|")
    for name in args.sets.split(","):
        work, crops, scans = [], [], []
        for index in range(args.count):
            try:
                sample = transfer.sample_at(name, index, pool)
            except ValueError as error:
                print(f"{name}: skipped ({error})")
                break
            spent.clear()
            start = time.perf_counter()
            try:
                scanner.scan(Photo.from_array(sample.image_rgb, name=f"{name}-{index}"), "sagrada")
            except PhotoError:
                pass  # a refused photo's model work counts all the same
            scans.append(time.perf_counter() - start)
            work.append(spent["seconds"] * 1000)
            crops.append(spent["sagrada_dice"])
        if work:
            print(
                f"| {name} | {len(work)} | {statistics.median(work):.1f} / {np.percentile(work, 90):.1f} ms | "
                f"{statistics.median(crops):.0f} / {np.percentile(crops, 90):.0f} | {statistics.median(scans) * 1000:.0f} ms |"
            )


if __name__ == "__main__":
    main()
