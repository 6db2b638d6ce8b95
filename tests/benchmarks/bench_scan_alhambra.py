"""Scan a folder of Alhambra photos with truth files and print accuracy, speed and memory.

Run: .venv/bin/python tests/benchmarks/bench_scan_alhambra.py [FOLDER] [--render N] [--megapixels MP]

FOLDER holds ``*.jpg`` photos with same-stem ``.json`` truth documents (as ``sample_images/``
or ``tablescan synth --game alhambra`` write them). Without FOLDER, ``--render N`` held-out
photos (seeds 2,600,000+, never trained on) are rendered into a temporary folder first, at
``--megapixels`` (12 gives 4000x3000 phone-sized photos). Prints tiles right, palaces entirely
right, median scan seconds, the ratio of scan time to a plain decode of the same JPEG
(``scanner.photo.decode_seconds``), the model share of the time (the readers' stages, and every model's
onnxruntime calls alone: the budget's model work per board), and peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import cv2

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scanner import BoardNotFoundError, Scanner  # noqa: E402
from scanner.photo import decode_seconds  # noqa: E402

SEED = 2_600_000


def cells_of(palace: list[dict]) -> dict[tuple[int, int], str]:
    """Palace items -> {at: 'fountain' | 'type:walls'}."""
    return {tuple(i["at"]): "fountain" if i.get("tile") == "fountain" else f"{i['type']}:{i['walls']}" for i in palace}


def render_folder(folder: Path, count: int, megapixels: float) -> None:
    """Render ``count`` held-out photos with truth files into ``folder``."""
    from models.alhambra.render import render

    width = int(round(math.sqrt(megapixels * 1e6 * 4 / 3)))
    height = int(round(width * 3 / 4))
    for index in range(count):
        sample = render(SEED + index, out_size=(width, height))
        ok, data = cv2.imencode(".jpg", cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90])
        (folder / f"alhambra_{SEED + index}.jpg").write_bytes(data.tobytes())
        (folder / f"alhambra_{SEED + index}.json").write_text(json.dumps(sample.label))


def clock_models() -> defaultdict[str, float]:
    """Time every model's onnxruntime calls from now on (``OnnxModel.run`` wrapped): their seconds add up under
    ``"seconds"`` and the images each model read under its folder's name (``"sagrada_dice"``), in the mapping
    returned, which the caller clears before each scan."""
    from scanner.model import OnnxModel

    spent: defaultdict[str, float] = defaultdict(float)
    run = OnnxModel.run

    def timed(self: OnnxModel, batch: Any) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            return run(self, batch)
        finally:
            spent["seconds"] += time.perf_counter() - start
            spent[self.path.parent.name] += len(batch)

    OnnxModel.run = timed  # type: ignore[method-assign]
    return spent


def bench(folder: Path) -> None:
    """Scan every photo with a truth file in ``folder`` and print the figures."""
    photos = sorted(p for p in folder.glob("*.jpg") if p.with_suffix(".json").is_file())
    photos = [p for p in photos if json.loads(p.with_suffix(".json").read_text()).get("game") == "alhambra"]
    if not photos:
        raise SystemExit(f"{folder}: no Alhambra photos with .json truth files")
    scanner = Scanner()
    scanner.scan(photos[0], "alhambra")  # load the models once, outside the timings
    in_models = clock_models()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    right = total = boards = missing = 0
    times, ratios, model_ms, onnx_ms = [], [], [], []
    for photo in photos:
        truth = cells_of(json.loads(photo.with_suffix(".json").read_text())["players"][0]["palace"])
        decode = min(decode_seconds(photo) for _ in range(2))
        in_models.clear()
        start = time.perf_counter()
        try:
            result = scanner.scan(photo, "alhambra")
        except BoardNotFoundError as error:
            missing += 1
            total += len(truth)
            print(f"  {photo.name}: {error}")
            continue
        elapsed = time.perf_counter() - start
        onnx_ms.append(1000 * in_models["seconds"])
        times.append(elapsed)
        ratios.append(elapsed / decode)
        model_ms.append(1000 * (result.seconds.get("locate", 0) + result.seconds.get("classify", 0)))
        got = cells_of(result.player["palace"])
        positions = set(got) | set(truth)
        ok = sum(got.get(p) == truth.get(p) for p in positions)
        right, total = right + ok, total + len(positions)
        boards += ok == len(positions)
        if ok != len(positions):
            print(f"  {photo.name}: {len(positions) - ok} of {len(positions)} tiles wrong")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"photos: {len(photos)} in {folder}")
    print(f"tiles right: {right}/{total} = {right / max(total, 1):.4f}")
    print(f"palaces entirely right: {boards}/{len(photos)} = {boards / len(photos):.3f}   not found: {missing}")
    if times:
        print(f"median scan: {statistics.median(times) * 1000:.0f} ms   median scan/decode ratio: {statistics.median(ratios):.2f}x")
        print(f"median locate+classify (both models, incl. pre/post-processing): {statistics.median(model_ms):.1f} ms")
        ranked = sorted(onnx_ms)
        print(
            f"model work per board (every model's onnxruntime calls): median {statistics.median(ranked):.1f} ms, "
            f"90th percentile {ranked[min(len(ranked) - 1, int(0.9 * len(ranked)))]:.1f} ms"
        )
    print(f"peak resident memory: {peak:.0f} MB (before the timed scans: {rss_before:.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--render", type=int, default=50, help="held-out photos to render when no folder is given")
    parser.add_argument("--megapixels", type=float, default=1.92, help="size of rendered photos (1.92 = 1600x1200)")
    args = parser.parse_args()
    if args.folder:
        bench(args.folder)
        return
    with tempfile.TemporaryDirectory() as tmp:
        render_folder(Path(tmp), args.render, args.megapixels)
        bench(Path(tmp))


if __name__ == "__main__":
    main()
