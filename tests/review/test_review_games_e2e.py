"""Each game's page module in headless Chromium: its board, picker, keys, settings and fields.

The shared core (``static/review.js``) hands these to ``static/games/<game>.js``; the checks here
drive one game each through the paths the other browser tests leave out.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.e2e


def open_game(page, live_server: str, game: str, players: list[str]) -> tuple[dict, list[str]]:
    """Create a game through the API, open its page, and collect the page's script errors."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    created = page.request.post(live_server + "/api/games", data={"game": game, "players": players})
    assert created.status == 201
    game_view = created.json()
    page.goto(f"{live_server}/games/{game_view['id']}")
    return game_view, errors


def test_splendor_counts_by_picker_and_keyboard(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    _, errors = open_game(page, live_server, "splendor", ["Ana", "Bo"])
    expect(page.locator("#settings")).to_contain_text("Splendor has no game settings")
    expect(page.locator("#shortcuts dt").first).to_have_text("+ −")
    ana = page.locator(".player").first
    assert ana.get_by_label("Reserved cards").get_attribute("max") == "3"
    ana.locator('.board [data-cell="white:0"]').click()
    expect(ana.locator(".palette-head strong")).to_have_text("Set white 0pt")
    page.keyboard.press("+")
    expect(ana.locator('.board [data-cell="white:0"]')).to_have_text("1")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("3")
    expect(ana.locator('.board [data-cell="white:1"]')).to_have_text("3")
    page.keyboard.press("ArrowDown")
    expect(ana.locator(".palette-head strong")).to_have_text("Set blue 1pt")
    ana.locator(".count-picker button", has_text="+").click()
    expect(ana.locator('.board [data-cell="blue:1"]')).to_have_text("1")
    page.keyboard.press("-")
    expect(ana.locator('.board [data-cell="blue:1"]')).to_have_class(re.compile(r"\bzero\b"))
    expect(ana.locator(".player-score")).to_have_text("3")  # three white cards worth 1
    page.keyboard.press("Escape")
    expect(ana.locator(".palette")).to_have_count(0)
    assert errors == []


def test_sagrada_solo_settings_and_colour_then_value(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    _, errors = open_game(page, live_server, "sagrada", ["Ana"])
    expect(page.locator("#settings select[data-objective]")).to_have_count(2)  # solo: two public objectives
    expect(page.locator("#settings").get_by_label("Private objective 2")).to_have_value("")  # not dealt by the screen
    expect(page.locator("#settings .field.unset")).to_have_count(5)  # two public, two private, the round track
    page.locator("#settings").get_by_label("Private objective 2").select_option("blue")
    page.locator("#settings").get_by_label("Private objective 1").select_option("red")
    expect(page.locator("#settings").get_by_label("Private objective 2")).to_have_value("blue")
    expect(page.locator("#settings .field.unset")).to_have_count(3)
    expect(page.locator("#standings .incomplete")).to_contain_text("the round track's sum is not set")
    expect(page.locator("#standings .incomplete")).not_to_contain_text("solo private")
    ana = page.locator(".player").first
    expect(ana.get_by_label("Favor tokens left")).to_have_count(0)
    ana.locator('.board [data-cell="0,0"]').click()
    expect(ana.locator(".palette-head strong")).to_have_text("Set r1c1")
    expect(ana.locator(".dice-picker button")).to_have_count(30)
    page.keyboard.press("r")
    expect(page.locator("#notice")).to_have_text("red: now type the value 1–6")
    page.keyboard.press("2")
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_class(re.compile(r"\bdie-R\b"))
    page.keyboard.press("g")  # a colour on a die recolours it
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_attribute("aria-label", "row 1 column 1: green 2")
    page.keyboard.press("ArrowLeft")  # the window's edge holds
    page.keyboard.press("ArrowDown")
    expect(ana.locator(".palette-head strong")).to_have_text("Set r2c1")
    page.keyboard.press("5")  # a value with no colour yet asks for one
    expect(page.locator("#notice")).to_have_text("type the colour first (R Y G B P)")
    assert errors == []


def test_alhambra_walls_dirk_and_the_final_market(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    _, errors = open_game(page, live_server, "alhambra", ["Ana", "Bo"])
    expect(page.locator("#settings .row").nth(1).locator("input[type=number]")).to_have_count(6)  # Dirk, one per type
    assert page.locator("#settings .row").nth(1).locator("input").first.get_attribute("max") == "20"
    ana = page.locator(".player").first
    ana.locator('.board [data-cell="0,0"]').click()
    page.keyboard.press("ArrowUp")  # the board grows toward the selection
    expect(ana.locator(".palette-head strong")).to_have_text("Set 1 north of the fountain")  # in words, never "(0,-1)"
    page.keyboard.press("6")
    expect(ana.locator('.board [data-cell="0,-1"]')).to_have_class(re.compile(r"\btype-tower\b"))
    expect(ana.locator('.board [data-cell="0,-1"]')).to_have_text("Tow")
    expect(ana.locator(".wall-picker button")).to_have_text(["N", "E", "S", "W"])
    ana.locator(".wall-picker button", has_text="E").click()
    expect(ana.locator('.board [data-cell="0,-1"]')).to_have_class(re.compile(r"\bwall-E\b"))
    page.keyboard.press("s")
    expect(ana.locator('.board [data-cell="0,-1"]')).to_have_attribute("aria-label", "1 north of the fountain: tower walled E S")
    page.locator("#scoring-round").select_option("3")
    expect(ana.locator(".fields input[type=number]")).to_have_count(5)  # points before, and money per currency
    page.get_by_role("button", name="Add a market tile").click()
    tile = page.locator(".market .row").first
    expect(tile.get_by_label("Currency")).to_have_value("denar")
    expect(tile.get_by_label("Type")).to_have_value("garden")
    assert errors == []
