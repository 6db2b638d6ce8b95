"""Examples from corrected photos (re-read, cells matched by centre) and from stored or exported crops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scanner.adapt.examples import ExampleSet, examples_from_crops
from scanner.adapt.labels import CLASSIFIERS, cell_classifier
from scanner.errors import AdaptationError
from scoring.errors import TableError


@dataclass(frozen=True)
class LabelledPhoto:
    """A photo with its board corners and the players' final value per cell (by centre, full-photo px)."""

    source: str | Path
    game: str
    corners: tuple[tuple[float, float], ...] | None
    cells: tuple[tuple[tuple[float, float], str], ...]
    group: int
    name: str | None = None
    player_id: int | None = None


def _centre_and_size(polygon: Sequence[Sequence[float]], scale: float) -> tuple[np.ndarray, float]:
    points = np.asarray(polygon, dtype=np.float64).reshape(-1, 2) * scale
    x, y = points[:, 0], points[:, 1]
    area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    return points.mean(axis=0), float(np.sqrt(area))


def encode_crop(crop: np.ndarray) -> bytes:
    """A uint8 RGB crop (H, W, 3) as PNG bytes (lossless, as stored in the review database).

    Raises:
        AdaptationError: not an (H, W, 3) uint8 image.
    """
    crop = np.asarray(crop)
    if crop.dtype != np.uint8 or crop.ndim != 3 or crop.shape[2] != 3:
        raise AdaptationError(f"crop: expected (H, W, 3) uint8 RGB, got {crop.shape} {crop.dtype}")
    ok, data = cv2.imencode(".png", np.ascontiguousarray(crop[:, :, ::-1]))
    if not ok:
        raise AdaptationError(f"crop: cannot encode {crop.shape} as PNG")
    return data.tobytes()


def decode_crop(data: bytes, source: str = "crop") -> np.ndarray:
    """PNG bytes (as ``encode_crop`` writes them) back to a uint8 RGB crop (H, W, 3).

    Raises:
        AdaptationError: the bytes are not a readable colour image.
    """
    image = cv2.imdecode(np.frombuffer(bytes(data), np.uint8), cv2.IMREAD_COLOR) if data else None
    if image is None:
        raise AdaptationError(f"{source}: not a readable PNG crop")
    return np.ascontiguousarray(image[:, :, ::-1])


def classifier_manifest(scanner: Any, game: str) -> Any:
    """The manifest of the cell classifier ``scanner`` reads ``game`` with (adapted or shipped), or None."""
    name = CLASSIFIERS.get(game)
    try:
        reader = scanner.reader(game)
    except (TableError, AttributeError):
        return None
    for value in vars(reader).values():
        manifest = getattr(value, "manifest", None)
        if manifest is not None and getattr(manifest, "name", None) == name:
            return manifest
    return None


def scan_examples(result: Any, game: str, manifest: Any = None) -> list[dict]:
    """One stored example per read cell of a scan: ``cell`` ("row,col" / "x,y", as the review keys cells),
    ``crop`` (PNG bytes of the crop the classifier read), ``read``, ``confidence``, ``model``, ``model_sha256``.

    The cells the classifier also read around the board's and found empty (a palace's ring) are
    examples too, ``read`` "" at confidence 0 (examples of "no tile", labelled by what the players
    leave there). Games without an adaptable classifier, and cells without a crop, give none.
    """
    if game not in CLASSIFIERS:
        return []
    label = None if manifest is None else manifest.label
    sha256 = None if manifest is None else manifest.sha256
    examples = []
    read = [reading for reading in result.cells if reading.crop is not None]
    seen = [(reading.cell, reading.crop, reading.value, float(reading.confidence), reading.part) for reading in read]
    seen += [(cell, crop, "", 0.0, None) for cell, crop in empty_crops(result, game)]
    for cell, crop, value, confidence, part in seen:
        examples.append(
            {
                "cell": ",".join(str(int(v)) for v in cell),
                "crop": encode_crop(np.ascontiguousarray(crop)),
                "read": value,
                "confidence": confidence,
                "model": label,
                "model_sha256": sha256,
                "part": None if part is None else encode_patches(part),
            }
        )
    return examples


def encode_patches(patches: np.ndarray) -> bytes:
    """A cell's part patches (V, S, S, 3) uint8 as one PNG, side by side (S, V * S, 3).

    Raises:
        AdaptationError: not square uint8 RGB patches.
    """
    patches = np.asarray(patches)
    if patches.ndim != 4 or patches.shape[1] != patches.shape[2] or patches.shape[0] < 1:
        raise AdaptationError(f"part: expected (V, S, S, 3) patches, got {patches.shape}")
    return encode_crop(np.ascontiguousarray(np.concatenate(list(patches), axis=1)))


