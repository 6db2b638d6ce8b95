"""``tablescan adapt``: fit the scanner's classifiers to the players' own game set from their corrections.

Examples come from the review database (the crop of every scanned cell, stored when the review screen
scanned it, labelled with the value the players left there: corrected or confirmed) or from a folder
written by ``tablescan export-corrections``.
The adapted heads are saved beside the calibration profile (``<profile>.adapt.npz``) and the profile
selects them; ``tablescan scan --profile NAME`` then reads with them. The shipped models are never
changed, and ``--reset`` returns to them.
"""

from __future__ import annotations

import hashlib
import json
import math
import mimetypes
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click
import numpy as np
from PIL import Image

from calibration.errors import CalibrationError
from calibration.image import load_image
from calibration.profile import (
    PROFILE_DIR_ENV,
    Profile,
    load_profile,
    profile_path,
    save_profile,
)
from scanner import model as scanner_model
from scanner.adapt import (
    CLASSIFIERS,
    Adaptation,
    AdaptationError,
    ExampleSet,
    LabelledPhoto,
    ModelAdaptation,
    ModelReport,
    adapt_model,
    adapt_reader,
    adaptation_file,
    cell_classifier,
    classifier_manifest,
    crop_margin,
    decode_crop,
    decode_patches,
    encode_crop,
    encode_patches,
    examples_from_crops,
    examples_from_parts,
    game_of_model,
    holdout_folds,
    load_adaptation,
    pad_cell_crop,
    part_reader,
    profile_reference,
    read_labelled_photo,
    save_adaptation,
    without_adaptation,
)
from scanner.adapt.boards import EMPTY, align, compare_boards, corner_error, misplaced_shift, read_turned
from scanner.errors import BoardNotFoundError
from scanner.photo import load_photo
from scanner.pipeline import Scanner
from scanner.reading import parse_key
from scoring.errors import StateError, TableError
from scoring.registry import game_of
from tablescan.corrections import cell_teaches
from tablescan.games import game_entry, readers
from tablescan.review.board import readings_from_scan
from tablescan.review.db import Store, default_db_path, now_text
from tablescan.review.scanning import scan_photo

DEFAULT_PROFILE = "default"
# the newest cells per game an adaptation learns from (each is read 8 ways): keeps a run within seconds
MAX_CELLS = 1200


# the newest corrected boards per game the never-worse check re-reads end to end (twice each)
MAX_CHECK_BOARDS = 12
# how much further (a share of the board's side) adapted scans' grids may lie from the players' corners
GRID_TOLERANCE = 0.02
NO_FALL = "no figure fell"
# the least net gain (cells read right, fixed minus broken) that counts as an adaptation reading better: one
# cell, or the one board it completes, is a coin's chance among the 20-100 cells a handful of photos hold
# (measured: 5 corrected photos of the held-out board style, one cell gained in each check, then 5 cells and
# 3 of 20 boards lost on the next photos)
MIN_GAIN_CELLS = 2


def _cells_gained(right_before: int, right_after: int, cells_before: int, cells_after: int) -> float:
    """Net cells more read right after than before, at the same number of cells (a phantom tile adds a cell read wrong)."""
    return right_after - right_before * cells_after / max(cells_before, 1)


def _pct(right: int, total: int) -> str:
    return f"{right}/{total} ({100 * right / total:.1f}%)" if total else "0/0"


