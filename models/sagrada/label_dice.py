"""Label the colours of the real loose dice (``../shared/realdata/dice-nellbyler-d6``), semi-automatically.

Each boxed die gets colour statistics of its body (the inner part of its box, pips left out: the
pixels are split in two by k-means in Lab and the larger group is the body), a proposed label from
the body's hue, saturation and lightness, and from its pips' look (white pips or not). The
proposals were looked at as contact sheets (``--sheets DIR``, one per label, outside the repo) and
every mistake seen was written into ``CORRECTIONS`` below; ``--write`` then writes
``real_dice_colours.json`` beside this file: labels only, keyed by photo file and box index.

Labels: ``R Y G B P`` (Sagrada's colours, white pips) and ``other`` (black, white or marbled dice,
dice whose pips are not white, and dice whose colour could not be told).

``python -m models.sagrada.label_dice --sheets /tmp/dice_sheets`` then ``--write``.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from models.cli import CommandParser

HERE = Path(__file__).resolve().parent
REALDATA = HERE.parents[2] / "shared" / "realdata"
FOLDER = REALDATA / "dice-nellbyler-d6"
LABELS_FILE = HERE / "real_dice_colours.json"
LABELS = ("R", "Y", "G", "B", "P", "other")

# looked at on the contact sheets: die number (its place in ``load_boxes()``: photos by name, boxes in order) -> label
CORRECTIONS: dict[int, str] = {
    # k-means took the pips for the body, or the hue rule missed
    **{key: "R" for key in (967, 539, 139, 1007, 661, 683, 848, 177, 253)},
    **{key: "P" for key in (1111, 84)},
    **{key: "B" for key in (1391,)},
    # yellow pips on red, red pips on marbled blue
    **{key: "other" for key in (691, 239, 1004, 828, 396, 14, 420)},
    # seen again on the colour sheets of the cut-out dice (2026-12-03): red pips on a marbled blue die
    # and on two teal ones
    **{key: "other" for key in (53, 68, 728)},
}
# pip values the photos' own annotations got wrong, looked at by eye where the cell model read another
# value at 100% (2026-12-03): die number -> the value on its top face
VALUE_CORRECTIONS: dict[int, int] = {22: 3, 651: 3, 986: 4, 1222: 3, 1476: 5}


def load_boxes() -> list[tuple[str, int, tuple[float, float, float, float], int]]:
    """Every boxed die as (photo file, box index, box in pixels (x0, y0, x1, y1), pip value), photos by name.

    Raises:
        FileNotFoundError: the dice photos are not in ``../shared/realdata``.
    """
    images = json.loads((FOLDER / "annotations.json").read_text())["images"]
    out = []
    for item in sorted(images, key=lambda it: it["file"]):
        w, h = item["width"], item["height"]
        for index, die in enumerate(item["dice"]):
            box = (die["xmin"] * w, die["ymin"] * h, die["xmax"] * w, die["ymax"] * h)
            out.append((item["file"], index, box, int(die["value"])))
    return out


def body_and_pips(patch_rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Split a die's inner patch into body and pip pixels (k-means, 2 groups in Lab): mean Lab of each and the pips' share."""
    lab = cv2.cvtColor(patch_rgb, cv2.COLOR_RGB2LAB).reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    _, labels, _ = cv2.kmeans(lab, 2, None, criteria, 3, cv2.KMEANS_PP_CENTERS)  # type: ignore[call-overload]  # None: no initial labels
    labels = labels.ravel()
    big = int(np.bincount(labels, minlength=2).argmax())
    body = np.median(lab[labels == big], axis=0)
    pips = np.median(lab[labels != big], axis=0) if (labels != big).any() else body
    return body, pips, float((labels != big).mean())


def features(image_rgb: np.ndarray, box: tuple[float, float, float, float]) -> dict[str, float]:
    """Colour statistics of the die in ``box``: body Lab, hue/saturation/value, pips' Lab and share."""
    x0, y0, x1, y1 = box
    cx, cy, half = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) / 2
    inner = half * 0.55  # the die's top face inside its loose box
    a, b = int(round(cx - inner)), int(round(cy - inner))
    patch = image_rgb[max(b, 0) : int(round(cy + inner)), max(a, 0) : int(round(cx + inner))]
    body, pips, share = body_and_pips(patch)
    rgb = cv2.cvtColor(body.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_LAB2RGB)
    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV).reshape(3).astype(float)
    return {
        "L": float(body[0]),
        "a": float(body[1]) - 128,
        "b": float(body[2]) - 128,
        "hue": hsv[0] * 2,
        "sat": hsv[1] / 255,
        "val": hsv[2] / 255,
        "pip_L": float(pips[0]),
        "pip_a": float(pips[1]) - 128,
        "pip_b": float(pips[2]) - 128,
        "pip_chroma": float(np.hypot(pips[1] - 128, pips[2] - 128)),
        "pip_share": share,
    }


