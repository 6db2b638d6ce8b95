"""Board photos on the review screen in a real headless Chromium (issue #19): a photo that cannot be read never
replaces one that could, the upload button rests while uploading, a clean scan lists no "100%" chips, and a game
without a scanner offers no corners to drag."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from PIL import Image

from scoring.errors import TableError
from tablescan.review import scanning
from tablescan.review.scanning import ScanOutcome

pytestmark = pytest.mark.e2e

SQUARE = [[10, 10], [20, 10], [20, 20], [10, 20]]


def jpeg_file(path: Path, colour: tuple = (90, 60, 30)) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), colour).save(buffer, format="JPEG", quality=90)
    path.write_bytes(buffer.getvalue())
    return path


def new_game(page, live_server: str, game: str = "sagrada") -> dict:
    created = page.request.post(live_server + "/api/games", data={"game": game, "players": ["Ana", "Bo"]})
    assert created.status == 201
    view = created.json()
    page.goto(f"{live_server}/games/{view['id']}")
    return view


@pytest.fixture
def gated_scanner(monkeypatch) -> threading.Event:
    """A stand-in scanner that waits for the returned event; it reads one unsure cell and nineteen sure ones,
    and refuses photos whose name starts with "bad"."""
    gate = threading.Event()

    def scan(path, game, corners=None, player_name=None, name=None, profile=None):
        assert gate.wait(10)
        if name.startswith("bad"):
            raise TableError(f"{name}: board not found; retake from above")
        readings = [
            {"cell": f"{r},{c}", "value": ".", "confidence": 1.0 if (r, c) != (0, 0) else 0.42, "polygon": SQUARE}
            for r in range(4)
            for c in range(5)
        ]
        readings[0].update(value="R3", alternatives=["G3", "R5"])
        return ScanOutcome(corners=[[0, 0], [300, 0], [300, 200], [0, 200]], model="dice v9", readings=readings)

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", scan)
    return gate


def test_a_replacement_the_scanner_cannot_read_keeps_the_good_photo(browser_page, live_server, tmp_path, gated_scanner) -> None:
    from playwright.sync_api import expect

    page = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    view = new_game(page, live_server)
    ana = page.locator(".player").first
    good = jpeg_file(tmp_path / "good.jpg")
    ana.locator("input[type=file]").set_input_files(str(good))
    # while the photo is on its way the button rests, so a second tap cannot send it twice
    expect(ana.locator(".upload .button")).to_have_text("Reading…")
    expect(ana.locator("input[type=file]")).to_be_disabled()
    gated_scanner.set()
    expect(ana.locator(".photo-view polygon:not(.corner-quad)")).to_have_count(20)
    expect(ana.locator(".upload .button")).to_have_text("Replace photo")
    expect(ana.locator("input[type=file]")).to_be_enabled()
    # only the unsure reading is listed: no row of "100%" chips for a clean scan
    expect(ana.locator(".uncertain button.chip")).to_have_count(1)
    expect(ana.locator(".uncertain button.chip")).to_contain_text("42%")
    # the picker offers the scanner's next readings first; one tap takes one
    ana.locator(".uncertain button.chip").click()
    palette = page.locator(".palette")
    expect(palette.locator(".alternatives button")).to_have_count(2)
    assert palette.locator("button[data-value]").first.get_attribute("data-value") == "G3"
    palette.locator(".alternatives button").first.click()
    expect(ana.locator('.photo-view g[data-cell="0,0"] text')).to_contain_text("3")
    cell = page.request.get(f"{live_server}/games/{view['id']}.json").json()["players"][0]["cells"][0]
    assert (cell["value"], cell["source"]) == ("G3", "corrected")
    href = ana.locator(".photo-view image").get_attribute("href")
    shown = page.request.get(f"{live_server}/games/{view['id']}.json").json()["players"][0]

    cut = tmp_path / "cut.jpg"
    cut.write_bytes(good.read_bytes()[:-300])
    unreadable = jpeg_file(tmp_path / "bad.jpg", colour=(5, 5, 5))
    for photo, words in ((cut, "cut.jpg: not a readable image"), (unreadable, "bad.jpg: board not found")):
        ana.locator("input[type=file]").set_input_files(str(photo))
        expect(page.locator("#notice")).to_contain_text(words)
        expect(page.locator("#notice")).to_have_class("notice bad")
        assert "Error" not in page.locator("#notice").inner_text()  # in words, never a Python exception name
        # the good photo stays, with its own readings outlined on it
        expect(ana.locator(".photo-view image")).to_have_attribute("href", href)
        expect(ana.locator(".photo-view polygon:not(.corner-quad)")).to_have_count(20)
        expect(ana.locator("input[type=file]")).to_be_enabled()
        now = page.request.get(f"{live_server}/games/{view['id']}.json").json()["players"][0]
        assert (now["photo"], now["cells"]) == (shown["photo"], shown["cells"])
    assert errors == []


def test_a_game_without_a_scanner_offers_no_corner_drag(browser_page, live_server, tmp_path) -> None:
    from playwright.sync_api import expect

    page = browser_page
    new_game(page, live_server, "splendor")
    ana = page.locator(".player").first
    ana.locator("input[type=file]").set_input_files(str(jpeg_file(tmp_path / "table.jpg")))
    expect(page.locator("#notice")).to_contain_text("has no photo scanner")
    expect(ana.locator(".photo-view image")).to_have_count(1)
    expect(ana.locator(".photo-view circle.corner")).to_have_count(0)
    expect(ana.locator(".photo-view .corner-quad")).to_have_count(0)
    expect(ana.locator(".photo-box")).not_to_contain_text("Drag the four corners")
