"""Named calibration profiles: a camera part and a colour part, saved as versioned JSON.

Profiles live in ``profile_dir()``: ``$TABLESCAN_PROFILE_DIR`` when set, otherwise
``<user config dir>/tablescan/profiles``. Each is ``<name>.json``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from calibration.camera import CameraModel, undistort_image
from calibration.colour import ColourCorrection, apply_colour
from calibration.errors import CalibrationError
from calibration.image import check_image
from scoring.errors import Remedy, StateError
from scoring.fields import child, describe, expect_int, expect_object, expect_str, fail, field

PROFILE_VERSION = 1
PROFILE_DIR_ENV = "TABLESCAN_PROFILE_DIR"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Profile:
    """A named calibration: optional camera model, colour correction and adaptation reference.

    ``adaptation`` is kept for the adapt feature: a path (string) or a JSON object, preserved as is.
    """

    name: str
    camera: CameraModel | None = None
    colour: ColourCorrection | None = None
    adaptation: str | dict | None = None

    def __post_init__(self) -> None:
        check_name(self.name)
        if self.adaptation is not None and not isinstance(self.adaptation, (str, dict)):
            raise CalibrationError(f"profile '{self.name}': adaptation must be a path or an object, got {type(self.adaptation).__name__}")

    def to_json(self) -> dict:
        """The profile as a JSON object (``from_json`` is its inverse)."""
        return {
            "version": PROFILE_VERSION,
            "name": self.name,
            "camera": None if self.camera is None else self.camera.to_json(),
            "colour": None if self.colour is None else self.colour.to_json(),
            "adaptation": self.adaptation,
        }

    @classmethod
    def from_json(cls, doc: Any) -> Profile:
        """Read a profile written by ``to_json``.

        Raises:
            StateError: a key is missing, has the wrong type, or the version is unknown (naming its JSON path).
            CalibrationError: the values are impossible.
        """
        obj = expect_object(doc, "")
        version = expect_int(field(obj, "version", ""), "version", low=1)
        if version > PROFILE_VERSION:
            raise fail("version", f"expected {PROFILE_VERSION}, got {version} (written by a newer tablescan; upgrade)")
        name = expect_str(field(obj, "name", ""), "name")
        if not NAME_PATTERN.match(name):
            raise fail("name", f"expected letters, digits, '.', '_' or '-', got {describe(name)}")
        camera = obj.get("camera")
        colour = obj.get("colour")
        adaptation = obj.get("adaptation")
        if adaptation is not None and not isinstance(adaptation, (str, dict)):
            raise fail("adaptation", f"expected a path string or an object, got {describe(adaptation)}")
        return cls(
            name=name,
            camera=None if camera is None else CameraModel.from_json(camera, child("", "camera")),
            colour=None if colour is None else ColourCorrection.from_json(colour, child("", "colour")),
            adaptation=adaptation,
        )

    def describe(self) -> str:
        """A few lines for people: what the profile corrects and how well it was measured."""
        lines = [f"profile {self.name}"]
        if self.camera is None:
            lines.append("  camera: none (photos are not undistorted)")
        else:
            c = self.camera
            k1, k2, p1, p2, _k3 = c.distortion
            lines.append(f"  camera: {c.width_px}x{c.height_px} px, fx {c.fx:.1f}, fy {c.fy:.1f}, cx {c.cx:.1f}, cy {c.cy:.1f}")
            lines.append(f"  distortion: k1 {k1:+.4f}, k2 {k2:+.4f}, p1 {p1:+.5f}, p2 {p2:+.5f}")
            lines.append(f"  fit: {c.views} views, reprojection error {c.rms_px:.3f} px RMS, target {c.target.describe()}")
        if self.colour is None:
            lines.append("  colour: none (colours are not corrected)")
        else:
            gains = ", ".join(f"{g:.3f}" for g in self.colour.gains)
            lines.append(f"  colour: gains R,G,B {gains} (exposure {self.colour.exposure_ev:+.2f} EV), from {self.colour.reference}")
        if self.adaptation is not None:
            lines.append(f"  adaptation: {self.adaptation if isinstance(self.adaptation, str) else 'object'}")
        return "\n".join(lines)


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid profile name (letters, digits, ``.``, ``_``, ``-``).

    Raises:
        CalibrationError: when it is not.
    """
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise CalibrationError(f"profile name {name!r}: expected 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return name


def profile_dir() -> Path:
    """The directory profiles are saved in: ``$TABLESCAN_PROFILE_DIR`` or the user's config dir."""
    override = os.environ.get(PROFILE_DIR_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir("tablescan")) / "profiles"


def profile_path(name: str, directory: str | Path | None = None) -> Path:
    """Where the profile ``name`` is (or would be) saved.

    Raises:
        CalibrationError: the name is not valid.
    """
    return Path(directory or profile_dir()) / f"{check_name(name)}.json"


def save_profile(profile: Profile, directory: str | Path | None = None) -> Path:
    """Write ``profile`` as ``<directory>/<name>.json`` (atomically) and return the path.

    Raises:
        CalibrationError: the directory cannot be created or written.
    """
    path = profile_path(profile.name, directory)
    text = json.dumps(profile.to_json(), indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        raise CalibrationError(f"profile '{profile.name}': cannot write {path} ({error.__class__.__name__}: {error})") from None
    return path


def load_profile(name_or_path: str | Path, directory: str | Path | None = None) -> Profile:
    """Load a profile by name (from ``directory`` or ``profile_dir()``) or from a ``.json`` path.

    Raises:
        CalibrationError: the profile does not exist or is corrupt, naming it and what to do.
    """
    remedy: Remedy | None = None
    who: str | None = None
    if isinstance(name_or_path, Path) or str(name_or_path).endswith(".json") or os.sep in str(name_or_path) or "/" in str(name_or_path):
        path = Path(name_or_path)
        label = f"profile {path}"
        missing = f"{label}: no such file"
    else:
        name = str(name_or_path)
        path = profile_path(name, directory)
        label = f"profile '{name}' ({path})"
        missing = f"profile '{name}' not found in {path.parent}; {Remedy.MAKE_PROFILE.words}"
        remedy, who = Remedy.MAKE_PROFILE, name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(missing, remedy=remedy, profile=who) from None
    except (OSError, UnicodeDecodeError) as error:
        raise CalibrationError(f"{label}: cannot read ({error.__class__.__name__}); calibrate again") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise CalibrationError(
            f"{label}: corrupt, invalid JSON at line {error.lineno} column {error.colno} ({error.msg}); delete it and calibrate again"
        ) from None
    try:
        return Profile.from_json(doc)
    except (StateError, CalibrationError) as error:
        raise CalibrationError(f"{label}: corrupt, {error}; delete it and calibrate again") from None


def list_profiles(directory: str | Path | None = None) -> list[str]:
    """The names of the saved profiles, sorted."""
    folder = Path(directory or profile_dir())
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if NAME_PATTERN.match(p.stem))


def apply_profile(image_rgb: np.ndarray, profile: Profile) -> np.ndarray:
    """Undistort (when the profile has a camera) then colour-correct (when it has colour); a new array.

    Raises:
        ValueError: the image is not (H, W, 3) uint8 RGB.
        CalibrationError: the photo's aspect ratio does not match the camera calibration.
    """
    check_image(image_rgb)
    image = undistort_image(image_rgb, profile.camera) if profile.camera is not None else image_rgb.copy()
    if profile.colour is not None:
        image = apply_colour(image, profile.colour)
    return image
