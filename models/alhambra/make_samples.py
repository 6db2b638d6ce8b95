"""Write the bundled Alhambra sample photos: ``sample_images/alhambra_*.jpg`` with truth ``.json``.

    python -m models.alhambra.make_samples

Seeds 3,000,000+ (never used for training, calibration or evaluation). Straight, tilted and
cluttered shots (the palace framed to fill ~80% of the short side, the cluttered ones at random),
landscape and portrait, each JPEG ~1600 px on the long side and under 400 KB.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2

from models.alhambra.render import render

OUT = Path(__file__).resolve().parents[2] / "sample_images"
SEED = 3_000_000
# (stem, palace tiles, camera or None for random, clutter, out_size)
SHOTS = (
    ("alhambra_01_straight", 12, {"tilt_deg": 2.0, "azimuth_deg": 0.0, "roll_deg": 0.0}, False, (1600, 1200)),
    ("alhambra_02_straight", 20, {"tilt_deg": 4.0, "azimuth_deg": 90.0, "roll_deg": 3.0}, False, (1600, 1200)),
    ("alhambra_03_tilted", 16, {"tilt_deg": 32.0, "azimuth_deg": 30.0, "roll_deg": 20.0}, False, (1600, 1200)),
    ("alhambra_04_tilted", 22, {"tilt_deg": 38.0, "azimuth_deg": 200.0, "roll_deg": -60.0}, True, (1600, 1200)),
    ("alhambra_05_rotated", 14, {"tilt_deg": 15.0, "azimuth_deg": 120.0, "roll_deg": 135.0}, True, (1600, 1200)),
    ("alhambra_06_cluttered", 18, None, True, (1600, 1200)),
    ("alhambra_07_cluttered", 9, None, True, (1600, 1200)),
    ("alhambra_08_portrait", 15, {"tilt_deg": 20.0, "azimuth_deg": 300.0, "roll_deg": 90.0}, True, (1200, 1600)),
    ("alhambra_09_large", 25, None, True, (1600, 1200)),
    ("alhambra_10_small", 4, None, True, (1600, 1200)),
)


def main() -> None:
    """Render every sample shot and write photo + truth."""
    OUT.mkdir(exist_ok=True)
    for index, (stem, tiles, camera, clutter, size) in enumerate(SHOTS):
        fill = None if stem.endswith("cluttered") else 0.8
        sample = render(SEED + index, size=tiles, camera=camera, clutter=clutter, out_size=size, fill=fill)
        quality = 90
        while True:
            ok, data = cv2.imencode(".jpg", cv2.cvtColor(sample.image_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
            if len(data) < 390_000 or quality <= 60:
                break
            quality -= 5
        (OUT / f"{stem}.jpg").write_bytes(data.tobytes())
        label = dict(sample.label)
        label["players"] = [dict(label["players"][0], name=stem)]
        (OUT / f"{stem}.json").write_text(json.dumps(label, indent=1) + "\n", encoding="utf-8")
        print(f"{stem}.jpg: {len(data) // 1024} KiB, {len(label['players'][0]['palace'])} tiles")


if __name__ == "__main__":
    main()
