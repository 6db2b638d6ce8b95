"""Every bad input to ``tablescan scan``, ``score`` and ``review``: one stderr line, exit 2, no traceback (issue #20)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tablescan import scan as scan_module
from tablescan.cli import cli
from tablescan.documents import MAX_DEPTH, MAX_NUMBER_DIGITS

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_images"
SAGRADA_PHOTO = SAMPLES / "sagrada_straight_01.jpg"
ALHAMBRA_PHOTO = SAMPLES / "alhambra_01_straight.jpg"
SAGRADA_GAME = SAMPLES / "sagrada_game.json"


def _invoke(args: list[str], stdin: bytes | None = None):
    return CliRunner().invoke(cli, args, input=stdin)


def assert_one_line_refusal(result, *needles: str) -> None:
    """Exit 2, a single ``tablescan: ...`` line on stderr naming each of ``needles``, nothing on stdout."""
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tablescan: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert result.stdout == ""


class _NoScan:
    """Stands in for the Scanner: any scan means a check came too late."""

    def __init__(self, **_):
        pass

    def scan(self, *args, **kwargs):
        raise AssertionError("the scan started before the input was checked")


@pytest.fixture
def no_scan(monkeypatch):
    monkeypatch.setattr(scan_module, "Scanner", _NoScan)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--json", "/no/such/dir/out.json"], ["--json", "no folder /no/such/dir"]),
        (["--overlay", "/no/such/dir/o.png"], ["--overlay", "no folder"]),
        (["--overlay", "out.txt"], ["--overlay out.txt", ".png"]),
        (["--overlay", "out"], ["--overlay out", ".png"]),
        (["--overlay", "."], ["--overlay", ".png"]),
        (["--json", "-", "--score"], ["--json -", "standard output"]),
        (["--round", "2"], ["--round", "Sagrada has no such setting", "--objectives"]),
        (["--objectives", "foo"], ["--objectives", "'foo'", "light-shades"]),
        (["--private", "Blue,Z"], ["--private", "'Z'", "blue (B)"]),
        (["--favor", "-1"], ["--favor", "0-12"]),
        (["--favor", "²"], ["--favor", "0-12"]),
        (["--private", "red,blue,green"], ["--private", "expected 1 or 1"]),
        (["--players", "a,b"], ["--players", "expected 1 names"]),
        (["--corners", "1,2,3"], ["--corners", "8 numbers"]),
        (["--corners", "nan,0,500,0,500,500,0,500"], ["--corners", "finite"]),
        (["--corners", "inf,0,500,0,500,500,0,500"], ["--corners", "finite"]),
        (["--corners", "1e999,0,500,0,500,500,0,500"], ["--corners", "finite"]),
        (["--corners", "5,5,5,5,5,5,5,5"], ["--corners", "do not frame a board"]),
        (["--corners", "0,0,100,100,200,200,300,300"], ["--corners", "in a line"]),
        (["--corners", "0,0,9000,0,9000,9000,0,9000"], ["--corners", "outside the", "photo"]),
        (["--corners", "-50,-50,200,-50,200,200,-50,200"], ["--corners", "outside the"]),
    ],
)
def test_sagrada_scan_flags_are_checked_before_the_scan(no_scan, tmp_path, monkeypatch, args, needles) -> None:
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy warnings on the way
        result = _invoke(["scan", str(SAGRADA_PHOTO), "--game", "sagrada", *args])
    assert_one_line_refusal(result, *needles)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--favor", "2"], ["--favor", "Alhambra has no such setting", "--round"]),
        (["--private", "red"], ["--private", "Alhambra"]),
        (["--objectives", "light-shades"], ["--objectives", "Alhambra"]),
    ],
)
def test_sagrada_flags_on_an_alhambra_scan_are_refused(no_scan, args, needles) -> None:
    assert_one_line_refusal(_invoke(["scan", str(ALHAMBRA_PHOTO), "--game", "alhambra", *args]), *needles)


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("[1, 2]", ["--game-file", "expected a JSON object", "JSON list"]),
        ('{"players": {"Ana": {}}}', ["--game-file", "players", "got a JSON object"]),
        ('{"players": [1]}', ["--game-file", "players", "list of player objects, got a list holding other things"]),
        ('"text"', ["--game-file", "string"]),
        ("[" * 1200 + "]" * 1200, [f"{MAX_DEPTH} levels"]),
        ('{"x": ' + "7" * 5000 + "}", [f"{MAX_NUMBER_DIGITS}-digit limit"]),
    ],
)
def test_a_bad_game_file_is_refused_before_the_scan(no_scan, tmp_path, content, needles) -> None:
    game_file = tmp_path / "settings.json"
    game_file.write_text(content, encoding="utf-8")
    assert_one_line_refusal(_invoke(["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--game-file", str(game_file)]), *needles)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["scan", str(SAGRADA_PHOTO), "--game", "splendor"], ["Splendor is not read from photos yet", "tablescan score GAME.json"]),
        (["scan", str(SAGRADA_PHOTO), "--game", "chess"], ["'chess' is not one of 'alhambra', 'sagrada'", "scan --help"]),
        (["scan", str(SAGRADA_PHOTO)], ["Missing option '--game'"]),
        (["scan", "--game", "sagrada"], ["Missing argument"]),
        (["score", "a.json", "--format", "yaml"], ["--format", "score --help"]),
        (["nosuch"], ["No such command 'nosuch'"]),
        (["review", "--port", "99999"], ["--port"]),
        (["scan", "-", "-", "--game", "sagrada"], ["standard input (-) can be read once"]),
    ],
)
def test_usage_errors_are_one_line(no_scan, args, needles) -> None:
    assert_one_line_refusal(_invoke(args), *needles)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("data", "needles"),
    [
        ('{"game": "café"}'.encode("latin-1"), ["not UTF-8 text", "byte 0xe9", "save it as UTF-8"]),
        ('{"game": 1}'.encode("utf-16"), ["not UTF-8 text", "UTF-16"]),
        (b"[" * 5000 + b"]" * 5000, [f"nested more than {MAX_DEPTH} levels"]),
        (b'{"game": "sagrada", "n": ' + b"1" * 5000 + b"}", ["5000 digits", f"{MAX_NUMBER_DIGITS}-digit limit"]),
        (b'{"game": "sagrada", "n": 1.' + b"1" * 200 + b"}", [f"{MAX_NUMBER_DIGITS}-character limit"]),
        (b'{"game": "sagrada", "n": 1e999}', ["too large"]),
        (b'{"game": "sagrada", "n": NaN}', ["NaN is not a JSON number"]),
        (b"", ["invalid JSON"]),
        (b"[]", ["expected", "object"]),
    ],
)
def test_bad_game_files_to_score(tmp_path, data, needles) -> None:
    assert_one_line_refusal(_invoke(["score", str(_write(tmp_path / "game.json", data))]), *needles)


def test_score_accepts_a_utf8_byte_order_mark(tmp_path) -> None:
    plain = _invoke(["score", str(SAGRADA_GAME)])
    with_bom = _invoke(["score", str(_write(tmp_path / "bom.json", b"\xef\xbb\xbf" + SAGRADA_GAME.read_bytes()))])
    assert with_bom.exit_code == 0, with_bom.output
    assert json.loads(with_bom.stdout) == json.loads(plain.stdout)


def test_score_reads_at_most_the_size_limit(tmp_path, monkeypatch) -> None:
    from tablescan import documents

    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 1024 * 1024)
    big = _write(tmp_path / "big.json", b" " * (1024 * 1024 + 1))
    assert_one_line_refusal(_invoke(["score", str(big)]), "more than 1 MiB", "the limit")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize(
    ("command", "needles"), [(["score"], ["64 MiB"]), (["scan", "--game", "sagrada"], ["200 MiB", "limit for a photo"])]
)
def test_dev_zero_is_refused_at_the_stated_limit(command, needles) -> None:
    args = [command[0], "/dev/zero", *command[1:]]
    assert_one_line_refusal(_invoke(args), *needles)


@pytest.mark.parametrize(
    ("private", "expected"),
    [("R", ["red"]), ("red", ["red"]), ("Blue", ["blue"]), ("b", ["blue"]), ("PURPLE", ["purple"]), ("G,y", ["green", "yellow"])],
)
def test_private_takes_colour_names_and_letters_alike(private, expected) -> None:
    from tablescan.games import GAMES

    values = scan_module.flag_values(GAMES["sagrada"], {"--private": private.split(",")})
    assert values["--private"] == expected


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_review_on_a_busy_port_says_so_and_suggests_another(tmp_path, monkeypatch) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("served on a busy port"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _invoke(["review", "--db", str(tmp_path / "r.sqlite3"), "--port", str(port)])
    assert_one_line_refusal(result, f"--port {port}", "already in use", f"--port {port + 1}")
    assert not (tmp_path / "r.sqlite3").exists()


def test_review_db_in_a_missing_folder_is_refused(tmp_path) -> None:
    target = tmp_path / "no" / "such" / "x.db"
    assert_one_line_refusal(_invoke(["review", "--db", str(target), "--port", str(_free_port())]), "--db", "no folder")
    assert not (tmp_path / "no").exists()


def test_unknown_splendor_card_points_at_the_card_file(tmp_path) -> None:
    doc = json.loads((SAMPLES / "splendor_game.json").read_text(encoding="utf-8"))
    doc["players"][0]["cards"][0] = {"id": "L1-gold-1"} if isinstance(doc["players"][0]["cards"][0], dict) else "L1-gold-1"
    result = _invoke(["score", str(_write(tmp_path / "s.json", json.dumps(doc).encode()))])
    assert_one_line_refusal(result, "scoring/splendor/data/cards.json")
    assert (ROOT / "scoring" / "splendor" / "data" / "cards.json").is_file()


def test_corrupt_exif_gives_no_pillow_warning() -> None:
    from PIL import Image

    from scanner.photo import load_photo

    ok, encoded = cv2.imencode(".jpg", np.full((300, 300, 3), 128, np.uint8))
    assert ok
    jpeg = encoded.tobytes()
    broken_exif = b"Exif\x00\x00II*\x00\x08\x00\x00\x00\xff\xff" + b"\x01" * 20  # an IFD claiming 65535 entries
    segment = b"\xff\xe1" + (len(broken_exif) + 2).to_bytes(2, "big") + broken_exif
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        photo = load_photo(jpeg[:2] + segment + jpeg[2:], name="broken.jpg")
    assert photo.full_size == (300, 300)
    assert Image.MAX_IMAGE_PIXELS is not None


def _run(args: list[str], stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tablescan", *args], input=stdin, capture_output=True, cwd=cwd, timeout=120, env=_env(), check=False
    )


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "default"}


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--json", "/no/such/dir/out.json"], None, b"--json"),
        (["score", "-"], b"[" * 3000 + b"]" * 3000, b"levels deep"),
        (["score", "-"], "{}".encode("utf-16"), b"not UTF-8 text"),
        (["scan", "-", "--game", "sagrada"], b"not a photo", b"stdin: not an image"),
        (["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--corners", "nan,0,1,1,2,2,3,3"], None, b"--corners"),
        (["scan", str(SAGRADA_PHOTO), str(ROOT / "README.md"), "--game", "sagrada"], None, b"README.md: not an image"),
    ],
)
def test_refusals_as_a_process_see_them(args, stdin, needle) -> None:
    done = _run(args, stdin)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.count(b"\n") == 1 and done.stderr.startswith(b"tablescan: ") and needle in done.stderr, done.stderr


@pytest.mark.e2e
def test_a_photo_on_standard_input_and_the_document_on_standard_output(tmp_path) -> None:
    from_file = _run(["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--players", "Ana", "--json", str(tmp_path / "out.json")])
    assert from_file.returncode == 0, from_file.stderr
    piped = _run(["scan", "-", "--game", "sagrada", "--players", "Ana", "--json", "-"], stdin=SAGRADA_PHOTO.read_bytes(), cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert not (tmp_path / "-").exists()
    assert json.loads(piped.stdout)["players"][0]["window"] == json.loads((tmp_path / "out.json").read_text())["players"][0]["window"]
    assert b"Warning" not in piped.stderr


@pytest.mark.e2e
def test_good_corners_are_accepted_and_read_the_same_board() -> None:
    found = _invoke(["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--players", "Ana"])
    assert found.exit_code == 0, found.output
    player = json.loads(found.stdout)["players"][0]
    corners = ",".join(f"{value:g}" for point in player["scan"]["corners"] for value in point)
    given = _invoke(["scan", str(SAGRADA_PHOTO), "--game", "sagrada", "--players", "Ana", "--corners", corners])
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["players"][0]["window"] == player["window"]
