"""Train every shipped model from scratch, with the fixed seeds of each game's own command.

    python -m models.train                  # Sagrada (finder, refiner, dice), then Alhambra (locate, tiles),
                                            # then both games' evaluations (model cards, figures)
    python -m models.train --skip-evaluate  # train and export only

Needs the ``train`` extra (``pip install -e ".[train]"``). Each game's command renders its data,
trains (two one-thread lanes at once; ``models.fast``: channels-last, bfloat16 autocast), calibrates
and exports ``model.onnx`` + ``manifest.json``; this one runs them in turn in fresh processes and stops
at the first failure, then runs each game's evaluation, which measures the exported files and
rewrites the model cards. The time to train and export everything is printed on its own line.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

COMMANDS = ("models.sagrada.train", "models.alhambra.train")
EVALUATIONS = (("models.sagrada.evaluate",), ("models.alhambra.evaluate", "--scan-count", "100"))


def _run(module: str, *args: str) -> int:
    start = time.perf_counter()
    print(f"== python -m {module} {' '.join(args)}".rstrip(), flush=True)
    status = subprocess.call([sys.executable, "-m", module, *args])
    print(f"== {module}: exit {status} after {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    """Train and export every model, then evaluate them; return the first non-zero exit status, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-evaluate", action="store_true", help="train and export only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    for module in COMMANDS:
        if status := _run(module, "--skip-evaluate"):
            return status
    print(f"== every model trained and exported in {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    if args.skip_evaluate:
        return 0
    evaluated = time.perf_counter()
    for command in EVALUATIONS:
        if status := _run(*command):
            return status
    print(
        f"== evaluated in {(time.perf_counter() - evaluated) / 60:.1f} min; {(time.perf_counter() - start) / 60:.1f} min in all", flush=True
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