@dataclass(frozen=True)
class BoardCheck:
    """The corrected photos re-read end to end with the shipped models and with the adaptation, and the verdict.

    ``grid_before``/``grid_after``: the found grids' mean distance from the corners the players left
    (a share of the board's side; nan when no board had corners).
    """

    model: str
    boards: int
    cells_before: int
    cells_after: int
    right_before: int
    right_after: int
    whole_before: int
    whole_after: int
    grid_before: float
    grid_after: float
    kept: bool
    reason: str
    held_out: bool = False  # each photo read with an adaptation fitted without it
    remembered: int = 0  # judged alone: a memory of this many corrected dice (``scanner.adapt.memory``)
    check_before: int = 0  # cells read under the review's bar (``ScanResult.cells_to_check``), shipped
    check_after: int = 0  # and adapted

    def to_json(self) -> dict:
        """The figures as a JSON object (nan as null)."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 4)

        return {
            "model": self.model,
            "held_out": self.held_out,
            "remembered": self.remembered,
            "boards": self.boards,
            "cells_right": {"shipped": self.right_before, "adapted": self.right_after},
            "cells": {"shipped": self.cells_before, "adapted": self.cells_after},
            "boards_right": {"shipped": self.whole_before, "adapted": self.whole_after},
            "cells_to_check": {"shipped": self.check_before, "adapted": self.check_after},
            "grid_error": {"shipped": num(self.grid_before), "adapted": num(self.grid_after)},
            "kept": self.kept,
            "reason": self.reason,
        }

    def to_text(self) -> str:
        """One line for people."""
        grid = (
            ""
            if math.isnan(self.grid_before)
            else f", grids {self.grid_before:.3f} -> {self.grid_after:.3f} of a side off the players' corners"
        )
        return (
            f"  re-reading the {self.boards} corrected photos end to end{', each fitted without it' if self.held_out else ''}: cells right {_pct(self.right_before, self.cells_before)} -> "
            f"{_pct(self.right_after, self.cells_after)}, boards entirely right {self.whole_before}/{self.boards} -> "
            f"{self.whole_after}/{self.boards}, cells to check {self.check_before} -> {self.check_after}{grid}: "
            f"{'kept' if self.kept else 'not kept'} ({self.reason})"
        )


@dataclass(frozen=True)
class AdaptOutcome:
    """What one ``adapt`` run did: per-model reports, the end-to-end checks, notes, and where the kept adaptation went."""

    profile: str
    reports: tuple[ModelReport, ...]
    notes: tuple[str, ...] = ()
    saved: Path | None = None
    kept_models: tuple[str, ...] = field(default=())
    earlier: tuple[str, ...] = ()  # models an earlier run adapted, still in the profile
    checks: tuple[BoardCheck, ...] = ()

    def to_json(self) -> dict:
        """The outcome as a JSON object (for the review screen)."""
        return {
            "profile": self.profile,
            "saved": None if self.saved is None else str(self.saved),
            "kept": list(self.kept_models),
            "earlier": list(self.earlier),
            "notes": list(self.notes),
            "models": [r.to_json() for r in self.reports],
            "end_to_end": [c.to_json() for c in self.checks],
            "summary": self.summary,
        }

    @property
    def summary(self) -> str:
        """What was kept and why, in one sentence."""
        refused = [c for c in self.checks if not c.kept]
        if self.saved is not None:
            checked = {c.model for c in self.checks}
            why = (
                "its heads read held-out photos better and re-reading the corrected photos end to end no figure fell"
                if set(self.kept_models) <= checked
                else "its heads read held-out photos better"
            )
            if any(c.kept and c.remembered for c in self.checks):
                why = (
                    "it remembers the dice the players corrected: re-reading the corrected photos end to end, and each with a memory "
                    "made without it, no figure fell, and they read better or left fewer cells to check"
                )
            text = f"kept the adaptation of {', '.join(self.kept_models)}: {why}"
            if refused:
                text += f"; not {', '.join(c.model for c in refused)}: re-reading its corrected photos, {refused[0].reason}"
            return text
        if refused:
            why = f"re-reading the corrected photos with it, {refused[0].reason}"
        else:
            why = "it did not read the held-out examples better"
        still = (
            (
                f"the profile's earlier adaptation of {', '.join(self.earlier)} stays in use "
                f"(`tablescan adapt --profile {self.profile} --reset` drops it)"
            )
            if self.earlier
            else f"scans keep using the shipped models (with `--profile {self.profile}` too)"
        )
        return f"kept nothing new: {why}; {still}"

    def to_text(self) -> str:
        """Lines for people."""
        lines = []
        for report in self.reports:
            lines.append(report.to_text())
            lines += [check.to_text() for check in self.checks if check.model == report.model]
        lines += [f"note: {note}" for note in self.notes]
        if self.saved is not None:
            lines.append(f"{self.summary}: saved {self.saved}; scan with `tablescan scan PHOTO --profile {self.profile}` to use it")
        else:
            lines.append(self.summary)
        return "\n".join(lines)


def _load_or_new(name: str, directory: Path | None) -> Profile:
    if profile_path(name, directory).exists():
        return load_profile(name, directory)
    return Profile(name=name)


def labelled_photos(store: Store, *, keys: bool = False, players: set[int] | None = None) -> list[LabelledPhoto]:
    """Every player board in the review database with a photo and scanned cell outlines, as labelled photos.

    A cell's label is its current value: the players' correction, or the scanner's reading they left
    (with ``keys``, the cell's key instead, e.g. "2,3"). ``players`` limits it to those player ids.
    """
    photos = []
    for game in store.list_games():
        if game["game"] not in CLASSIFIERS:
            continue
        for player in store.players(game["id"]):
            if player["photo"] is None or (players is not None and player["id"] not in players):
                continue
            cells = []
            for reading in player["readings"]:
                polygon = reading.get("polygon")
                if not polygon:
                    continue
                centre = np.asarray(polygon, dtype=np.float64).reshape(-1, 2).mean(axis=0)
                cells.append(((float(centre[0]), float(centre[1])), reading["cell"] if keys else reading["value"]))
            if not cells:
                continue
            corners = player["corners"]
            photos.append(
                LabelledPhoto(
                    store.photo_path(player["photo"]),
                    game["game"],
                    None if not corners else tuple((float(x), float(y)) for x, y in corners),
                    tuple(cells),
                    int(player["photo"].id),
                    player["photo"].original_name or player["photo"].filename,
                    player_id=int(player["id"]),
                )
            )
    return photos


def derive_examples(store: Store, scanner: Any) -> tuple[int, list[str]]:
    """Store examples for scanned boards that have none (databases from before examples were stored).

    Each such photo is read again once (``scanner``, shipped models) and each read cell's crop is
    stored under the cell whose outline it matches; labels stay the cells' values (nothing the players
    entered changes). Returns how many examples were stored and notes about photos that could not be used.
    """
    missing = store.photos_without_examples()
    if not missing:
        return 0, []
    wanted = {player for player, _ in missing}
    stored, notes = 0, []
    for photo in labelled_photos(store, keys=True, players=wanted):
        pairs, note = read_labelled_photo(scanner, photo)
        if note is not None:
            notes.append(note)
        if not pairs or photo.player_id is None:  # keys=True gives every photo its player
            continue
        manifest = classifier_manifest(scanner, photo.game)
        examples = [
            {
                "cell": key,
                "crop": encode_crop(reading.crop),
                "read": reading.value,
                "confidence": float(reading.confidence),
                "model": None if manifest is None else manifest.label,
                "model_sha256": None if manifest is None else manifest.sha256,
                "part": None if reading.part is None else encode_patches(reading.part),
            }
            for reading, key in pairs
        ]
        stored += store.add_examples(photo.player_id, photo.group, examples, origin="derived")
    return stored, notes


def stored_examples(store: Store, load: Any = None, max_cells: int = MAX_CELLS) -> tuple[dict[str, ExampleSet], list[str]]:
    """Examples from the crops stored in the review database, labelled with their cells' values.

    A value is read as its game's ``cell_label`` reads it with the player's fields: a Sagrada empty
    cell on a known pattern card teaches the print under it. Each game learns from its newest
    ``max_cells`` labelled cells.

    Raises:
        AdaptationError: a game has no adaptable classifier.
    """
    if load is None:
        load = scanner_model.load_model  # looked up at call time (tests stand in a toy model)
    by_game: dict[str, tuple[list, list, list]] = {}
    parts: dict[str, tuple[list, list, list]] = {}  # each game's part reader's patches (an Alhambra tile's octagon)
    unreadable = unlabelled = unreadable_parts = 0
    rows = store.examples(tuple(CLASSIFIERS))
    fields: dict[int, dict[int, dict]] = {}  # players' fields by game, read where a game's labels need them
    misplaced, notes = misplaced_photos(rows)
    for row in rows:
        if row["label"] is None:
            unlabelled += 1
            continue
        if (row["player_id"], row["photo_id"]) in misplaced:
            continue
        try:
            crop = decode_crop(row["crop"], f"example {row['id']}")
        except AdaptationError:
            unreadable += 1
            continue
        crops, values, groups = by_game.setdefault(row["game"], ([], [], []))
        crops.append(crop)
        values.append(cell_teaches(store, row, fields))
        groups.append(int(row["photo_id"]))
        reader = part_reader(row["game"])
        if reader is not None and row.get("part"):
            try:
                patches = decode_patches(row["part"], reader.views, f"example {row['id']}: part")
            except AdaptationError:
                unreadable_parts += 1
                continue
            _add_part(parts, row["game"], patches, values[-1], groups[-1])
    if unreadable:
        notes.append(f"{unreadable} stored crops could not be decoded and were left out")
    if unreadable_parts:
        notes.append(
            f"{unreadable_parts} stored part patches (a tile's price octagon) could not be decoded and were left out; their crops were not"
        )
    if unlabelled:
        notes.append(f"{unlabelled} stored crops belong to cells no longer on their board and were left out")
    sets = {}
    for game, (crops, values, groups) in by_game.items():
        if len(crops) > max_cells:
            notes.append(f"{game}: learning from the newest {max_cells} of {len(crops)} stored cells")
            crops, values, groups = crops[-max_cells:], values[-max_cells:], groups[-max_cells:]
        model = load(CLASSIFIERS[game])
        size = tuple(model.manifest.input_shape[2:])
        fits = [i for i, crop in enumerate(crops) if crop.shape[:2] == size]
        if len(fits) < len(crops):
            notes.append(f"{len(crops) - len(fits)} stored {game} crops are not {size[0]}x{size[1]} px and were left out")
        if fits:
            sets[model.manifest.name] = examples_from_crops(
                model, np.stack([crops[i] for i in fits]), [values[i] for i in fits], game, [groups[i] for i in fits]
            )
    sets.update(part_sets(parts, load, max_cells))
    return sets, notes


def _add_part(parts: dict[str, tuple[list, list, list]], game: str, patches: np.ndarray, value: str, group: int) -> None:
    """Add one cell's part patches, the value it teaches and its photo to ``parts`` (game -> three lists, as ``part_sets`` reads)."""
    cells, labels, photos = parts.setdefault(game, ([], [], []))
    cells.append(patches)
    labels.append(value)
    photos.append(group)


