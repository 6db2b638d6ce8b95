"""Every model's adaptation as one profile selects it, saved as an ``.npz`` file (no pickles) and loaded back."""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scanner.adapt.fitting import ModelAdaptation
from scanner.adapt.head import HeadFit
from scanner.adapt.memory import CellMemory
from scanner.errors import AdaptationError, Remedy

ADAPTATION_FORMAT = "tablescan-adaptation"
ADAPTATION_VERSION = 5  # 2: each head names its own basis, which may include the crop's colour features; 3: binary heads;
# 4: a memory of corrected cells; 5: heads that keep the shipped P(nothing there) (``HeadFit.kept_first``)


@dataclass(frozen=True)
class Adaptation:
    """The adapted heads of one or more models, as one profile selects them."""

    models: tuple[ModelAdaptation, ...]
    created_at: str = ""
    report: tuple[dict, ...] = ()
    source: str = field(default="adaptation", compare=False)
    profile: str | None = field(default=None, compare=False)

    def model(self, name: str) -> ModelAdaptation | None:
        """Return the adaptation of model ``name``, or None."""
        return next((m for m in self.models if m.model == name), None)

    def merged(self, other: Adaptation) -> Adaptation:
        """Return this adaptation with ``other``'s models replacing or adding to its own."""
        names = {m.model for m in other.models}
        models = tuple(m for m in self.models if m.model not in names) + other.models
        reports = tuple(r for r in self.report if r.get("model") not in names) + other.report
        return Adaptation(models, other.created_at or self.created_at, reports, self.source, self.profile)


def apply_head(
    adaptation: Adaptation | None, model_name: str, outputs: Mapping[str, np.ndarray], batch: np.ndarray | None = None
) -> Mapping[str, np.ndarray]:
    """The hook readers call on a model's outputs (and its input ``batch``): adapted logits when ``adaptation`` covers the model.

    Without an adaptation (or one for other models) the very same outputs come back.

    Raises:
        AdaptationError: the outputs do not match what the adaptation was fitted on, or a needed batch is missing.
    """
    fitted = None if adaptation is None else adaptation.model(model_name)
    return outputs if fitted is None else fitted.apply(outputs, batch)


def _corrupt(path: Path | str, what: str) -> AdaptationError:
    return AdaptationError(f"{path}: corrupt adaptation file ({what}); {Remedy.ADAPT_AGAIN.words}", remedy=Remedy.ADAPT_AGAIN)


