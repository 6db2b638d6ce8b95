"""The time of one training step of each network, plain float32 against channels-last + bfloat16.

Run: .venv/bin/python tests/benchmarks/bench_training_step.py   (needs the ``train`` extra)

Prints a markdown table: the median of five steps on one thread (the first of six is a warm-up).
"""

from __future__ import annotations

import time

import torch

from models import fast as fast_module
from models.alhambra.net import LocateNet, TileNet
from models.sagrada.nets import CellNet, FinderNet, RefinerNet


def main() -> None:
    """Print the median time of one training step of each network, plain and fast, on one thread."""
    torch.set_num_threads(1)
    print("| network | batch | float32 ms | channels-last + bf16 ms | speed-up |")
    print("|---|---|---|---|---|")
    for cls, shape in (
        (CellNet, (128, 3, 48, 48)),
        (FinderNet, (32, 3, 128, 128)),
        (RefinerNet, (64, 3, 96, 96)),
        (LocateNet, (16, 3, 240, 320)),
        (TileNet, (128, 3, 64, 64)),
    ):
        times = []
        for fast in (False, True):
            torch.manual_seed(0)
            net = fast_module.prepare(cls()) if fast else cls().train()
            fast_module.BF16 = fast
            optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
            x = torch.rand(*shape)
            runs = []
            for _ in range(6):
                started = time.perf_counter()
                out = fast_module.forward(net, x) if fast else net(x)
                loss = sum(o.float().mean() for o in (out if isinstance(out, tuple) else (out,)))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                runs.append(time.perf_counter() - started)
            times.append(sorted(runs[1:])[2] * 1000)
        print(f"| {cls.__name__} | {shape[0]} | {times[0]:.0f} | {times[1]:.0f} | {times[0] / times[1]:.1f}x |")


if __name__ == "__main__":
    main()
