"""``tablescan adapt``: fit the scanner's classifiers to the players' own game set from their corrections.

Examples come from the review database (the crop of every scanned cell, stored when the review screen
scanned it, labelled with the value the players left there: corrected or confirmed) or from a folder
written by ``tablescan export-corrections``.
The adapted heads are saved beside the calibration profile (``<profile>.adapt.npz``) and the profile
selects them; ``tablescan scan --profile NAME`` then reads with them. The shipped models are never
changed, and ``--reset`` returns to them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np

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
    ModelReport,
    adapt_model,
    adaptation_file,
    classifier_manifest,
    crop_margin,
    decode_crop,
    encode_crop,
    examples_from_crops,
    load_adaptation,
    pad_cell_crop,
    profile_reference,
    read_labelled_photo,
    save_adaptation,
    without_adaptation,
)
from scanner.pipeline import Scanner
from tablescan.games import readers
from tablescan.review.db import Store, default_db_path, now_text

DEFAULT_PROFILE = "default"
# the newest cells per game an adaptation learns from (each is read 8 ways): keeps a run within seconds
MAX_CELLS = 1200


@dataclass(frozen=True)
class AdaptOutcome:
    """What one ``adapt`` run did: per-model reports, notes, and where the kept adaptation went."""

    profile: str
    reports: tuple[ModelReport, ...]
    notes: tuple[str, ...] = ()
    saved: Path | None = None
    kept_models: tuple[str, ...] = field(default=())
    earlier: tuple[str, ...] = ()  # models an earlier run adapted, still in the profile

    def to_json(self) -> dict:
        """The outcome as a JSON object (for the review screen)."""
        return {
            "profile": self.profile,
            "saved": None if self.saved is None else str(self.saved),
            "kept": list(self.kept_models),
            "earlier": list(self.earlier),
            "notes": list(self.notes),
            "models": [r.to_json() for r in self.reports],
        }

    def to_text(self) -> str:
        """Lines for people."""
        lines = [report.to_text() for report in self.reports]
        lines += [f"note: {note}" for note in self.notes]
        if self.saved is not None:
            lines.append(
                f"kept the adaptation of {', '.join(self.kept_models)}: saved {self.saved}; "
                f"scan with `tablescan scan PHOTO --profile {self.profile}` to use it"
            )
        else:
            still = (
                (
                    f"the profile's earlier adaptation of {', '.join(self.earlier)} stays in use "
                    f"(`tablescan adapt --profile {self.profile} --reset` drops it)"
                )
                if self.earlier
                else "scans keep using the shipped models"
            )
            lines.append(f"kept nothing new: it did not read the held-out examples better; {still}")
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
            }
            for reading, key in pairs
        ]
        stored += store.add_examples(photo.player_id, photo.group, examples, origin="derived")
    return stored, notes


def stored_examples(store: Store, load: Any = None, max_cells: int = MAX_CELLS) -> tuple[dict[str, ExampleSet], list[str]]:
    """Examples from the crops stored in the review database, labelled with their cells' values.

    Each game learns from its newest ``max_cells`` labelled cells.

    Raises:
        AdaptationError: a game has no adaptable classifier.
    """
    if load is None:
        load = scanner_model.load_model  # looked up at call time (tests stand in a toy model)
    by_game: dict[str, tuple[list, list, list]] = {}
    unreadable = unlabelled = 0
    for row in store.examples(tuple(CLASSIFIERS)):
        if row["label"] is None:
            unlabelled += 1
            continue
        try:
            crop = decode_crop(row["crop"], f"example {row['id']}")
        except AdaptationError:
            unreadable += 1
            continue
        crops, values, groups = by_game.setdefault(row["game"], ([], [], []))
        crops.append(crop)
        values.append(row["label"])
        groups.append(int(row["photo_id"]))
    notes = []
    if unreadable:
        notes.append(f"{unreadable} stored crops could not be decoded and were left out")
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
    return sets, notes


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
        values.append(str(item.get("label", "")))
        groups.append(photo_ids.setdefault(str(item.get("photo_sha256")), len(photo_ids)))
    sets = {}
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
) -> AdaptOutcome:
    """Collect examples, adapt every classifier that has some, and save what helps into the profile.

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
    if not kept:
        earlier = profile.adaptation.get("models", []) if isinstance(profile.adaptation, dict) else []
        return AdaptOutcome(profile_name, tuple(reports), tuple(notes), earlier=tuple(str(m) for m in earlier))
    new = Adaptation(tuple(kept), now_text(), tuple(r.to_json() for r in reports if r.kept))
    path = adaptation_file(profile_name, directory)
    if profile.adaptation is not None and path.exists():
        try:
            new = load_adaptation(path).merged(new)  # keep other games' adaptations
        except AdaptationError as error:
            notes.append(f"previous adaptation dropped ({error})")
    sha256 = save_adaptation(new, path)
    save_profile(Profile(profile.name, profile.camera, profile.colour, profile_reference(path, sha256, new)), directory)
    return AdaptOutcome(profile_name, tuple(reports), tuple(notes), path, tuple(m.model for m in kept))


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
@click.option("--reset", is_flag=True, help="Forget the profile's adaptation: scans use the shipped models again.")
@click.option(
    "--profile-dir",
    type=click.Path(file_okay=False, path_type=Path),
    envvar=PROFILE_DIR_ENV,
    default=None,
    help=f"Where profiles are kept (default: the user's config dir; env {PROFILE_DIR_ENV}).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def adapt(profile_name: str, db_path: Path | None, from_dir: Path | None, reset: bool, profile_dir: Path | None, as_json: bool) -> None:
    """Adapt the scanner to your own game set from the boards corrected in the review screen."""
    if reset:
        had = reset_profile(profile_name, profile_dir)
        click.echo(
            f"profile '{profile_name}': " + ("adaptation removed" if had else "had no adaptation") + "; scans use the shipped models"
        )
        return
    store = None
    if from_dir is None or db_path is not None:
        path = db_path or default_db_path()
        if not path.exists():
            raise AdaptationError(f"{path}: no review database here; run `tablescan review` first, or pass --db or --from")
        store = Store(path)
    outcome = adapt_profile(profile_name, store=store, from_dir=from_dir, directory=profile_dir)
    click.echo(json.dumps(outcome.to_json(), indent=2) if as_json else outcome.to_text())
