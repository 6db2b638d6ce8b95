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
SAMPLE = SAMPLES / "sagrada_cluttered_02.jpg"  # the shipped scanner reads it whole and sure, on the Chromatic Splendor card


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
    expect(ana.get_by_label("Window pattern")).to_have_value("Chromatic Splendor")
    twin = page.request.get(f"{live_server}/games/{game['id']}.json").json()
    assert twin["players"][0]["review"] == {"needed": False, "reasons": [], "corrected": 0}
    assert twin["document"]["players"][0]["pattern"] == "Chromatic Splendor" and twin["players"][0]["pattern_grid"] is not None
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


# Machado et al. (2009) deuteranopia, severity 1, on linear RGB: an SVG filter over the whole page
# (feColorMatrix works in linearRGB by default), and the same matrix to judge what the filtered page shows
DEUTERANOPIA = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881))
SIMULATE = """(rows) => {
  const values = rows.map((row) => row.join(" ") + " 0 0").join(" ") + " 0 0 0 1 0";
  const holder = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  holder.setAttribute("width", "0"); holder.setAttribute("height", "0"); holder.style.position = "absolute";
  holder.innerHTML = `<filter id="deuteranopia"><feColorMatrix type="matrix" values="${values}"/></filter>`;
  document.body.append(holder);
  document.documentElement.style.filter = "url(#deuteranopia)";
  return getComputedStyle(document.documentElement).filter;
}"""
DICE = """(root) => [...root.querySelectorAll(".die")].map((die) => {
  const letter = die.querySelector(".die-letter"), pips = die.querySelector(".pips");
  const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const style = getComputedStyle(die);
  return { cls: die.className, letter: letter ? letter.textContent : null, pips: pips ? pips.textContent : null,
           die: box(die), letterBox: letter ? box(letter) : null, pipsBox: pips ? box(pips) : null,
           letterPx: letter ? parseFloat(getComputedStyle(letter).fontSize) : 0,
           background: style.backgroundColor, ink: letter ? getComputedStyle(letter).color : style.color };
})"""


def _rgb(css: str) -> tuple[float, float, float]:
    r, g, b = (int(part) for part in re.findall(r"\d+", css)[:3])
    return r / 255, g / 255, b / 255


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _seen(css: str) -> tuple[float, ...]:
    """The colour as the deuteranopia filter shows it, in linear RGB."""
    linear = [_linear(c) for c in _rgb(css)]
    return tuple(min(1.0, max(0.0, sum(m * c for m, c in zip(row, linear)))) for row in DEUTERANOPIA)


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    luminance = [0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] for c in (a, b)]
    return (max(luminance) + 0.05) / (min(luminance) + 0.05)


def _inside(inner: list[float], outer: list[float]) -> bool:
    return inner[0] >= outer[0] - 0.5 and inner[1] >= outer[1] - 0.5 and inner[2] <= outer[2] + 0.5 and inner[3] <= outer[3] + 0.5


