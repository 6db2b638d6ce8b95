"""Sagrada on the review screen in a real headless Chromium (issue #19): the scan's verdict leads each board,
the scanned pattern card fills the window pattern, and the dice read without colour (desktop and phone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablescan.review import scanning
from tablescan.review.scanning import ScanOutcome

pytestmark = pytest.mark.e2e

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
SAMPLE = SAMPLES / "sagrada_cluttered_01.jpg"  # the shipped scanner reads it whole, on the Batllo card


def new_game(page, live_server: str, players: tuple[str, ...] = ("Ana", "Bo")) -> dict:
    created = page.request.post(live_server + "/api/games", data={"game": "sagrada", "players": list(players)})
    assert created.status == 201
    game = created.json()
    page.goto(f"{live_server}/games/{game['id']}")
    return game


def test_a_scanned_board_leads_with_the_verdict_and_its_pattern_card(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    if not SAMPLE.exists():
        pytest.skip("no bundled Sagrada sample photo")
    page = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    game = new_game(page, live_server)
    ana, bo = page.locator(".player").first, page.locator(".player").nth(1)
    expect(ana.locator(".verdict")).to_have_count(0)  # no photo, no verdict
    expect(ana.get_by_label("Window pattern")).to_have_value("")
    ana.locator("input[type=file]").set_input_files(str(SAMPLE))
    expect(ana.locator(".verdict")).to_have_text("The scanner stands behind this board.")
    # the verdict leads the board: it comes before the fields and the window
    order = ana.evaluate(
        "(card) => ['verdict', 'fields', 'board'].map((name) => [...card.children].findIndex((n) => n.classList.contains(name)))"
    )
    assert 0 < order[0] < order[1] < order[2]
    expect(ana.get_by_label("Window pattern")).to_have_value("Batllo")
    twin = page.request.get(f"{live_server}/games/{game['id']}.json").json()
    assert twin["players"][0]["review"] == {"needed": False, "reasons": [], "corrected": 0}
    assert twin["document"]["players"][0]["pattern"] == "Batllo" and twin["players"][0]["pattern_grid"] is not None
    # the player can still change the card
    ana.get_by_label("Window pattern").select_option("Virtus")
    expect(ana.get_by_label("Window pattern")).to_have_value("Virtus")
    assert page.request.get(f"{live_server}/games/{game['id']}.json").json()["players"][0]["fields"]["pattern"] == "Virtus"
    expect(bo.locator(".verdict")).to_have_count(0)
    assert errors == []


def test_a_doubted_board_says_why_and_counts_the_corrections(browser_page, live_server, monkeypatch) -> None:
    from playwright.sync_api import expect

    reasons = ["cell r1c1 read R3 at 42% (G3 close behind)", "the grid's lower-right corner is uncertain"]

    def doubting_scan(path, game, corners=None, player_name=None, name=None, profile=None):
        readings = [{"cell": f"{r},{c}", "value": "."} for r in range(4) for c in range(5)]
        readings[0] = {"cell": "0,0", "value": "R3", "confidence": 0.42, "polygon": [[10, 10], [20, 10], [20, 20], [10, 20]]}
        return ScanOutcome(
            corners=[[0, 0], [60, 0], [60, 40], [0, 40]], model="dice v9", readings=readings, review={"needed": True, "reasons": reasons}
        )

    monkeypatch.setattr(scanning, "scanner_games", lambda: ("sagrada",))
    monkeypatch.setattr(scanning, "scan_photo", doubting_scan)
    page = browser_page
    new_game(page, live_server)
    bo = page.locator(".player").nth(1)
    bo.locator("input[type=file]").set_input_files(str(SAMPLE if SAMPLE.exists() else next(SAMPLES.glob("*.jpg"))))
    verdict = bo.locator(".verdict")
    expect(verdict).to_contain_text("Needs a look:")
    expect(verdict.locator("li")).to_have_text(reasons)
    expect(page.locator(".player").first.locator(".verdict")).to_have_count(0)
    bo.locator('.board [data-cell="0,0"]').click()
    bo.locator('.palette [data-value="G3"]').click()
    expect(bo.locator('.board [data-cell="0,0"]')).to_have_class(re.compile(r"\bdie-G\b"))
    expect(verdict).to_contain_text("Needs a look:")  # a correction does not erase the verdict...
    expect(verdict).to_contain_text("You corrected 1 cell since this scan.")  # ...it is counted beside it
