"""Model work per Sagrada board on the transfer sets' photos (prints figures; not a test).

    .venv/bin/python tests/benchmarks/bench_model_work_sagrada.py [--sets composites,composites_walnut,real_windows] [--count 40]

Scans the first ``--count`` photos of each set of ``models.sagrada.transfer`` end to end, as ``tablescan
scan`` does, timing every call into onnxruntime (``OnnxModel.run``): the model work per board that the
issue's budget counts (30 ms). Prints per set the median and 90th-percentile board, the cell crops the
cell model read per board, and the median scan. With ``--by-stage``, also where those crops were read:
the median board's crops per stage of the reader (``STAGES``: reading a grid, judging a retried grid,
the polish's first looks), and what share of them repeat a crop the same scan had read already.
The composites and the real dice windows need the real dice in ``../shared/realdata``.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

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

# The reader's methods that read cell crops, innermost first: a crop counts under the first of these on its call stack.
STAGES = (
    ("_first_look_certainties", "polish: first looks"),
    ("_cell_certainty", "judging a retried grid"),
    ("_read_on", "reading a grid"),
)
OTHER = "elsewhere"


def stage_of_call() -> str:
    """The ``STAGES`` name of the reader method on the current call stack that reads crops (``OTHER`` where none)."""
    names = {method: stage for method, stage in STAGES}
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in names:
            return names[frame.f_code.co_name]
        frame = frame.f_back
    return OTHER


def count_cell_crops(by_stage: Counter[str], seen: Counter[bytes]) -> None:
    """From now on, count each crop the cell model reads under its stage (``stage_of_call``) and by its bytes' digest in ``seen``,
    in the counters given, which the caller clears before each scan."""
    from scanner.model import OnnxModel

    run = OnnxModel.run

    def counted(self: OnnxModel, batch: Any) -> dict[str, Any]:
        if self.path.parent.name == "sagrada_dice":
            by_stage[stage_of_call()] += len(batch)
            seen.update(hashlib.blake2b(np.ascontiguousarray(crop).tobytes(), digest_size=16).digest() for crop in np.asarray(batch))
        return run(self, batch)

    OnnxModel.run = counted  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="composites,composites_walnut,real_windows")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--by-stage", action="store_true", help="also print the cell crops read per stage of the reader")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    spent = clock_models()
    by_stage: Counter[str] = Counter()
    seen: Counter[bytes] = Counter()
    if args.by_stage:  # wrapped round the clock, so that its counting is not timed as model work
        count_cell_crops(by_stage, seen)
    scanner = Scanner()
    pool = composite.load_pool() if composite.real_dice_present() else None
    print("| set | photos | model work per board, median / 90th percentile | cell crops read, median / 90th percentile | scan, median |")
    print("|---|---|---|---|---|")
    stages: dict[str, list[dict[str, int]]] = {}
    for name in args.sets.split(","):
        work, crops, scans = [], [], []
        stages[name] = []
        for index in range(args.count):
            try:
                sample = transfer.sample_at(name, index, pool)
            except ValueError as error:
                print(f"{name}: skipped ({error})")
                break
            spent.clear()
            by_stage.clear()
            seen.clear()
            start = time.perf_counter()
            try:
                scanner.scan(Photo.from_array(sample.image_rgb, name=f"{name}-{index}"), "sagrada")
            except PhotoError:
                pass  # a refused photo's model work counts all the same
            scans.append(time.perf_counter() - start)
            work.append(spent["seconds"] * 1000)
            crops.append(spent["sagrada_dice"])
            stages[name].append({**by_stage, "repeated": sum(seen.values()) - len(seen)})
        if work:
            print(
                f"| {name} | {len(work)} | {statistics.median(work):.1f} / {np.percentile(work, 90):.1f} ms | "
                f"{statistics.median(crops):.0f} / {np.percentile(crops, 90):.0f} | {statistics.median(scans) * 1000:.0f} ms |"
            )

    if args.by_stage:
        print_stages(stages)


def print_stages(stages: dict[str, list[dict[str, int]]]) -> None:
    """The table of cell crops per board by stage: each stage's median and 90th percentile over a set's boards."""
    names = [stage for _, stage in STAGES] + [OTHER, "repeated"]
    print()
    print("| set | " + " | ".join(f"{name}, median / 90th percentile" for name in names) + " |")
    print("|---|" + "---|" * len(names))
    for set_name, boards in stages.items():
        if not boards:
            continue
        cells = []
        for name in names:
            counts = [board.get(name, 0) for board in boards]
            cells.append(f"{statistics.median(counts):.0f} / {np.percentile(counts, 90):.0f}")
        print(f"| {set_name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