def part_sets(parts: dict[str, tuple[list, list, list]], load: Any, max_cells: int = MAX_CELLS) -> dict[str, ExampleSet]:
    """The example sets of each game's part reader (``CellClassifier.part``) from its cells' patches, labels and photos
    (game -> three lists): the newest ``max_cells`` cells, those whose patches the reader reads (another version may not)."""
    sets = {}
    for game, (cells, labels, photos) in parts.items():
        reader = part_reader(game)
        if reader is None:
            continue
        cells, labels, photos = cells[-max_cells:], labels[-max_cells:], photos[-max_cells:]
        model = load(reader.model)
        size = tuple(model.manifest.input_shape[2:])
        fits = [i for i, patches in enumerate(cells) if patches.shape[1:3] == size]
        if fits:
            sets[model.manifest.name] = examples_from_parts(
                model, np.stack([cells[i] for i in fits]), [labels[i] for i in fits], reader, [photos[i] for i in fits]
            )
    return sets


def misplaced_photos(rows: list[dict]) -> tuple[set[tuple[int, int]], list[str]]:
    """The (player, photo) whose grid reads as misplaced, from their stored examples, and a note for each.

    Corrections that match the readings one cell over say the grid lay a cell off: each crop shows
    another cell than the one it was labelled as, so its examples would teach the wrong thing.
    """
    boards: dict[tuple[int, int], dict[str, tuple[str, str]]] = {}
    names: dict[tuple[int, int], str] = {}
    for row in rows:
        if row["label"] is None:
            continue
        key = (int(row["player_id"]), int(row["photo_id"]))
        boards.setdefault(key, {})[str(row["cell"])] = (str(row.get("read_value") or ""), str(row["label"]))
        names[key] = str(row.get("photo_name") or f"photo {row['photo_id']}")
    misplaced, notes = set(), []
    for key, cells in boards.items():
        shift = misplaced_shift(cells)
        if shift is not None:
            how = f"its corrections match the readings one cell {_direction(shift)}"
        elif read_turned(cells):
            how = "its corrections match the readings turned round: the board was read upside down"
        else:
            continue
        misplaced.add(key)
        notes.append(
            f"{names[key]}: left out, its grid reads as misplaced ({how}); "
            "place its corners on the board's own corners, top-left first, and rescan it, then correct its cells"
        )
    return misplaced, notes


def _direction(shift: tuple[int, int]) -> str:
    """A one-cell shift (rows or y, columns or x) in words: 'to the right', 'down and to the left'."""
    down, right = shift
    parts = [{1: "down", -1: "up"}.get(down, ""), {1: "to the right", -1: "to the left"}.get(right, "")]
    return " and ".join(part for part in parts if part)


def exported_examples(folder: Path, load: Any = None) -> dict[str, ExampleSet]:
    """Examples from an ``export-corrections`` folder: its cell crops, padded to the models' crops.

    Raises:
        AdaptationError: no readable ``index.json`` in ``folder``.
    """
    if load is None:
        load = scanner_model.load_model  # looked up at call time (tests stand in a toy model)
    index_path = folder / "index.json"
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
        items = index["items"]
    except FileNotFoundError:
        raise AdaptationError(f"{index_path}: not found; write one with `tablescan export-corrections DIR`") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise AdaptationError(f"{index_path}: unreadable corrections index ({error.__class__.__name__}: {error})") from None
    # the stored crops as the classifier read them when the export has them; else the corrected cells' outlines
    exact = index.get("examples") if isinstance(index, dict) else None
    if isinstance(exact, list) and exact:
        items = exact
    by_game: dict[str, tuple[list, list, list]] = {}
    parts: dict[str, tuple[list, list, list]] = {}
    photo_ids: dict[str, int] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("game") not in CLASSIFIERS or not item.get("crop"):
            continue
        path = folder / str(item["crop"])
        try:
            crop = load_image(path)
        except CalibrationError:
            continue
        crops, values, groups = by_game.setdefault(item["game"], ([], [], []))
        crops.append(crop)
        values.append(str(item.get("teaches", item.get("label", ""))))  # "teaches": what the label teaches the heads
        groups.append(photo_ids.setdefault(str(item.get("photo_sha256")), len(photo_ids)))
        reader = part_reader(item["game"])
        if reader is not None and item.get("part"):
            try:
                patches = decode_patches((folder / str(item["part"])).read_bytes(), reader.views, str(item["part"]))
            except (OSError, AdaptationError):
                continue
            _add_part(parts, item["game"], patches, values[-1], groups[-1])
    sets = part_sets(parts, load)
    for game, (crops, values, groups) in by_game.items():
        model = load(CLASSIFIERS[game])
        size = int(model.manifest.input_shape[2])
        margin = crop_margin(model.manifest.name)
        # crops of the model's size are the classifier's own; others hold only the cell: pad them
        fitted = np.stack([c if c.shape[:2] == (size, size) else pad_cell_crop(c, size, margin) for c in crops])
        sets[model.manifest.name] = examples_from_crops(model, fitted, values, game, groups)
    return sets