def _check_dice(dice: list[dict], expected: set[str]) -> None:
    by_colour: dict[str, set[str]] = {}
    for die in dice:
        colour = re.search(r"\bdie-([A-Z])\b", die["cls"]).group(1)
        assert die["letter"] == colour, die  # the letter names the die's colour
        assert die["pips"] and die["pips"].isdigit(), die
        by_colour.setdefault(colour, set()).add(die["letter"])
        assert _inside(die["letterBox"], die["die"]) and _inside(die["pipsBox"], die["die"]), die  # nothing overflows
        assert die["letterBox"][2] <= die["pipsBox"][0] + 0.5 or die["letterBox"][3] <= die["pipsBox"][1] + 0.5, die  # apart
        assert die["letterPx"] >= 10, die
        # under the simulation the letter still stands out from its die
        assert _contrast(_seen(die["ink"]), _seen(die["background"])) >= 2.5, die
    assert set(by_colour) == expected and all(len(letters) == 1 for letters in by_colour.values())


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)])
def test_dice_read_without_colour_under_a_deuteranopia_simulation(chromium, live_server, width, height) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        game = new_game(page, live_server)
        ana = game["players"][0]
        window = ["R1 Y2 G3 B4 P5", "G6 B1 P2 R3 Y4", ". . . . .", ". . . . ."]
        cells = [{"cell": f"{r},{c}", "value": die} for r, row in enumerate(window) for c, die in enumerate(row.split()) if die != "."]
        changed = page.request.put(f"{live_server}/api/games/{game['id']}/players/{ana['id']}/cells", data={"cells": cells})
        assert changed.ok
        page.reload()
        card = page.locator(".player").first
        expect(card.locator(".board .die")).to_have_count(10)
        assert "url" in page.evaluate(SIMULATE, [list(row) for row in DEUTERANOPIA])
        # the simulation does what it should: red and green dice come out nearly alike
        red, green = (card.locator(f".board .die-{c}").first.evaluate("(d) => getComputedStyle(d).backgroundColor") for c in "RG")
        seen_red, seen_green = _seen(red), _seen(green)
        assert max(abs(a - b) for a, b in zip(seen_red, seen_green)) < 0.12
        _check_dice(card.locator(".board").evaluate(DICE), set("RYGBP"))
        card.locator('.board [data-cell="2,0"]').click()
        picker = card.locator(".dice-picker")
        expect(picker.locator(".die")).to_have_count(30)
        _check_dice(picker.evaluate(DICE), set("RYGBP"))
        labels = picker.locator(".die").evaluate_all("(dice) => dice.map((d) => d.getAttribute('aria-label'))")
        assert labels[:2] == ["red 1", "red 2"]  # screen readers hear the colour named in full
        assert page.evaluate("() => document.scrollingElement.scrollWidth") <= width  # the page does not scroll sideways
    finally:
        context.close()


def test_unset_values_show_as_not_set_and_hold_back_the_ranking(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    game = new_game(page, live_server)
    # the cards on the table and one die on each window: only the players' own values are left to enter
    url = f"{live_server}/api/games/{game['id']}"
    assert page.request.patch(url, data={"settings": {"public_objectives": ["light-shades", "deep-shades", "color-variety"]}}).ok
    for player in game["players"]:
        assert page.request.put(f"{url}/players/{player['id']}/cells", data={"cell": "0,0", "value": "B4"}).ok
    page.reload()
    ana, bo = page.locator(".player").first, page.locator(".player").nth(1)
    for card in (ana, bo):
        expect(card.locator(".field.unset")).to_have_count(2)
        expect(card.get_by_label("Private objective")).to_have_value("")
        assert card.get_by_label("Private objective").evaluate("(s) => s.selectedOptions[0].textContent") == "— not set —"
        expect(card.get_by_label("Favor tokens left")).to_have_value("")
        expect(card.get_by_label("Favor tokens left")).to_have_attribute("placeholder", "not set")
    standings = page.locator("#standings")
    expect(standings.locator(".incomplete")).to_contain_text("Incomplete: Ana's private objective is not set")
    expect(standings.locator("table.standings")).to_have_count(0)
    expect(standings).not_to_contain_text("★")  # no winner on a guess
    # Ana enters hers here; another phone enters Bo's: the ranking appears once nothing is missing
    ana.get_by_label("Private objective").select_option("purple")
    expect(ana.locator(".field.unset")).to_have_count(1)
    ana.get_by_label("Favor tokens left").fill("3")
    ana.get_by_label("Favor tokens left").press("Tab")
    expect(ana.locator(".field.unset")).to_have_count(0)
    expect(standings.locator(".incomplete")).to_have_text(
        "Incomplete: Bo's private objective is not set; Bo's favor tokens are not set (no ranking until these are entered)"
    )
    bo_id = game["players"][1]["id"]
    changed = page.request.patch(
        f"{live_server}/api/games/{game['id']}/players/{bo_id}", data={"fields": {"private_objective": "red", "favor_tokens": 1}}
    )
    assert changed.ok
    expect(standings.locator("table.standings tbody tr")).to_have_count(2, timeout=9000)
    expect(standings.locator(".incomplete")).to_have_count(0)
    expect(standings.locator("table.standings tbody tr").first).to_contain_text("Ana ★")  # 3 tokens beat 1 on equal boards