def to_npz_bytes(adaptation: Adaptation) -> bytes:
    """Serialise ``adaptation`` as ``.npz`` bytes: a JSON ``meta`` plus one array per fitted number."""
    arrays: dict[str, Any] = {}  # name -> array (Any: numpy types savez_compressed's keywords loosely)
    models = []
    for i, fitted in enumerate(adaptation.models):
        heads = []
        for j, fit in enumerate(fitted.heads):
            for part in ("mean", "scale", "weights", "bias"):
                arrays[f"m{i}_h{j}_{part}"] = np.asarray(getattr(fit, part), dtype=np.float64)
            heads.append(
                {
                    "head": fit.head,
                    "classes": list(fit.classes),
                    "temperature": fit.temperature,
                    "basis": list(fit.basis),
                    "logit_scale": fit.logit_scale,
                    "binary": fit.binary,
                    "kept_first": fit.kept_first,
                }
            )
        entry: dict[str, Any] = {"model": fitted.model, "sha256": fitted.sha256, "basis": list(fitted.basis), "heads": heads}
        memory = fitted.memory
        if memory is not None:
            arrays[f"m{i}_memory_keys"] = np.asarray(memory.keys, dtype=np.float32)
            for head, labels in memory.labels.items():
                arrays[f"m{i}_memory_{head}"] = np.asarray(labels, dtype=np.int64)
            entry["memory"] = {
                "heads": list(memory.labels),
                "bar": memory.bar,
                "margin": memory.margin,
                "boost": memory.boost,
                "poolings": memory.poolings,
            }
        models.append(entry)
    meta = {
        "format": ADAPTATION_FORMAT,
        "version": ADAPTATION_VERSION,
        "created_at": adaptation.created_at,
        "models": models,
        "report": list(adaptation.report),
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def from_npz_bytes(data: bytes, source: str = "adaptation") -> Adaptation:
    """Read what ``to_npz_bytes`` wrote.

    Raises:
        AdaptationError: not such a file, a newer version, or inconsistent contents (naming ``source``).
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:  # the kinds a damaged .npz raises
        raise _corrupt(source, f"not a readable .npz: {error.__class__.__name__}") from None
    if "meta" not in arrays:
        raise _corrupt(source, "no meta record")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _corrupt(source, f"meta is not JSON: {error}") from None
    if not isinstance(meta, dict) or meta.get("format") != ADAPTATION_FORMAT:
        raise _corrupt(source, f"expected format {ADAPTATION_FORMAT!r}")
    version = meta.get("version")
    if not isinstance(version, int) or version > ADAPTATION_VERSION:
        raise AdaptationError(
            f"{source}: adaptation version {version!r} is newer than this tablescan knows "
            f"({ADAPTATION_VERSION}); upgrade tablescan, or {Remedy.RESET_ADAPTATION.words}",
            remedy=Remedy.RESET_ADAPTATION,
        )
    try:
        models = []
        for i, entry in enumerate(meta["models"]):
            heads = []
            for j, head in enumerate(entry["heads"]):
                parts = {part: arrays[f"m{i}_h{j}_{part}"] for part in ("mean", "scale", "weights", "bias")}
                heads.append(
                    HeadFit(
                        str(head["head"]),
                        tuple(str(c) for c in head["classes"]),
                        float(head["temperature"]),
                        **parts,
                        basis=tuple(str(b) for b in head.get("basis", ())),
                        logit_scale=float(head.get("logit_scale", 1.0)),
                        binary=bool(head.get("binary", False)),
                        kept_first=bool(head.get("kept_first", False)),
                    )
                )
            memory = None
            if entry.get("memory") is not None:
                kept = entry["memory"]
                labels = {str(head): arrays[f"m{i}_memory_{head}"] for head in kept["heads"]}
                memory = CellMemory(
                    arrays[f"m{i}_memory_keys"],
                    labels,
                    float(kept["bar"]),
                    float(kept["margin"]),
                    float(kept["boost"]),
                    int(kept.get("poolings", 1)),  # a profile saved before keys per pooling: one each
                )
            models.append(
                ModelAdaptation(str(entry["model"]), str(entry["sha256"]), tuple(str(b) for b in entry["basis"]), tuple(heads), memory)
            )
        report = tuple(r for r in meta.get("report", []) if isinstance(r, dict))
        return Adaptation(tuple(models), str(meta.get("created_at", "")), report, source)
    except AdaptationError as error:
        raise _corrupt(source, str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        raise _corrupt(source, f"{error.__class__.__name__}: {error}") from None


def file_sha256(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def save_adaptation(adaptation: Adaptation, path: str | Path) -> str:
    """Write ``adaptation`` to ``path`` atomically and return the file's sha256.

    Raises:
        AdaptationError: the file cannot be written.
    """
    path = Path(path)
    data = to_npz_bytes(adaptation)
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError as error:
        raise AdaptationError(f"{path}: cannot write the adaptation ({error.__class__.__name__}: {error})") from None
    return file_sha256(data)


def load_adaptation(path: str | Path, sha256: str | None = None) -> Adaptation:
    """Read an adaptation file, checking its sha256 when the profile recorded one.

    Raises:
        AdaptationError: missing, changed since it was written, or corrupt.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AdaptationError(f"{path}: adaptation file missing; {Remedy.ADAPT_AGAIN.words}", remedy=Remedy.ADAPT_AGAIN) from None
    except OSError as error:
        raise AdaptationError(f"{path}: cannot read the adaptation ({error.__class__.__name__})") from None
    if sha256 is not None and file_sha256(data) != sha256:
        raise _corrupt(path, f"sha256 {file_sha256(data)[:12]}... is not the recorded {str(sha256)[:12]}...")
    return from_npz_bytes(data, str(path))