def adapt_profile(
    profile_name: str = DEFAULT_PROFILE,
    *,
    store: Store | None = None,
    from_dir: Path | None = None,
    directory: Path | None = None,
    seed: int = 0,
    scanner: Any = None,
    load: Any = None,
    end_to_end: bool | None = None,
) -> AdaptOutcome:
    """Collect examples, adapt every classifier that has some, and save what helps into the profile.

    What passes the held-out check is then checked where it matters (``end_to_end``, default: with
    the shipped models): the review database's corrected photos are re-read end to end with and
    without it (``check_end_to_end``), and a model's adaptation is kept only if neither boards
    entirely right nor cells right fall there, and something rose (there, or held-out cells
    entirely right).

    Raises:
        AdaptationError: no examples at all, or the adaptation cannot be saved.
        CalibrationError: the profile is corrupt or its name invalid.
    """
    if load is None:
        load = scanner_model.load_model  # looked up at call time (tests stand in a toy model)
    profile = _load_or_new(profile_name, directory)
    sets: dict[str, ExampleSet] = {}
    notes: list[str] = []
    if store is not None:
        if store.photos_without_examples():  # scanned before crops were stored: derive them once
            if scanner is None:
                shipped = without_adaptation(profile)
                scanner = Scanner(profile=shipped if (shipped.camera or shipped.colour) else None, readers=readers())
            _, notes = derive_examples(store, scanner)
        found, more = stored_examples(store, load)
        notes += more
        sets.update(found)
    if from_dir is not None:
        for name, examples in exported_examples(from_dir, load).items():
            sets[name] = ExampleSet.concatenate([sets[name], _shift_groups(examples, sets[name])]) if name in sets else examples
    if not sets:
        source = " and ".join(str(s) for s in (store and store.path, from_dir) if s)
        skipped = f" ({len(notes)} photos could not be re-read, e.g. {notes[0]})" if notes else ""
        raise AdaptationError(
            f"{source or 'no source'}: no corrected or confirmed scans to learn from{skipped}; "
            "scan boards and correct them in `tablescan review` first"
        )
    reports = []
    kept = []
    for name in sorted(sets):
        model = load(name)
        temperatures = _temperatures(model)
        fitted, report = adapt_model(model, sets[name], temperatures=temperatures, seed=seed)
        reports.append(report)
        if fitted is not None:
            kept.append(fitted)
    checks: list[BoardCheck] = []
    if end_to_end is None:  # with the shipped models (tests stand in toy ones, which no reader reads with)
        end_to_end = load is scanner_model.load_model
    if store is None or not end_to_end:  # a memory of corrected dice is judged only by re-reading whole photos
        kept = [fitted for fitted in (unremembering(f) for f in kept) if fitted is not None]
    if store is not None and end_to_end and kept:
        base = without_adaptation(profile)
        base = base if (base.camera or base.colour) else None
        games = {fitted.model: game_of_model(fitted.model) for fitted in kept}
        settled_beside: dict[str, list[ModelAdaptation]] = {}  # per game, the adaptations already settled
        # a game's part reader first (an Alhambra tile's type is its octagon's), then its cell classifier judged with it
        for fitted in sorted(kept, key=lambda f: (f.model in CLASSIFIERS.values(), f.model)):
            boards = corrected_boards(store, games[fitted.model])
            if not boards:
                notes.append(f"{fitted.model}: no corrected photos to re-read end to end; kept on the held-out check alone")
                plain = unremembering(fitted)
                if plain is None:
                    kept.remove(fitted)
                else:
                    kept[kept.index(fitted)] = plain
                continue
            report = next(r for r in reports if r.model == fitted.model)
            beside = tuple(settled_beside.get(games[fitted.model], ()))
            context: tuple = (load(fitted.model), sets[fitted.model], boards, games[fitted.model], base, {}, seed, beside)
            chosen, settled, why = settle_end_to_end(fitted, report, context)
            checks += settled
            notes += why
            if chosen is None:
                kept.remove(fitted)
            else:
                kept[kept.index(fitted)] = chosen
                settled_beside.setdefault(games[fitted.model], []).append(chosen)
    if not kept:
        if not profile_path(profile_name, directory).exists():
            save_profile(profile, directory)  # `--profile NAME` then reads with the shipped models, not refused
        earlier = profile.adaptation.get("models", []) if isinstance(profile.adaptation, dict) else []
        return AdaptOutcome(profile_name, tuple(reports), tuple(notes), earlier=tuple(str(m) for m in earlier), checks=tuple(checks))
    new = Adaptation(tuple(kept), now_text(), tuple(r.to_json() for r in reports if r.kept))
    path = adaptation_file(profile_name, directory)
    if profile.adaptation is not None and path.exists():
        try:
            new = load_adaptation(path).merged(new)  # keep other games' adaptations
        except AdaptationError as error:
            notes.append(f"previous adaptation dropped ({error})")
    sha256 = save_adaptation(new, path)
    save_profile(Profile(profile.name, profile.camera, profile.colour, profile_reference(path, sha256, new)), directory)
    return AdaptOutcome(profile_name, tuple(reports), tuple(notes), path, tuple(m.model for m in kept), checks=tuple(checks))


def unremembering(fitted: ModelAdaptation) -> ModelAdaptation | None:
    """``fitted`` without its memory of corrected cells (None where the memory was all it held): what is kept
    where no corrected photo can be re-read end to end, the only check a memory has."""
    if fitted.memory is None:
        return fitted
    return replace(fitted, memory=None) if fitted.heads else None


def settle_end_to_end(
    fitted: ModelAdaptation, report: ModelReport, context: tuple
) -> tuple[ModelAdaptation | None, list[BoardCheck], list[str]]:
    """What of ``fitted`` to keep after re-reading the corrected photos (``judge_end_to_end``, whose arguments after
    the report ``context`` holds): the adaptation kept (None: nothing), the checks made, notes.

    The residual heads are judged without the memory of corrected cells (it reads the corrected
    photos right by itself, and would vouch for heads that read the next photos worse); the memory
    is judged alone, and only where there are no heads or they are not kept.
    """
    if fitted.heads:
        heads = replace(fitted, memory=None)
        check, held = judge_end_to_end(heads, report, *context)
        if check.kept or fitted.memory is None:
            return (heads if check.kept else None), [c for c in (check, held) if c is not None], []
        why = [f"{fitted.model}: its residual heads not kept (re-reading the corrected photos, {check.reason})"]
        refused = [c for c in (check, held) if c is not None]
    else:
        why, refused = [], []
    alone = replace(fitted, heads=())
    check, held = judge_end_to_end(alone, report, *context)
    if not check.kept and refused:  # the heads' refusal is what the players read about
        return None, refused, []
    return (alone if check.kept else None), [c for c in (check, held) if c is not None], why if check.kept else []


