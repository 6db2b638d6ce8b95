"""``tablescan calibrate`` through click's CliRunner: output, saved profiles, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from calibration import CameraModel, Target, load_profile
from calibration.image import save_image
from calibration.synthetic import cast_colour, random_poses, render_view
from tablescan.cli import cli

CAMERA = CameraModel(640, 480, 560.0, 555.0, 330.0, 238.0, (-0.2, 0.05, 0.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("photos")
    paths = []
    for index, (rvec, tvec) in enumerate(random_poses(Target(), CAMERA, 6, seed=11)):
        path = folder / f"IMG_{index}.png"
        save_image(path, render_view(Target(), CAMERA, rvec, tvec))
        paths.append(path)
    return paths


@pytest.fixture()
def run(tmp_path: Path):
    runner = CliRunner(env={"TABLESCAN_PROFILE_DIR": str(tmp_path / "profiles")})

    def invoke(*args: str):
        return runner.invoke(cli, ["calibrate", *map(str, args)])

    return invoke


def test_target_command_writes_the_page(run, tmp_path: Path) -> None:
    result = run("target", tmp_path / "t.png", "--dpi", "100")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t.png").exists() and "print at 100 %" in result.output


def test_charuco_target_command(run, tmp_path: Path) -> None:
    result = run("target", tmp_path / "c.pdf", "--kind", "charuco", "--marker-mm", "18")
    assert result.exit_code == 0, result.output
    assert "ChArUco board (DICT_5X5_100), 25 mm squares, 18 mm markers" in result.output


def test_camera_then_colour_build_one_profile(run, photos, tmp_path: Path) -> None:
    result = run("camera", *photos, "--name", "phone")
    assert result.exit_code == 0, result.output
    assert "saved profile 'phone'" in result.output and "reprojection error" in result.output
    profile = load_profile("phone", tmp_path / "profiles")
    assert abs(profile.camera.fx / CAMERA.fx - 1) < 0.02 and profile.colour is None

    board = np.full((120, 160, 3), 60, np.uint8)
    board[20:60, 20:60] = 210
    save_image(tmp_path / "board.png", cast_colour(board, (1.2, 1.0, 0.7)))
    result = run(
        "colour",
        tmp_path / "board.png",
        "--name",
        "phone",
        "--region",
        "25,25,30,30",
        "--level",
        "210",
        "--preview",
        tmp_path / "preview.png",
    )
    assert result.exit_code == 0, result.output
    assert "gains R,G,B" in result.output and (tmp_path / "preview.png").exists()
    profile = load_profile("phone", tmp_path / "profiles")
    assert profile.camera is not None and np.allclose(profile.colour.gains, (1 / 1.2, 1.0, 1 / 0.7), rtol=0.02)

    listed = run("list")
    assert listed.exit_code == 0 and listed.output.strip() == "phone\tcamera + colour"
    shown = run("show", "phone")
    assert shown.exit_code == 0 and shown.output.startswith("profile phone\n  camera: 640x480 px")
    as_json = run("show", "phone", "--json")
    assert json.loads(as_json.output)["name"] == "phone"


def test_profile_dir_option_wins(run, tmp_path: Path) -> None:
    board = np.full((40, 40, 3), 200, np.uint8)
    save_image(tmp_path / "grey.png", board)
    result = CliRunner().invoke(
        cli,
        [
            "calibrate",
            "--profile-dir",
            str(tmp_path / "elsewhere"),
            "colour",
            str(tmp_path / "grey.png"),
            "--name",
            "g",
            "--region",
            "0,0,40,40",
        ],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "elsewhere" / "g.json").exists()


def test_list_without_profiles_says_how_to_start(run) -> None:
    result = run("list")
    assert result.exit_code == 0 and "no profiles in" in result.output


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda p, t: ["camera", *p[:3], "--name", "x"], "too few views: the target was found in 3 photo(s)"),
        (
            lambda p, t: ["camera", *p, t / "blank.png", "--name", "x"],
            "tablescan: blank.png: calibration target not found",
        ),
        (lambda p, t: ["camera", *p, t / "gone.png", "--name", "x"], "tablescan: gone.png: no such file"),
        (lambda p, t: ["camera", *p, "--name", "bad name"], "tablescan: profile name 'bad name'"),
        (
            lambda p, t: ["colour", t / "blank.png", "--name", "x", "--region", "1,2,3"],
            "--region: expected x,y,w,h in whole pixels, got '1,2,3'",
        ),
        (
            lambda p, t: ["colour", t / "blank.png", "--name", "x", "--region", "0,0,900,10"],
            "blank.png: region 0,0,900,10 is not inside",
        ),
        (lambda p, t: ["colour", t / "notes.txt", "--name", "x"], "tablescan: notes.txt: not a readable image"),
        (lambda p, t: ["show", "nothing"], "tablescan: profile 'nothing' not found in"),
        (lambda p, t: ["show", t / "broken.json"], "broken.json: corrupt, invalid JSON"),
        (lambda p, t: ["target", t / "t.gif"], "t.gif: expected a .png or .pdf file name"),
    ],
    ids=[
        "few",
        "blank",
        "missing",
        "name",
        "region text",
        "region outside",
        "not image",
        "no profile",
        "corrupt",
        "suffix",
    ],
)
def test_bad_input_is_one_line_and_exit_2(make_args, message: str, run, photos, tmp_path: Path) -> None:
    save_image(tmp_path / "blank.png", np.full((480, 640, 3), 128, np.uint8))
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "broken.json").write_text("{")
    result = run(*make_args(photos, tmp_path))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


@pytest.fixture(scope="module")
def charuco_photo(tmp_path_factory) -> Path:
    """A close view of the ChArUco board, which a chessboard search does not find (its markers show)."""
    charuco = Target(kind="charuco")
    rvec, tvec = random_poses(charuco, CAMERA, 3, seed=3, fill=0.9, spread=0.35, whole=False)[2]
    path = tmp_path_factory.mktemp("charuco") / "part.png"
    save_image(path, render_view(charuco, CAMERA, rvec, tvec))
    return path


@pytest.mark.parametrize(
    ("make_args", "flag_words"),
    [
        (lambda p, t, c: ["camera", *p, t / "blank.png", "--name", "x"], "or drop the photo (--skip-missing)"),
        (lambda p, t, c: ["camera", *p, c, "--name", "x"], "for a ChArUco board calibrate with --kind charuco"),
        (
            lambda p, t, c: ["colour", t / "white.png", "--name", "x"],
            "no white or light grey reference found; give one with --region x,y,w,h",
        ),
        (
            lambda p, t, c: ["show", "phone"],
            "create it with `tablescan calibrate camera PHOTOS... --name phone` or `tablescan calibrate colour PHOTO --name phone` "
            "(`tablescan calibrate list` shows saved profiles)",
        ),
    ],
    ids=["skip-missing", "kind charuco", "region", "no profile"],
)
def test_the_cli_words_calibration_remedies_as_flags(make_args, flag_words: str, run, photos, charuco_photo, tmp_path: Path) -> None:
    save_image(tmp_path / "blank.png", np.full((480, 640, 3), 128, np.uint8))
    save_image(tmp_path / "white.png", np.full((480, 640, 3), 255, np.uint8))
    result = run(*make_args(photos, tmp_path, charuco_photo))
    assert result.exit_code == 2, result.output
    assert flag_words in result.stderr and len(result.stderr.strip().splitlines()) == 1
