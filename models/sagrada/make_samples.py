"""Render the bundled Sagrada sample photos (``sample_images/sagrada_*.jpg`` + truth ``.json``).

``python -m models.sagrada.make_samples`` rewrites them; seeds are fixed, so the files are
reproducible (seeds 9000+ are used nowhere else).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2

from models.sagrada.render import render

ROOT = Path(__file__).resolve().parents[2]
MAX_BYTES = 390 * 1024
# stem -> (seed, render options)
SAMPLES: dict[str, tuple[int, dict[str, Any]]] = {
    "sagrada_straight_01": (
        9001,
        {"camera": {"tilt_deg": 2.0, "azimuth_deg": 0.0, "roll_deg": 1.5}, "fill": 0.8, "clutter": False, "empty": 1},
    ),
    "sagrada_straight_02": (
        9002,
        {"camera": {"tilt_deg": 5.0, "azimuth_deg": 180.0, "roll_deg": 176.0}, "fill": 0.7, "clutter": False, "empty": 0},
    ),
    "sagrada_tilted_01": (9011, {"camera": {"tilt_deg": 28.0, "azimuth_deg": 90.0, "roll_deg": 3.0}, "fill": 0.75, "empty": 2}),
    "sagrada_tilted_02": (9012, {"camera": {"tilt_deg": 35.0, "azimuth_deg": 250.0, "roll_deg": -10.0}, "fill": 0.7, "empty": 0}),
    "sagrada_tilted_03": (9013, {"camera": {"tilt_deg": 22.0, "azimuth_deg": 10.0, "roll_deg": 95.0}, "fill": 0.75, "empty": 3}),
    "sagrada_cluttered_01": (9021, {"camera": {"tilt_deg": 12.0, "azimuth_deg": 140.0, "roll_deg": 35.0}, "fill": 0.6, "empty": 1}),
    "sagrada_cluttered_02": (9022, {"camera": {"tilt_deg": 18.0, "azimuth_deg": 300.0, "roll_deg": 170.0}, "fill": 0.55, "empty": 0}),
    "sagrada_cluttered_03": (9023, {"camera": {"tilt_deg": 8.0, "azimuth_deg": 45.0, "roll_deg": -120.0}, "fill": 0.6, "empty": 6}),
    "sagrada_rotated_01": (9031, {"camera": {"tilt_deg": 15.0, "azimuth_deg": 0.0, "roll_deg": -60.0}, "fill": 0.7, "empty": 2}),
}


def write_samples(folder: Path = ROOT / "sample_images", quality: int = 88) -> list[Path]:
    """Render every sample into ``folder``; returns the photo paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for stem, (seed, options) in SAMPLES.items():
        sample = render(seed, **options)
        label = dict(sample.label)
        label["players"] = [{**label["players"][0], "name": stem}]
        photo = folder / f"{stem}.jpg"
        bgr = cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR)
        for q in range(quality, 40, -4):  # stay under ~390 KiB
            ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, q])
            if not ok:  # pragma: no cover
                raise RuntimeError(f"{photo}: JPEG encoding failed")
            if len(data) < MAX_BYTES:
                break
        photo.write_bytes(data.tobytes())
        (folder / f"{stem}.json").write_text(json.dumps(label, indent=1) + "\n", encoding="utf-8")
        written.append(photo)
        print(f"{photo.name}: {len(data) / 1024:.0f} KiB, window {label['players'][0]['window']}")
    return written


if __name__ == "__main__":
    write_samples()