def judge_end_to_end(
    fitted: ModelAdaptation,
    report: ModelReport,
    model: Any,
    examples: ExampleSet,
    boards: list[dict],
    game: str,
    base: Any,
    cache: dict,
    seed: int,
    beside: tuple[ModelAdaptation, ...] = (),
) -> tuple[BoardCheck, BoardCheck | None]:
    """Re-read the corrected photos with ``fitted`` (``check_end_to_end``) and each with it fitted without that photo
    (``held_out_end_to_end``), and judge it: the first check, its verdict folded in, and the second (None with one photo).
    ``beside``: the game's other models' adaptations already kept, read with on both sides of each comparison.

    Residual heads are kept only where no figure fell and something rose by ``MIN_GAIN_CELLS``: a head
    that gains one cell is a coin's chance. A memory of corrected cells alone (``scanner.adapt.memory``)
    is kept only where there are photos to hold out and no figure fell in either check, and it read more
    right or surer: a cell more on the photos held out (a die corrected in one photo recalled in another),
    ``MIN_GAIN_CELLS`` more on the corrected photos re-read, or ``MIN_GAIN_CELLS`` fewer cells to check
    on the photos held out (dice read right but doubtfully, recalled: fewer cells for the players to look
    at; a memory can only settle doubts, never raise one). Kept on the corrected photos' gain alone, with
    no photo held out to check it against, it read the next 20 photos of two copies' real dice a cell
    worse after 2 corrected photos (2026-12-06). Asked to read better on the photos held out too, it was
    kept only where a player's odd die came back among the corrected photos; yet a memory alone read the
    next 40 photos of four real-dice sets (jade, pewter, one copy's dice, the held-out board) 1, 5, 5 and
    2 cells better than the shipped model after 5 corrected photos, and 0, 1, 0 and 1 after 2, never worse
    (2026-12-07): an odd die the players corrected once is the one that comes back in their next games.
    On one copy's dice (`sagrada-real-set`), 5 corrected photos with one cell wrong, the memory read the
    next 40 photos with 5 more cells right, 181 -> 118 cells to check, and no cell wrong at >= 90%, as before.
    """
    check = check_end_to_end(boards, game, fitted, base, cache=cache, beside=beside)
    held = held_out_end_to_end(model, examples, boards, game, fitted, base, cache, seed, beside=beside)
    if check.kept and held is not None and not held.kept:
        check = replace(check, kept=False, reason=f"{check.reason}, but photos held out read worse end to end ({held.reason})")
    held_gain = held is not None and _cells_gained(held.right_before, held.right_after, held.cells_before, held.cells_after) >= 1 - 1e-9
    if fitted.heads:
        rose = check.reason != NO_FALL or report.cells_gained >= MIN_GAIN_CELLS - 1e-9 or (held is not None and held.reason != NO_FALL)
    else:  # a memory is kept where photos held out read no worse (a check it needs) and it reads more right or surer
        surer = held is not None and held.check_after <= held.check_before - MIN_GAIN_CELLS
        rose = held is not None and (held_gain or surer or check.reason != NO_FALL)
    if check.kept and not rose:
        # nothing read better anywhere it was checked: a change with no gain is only a risk
        check = replace(check, kept=False, reason=f"{NO_FALL}, but none rose (nor held-out cells entirely right)")
    if check.kept and not fitted.heads:
        count = fitted.memory.cells if fitted.memory is not None else 0
        reason = check.reason
        if reason == NO_FALL and held is not None and not held_gain:  # kept for the doubts it settles
            reason = f"{NO_FALL}, and photos held out have {held.check_before - held.check_after} fewer cells to check"
        check = replace(check, reason=f"{reason}: the memory of {count} corrected dice alone", remembered=count)
    return check, held


def corrected_boards(store: Store, game: str, limit: int = MAX_CHECK_BOARDS) -> list[dict]:
    """The newest scanned boards of ``game`` with their photo: ``photo`` (path), ``name``, ``truth`` (cell -> the
    value the players left), ``corners`` (the corners they left: found, dragged or given)."""
    boards = []
    for entry in store.list_games():
        if entry["game"] != game:
            continue
        for player in store.players(entry["id"]):
            if player["photo"] is None or not any(r.get("polygon") for r in player["readings"]):
                continue
            boards.append(
                {
                    "photo": store.photo_path(player["photo"]),
                    "name": player["photo"].original_name or player["photo"].filename,
                    "truth": {r["cell"]: r["value"] for r in player["readings"]},
                    "corners": player["corners"] or None,
                    "photo_id": int(player["photo"].id),
                    "order": (entry["id"], player["id"]),
                }
            )
    boards.sort(key=lambda board: board["order"])
    return boards[-limit:]


def _read_board(scanner: Any, game: str, board: dict) -> tuple[dict[str, str] | None, Any, int]:
    """The board as ``scanner`` reads its photo end to end (cell -> stored value), the found corners, and how many
    cells the review asks players to look at (``ScanResult.cells_to_check``); None, None, 0 when not found."""
    try:
        result = scanner.scan(board["photo"], game, name=board["name"])
    except TableError:
        return None, None, 0
    readings = readings_from_scan(game, result.player, result.cells)
    return {r["cell"]: r["value"] for r in readings}, result.scan.corners, result.cells_to_check


@dataclass
class _Tally:
    """Counts over boards read one way: cells right, cells, boards entirely right, grid errors."""

    right: int = 0
    cells: int = 0
    whole: int = 0
    grid: list[float] = field(default_factory=list)
    check: int = 0  # cells read under the review's bar


