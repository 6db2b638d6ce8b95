"""Profiles: versioned JSON in the config directory, clear errors, apply_profile (calibration/profile.py)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calibration
from calibration import CalibrationError, CameraModel, ColourCorrection, Profile, Target
from calibration.camera import undistort_image
from calibration.colour import apply_colour
from calibration.profile import PROFILE_DIR_ENV, profile_path
from scoring.errors import Remedy, TableError

CAMERA = CameraModel(640, 480, 560.0, 555.0, 330.0, 238.0, (-0.25, 0.08, 0.001, -0.0005, 0.0), 0.11, 10, Target())
COLOUR = ColourCorrection(gains=(0.8, 1.0, 1.43), reference="region 10,10,40,40 of board.jpg")
FULL = Profile(name="pixel-7", camera=CAMERA, colour=COLOUR, adaptation={"reference": "adapt/pixel-7", "crops": 40})


def test_calibration_error_is_bad_input() -> None:
    assert issubclass(CalibrationError, TableError)
    assert (CalibrationError.exit_code, CalibrationError.http_status) == (2, 400)
    assert issubclass(calibration.TargetNotFoundError, CalibrationError)


@pytest.mark.parametrize(
    "profile",
    [
        FULL,
        Profile(name="only.camera", camera=CAMERA),
        Profile(name="c_1", colour=COLOUR, adaptation="adapt/c1.json"),
        Profile(name="empty"),
    ],
    ids=["full", "camera", "colour", "empty"],
)
def test_save_then_load_gives_the_same_profile(profile: Profile, tmp_path: Path) -> None:
    path = calibration.save_profile(profile, tmp_path)
    assert path == tmp_path / f"{profile.name}.json"
    assert json.loads(path.read_text())["version"] == 1
    assert calibration.load_profile(profile.name, tmp_path) == profile
    assert calibration.load_profile(str(path)) == profile
    assert calibration.load_profile(path) == profile


@settings(max_examples=30, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    gains=st.tuples(*[st.floats(0.2, 5.0)] * 3),
    adaptation=st.one_of(st.none(), st.text(max_size=10), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
)
def test_profile_json_round_trips(name, gains, adaptation) -> None:
    profile = Profile(name=name, camera=CAMERA, colour=ColourCorrection(gains=gains), adaptation=adaptation)
    assert Profile.from_json(json.loads(json.dumps(profile.to_json()))) == profile


def test_profile_dir_follows_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv(PROFILE_DIR_ENV, raising=False)
    assert calibration.profile_dir().parts[-2:] == ("tablescan", "profiles")
    monkeypatch.setenv(PROFILE_DIR_ENV, str(tmp_path))
    assert calibration.profile_dir() == tmp_path
    calibration.save_profile(Profile(name="here"), None)
    assert (tmp_path / "here.json").exists()
    assert calibration.load_profile("here") == Profile(name="here")
    assert calibration.list_profiles() == ["here"]


def test_list_profiles_is_sorted_and_ignores_other_files(tmp_path: Path) -> None:
    for name in ("b", "a"):
        calibration.save_profile(Profile(name=name), tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    assert calibration.list_profiles(tmp_path) == ["a", "b"]
    assert calibration.list_profiles(tmp_path / "missing") == []


def _write(tmp_path: Path, doc) -> None:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    (tmp_path / "p.json").write_text(text)


@pytest.mark.parametrize(
    "doc, message",
    [
        ("{not json", r"profile 'p' \(.*p\.json\): corrupt, invalid JSON at line 1 column 2 .*calibrate again"),
        ([1, 2], r"corrupt, \(document\): expected an object, got a list of 2"),
        ({"name": "p"}, r"corrupt, version: missing required key"),
        ({"version": 2, "name": "p"}, r"version: expected 1, got 2 \(written by a newer tablescan; upgrade\)"),
        ({"version": 1, "name": "../x"}, r"name: expected letters"),
        (
            {"version": 1, "name": "p", "camera": {**CAMERA.to_json(), "fx": -3}},
            r"camera\.fx: expected a positive number, got -3",
        ),
        (
            {"version": 1, "name": "p", "camera": {**CAMERA.to_json(), "distortion": [0, 0]}},
            r"camera\.distortion: expected a list of 5 numbers",
        ),
        (
            {"version": 1, "name": "p", "colour": {"gains": [1, "x", 1]}},
            r"colour\.gains\[1\]: expected a positive number, got 'x'",
        ),
        ({"version": 1, "name": "p", "colour": {"gains": [1, 100, 1]}}, r"colour gains: expected 3 values"),
        ({"version": 1, "name": "p", "adaptation": 5}, r"adaptation: expected a path string or an object, got 5"),
    ],
    ids=[
        "json",
        "list",
        "no version",
        "newer",
        "bad name",
        "fx",
        "distortion",
        "gain type",
        "gain range",
        "adaptation",
    ],
)
def test_corrupt_profiles_are_named_errors(doc, message: str, tmp_path: Path) -> None:
    _write(tmp_path, doc)
    with pytest.raises(CalibrationError, match=message):
        calibration.load_profile("p", tmp_path)


def test_missing_profile_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError) as caught:
        calibration.load_profile("phone", tmp_path)
    text = str(caught.value)
    assert text.startswith(f"profile 'phone' not found in {tmp_path}")
    assert caught.value.remedy is Remedy.MAKE_PROFILE and caught.value.profile == "phone"  # the CLI words it as commands
    assert Remedy.MAKE_PROFILE.words in text and "tablescan" not in text and "--" not in text
    with pytest.raises(CalibrationError, match=r"profile .*nowhere\.json: no such file"):
        calibration.load_profile(str(tmp_path / "nowhere.json"))


@pytest.mark.parametrize(
    "name, expectation",
    [
        ("pixel-7", nullcontext()),
        ("a.b_c", nullcontext()),
        ("", pytest.raises(CalibrationError, match="profile name ''")),
        ("-x", pytest.raises(CalibrationError, match="starting with a letter or digit")),
        ("a b", pytest.raises(CalibrationError, match="profile name 'a b'")),
        ("x" * 65, pytest.raises(CalibrationError, match="1-64")),
    ],
)
def test_profile_names(name: str, expectation, tmp_path: Path) -> None:
    with expectation:
        assert profile_path(name, tmp_path) == tmp_path / f"{name}.json"


def test_unwritable_directory_is_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CalibrationError, match=r"profile 'empty': cannot write"):
        calibration.save_profile(Profile(name="empty"), blocker / "sub")


def _photo(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (480, 640, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    "profile",
    [FULL, Profile(name="c", camera=CAMERA), Profile(name="k", colour=COLOUR), Profile(name="e")],
    ids=["full", "camera", "colour", "empty"],
)
def test_apply_profile_undistorts_then_corrects_colour(profile: Profile) -> None:
    image = _photo()
    before = image.copy()
    out = calibration.apply_profile(image, profile)
    expected = image
    if profile.camera is not None:
        expected = undistort_image(expected, profile.camera)
    if profile.colour is not None:
        expected = apply_colour(expected, profile.colour)
    assert out is not image and out.dtype == np.uint8 and out.shape == image.shape
    assert np.array_equal(out, expected)
    assert np.array_equal(image, before)


@pytest.mark.parametrize("image", [np.zeros((10, 10), np.uint8), np.zeros((10, 10, 4), np.uint8), np.zeros((10, 10, 3), np.float32)])
def test_apply_profile_wants_rgb_uint8(image) -> None:
    with pytest.raises(ValueError, match=r"image_rgb: expected \(H, W, 3\) uint8 RGB"):
        calibration.apply_profile(image, FULL)


def test_describe_mentions_both_parts() -> None:
    text = FULL.describe()
    assert "fx 560.0" in text and "k1 -0.2500" in text and "gains R,G,B 0.800, 1.000, 1.430" in text
    assert "camera: none" in Profile(name="e").describe()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 5000) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def _mutate(doc, path: list, value):
    """``doc`` with the value at ``path`` (keys into nested objects) replaced."""
    if not path:
        return value
    if not isinstance(doc, dict):
        return doc
    return {**doc, path[0]: _mutate(doc.get(path[0]), path[1:], value)}


PATHS = [
    [],
    ["version"],
    ["name"],
    ["camera"],
    ["colour"],
    ["adaptation"],
    ["camera", "fx"],
    ["camera", "width_px"],
    ["camera", "distortion"],
    ["camera", "target"],
    ["camera", "target", "kind"],
    ["camera", "target", "columns"],
    ["camera", "target", "dictionary"],
    ["colour", "gains"],
    ["colour", "reference"],
]


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from(PATHS), value=JSON)
def test_any_json_loads_as_a_profile_or_a_calibration_error(path, value, tmp_path_factory) -> None:
    folder = tmp_path_factory.mktemp("fuzz", numbered=True)
    base = Profile(name="p", camera=CAMERA, colour=COLOUR).to_json()
    base["camera"]["target"] = Target(kind="charuco").to_json()
    (folder / "p.json").write_text(json.dumps(_mutate(base, path, value)))
    try:
        profile = calibration.load_profile("p", folder)
    except CalibrationError as error:
        assert str(error).startswith("profile 'p' (") and "\n" not in str(error)
    else:
        assert isinstance(profile, Profile)
