"""Sagrada core speed and pattern-identification accuracy (prints figures; not a test).

Run: .venv/bin/python tests/benchmarks/bench_sagrada.py
"""

from __future__ import annotations

import random
import time

from scoring.sagrada import PATTERNS, PRINTS, Die, generate, generate_window, identify_patterns, score, validate

CONFUSE = {"B": "P", "P": "B", "G": "B", "R": "P", "Y": "G"}


def _timed(label: str, runs: int, work) -> None:
    start = time.perf_counter()
    for index in range(runs):
        work(index)
    elapsed = (time.perf_counter() - start) / runs
    print(f"{label:<46} {elapsed * 1000:8.3f} ms")


def _observe(rng: random.Random, window, pattern, *, prints: bool, color_error: float, print_error: float, value_error: float = 0.0):
    observed = []
    for r, row in enumerate(window):
        line = []
        for c, die in enumerate(row):
            if die is None:
                mark = pattern.grid[r][c]
                if not prints:
                    line.append(None)
                elif rng.random() < print_error:
                    line.append(rng.choice([p for p in PRINTS if p != mark]))
                else:
                    line.append(mark)
            else:
                color = CONFUSE[die.color] if rng.random() < color_error else die.color
                value = rng.randint(1, 6) if rng.random() < value_error else die.value
                line.append(Die(color, value))
        observed.append(line)
    return observed


def _accuracy(label: str, trials: int, empty: int, **noise) -> None:
    rng = random.Random(2026)
    hits = 0
    top3 = 0
    for _ in range(trials):
        name = rng.choice(sorted(PATTERNS))
        window = generate_window(rng, PATTERNS[name], empty)
        ranked = [n for n, _ in identify_patterns(_observe(rng, window, PATTERNS[name], **noise))]
        hits += ranked[0] == name
        top3 += name in ranked[:3]
    print(f"{label:<46} top-1 {hits / trials:6.1%}  top-3 {top3 / trials:6.1%}  ({trials} windows)")


def main() -> None:
    games = [generate(random.Random(seed), players=4) for seed in range(200)]
    print("speed (per call)")
    _timed("generate_window(pattern, empty=0)", 300, lambda i: generate_window(random.Random(i), PATTERNS["Water of Life"]))
    _timed("generate(players=4)", 100, lambda i: generate(random.Random(i), players=4))
    _timed("validate(4 players)", 200, lambda i: validate(games[i]))
    _timed("score(4 players) + to_json", 200, lambda i: score(games[i]).to_json())
    _timed("score(4 players) + to_text", 200, lambda i: score(games[i]).to_text())
    observed = [list(row) for row in PATTERNS["Virtus"].grid]
    _timed("identify_patterns (20 prints)", 300, lambda i: identify_patterns(observed))
    print()
    print("pattern identification accuracy")
    _accuracy("full window, dice read right", 400, 0, prints=True, color_error=0.0, print_error=0.0)
    _accuracy("full window, 25% dice colours misread", 400, 0, prints=True, color_error=0.25, print_error=0.0)
    _accuracy("2 empty cells with prints, dice right", 400, 2, prints=True, color_error=0.0, print_error=0.0)
    _accuracy("2 empty, 25% colours, 5% prints misread", 400, 2, prints=True, color_error=0.25, print_error=0.05)
    _accuracy("2 empty cells, prints not read", 400, 2, prints=False, color_error=0.0, print_error=0.0)
    _accuracy("full window, 50% colours + 10% values misread", 400, 0, prints=True, color_error=0.5, print_error=0.0, value_error=0.1)
    _accuracy("12 empty cells with prints, dice right", 400, 12, prints=True, color_error=0.0, print_error=0.0)


if __name__ == "__main__":
    main()