def check_end_to_end(
    boards: list[dict],
    game: str,
    fitted: ModelAdaptation,
    base: Any = None,
    shipped: Scanner | None = None,
    *,
    per_board: list[ModelAdaptation | None] | None = None,
    cache: dict | None = None,
    beside: tuple[ModelAdaptation, ...] = (),
) -> BoardCheck:
    """Re-read ``boards`` end to end with the shipped models and with ``fitted``: keep it only if neither cells right,
    nor boards entirely right fall, and its grids lie no further from the players' corners.

    ``base`` is the profile without its adaptation (camera and colour), or None. ``per_board`` reads
    each board with an adaptation of its own instead (None: the shipped models), e.g. one fitted
    without that board's photo; ``cache`` keeps the shipped readings between calls. ``beside`` are
    adaptations of the game's other models already kept: both readings are made with them (the
    reader with ``fitted`` falls back to the reader with them alone, not to the shipped one).

    Raises:
        AdaptationError: ``fitted`` does not belong to the shipped model.
    """
    fixed = cell_classifier(game).fixed_cells
    factories = readers()
    shipped_make = factories[game]
    cache = {} if cache is None else cache
    # the comparison reader, once for all calls sharing ``cache``: an adapted palace reader reads it again to count tiles
    if ("recalling reader",) not in cache:
        compared = adapt_reader(shipped_make(), Adaptation(beside)) if beside else shipped_make()
        cache[("recalling reader",)] = RecallingReader(compared)
    recall = cache[("recalling reader",)]
    shipped = shipped or Scanner(profile=base, readers={**factories, game: lambda: recall})
    scanners: dict[int, Scanner] = {}

    def adapted_scanner(fit: ModelAdaptation) -> Scanner:
        if id(fit) not in scanners:
            adaptation = Adaptation((fit,))
            scanners[id(fit)] = Scanner(
                profile=base, readers={**factories, game: lambda: adapt_reader(recall.reader, adaptation, fallback=recall)}
            )
        return scanners[id(fit)]

    before, after = _Tally(), _Tally()
    for board, fit in zip(boards, per_board or [fitted] * len(boards)):
        key = str(board["photo"])
        if key not in cache:
            cache[key] = _read_board(shipped, game, board)
        readings = [cache[key], cache[key] if fit is None else _read_board(adapted_scanner(fit), game, board)]
        for tally, (read, corners, to_check) in zip((before, after), readings):
            score = compare_boards(board["truth"], read, fixed)
            tally.right += score.right
            tally.cells += score.cells
            tally.whole += int(score.entirely_right)
            tally.check += to_check
            if board["corners"]:  # not found: as far off as a board's side
                tally.grid.append(1.0 if corners is None else corner_error(corners, board["corners"]))
    grid_before = float(np.mean(before.grid)) if before.grid else float("nan")
    grid_after = float(np.mean(after.grid)) if after.grid else float("nan")
    falls = []
    if after.whole < before.whole:
        falls.append("fewer boards entirely right")
    if after.right * before.cells < before.right * after.cells:  # a share of cells: a phantom tile adds a cell read wrong
        falls.append("fewer cells right")
    if not math.isnan(grid_before) and grid_after > grid_before + GRID_TOLERANCE:
        falls.append("its grids lie further from the corners the players left")
    if falls:
        kept, reason = False, " and ".join(falls)
    elif _cells_gained(before.right, after.right, before.cells, after.cells) >= MIN_GAIN_CELLS:
        kept, reason = True, "more read right"
    else:
        kept, reason = True, NO_FALL
    return BoardCheck(
        fitted.model,
        len(boards),
        before.cells,
        after.cells,
        before.right,
        after.right,
        before.whole,
        after.whole,
        grid_before,
        grid_after,
        kept,
        reason,
        check_before=before.check,
        check_after=after.check,
    )


class RecallingReader:
    """A board reader that reads each photo once (no corners given) and recalls that reading when asked again.

    The never-worse check reads each corrected photo with the models it compares against, and an
    adapted palace reader reads the same photo with those models once more to count their tiles
    (``read_with_fallback``); this reader serves both from one reading. A photo is known by its
    name and its pixels.
    """

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.game = getattr(reader, "game", None)
        self.readings: dict[tuple, Any] = {}

    def read(self, photo: Any, *, corners: Any = None, timings: Any = None) -> Any:
        """The reading of ``photo`` (recalled where already made without corners).

        Raises:
            BoardNotFoundError: the reader finds no board (recalled as well).
        """
        if corners is not None:
            return self.reader.read(photo, corners=corners, timings=timings)
        image = np.ascontiguousarray(photo.image_rgb)
        key = (photo.name, image.shape, hashlib.sha256(image.tobytes()).hexdigest())
        if key not in self.readings:
            try:
                self.readings[key] = self.reader.read(photo, timings=timings)
            except BoardNotFoundError as error:
                self.readings[key] = error
        found = self.readings[key]
        if isinstance(found, BoardNotFoundError):
            raise found
        return found


def held_out_end_to_end(
    model: Any,
    examples: ExampleSet,
    boards: list[dict],
    game: str,
    fitted: ModelAdaptation,
    base: Any = None,
    cache: dict | None = None,
    seed: int = 0,
    beside: tuple[ModelAdaptation, ...] = (),
) -> BoardCheck | None:
    """Re-read each corrected photo end to end with an adaptation fitted without it (whole photos held out, as the
    held-out check holds them out), against the shipped models (both read with ``beside``, as in ``check_end_to_end``);
    None with fewer than two photos.

    A head that only learnt the corrected photos themselves shows here: the players' next photos
    are read as these are. It is judged on the share of cells right (boards entirely right are
    judged on the re-read of all corrected photos). Each fold is made of what ``fitted`` is made of:
    residual heads, a memory of corrected cells, or both. ``cache`` also keeps each fold's adaptation
    (the same examples fit the same): the memory judged alone after the heads reuses the heads' folds.
    """
    groups = examples.groups
    ids = [board.get("photo_id") for board in boards]
    if len(np.unique(groups)) < 2 or any(i is None for i in ids):
        return None
    temperatures = _temperatures(model)
    cache = {} if cache is None else cache
    per_board: list[ModelAdaptation | None] = [None] * len(boards)
    for train, test in holdout_folds(groups, examples.item_ids, seed):
        held = set(np.unique(groups[test]).tolist())
        key = ("fold", examples.model, seed, np.asarray(train).tobytes())  # beside the shipped readings, keyed by photo
        if key not in cache:
            cache[key] = adapt_model(model, examples.subset(train), temperatures=temperatures, seed=seed)[0]
        fold = cache[key]
        if fold is not None:  # made of what ``fitted`` is made of: its heads, its memory, or both
            fold = replace(fold, heads=fold.heads if fitted.heads else (), memory=fold.memory if fitted.memory is not None else None)
        for index, photo_id in enumerate(ids):
            if photo_id in held:
                per_board[index] = fold
    check = check_end_to_end(boards, game, fitted, base, per_board=per_board, cache=cache, beside=beside)
    # judged on the share of cells right only: with two to five photos a board more or less entirely
    # right is one photo's chance (the re-read on all corrected photos judges boards too)
    fell = check.right_after * check.cells_before < check.right_before * check.cells_after
    rose = _cells_gained(check.right_before, check.right_after, check.cells_before, check.cells_after) >= MIN_GAIN_CELLS
    reason = "fewer cells right" if fell else ("more cells right" if rose else NO_FALL)
    return replace(check, model=fitted.model, held_out=True, kept=not fell, reason=reason)


PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")


@dataclass(frozen=True)
class CorrectedScan:
    """A photo and the corrected document beside it: its game, its player's name, the true board (cell -> stored
    value, keyed as the review screen keys cells), when given the board's true corners, and the player's fields
    the document gives (a Sagrada pattern card)."""

    photo: Path
    document: Path
    game: str
    player: str
    truth: dict[str, str]
    corners: list[list[float]] | None = None
    fields: dict[str, Any] = field(default_factory=dict)


def _corners_of(doc: dict, where: Path) -> list[list[float]] | None:
    """``players[0].scan.corners`` of a corrected document: 4 [x, y] photo pixels (TL, TR, BR, BL), or None."""
    scan = doc["players"][0].get("scan") if isinstance(doc["players"][0], dict) else None
    if scan is None:
        return None
    if not isinstance(scan, dict):
        raise AdaptationError(f"{where}: players[0].scan: expected an object, got {type(scan).__name__}")
    corners = scan.get("corners")
    if corners is None:
        return None
    ok = isinstance(corners, list) and len(corners) == 4
    ok = ok and all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in p) for p in corners
    )
    if not ok:
        raise AdaptationError(
            f"{where}: players[0].scan.corners: expected 4 [x, y] points (TL, TR, BR, BL) in photo pixels, got {corners!r}"
        )
    return [[float(x), float(y)] for x, y in corners]


