"""Train every shipped model from scratch, with the fixed seeds of each game's own command.

    python -m models.train                  # Sagrada (finder, refiner, dice, locate) and Alhambra (locate,
                                            # tiles, octagon) at once, then both games' evaluations
    python -m models.train --skip-evaluate  # train and export only

Needs the ``train`` extra (``pip install -e ".[train]"``). Each game's command renders its data,
trains (two one-thread lanes at once; ``models.fast``: channels-last, bfloat16 autocast), calibrates
and exports ``model.onnx`` + ``manifest.json``; this one runs both games' commands at once in fresh
processes (their lanes share the two cores, so no core idles while one game's last lane finishes),
each output line prefixed with its game, then, if both succeeded, runs each game's evaluation, which
measures the exported files and rewrites the model cards. The time to train and export everything is
printed on its own line. Each network still trains on one thread with its own seed, so running the
games together changes no weight.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from models.cli import CommandParser

COMMANDS = ("models.sagrada.train", "models.alhambra.train")
EVALUATIONS = (("models.sagrada.evaluate",), ("models.alhambra.evaluate", "--scan-count", "100"))


def _run(module: str, *args: str) -> int:
    start = time.perf_counter()
    print(f"== python -m {module} {' '.join(args)}".rstrip(), flush=True)
    status = subprocess.call([sys.executable, "-m", module, *args])
    print(f"== {module}: exit {status} after {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return status


def run_together(commands: Sequence[tuple[str, Sequence[str]]]) -> int:
    """Run each ``(label, argv)`` at once, each output line prefixed ``[label]``; wait for all and return the first non-zero exit status, else 0."""
    start = time.perf_counter()

    def relay(label: str, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            print(f"[{label}] {line}", end="", flush=True)

    running = []
    for label, argv in commands:
        print(f"== [{label}] {' '.join(argv)}", flush=True)
        process = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},  # each line as it comes, not in blocks
        )
        thread = threading.Thread(target=relay, args=(label, process))
        thread.start()
        running.append((label, process, thread))
    statuses = []
    for label, process, thread in running:
        thread.join()
        statuses.append(process.wait())
        print(f"== [{label}] exit {statuses[-1]} after {(time.perf_counter() - start) / 60:.1f} min", flush=True)
    return next((status for status in statuses if status), 0)


def main(argv: list[str] | None = None) -> int:
    """Train and export every model, then evaluate them; return the first non-zero exit status, else 0."""
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-evaluate", action="store_true", help="train and export only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    together = [(module.split(".")[1], [sys.executable, "-m", module, "--skip-evaluate"]) for module in COMMANDS]
    if status := run_together(together):
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
