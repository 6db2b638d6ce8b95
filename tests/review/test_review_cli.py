"""``tablescan export-corrections`` and ``tablescan review`` through the CLI."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from scoring.errors import StateError
from tablescan.cli import cli
from tablescan.corrections import CROP_SIZE_PX, crop_cell, export_corrections
from tablescan.review import command
from tablescan.review.db import Store


def photo_with_square(path_colour=(250, 250, 250)) -> bytes:
    """A 200x100 grey photo with one white square at x 20-60, y 30-70."""
    image = Image.new("RGB", (200, 100), (90, 90, 90))
    image.paste(Image.new("RGB", (40, 40), path_colour), (20, 30))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def scanned_store(db_path: Path) -> tuple[Store, int, int]:
    store = Store(db_path)
    game_id = store.create_game("sagrada", "Night", {}, [("Ana", {}), ("Bo", {})])
    player_id = store.players(game_id)[0]["id"]
    data = photo_with_square()
    record = store.add_photo(hashlib.sha256(data).hexdigest(), ".png", data, "image/png", (200, 100), "board.png")
    store.attach_photo(game_id, player_id, record.id)
    square = [[20, 30], [60, 30], [60, 70], [20, 70]]
    store.store_scan(
        game_id,
        player_id,
        [[0, 0], [200, 0], [200, 100], [0, 100]],
        "dice v2",
        [
            {"cell": "0,0", "value": "Y3", "confidence": 0.4, "polygon": square},
            {"cell": "0,1", "value": "R2", "confidence": 0.99, "polygon": [[60, 30], [100, 30], [100, 70], [60, 70]]},
        ],
    )
    return store, game_id, player_id


def test_export_writes_index_and_rectified_crops(tmp_path: Path) -> None:
    store, game_id, player_id = scanned_store(tmp_path / "db.sqlite3")
    store.correct_cell(game_id, player_id, "0,0", "R3")
    store.correct_cell(game_id, player_id, "0,0", "P3")  # corrected twice: the last value is the label
    store.correct_cell(game_id, player_id, "0,1", "B2")
    store.correct_cell(game_id, player_id, "0,1", "R2")  # corrected back: not a misreading
    other = store.players(game_id)[1]["id"]
    store.correct_cell(game_id, other, "1,1", "G6")  # typed by hand, nothing scanned: only with --include-manual
    out = tmp_path / "dataset"
    result = CliRunner().invoke(cli, ["export-corrections", str(out), "--db", str(store.path)])
    assert result.exit_code == 0, result.output
    assert "wrote 1 corrected cells (1 with crops)" in result.output
    assert [item["cell"] for item in json.loads((out / "index.json").read_text())["items"]] == ["0,0"]
    result = CliRunner().invoke(cli, ["export-corrections", str(out), "--db", str(store.path), "--include-manual"])
    assert "wrote 2 corrected cells (1 with crops)" in result.output
    index = json.loads((out / "index.json").read_text())
    items = {item["cell"]: item for item in index["items"]}
    assert set(items) == {"0,0", "1,1"}
    first = items["0,0"]
    assert (first["label"], first["read"], first["model"], first["confidence"]) == ("P3", "Y3", "dice v2", 0.4)
    assert (first["kind"], items["1,1"]["kind"]) == ("misread", "entered")
    assert first["crop"] == f"crops/sagrada/P3/{first['id']}.png"
    crop = np.asarray(Image.open(out / first["crop"]))
    assert crop.shape == (CROP_SIZE_PX, CROP_SIZE_PX, 3)
    assert crop[5:-5, 5:-5].min() > 200  # the white square, and nothing of the grey around it
    assert items["1,1"]["crop"] is None and items["1,1"]["read"] is None and items["1,1"]["model"] is None


def test_export_with_no_corrections_writes_an_empty_index(tmp_path: Path) -> None:
    store, _, _ = scanned_store(tmp_path / "db.sqlite3")
    index = export_corrections(store, tmp_path / "out")
    assert index["count"] == 0 and json.loads((tmp_path / "out" / "index.json").read_text())["items"] == []


def test_export_without_a_database_is_one_line_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["export-corrections", str(tmp_path / "out"), "--db", str(tmp_path / "none.sqlite3")])
    assert result.exit_code == 2
    assert result.output.startswith("tablescan: ") and "no review database here" in result.output


def test_export_into_a_file_is_a_state_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    (tmp_path / "out").write_text("x")
    with pytest.raises(StateError, match="exists and is not a folder"):
        export_corrections(store, tmp_path / "out")


@pytest.mark.parametrize(
    ("polygon", "shape"),
    [
        ([[0, 0], [9, 0], [9, 9], [0, 9]], (CROP_SIZE_PX, CROP_SIZE_PX, 3)),
        ([[0, 0], [9, 0], [5, 9]], (CROP_SIZE_PX, CROP_SIZE_PX, 3)),
    ],
)
def test_crop_cell_shapes(polygon, shape) -> None:
    image = np.zeros((20, 20, 3), dtype=np.uint8)
    assert crop_cell(image, polygon).shape == shape


@pytest.mark.parametrize("polygon", [[[0, 0], [1, 1]], [[50, 50], [60, 50], [55, 60]]])
def test_crop_cell_refuses_degenerate_outlines(polygon) -> None:
    with pytest.raises(ValueError, match="polygon"):
        crop_cell(np.zeros((20, 20, 3), dtype=np.uint8), polygon)


def test_review_prints_the_address_and_serves(tmp_path: Path, monkeypatch) -> None:
    calls = {}
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: calls.update(host=host, port=port, app=app))
    result = CliRunner().invoke(cli, ["review", "--db", str(tmp_path / "r.sqlite3"), "--port", "8123"])
    assert result.exit_code == 0, result.output
    assert "open http://127.0.0.1:8123/\n" in result.output
    assert calls["host"] == "127.0.0.1" and calls["port"] == 8123
    assert (tmp_path / "r.sqlite3").exists()


def test_review_on_the_lan_prints_a_token_address(tmp_path: Path, monkeypatch) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: None)
    monkeypatch.setattr(command, "_lan_address", lambda: "192.168.1.20")
    result = CliRunner().invoke(cli, ["review", "--host", "0.0.0.0", "--db", str(tmp_path / "r.sqlite3")])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if "open http" in line)
    token = line.split("?token=")[1]
    assert line.startswith("tablescan review: open http://192.168.1.20:8000/?token=")
    assert len(token) >= 24


def test_review_with_a_bad_database_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_text("not sqlite" * 100)
    result = CliRunner().invoke(cli, ["review", "--db", str(bad)])
    assert result.exit_code == 2
    assert result.output.startswith("tablescan: ") and "not a usable tablescan database" in result.output


def test_default_database_lives_in_the_user_data_dir() -> None:
    path = command.default_db_path()
    assert path.name == "review.sqlite3" and "tablescan" in str(path.parent)


@pytest.mark.e2e
def test_a_killed_server_loses_nothing(tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    db = tmp_path / "night.sqlite3"
    server = subprocess.Popen(
        [sys.executable, "-m", "tablescan", "review", "--db", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(base + "/index.json", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "review server did not start"
                time.sleep(0.1)
        game = httpx.post(base + "/api/games", json={"game": "sagrada", "players": ["Ana", "Bo"]}).json()
        url = f"{base}/api/games/{game['id']}/players/{game['players'][0]['id']}/cells"
        assert httpx.put(url, json={"cell": "2,3", "value": "P6"}).status_code == 200
        os.kill(server.pid, signal.SIGKILL)  # no shutdown, no flush
        server.wait(timeout=10)
    finally:
        if server.poll() is None:
            server.kill()
    store = Store(db)
    player = store.players(game["id"])[0]
    assert {r["cell"]: r["value"] for r in player["readings"]}["2,3"] == "P6"
    assert [(c["cell"], c["new_value"]) for c in store.corrections()] == [("2,3", "P6")]


def test_review_uses_the_default_profile_when_there_is_one(tmp_path: Path, monkeypatch) -> None:
    import uvicorn

    from calibration.profile import Profile, save_profile

    seen = {}
    monkeypatch.setenv("TABLESCAN_PROFILE_DIR", str(tmp_path / "profiles"))
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: seen.update(profile=app.state.profile))
    db = str(tmp_path / "r.sqlite3")
    assert CliRunner().invoke(cli, ["review", "--db", db]).exit_code == 0
    assert seen["profile"] is None
    save_profile(Profile(name="default"))
    result = CliRunner().invoke(cli, ["review", "--db", db])
    assert result.exit_code == 0 and "calibration profile 'default'" in result.output
    assert seen["profile"] == "default"
    missing = CliRunner().invoke(cli, ["review", "--db", db, "--profile", "nosuch"])
    assert missing.exit_code == 2 and "profile 'nosuch' not found" in missing.output
