"""A training step with its augmentation, as the allocator returns freed blocks to the system and as it keeps them.

Run: .venv/bin/python tests/benchmarks/bench_freed_memory.py   (needs the ``train`` extra)

Each network's step (its game's augmentation of a random batch of the training size, forward,
backward, optimiser) runs in a fresh process on one thread, once with glibc's defaults and once
after ``models.fast.keep_freed_memory``. Prints a markdown table: the median of seven steps (the
first of eight is a warm-up) and the minor page faults per step.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

# network -> (augmentation, batch shape)
STEPS = {
    "sagrada CellNet": ("sagrada", (128, 3, 48, 48)),
    "sagrada RefinerNet": ("sagrada", (64, 3, 96, 96)),
    "sagrada LocateNet": ("sagrada", (16, 3, 240, 320)),
    "alhambra TileNet": ("alhambra", (128, 3, 64, 64)),
    "alhambra OctagonNet": ("alhambra-octagon", (256, 3, 48, 48)),
    "alhambra LocateNet": ("alhambra", (16, 3, 240, 320)),
}


def measure(name: str, keep: bool) -> dict[str, float]:
    """Time one network's step in this process; ``keep``: keep freed memory first."""
    import torch

    from models import fast
    from models.alhambra import net as alhambra_nets
    from models.alhambra import train as alhambra_train
    from models.sagrada import nets as sagrada_nets
    from models.sagrada import train as sagrada_train

    if keep and not fast.keep_freed_memory():
        raise SystemExit("this C library does not take mallopt settings (not glibc)")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    augment, shape = STEPS[name]
    game, _, cls = name.partition(" ")
    net = fast.prepare(getattr(sagrada_nets if game == "sagrada" else alhambra_nets, cls)())
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    batch = torch.rand(*shape)
    runs, faults = [], []
    for _ in range(8):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        started = time.perf_counter()
        if augment == "sagrada":
            x = sagrada_train._colour_jitter(batch, generator)
        elif augment == "alhambra":
            x = alhambra_train._augment_images(batch, generator)
        else:
            x = alhambra_train._patch_augment(batch, generator)
        out = fast.forward(net, x)
        loss = sum(o.float().mean() for o in (out if isinstance(out, tuple) else (out,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        runs.append(time.perf_counter() - started)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return {"ms": sorted(runs[1:])[3] * 1000, "faults": sorted(faults[1:])[3]}


def main() -> None:
    """Print each network's step time and page faults with the allocator's defaults and with freed memory kept."""
    if len(sys.argv) == 3:  # a child: one network, one setting
        print(json.dumps(measure(sys.argv[1], sys.argv[2] == "keep")))
        return
    print("| network | batch | defaults ms | kept ms | speed-up | page faults per step: defaults -> kept |")
    print("|---|---|---|---|---|---|")
    for name, (_, shape) in STEPS.items():
        figures = [
            json.loads(subprocess.run([sys.executable, __file__, name, setting], check=True, capture_output=True, text=True).stdout)
            for setting in ("defaults", "keep")
        ]
        plain, kept = figures
        print(
            f"| {name} | {shape[0]} | {plain['ms']:.0f} | {kept['ms']:.0f} | {plain['ms'] / kept['ms']:.2f}x "
            f"| {plain['faults']:.0f} -> {kept['faults']:.0f} |"
        )


if __name__ == "__main__":
    main()
