"""Review screen latency: a cell correction's round trip (write + rescore + whole view), the page, a scan upload.

Run: .venv/bin/python tests/benchmarks/bench_review.py   (prints figures; not a test)
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tablescan.review.app import create_app  # noqa: E402


def timed(action, repeat: int) -> list[float]:
    """Return each call's wall time in milliseconds."""
    times = []
    for index in range(repeat):
        start = time.perf_counter()
        action(index)
        times.append((time.perf_counter() - start) * 1000)
    return times


def line(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    print(f"{label:<46} median {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms   (n={len(times)})")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        client = TestClient(create_app(Path(folder) / "bench.sqlite3"))
        sample = json.loads((ROOT / "sample_images" / "sagrada_game.json").read_text())
        names = [p["name"] for p in sample["players"]] + ["Dee", "Eve", "Fay"]
        view = client.post(
            "/api/games", json={"game": "sagrada", "players": names, "settings": {"public_objectives": sample["public_objectives"]}}
        ).json()
        for player, source in zip(view["players"], sample["players"] * 2):
            cells = [{"cell": f"{r},{c}", "value": v} for r, row in enumerate(source["window"]) for c, v in enumerate(row.split())]
            client.put(f"/api/games/{view['id']}/players/{player['id']}/cells", json={"cells": cells})
        url = f"/api/games/{view['id']}/players/{view['players'][0]['id']}/cells"
        dice = ["R1", "G2", "B3", "Y4", "P5", "R6"]
        print(f"Sagrada, {len(names)} players, full windows, SQLite file on {folder}")
        line(
            "correct one cell (PUT, returns rescored view)",
            timed(lambda i: client.put(url, json={"cell": "3,4", "value": dice[i % 6]}), 60),
        )
        line("game page JSON twin (GET .json)", timed(lambda i: client.get(f"/games/{view['id']}.json"), 60))
        line("game page HTML (GET)", timed(lambda i: client.get(f"/games/{view['id']}"), 30))

        palace = json.loads((ROOT / "sample_images" / "alhambra_02_straight.json").read_text())["players"][0]["palace"]
        cells = [
            {"cell": f"{t['at'][0]},{t['at'][1]}", "value": "fountain" if t.get("tile") == "fountain" else f"{t['type']}:{t['walls']}"}
            for t in palace
        ]
        game = client.post("/api/games", json={"game": "alhambra", "players": ["Ana", "Bo", "Cy"]}).json()
        for player in game["players"]:
            client.put(f"/api/games/{game['id']}/players/{player['id']}/cells", json={"cells": cells})
        url = f"/api/games/{game['id']}/players/{game['players'][0]['id']}/cells"
        print(f"Alhambra, 3 players, {len(palace)}-tile palaces")
        line(
            "correct one tile (PUT, returns rescored view)",
            timed(lambda i: client.put(url, json={"cell": "9,9", "value": "" if i % 2 else "tower:N"}), 40),
        )

        photo = ROOT / "sample_images" / "sagrada_straight_01.jpg"
        if photo.exists():
            data = photo.read_bytes()
            upload = f"/api/games/{view['id']}/players/{view['players'][1]['id']}/photo"
            # each upload differs by one trailing byte, so every one is stored and scanned afresh
            times = timed(lambda i: client.post(upload, files={"photo": ("s.jpg", data + bytes([i]), "image/jpeg")}), 6)
            print(f"Scan upload, {photo.name} ({len(data) / 1e6:.1f} MB); first includes model loading")
            line("upload + verify + store + scan + view", times[1:])
            print(f"{'first upload (models load)':<46} {times[0]:7.1f} ms")


if __name__ == "__main__":
    main()
