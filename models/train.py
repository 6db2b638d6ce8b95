"""Train every shipped model from scratch, with the fixed seeds of each game's own command.

    python -m models.train            # Sagrada (finder, refiner, dice), then Alhambra (locate, tiles)

Needs the ``train`` extra (``pip install -e ".[train]"``). Each game's command renders its data,
trains, calibrates, exports ``model.onnx`` + ``manifest.json`` and rewrites its model card; this one
runs them in turn in fresh processes (so each gets the machine's cores to itself) and stops at the
first failure.
"""

from __future__ import annotations

import subprocess
import sys
import time

COMMANDS = ("models.sagrada_dice.train", "models.alhambra_tiles.train")


def main() -> int:
    """Run each game's training command; return the first non-zero exit status, else 0."""
    for module in COMMANDS:
        start = time.perf_counter()
        print(f"== python -m {module}", flush=True)
        status = subprocess.call([sys.executable, "-m", module])
        print(f"== {module}: exit {status} after {(time.perf_counter() - start) / 60:.1f} min", flush=True)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