def read_scans_folder(folder: Path) -> list[CorrectedScan]:
    """Every photo in ``folder`` with the corrected document beside it (``IMG.jpg`` + ``IMG.json``, FORMATS.md).

    Raises:
        AdaptationError: not a folder, no photos, a photo without its document, a document that is not
            JSON, not a one-board game, or of a game not read from photos (naming the file).
        StateError: a document's JSON path is wrong (the message names the file and the path).
    """
    if not folder.is_dir():
        raise AdaptationError(f"{folder}: not a folder; expected photos with their corrected documents beside them")
    photos = sorted(path for path in folder.iterdir() if path.is_file() and path.suffix.lower() in PHOTO_SUFFIXES)
    if not photos:
        raise AdaptationError(f"{folder}: no photos ({', '.join(PHOTO_SUFFIXES)}) with corrected documents beside them")
    scans = []
    for photo in photos:
        where = photo.with_suffix(".json")
        if not where.is_file():
            raise AdaptationError(f"{photo}: no corrected document beside it (expected {where.name}, the board as it truly is)")
        try:
            doc = json.loads(where.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise AdaptationError(f"{where}: not a JSON document ({error})") from None
        except OSError as error:
            raise AdaptationError(f"{where}: cannot be read ({error.strerror})") from None
        try:
            game = game_of(doc)
            state = game.parse(doc)
        except StateError as error:
            raise StateError(f"{where}: {error}") from None
        if game.id not in CLASSIFIERS:
            raise AdaptationError(f"{where}: game: {game.id} is not read from photos (adaptable: {', '.join(sorted(CLASSIFIERS))})")
        players = state.to_json()["players"]
        if len(players) != 1:
            raise AdaptationError(f"{where}: players: expected the one board the photo shows, got {len(players)} players")
        form = game_entry(game.id).form
        truth = form.scanned_values(players[0])
        fields = form.scanned_fields(players[0])
        scans.append(CorrectedScan(photo, where, game.id, str(players[0]["name"]), truth, _corners_of(doc, where), fields))
    return scans


def store_corrected_scans(store: Store, scans: list[CorrectedScan], scan: Any = None) -> tuple[int, list[str]]:
    """Scan each photo into ``store`` as the review screen does, then correct every cell to its document; return
    how many cells were corrected, and a note per photo read otherwise than asked.

    A Sagrada document's true corners are used as dragged corners are (the board is read on them); a
    palace is matched to the photo where the most tiles agree (its fountain, unless that was misread).
    A palace the scanner refuses on its own (its tiles do not read like the tiles it knows: a set of
    other art, the very set adapting is for) is read again with the whole photo as its outline, as a
    player's hand-marked corners would be: the document says a palace is there.

    Raises:
        AdaptationError: a photo's board is not found (naming the photo and its document).
        TableError: a photo cannot be read (naming it).
    """
    if scan is None:
        scan = scan_photo  # looked up at call time, the review screen's own scanning door
    corrected = 0
    notes: list[str] = []
    for item in scans:
        try:
            outcome = scan(item.photo, item.game, corners=item.corners, name=str(item.photo))
        except BoardNotFoundError as error:
            outcome = _scan_whole_photo(item, scan) if item.corners is None and not cell_classifier(item.game).fixed_cells else None
            if outcome is None:
                raise AdaptationError(f"{error}; or give the board's corners in {item.document.name}: players[0].scan.corners") from None
            refused = str(error).removeprefix(f"{item.photo}: ").split("; ")[0]
            notes.append(f"{item.photo.name}: refused on its own ({refused}); read as the palace its document says is there")
        data = item.photo.read_bytes()
        with Image.open(item.photo) as image:
            size = image.size
        media = mimetypes.guess_type(item.photo.name)[0] or "application/octet-stream"
        record = store.add_photo(hashlib.sha256(data).hexdigest(), item.photo.suffix.lower(), data, media, size, item.photo.name)
        game_id = store.create_game(item.game, item.photo.stem, {}, [(item.player, dict(item.fields))])
        player_id = store.players(game_id)[0]["id"]
        store.attach_photo(game_id, player_id, record.id)
        examples = outcome.examples
        if item.corners is not None and _turned(item.corners, outcome.corners):
            examples = _examples_on(item, examples)
        store.store_scan(game_id, player_id, outcome.corners, outcome.model, outcome.readings, examples=examples, review=outcome.review)
        read = {r["cell"]: r["value"] for r in outcome.readings}
        truth = dict(item.truth)
        changes = []
        if not cell_classifier(item.game).fixed_cells:  # cells relative to one of them: put the truth where it was read
            dx, dy = align(truth, read)
            truth = {f"{at[0] + dx},{at[1] + dy}": value for key, value in truth.items() if (at := parse_key(key)) is not None}
            changes += [(key, "") for key, value in read.items() if key not in truth and value not in EMPTY]
        changes += list(truth.items())
        corrected += store.correct_cells(game_id, player_id, changes)
    return corrected, notes


def _scan_whole_photo(item: CorrectedScan, scan: Any) -> Any:
    """``item``'s photo scanned with its whole frame as the board's outline (a palace's search area), or None if
    even so no board is found."""
    photo = load_photo(item.photo, name=str(item.photo))
    height, width = (np.asarray(photo.image_rgb.shape[:2], np.float64) * photo.scale).tolist()
    whole = [[0.0, 0.0], [width - 1, 0.0], [width - 1, height - 1], [0.0, height - 1]]
    try:
        return scan(item.photo, item.game, corners=whole, name=str(item.photo))
    except BoardNotFoundError:
        return None


def _turned(given: list[list[float]], used: list[list[float]]) -> bool:
    """Whether a scan used the given corners listed from another corner (the reader turned the board: it orients
    corners given to it by itself)."""
    a, b = np.asarray(given, dtype=np.float64).reshape(4, 2), np.asarray(used, dtype=np.float64).reshape(4, 2)
    errors = [float(np.abs(np.roll(a, -k, axis=0) - b).max()) for k in range(4)]
    return int(np.argmin(errors)) != 0


def _examples_on(item: CorrectedScan, scanned: list[dict]) -> list[dict]:
    """The examples of a photo cut on its true corners, in their order (the game's ``grid_crops``), else ``scanned``.

    Each crop is then the cell its key names in the true board, whichever way the reader turned it.
    """
    cut = cell_classifier(item.game).grid_crops
    if cut is None or item.corners is None:
        return scanned
    photo = load_photo(item.photo, name=str(item.photo))
    corners = np.asarray(item.corners, dtype=np.float64) / photo.scale
    model = scanned[0] if scanned else {}
    return [
        {
            "cell": ",".join(str(int(v)) for v in cell),
            "crop": encode_crop(np.ascontiguousarray(crop)),
            "read": None,  # not read this way round
            "confidence": None,
            "model": model.get("model"),
            "model_sha256": model.get("model_sha256"),
        }
        for cell, crop in cut(photo.image_rgb, corners)
    ]


def adapt_from_scans(folder: Path, profile_name: str = DEFAULT_PROFILE, directory: Path | None = None, seed: int = 0) -> AdaptOutcome:
    """Learn from a folder of photos with their corrected documents, exactly as from the review screen's corrections.

    The photos are scanned into a scratch review database, every cell is corrected to its document,
    and ``adapt_profile`` runs on that database (the same examples, the same checks).

    Raises:
        AdaptationError, StateError, TableError: bad input (naming the file), or nothing could be learnt.
    """
    scans = read_scans_folder(folder)
    with tempfile.TemporaryDirectory(prefix="tablescan-adapt-") as work:
        store = Store(Path(work) / "scans.sqlite3")
        corrected, read_notes = store_corrected_scans(store, scans)
        outcome = adapt_profile(profile_name, store=store, directory=directory, seed=seed)
    note = f"learnt from {len(scans)} corrected photos in {folder} ({corrected} cells corrected)"
    return replace(outcome, notes=(note, *read_notes, *outcome.notes))


def _shift_groups(examples: ExampleSet, before: ExampleSet) -> ExampleSet:
    """The same examples with photo groups numbered after ``before``'s (so no two photos share one)."""
    offset = int(before.groups.max()) + 1 if len(before) else 0
    return ExampleSet(examples.model, examples.outputs, examples.labels, examples.groups + offset, examples.items, examples.variants)


def _temperatures(model: Any) -> dict[str, float]:
    """Per-head calibration temperatures from the model's ``Manifest`` (each head's own, else the model's one)."""
    manifest = model.manifest
    return {head: manifest.temperature_of(head) for head, _ in manifest.heads}


def reset_profile(profile_name: str = DEFAULT_PROFILE, directory: Path | None = None) -> bool:
    """Remove the profile's adaptation (file and reference); return whether there was one.

    Raises:
        CalibrationError: the profile is corrupt or its name invalid.
    """
    path = adaptation_file(profile_name, directory)
    had = path.exists()
    path.unlink(missing_ok=True)
    if profile_path(profile_name, directory).exists():
        profile = load_profile(profile_name, directory)
        if profile.adaptation is not None:
            had = True
            save_profile(without_adaptation(profile), directory)
    return had


@click.command("adapt")
@click.option(
    "--profile",
    "profile_name",
    default=DEFAULT_PROFILE,
    show_default=True,
    help="Profile to save the adaptation in (scan with --profile NAME to use it).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Review database to learn from (default: the one tablescan review uses).",
)
@click.option(
    "--from",
    "from_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Learn from a folder written by `tablescan export-corrections` instead.",
)
@click.option(
    "--from-scans",
    "scans_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Learn from a folder of photos, each with its corrected document beside it (IMG.jpg + IMG.json).",
)
@click.option("--reset", is_flag=True, help="Forget the profile's adaptation: scans use the shipped models again.")
@click.option(
    "--profile-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=PROFILE_DIR_ENV,
    default=None,
    help=f"Where profiles are kept (default: the user's config dir; env {PROFILE_DIR_ENV}).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def adapt(
    profile_name: str,
    db_path: Path | None,
    from_dir: Path | None,
    scans_dir: Path | None,
    reset: bool,
    profile_dir: Path | None,
    as_json: bool,
) -> None:
    """Adapt the scanner to your own game set from the boards corrected in the review screen (or photos and their documents)."""
    if reset:
        had = reset_profile(profile_name, profile_dir)
        click.echo(
            f"profile '{profile_name}': " + ("adaptation removed" if had else "had no adaptation") + "; scans use the shipped models"
        )
        return
    if scans_dir is not None:
        if from_dir is not None or db_path is not None:
            raise StateError("--from-scans: learn from one source at a time (not with --from or --db)")
        outcome = adapt_from_scans(scans_dir, profile_name, profile_dir)
        click.echo(json.dumps(outcome.to_json(), indent=2) if as_json else outcome.to_text())
        return
    store = None
    if from_dir is None or db_path is not None:
        path = db_path or default_db_path()
        if not path.exists():
            raise AdaptationError(f"{path}: no review database here; run `tablescan review` first, or pass --db or --from")
        store = Store(path)
    outcome = adapt_profile(profile_name, store=store, from_dir=from_dir, directory=profile_dir)
    click.echo(json.dumps(outcome.to_json(), indent=2) if as_json else outcome.to_text())