def propose(f: dict[str, float]) -> str:
    """A first label from the statistics (looked over by eye afterwards).

    The photos hold these kinds of dice: red, green, navy blue and purple (bright and dark) with white
    pips; red and marbled green with yellow pips; marbled blue and black with red pips; black with
    white pips; white, yellow and bronze with black pips. Only the first four are Sagrada's.
    """
    hue, a, b = f["hue"], f["a"], f["b"]
    white_pips = f["pip_L"] > f["L"] + 40 and f["pip_b"] < 28
    if not white_pips or f["sat"] < 0.15:
        return "other"
    if (hue < 20 or hue >= 340) and a > 12 and b > -1:
        return "R"  # bright red, and dark wine-red marbled
    if 110 <= hue < 170 and a < -30 and b > 12:
        return "G"
    if 226 <= hue < 255 and a > 3 and b < -10:
        return "B"
    if 265 <= hue < 320 and a > 3.5 and b < -2.5:
        return "P"  # bright purple, and dark purple close to black
    if 40 <= hue < 70 and b > 40:
        return "Y"
    return "other"


def crop_for_sheet(image_rgb: np.ndarray, box: tuple[float, float, float, float], side: int = 64) -> np.ndarray:
    """The die's box, square, resized to ``side`` px."""
    x0, y0, x1, y1 = box
    cx, cy, half = (x0 + x1) / 2, (y0 + y1) / 2, max(x1 - x0, y1 - y0) / 2
    src = np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half]], np.float32)
    dst = np.array([[0, 0], [side, 0], [side, side]], np.float32)
    return cv2.warpAffine(image_rgb, cv2.getAffineTransform(src, dst), (side, side), borderMode=cv2.BORDER_REPLICATE)


def write_sheets(out: Path, rows: list[dict], crops: list[np.ndarray], per_sheet: int = 120, cols: int = 12) -> None:
    """Contact sheets per label, dice sorted by hue, each tile numbered with its row in ``rows``."""
    out.mkdir(parents=True, exist_ok=True)
    side = crops[0].shape[0]
    for label in LABELS:
        chosen = sorted((k for k, r in enumerate(rows) if r["label"] == label), key=lambda k: rows[k]["hue"])
        for sheet, start in enumerate(range(0, len(chosen), per_sheet)):
            part = chosen[start : start + per_sheet]
            lines = (len(part) + cols - 1) // cols
            canvas = np.full((lines * (side + 12), cols * side, 3), 255, np.uint8)
            for n, k in enumerate(part):
                y, x = divmod(n, cols)
                canvas[y * (side + 12) : y * (side + 12) + side, x * side : (x + 1) * side] = crops[k]
                cv2.putText(canvas, str(k), (x * side + 2, y * (side + 12) + side + 10), cv2.FONT_HERSHEY_PLAIN, 0.8, (0, 0, 0), 1)
            Image.fromarray(canvas).save(out / f"{label}_{sheet}.png")


def main(argv: list[str] | None = None) -> None:
    """Command line: propose labels, write contact sheets, write the labels file."""
    parser = CommandParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sheets", type=Path, help="write contact sheets per label into this folder (outside the repo)")
    parser.add_argument("--write", action="store_true", help=f"write {LABELS_FILE.name}")
    args = parser.parse_args(argv)
    rows: list[dict] = []
    crops: list[np.ndarray] = []
    cache: dict[str, np.ndarray] = {}
    for row, (file, index, box, value) in enumerate(load_boxes()):
        if file not in cache:
            cache.clear()
            cache[file] = np.asarray(Image.open(FOLDER / "images" / file).convert("RGB"))
        f = features(cache[file], box)
        key = f"{file}#{index}"
        label = CORRECTIONS.get(row, propose(f))
        rows.append({"key": key, "file": file, "box": index, "value": VALUE_CORRECTIONS.get(row, value), "label": label, **f})
        if args.sheets:
            crops.append(crop_for_sheet(cache[file], box))
    counts = {label: sum(r["label"] == label for r in rows) for label in LABELS}
    print(f"{len(rows)} dice: {counts}")
    if args.sheets:
        write_sheets(args.sheets, rows, crops)
        (args.sheets / "rows.json").write_text(json.dumps(rows))
    if args.write:
        labels: dict[str, list[str]] = {}
        values: dict[str, dict[str, int]] = {}
        for row, r in enumerate(rows):
            labels.setdefault(str(r["file"]), []).append(str(r["label"]))
            if row in VALUE_CORRECTIONS:
                values.setdefault(str(r["file"]), {})[str(r["box"])] = VALUE_CORRECTIONS[row]
        document = {
            "about": (
                "Colour of every boxed die in ../shared/realdata/dice-nellbyler-d6 (annotations.json), per photo "
                "file, in box order. R Y G B P: Sagrada's colours with white pips; other: black, white or marbled "
                "dice, pips not white, or colour not told (R includes dark wine-red marbled dice, P dark purple ones, "
                "B navy ones; no yellow die here has white pips). Labelled semi-automatically by models/sagrada/label_dice.py "
                "(body colour by k-means in Lab, proposed from hue, then every contact sheet looked at by eye and "
                "the mistakes corrected in its CORRECTIONS). values: the pip values annotations.json got wrong "
                "(photo file -> box index -> the value on the top face, looked at by eye; its VALUE_CORRECTIONS). "
                "Photos (c) 2019 Nell Byler, BSD-3-Clause; no pixels here."
            ),
            "labels_in_use": list(LABELS),
            "counts": counts,
            "values": values,
            "images": labels,
        }
        head = json.dumps({k: v for k, v in document.items() if k != "images"}, indent=1)[:-2]
        lines = [f"  {json.dumps(file)}: {json.dumps(dice)}" for file, dice in labels.items()]  # one line per photo
        text = head + ',\n "images": {\n' + ",\n".join(lines) + "\n }\n}"
        LABELS_FILE.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {LABELS_FILE}")


if __name__ == "__main__":
    main()
