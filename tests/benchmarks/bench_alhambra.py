"""Time to validate and score a 6-player final round with 25-tile palaces (goal: under 5 ms).

Run: .venv/bin/python tests/benchmarks/bench_alhambra.py [--repeats N]

Six 25-tile palaces need 150 tiles and the game has 54, so each palace is grown from the
full tile set on its own: the validator then also reports (and pays for) tile overuse.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from scoring.alhambra import AlhambraPlayer, AlhambraState, generate_palace, score, validate


def final_round(seed: int, size: int = 25, players: int = 6) -> AlhambraState:
    """A final-round state with ``players`` palaces of ``size`` building tiles each."""
    rng = random.Random(seed)
    members = tuple(AlhambraPlayer(f"P{index}", generate_palace(rng, size), (), 40, {"denar": index}) for index in range(players))
    return AlhambraState(3, members)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--games", type=int, default=10)
    args = parser.parse_args()
    states = [final_round(seed) for seed in range(args.games)]
    for state in states:  # warm up
        score(state)
    for label, job in (("validate", validate), ("validate+score", score)):
        times = []
        for _ in range(args.repeats):
            for state in states:
                start = time.perf_counter()
                job(state)
                times.append(time.perf_counter() - start)
        times.sort()
        print(
            f"{label:15s} 6 players x 25 tiles: median {statistics.median(times) * 1e3:.2f} ms, "
            f"p95 {times[int(len(times) * 0.95)] * 1e3:.2f} ms, max {times[-1] * 1e3:.2f} ms "
            f"({len(times)} runs over {len(states)} games)"
        )
    print("goal: validate+score median under 5 ms (score() runs validate() itself)")


if __name__ == "__main__":
    main()