def decode_patches(data: bytes, views: int, source: str = "part") -> np.ndarray:
    """PNG bytes (as ``encode_patches`` writes them) back to ``views`` square patches (V, S, S, 3).

    Raises:
        AdaptationError: not a readable image of ``views`` square patches side by side.
    """
    image = decode_crop(data, source)
    size = image.shape[0]
    if image.shape[1] != views * size:
        raise AdaptationError(f"{source}: expected {views} square patches side by side, got a {image.shape[1]}x{size} px image")
    return np.ascontiguousarray(np.stack([image[:, i * size : (i + 1) * size] for i in range(views)]))


def empty_crops(result: Any, game: str) -> list[tuple[tuple[int, int], np.ndarray]]:
    """``(cell, crop)`` of the cells around a scan's read ones that hold nothing (the game's ``empty_cells``; none without)."""
    classifier = cell_classifier(game)
    if classifier.empty_cells is None:
        return []
    read = tuple(reading for reading in result.cells if reading.crop is not None)
    return classifier.empty_cells(result.photo.image_rgb, read)


def read_labelled_photo(scanner: Any, photo: LabelledPhoto) -> tuple[list[tuple[Any, str]], str | None]:
    """Re-read ``photo`` and pair each read cell (a ``CellReading`` with its crop) with the labelled cell at its centre.

    Returns the pairs and a note when the photo could not be used (its own error never stops the caller).
    """
    label = photo.name or Path(str(photo.source)).name
    targets = [(np.asarray(centre, dtype=np.float64), value) for centre, value in photo.cells]
    # read as the first scan did (the reader finds the board); the stored corners only as a fallback,
    # since a reader may order given corners by position and so lose a turned board's orientation
    attempts = [None] if photo.corners is None else [None, np.asarray(photo.corners, dtype=np.float64)]
    best: list[tuple[Any, str]] = []
    errors = []
    for corners in attempts:
        try:
            result = scanner.scan(photo.source, photo.game, corners=corners, name=label)
        except TableError as error:
            errors.append(str(error))
            continue
        matched = _match_cells(result, targets)
        if len(matched) > len(best):
            best = matched
        if len(best) >= min(len(targets), len(result.cells)):
            break
    if not best and len(errors) == len(attempts):
        return [], f"{label}: skipped ({errors[0]})"
    if not best:
        return [], f"{label}: skipped (no read cell matches a labelled cell; rescan it in the review screen)"
    return best, None


def examples_from_photos(scanner: Any, photos: Sequence[LabelledPhoto], load: Any = None) -> tuple[dict[str, ExampleSet], list[str]]:
    """Re-read each photo with ``scanner`` (shipped models) and label its cell crops from ``photos``.

    Each read cell takes the value of the labelled cell whose centre lies within half a cell of its
    own; cells without one are left out. Returns example sets per classifier model and notes about
    photos that could not be used (a photo's own error never stops the others).

    Raises:
        AdaptationError: a game has no adaptable classifier.
    """
    if load is None:
        load = scanner.model.load_model  # looked up now: tests stand in for the shipped model
    crops: dict[str, list[np.ndarray]] = {}
    values: dict[str, list[str]] = {}
    groups: dict[str, list[int]] = {}
    notes: list[str] = []
    for photo in photos:
        cell_classifier(photo.game)  # raises the "no adaptable classifier" error
        pairs, note = read_labelled_photo(scanner, photo)
        if note is not None:
            notes.append(note)
        for reading, value in pairs:
            crops.setdefault(photo.game, []).append(np.asarray(reading.crop))
            values.setdefault(photo.game, []).append(value)
            groups.setdefault(photo.game, []).append(photo.group)
    sets = {}
    for game, game_crops in crops.items():
        model = load(CLASSIFIERS[game])
        sets[model.manifest.name] = examples_from_crops(model, np.stack(game_crops), values[game], game, groups[game])
    return sets, notes


def _match_cells(result: Any, targets: Sequence[tuple[np.ndarray, str]]) -> list[tuple[Any, str]]:
    """(reading, label) for every read cell with a crop whose centre lies within half a cell of a labelled cell's."""
    matched = []
    for reading in result.cells:
        if reading.crop is None or not targets:
            continue
        centre, size = _centre_and_size(reading.polygon, result.photo.scale)
        distances = [float(np.linalg.norm(centre - t)) for t, _ in targets]
        best = int(np.argmin(distances))
        if distances[best] <= 0.5 * size:
            matched.append((reading, targets[best][1]))
    return matched


def pad_cell_crop(cell_rgb: np.ndarray, crop_px: int, margin: float) -> np.ndarray:
    """Turn a crop of exactly one cell into a model crop: resize, then repeat its border as the margin.

    An approximation of the real crop (which shows the neighbours in the margin), for exported
    datasets that kept only the cell.
    """
    inner = max(1, round(crop_px / (1 + 2 * margin)))
    pad = crop_px - inner
    small = cv2.resize(np.asarray(cell_rgb, dtype=np.uint8), (inner, inner), interpolation=cv2.INTER_AREA)
    return cv2.copyMakeBorder(small, pad // 2, pad - pad // 2, pad // 2, pad - pad // 2, cv2.BORDER_REPLICATE)
