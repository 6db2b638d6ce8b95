"""``tablescan export-corrections DIR``: the review screen's corrections as a labelled dataset.

Each cell the players corrected after a scan becomes one item: the final (corrected) value is its
label, the value first read is ``read``, with the model that read it. Where the cell has a photo and an outline, a crop of
that outline, rectified to a square, is written beside the index. ``examples`` lists every scanned cell
the database keeps a crop of (corrected or confirmed), that crop exactly as the cell classifier read it,
for ``tablescan adapt --from``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import cv2
import numpy as np
from PIL import Image

from calibration.image import load_image
from scanner.adapt.labels import cell_classifier
from scanner.errors import AdaptationError
from scoring.errors import StateError
from tablescan.review.db import Store, default_db_path, now_text

CROP_SIZE_PX = 96
INDEX_NAME = "index.json"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text) or "empty"


def crop_cell(image_rgb: np.ndarray, polygon: list, size_px: int = CROP_SIZE_PX) -> np.ndarray:
    """Return the cell outlined by ``polygon`` (photo pixels) as a ``size_px`` square RGB crop.

    A four-point outline (TL, TR, BR, BL) is rectified with a perspective warp; any other outline
    is cut by its bounding box and resized.

    Raises:
        ValueError: the outline has fewer than 3 points or lies outside the photo.
    """
    points = np.asarray(polygon, dtype=np.float32).reshape(-1, 2)
    if len(points) < 3:
        raise ValueError(f"polygon: expected at least 3 points, got {len(points)}")
    height, width = image_rgb.shape[:2]
    if len(points) == 4:
        target = np.array([[0, 0], [size_px - 1, 0], [size_px - 1, size_px - 1], [0, size_px - 1]], dtype=np.float32)
        matrix = cv2.getPerspectiveTransform(points, target)
        return cv2.warpPerspective(image_rgb, matrix, (size_px, size_px), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    x0, y0 = np.floor(points.min(axis=0)).astype(int)
    x1, y1 = np.ceil(points.max(axis=0)).astype(int)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
    if x1 <= x0 or y1 <= y0:
        raise ValueError("polygon: lies outside the photo")
    return cv2.resize(image_rgb[y0:y1, x0:x1], (size_px, size_px), interpolation=cv2.INTER_AREA)


def _load_rgb(path: Path) -> np.ndarray:
    """The stored photo decoded as the scanner decoded it (``calibration.image.load_image``), so crops match its pixels."""
    return load_image(path)


def export_corrections(store: Store, out_dir: Path, include_manual: bool = False) -> dict:
    """Write ``out_dir/index.json`` and ``out_dir/crops/<game>/<label>/*.png``; return the index.

    One item per corrected (player, cell, photo): corrections undone back to the first value are left out,
    and so are cells typed by hand where no scanner had read anything (unless ``include_manual``).

    Raises:
        StateError: ``out_dir`` exists and is not a folder, or cannot be written.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise StateError(f"{out_dir}: exists and is not a folder")
    groups: dict[tuple, list[dict]] = {}
    for row in store.corrections():
        groups.setdefault((row["player_id"], row["cell"], row["photo_id"]), []).append(row)
    items = []
    images: dict[str, np.ndarray | None] = {}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for (player_id, cell, _photo_id), rows in groups.items():
            first, last = rows[0], rows[-1]
            if first["old_value"] == last["new_value"]:
                continue
            misread = first["model"] is not None
            if not misread and not include_manual:
                continue
            polygon = next((r["polygon"] for r in rows if r["polygon"]), None)
            item = {
                "id": f"{last['game']}-{player_id}-{_safe(cell)}-{last['id']}",
                "game": last["game"],
                "game_id": last["game_id"],
                "player_id": player_id,
                "cell": cell,
                "kind": "misread" if misread else "entered",
                "label": last["new_value"],
                "read": first["old_value"],
                "confidence": first["confidence"],
                "model": first["model"],
                "photo_sha256": last["photo_sha256"],
                "polygon": polygon,
                "corrected_at": last["created_at"],
                "crop": None,
            }
            sha = last["photo_sha256"]
            if sha and polygon:
                if sha not in images:
                    path = store.photo_path(store.photo_by_sha(sha))
                    images[sha] = _load_rgb(path) if path.exists() else None
                image = images[sha]
                if image is not None:
                    try:
                        crop = crop_cell(image, polygon)
                    except ValueError:
                        crop = None
                    if crop is not None:
                        relative = Path("crops") / last["game"] / _safe(last["new_value"]) / f"{item['id']}.png"
                        (out_dir / relative).parent.mkdir(parents=True, exist_ok=True)
                        Image.fromarray(crop).save(out_dir / relative)
                        item["crop"] = relative.as_posix()
            items.append(item)
        examples = _export_examples(store, out_dir)
        index = {
            "about": "Cells corrected in tablescan review: label is the corrected value, read the value first recorded. "
            "examples: every scanned cell's crop as the cell classifier read it, labelled with the cell's value now; "
            "teaches: what that value teaches the classifier (a Sagrada empty cell on a known card: '.' and the print there).",
            "exported_at": now_text(),
            "database": str(store.path),
            "crop_size_px": CROP_SIZE_PX,
            "count": len(items),
            "items": items,
            "examples": examples,
        }
        (out_dir / INDEX_NAME).write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        raise StateError(f"{out_dir}: cannot write the dataset ({error.strerror or error})") from None
    return index


def cell_teaches(store: Store, row: dict, fields: dict[int, dict[int, dict]]) -> str:
    """What a stored example's label teaches the classifier's heads: the label as its game's ``cell_label`` reads it
    with the player's fields (a Sagrada empty cell on a known pattern card: ``.`` and the print there).

    ``fields`` caches each game's players' fields (game id -> player id -> fields) between calls.
    """
    try:
        label = cell_classifier(row["game"]).cell_label
    except AdaptationError:  # a game whose cells no classifier reads
        label = None
    if label is None:
        return str(row["label"])
    game_id = int(row["game_id"])
    if game_id not in fields:
        fields[game_id] = {int(player["id"]): player["fields"] for player in store.players(game_id)}
    return label(str(row["label"]), str(row["cell"]), fields[game_id].get(int(row["player_id"]), {}))


def _export_examples(store: Store, out_dir: Path) -> list[dict]:
    """Write every stored, labelled example's crop (as the classifier read it) to ``examples/``, with the patches its
    game's part reader read beside it (``ID.part.png``); return their entries."""
    entries = []
    fields: dict[int, dict[int, dict]] = {}
    for row in store.examples():
        if row["label"] is None:
            continue
        relative = Path("examples") / row["game"] / _safe(row["label"]) / f"{row['id']}.png"
        (out_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / relative).write_bytes(bytes(row["crop"]))
        part = None
        if row.get("part"):  # the patches the game's part reader read (an Alhambra tile's octagon), side by side
            part = relative.with_suffix(".part.png")
            (out_dir / part).write_bytes(bytes(row["part"]))
        entries.append(
            {
                "id": int(row["id"]),
                "game": row["game"],
                "game_id": row["game_id"],
                "player_id": row["player_id"],
                "cell": row["cell"],
                "label": row["label"],
                "teaches": cell_teaches(store, row, fields),
                "read": row["read_value"],
                "corrected": row["label"] != row["read_value"],
                "confidence": row["confidence"],
                "model": row["model"],
                "model_sha256": row["model_sha256"],
                "photo_sha256": row["photo_sha256"],
                "origin": row["origin"],
                "crop": relative.as_posix(),
                "part": None if part is None else part.as_posix(),
            }
        )
    return entries


@click.command("export-corrections")
@click.argument("out_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="review database (default: the one tablescan review uses).",
)
@click.option("--include-manual", is_flag=True, help="also list cells typed in by hand where no scanner reading existed (no crops).")
def export_corrections_command(out_dir: Path, db_path: Path | None, include_manual: bool) -> None:
    """Write the review screen's corrected cells to DIR as a labelled dataset (index.json + crops)."""
    path = db_path or default_db_path()
    if not path.exists():
        raise StateError(f"{path}: no review database here; run tablescan review first or pass --db")
    index = export_corrections(Store(path), out_dir, include_manual=include_manual)
    crops = sum(1 for item in index["items"] if item["crop"])
    click.echo(
        f"tablescan: wrote {index['count']} corrected cells ({crops} with crops) and {len(index['examples'])} "
        f"labelled cell crops to {out_dir / INDEX_NAME}"
    )
