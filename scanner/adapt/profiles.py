"""Profile wiring: where a calibration profile's adaptation is saved, and loading the one it selects."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from calibration.profile import profile_dir, profile_path
from scanner.adapt.storage import Adaptation, load_adaptation
from scanner.errors import AdaptationError, Remedy


def adaptation_file(profile_name: str, directory: str | Path | None = None) -> Path:
    """Where profile ``profile_name``'s adaptation is saved: beside the profile, ``<name>.adapt.npz``.

    Raises:
        CalibrationError: the name is not a valid profile name.
    """
    path = profile_path(profile_name, directory)
    return path.with_name(f"{path.stem}.adapt.npz")


def profile_reference(path: Path, sha256: str, adaptation: Adaptation) -> dict:
    """The JSON object a profile's ``adaptation`` slot holds for a saved adaptation file."""
    return {
        "file": str(Path(path).resolve()),
        "sha256": sha256,
        "models": [m.model for m in adaptation.models],
        "created_at": adaptation.created_at,
    }


def profile_adaptation(profile: Any, directory: str | Path | None = None) -> Adaptation | None:
    """Load the adaptation a calibration profile selects (None when it selects none).

    The slot holds ``{"file", "sha256", ...}`` or a path; a file no longer where it was is looked for
    in the profile folder.

    Raises:
        AdaptationError: the slot is malformed, or the file is missing, changed or corrupt.
    """
    slot = getattr(profile, "adaptation", None)
    if slot is None:
        return None
    folder = Path(directory or profile_dir())
    name = getattr(profile, "name", "?")
    if isinstance(slot, str):
        file, sha256 = slot, None
    elif isinstance(slot, dict) and isinstance(slot.get("file"), str):
        file, sha256 = slot["file"], slot.get("sha256")
        if sha256 is not None and not isinstance(sha256, str):
            raise AdaptationError(
                f"profile '{name}': adaptation.sha256: expected a string, got {sha256!r}; {Remedy.RESET_ADAPTATION.words}",
                remedy=Remedy.RESET_ADAPTATION,
                profile=name,
            )
    else:
        raise AdaptationError(
            f"profile '{name}': adaptation: expected a file name or {{\"file\": ...}}, got {slot!r}; {Remedy.RESET_ADAPTATION.words}",
            remedy=Remedy.RESET_ADAPTATION,
            profile=name,
        )
    path = Path(file)
    if not path.is_absolute() or not path.exists():  # relative, or the profile folder has moved
        path = folder / path.name
    try:
        adaptation = load_adaptation(path, sha256)
    except AdaptationError as error:
        raise AdaptationError(f"profile '{name}': {error}", remedy=error.remedy, profile=name) from None
    return replace(adaptation, source=f"profile '{name}': {path}", profile=name)


def without_adaptation(profile: Any) -> Any:
    """The same profile with its adaptation slot emptied (a new object)."""
    return replace(profile, adaptation=None)
