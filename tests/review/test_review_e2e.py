"""The review screen in a real headless Chromium: create a game, upload a photo, enter and correct cells."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.e2e


def photo_file(tmp_path: Path) -> Path:
    """A stand-in board photo: a dark frame with a 5x4 grid of coloured squares."""
    image = Image.new("RGB", (500, 400), (40, 36, 32))
    colours = [(216, 65, 58), (240, 196, 25), (58, 154, 82), (53, 117, 196), (138, 79, 176)]
    for row in range(4):
        for col in range(5):
            image.paste(Image.new("RGB", (70, 70), colours[(row + col) % 5]), (40 + col * 85, 40 + row * 85))
    path = tmp_path / "window.jpg"
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=85)
    path.write_bytes(buffer.getvalue())
    return path


def sample_photo(tmp_path: Path, game: str = "alhambra") -> Path:
    """A bundled sample photo of ``game`` when the checkout has one, else a stand-in."""
    bundled = sorted((Path(__file__).resolve().parents[2] / "sample_images").glob(f"{game}_*.jpg"))
    return bundled[0] if bundled else photo_file(tmp_path)


def test_create_upload_enter_and_correct_a_sagrada_window(browser_page, live_server, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server + "/")
    page.get_by_label("Sagrada").check()
    page.locator("textarea[name=players]").fill("Ana\nBo")
    page.locator("input[name=name]").fill("E2E night")
    page.get_by_role("button", name="Create game").click()
    page.wait_for_url("**/games/*")
    expect(page.locator("#game-name")).to_have_text("E2E night")
    ana = page.locator(".player").first
    expect(ana.locator(".player-score")).to_have_text("not entered")  # a blank window does not score -20 (#19)
    # nothing that decides the score is guessed (#19): until entered it is "not set" and nobody is ranked
    expect(page.locator("#standings .incomplete")).to_contain_text("the public objectives are not set; Ana's board is not entered")
    expect(page.locator("#standings .incomplete")).to_contain_text("Ana's private objective is not set")
    expect(page.locator("table.standings")).to_have_count(0)
    for slot, objective in enumerate(("row-color-variety", "light-shades", "color-diagonals")):
        page.locator(f'select[data-objective="{slot}"]').select_option(objective)
        page.wait_for_function("(n) => window.tablescanView().settings.public_objectives.length === n", arg=slot + 1)
        expect(page.locator(f'select[data-objective="{slot}"]')).to_have_value(objective)
    expect(page.locator("#settings .field.unset")).to_have_count(0)
    for card, colour in ((ana, "red"), (page.locator(".player").nth(1), "blue")):
        card.get_by_label("Private objective").select_option(colour)
        expect(card.locator(".field.unset")).to_have_count(1)  # the favor tokens are still to enter
        card.get_by_label("Favor tokens left").fill("0")
        card.get_by_label("Favor tokens left").press("Tab")
        expect(card.locator(".field.unset")).to_have_count(0)
    expect(page.locator("#standings .incomplete")).to_have_text(
        "Incomplete: Ana's board is not entered; Bo's board is not entered (no ranking until these are entered)"
    )
    expect(page.locator("table.standings")).to_have_count(0)

    # a sample photo of Bo's window: shown with its corners (and, when the scanner reads it, its cells)
    bo = page.locator(".player").nth(1)
    bo.locator("input[type=file]").set_input_files(str(sample_photo(tmp_path, "sagrada")))
    expect(bo.locator("svg.photo-view image")).to_have_count(1)
    expect(bo.locator("svg.photo-view circle.corner")).to_have_count(4)
    assert bo.locator("input[type=file]").get_attribute("capture") == "environment"
    assert bo.locator("input[type=file]").get_attribute("accept") == "image/*"
    assert page.evaluate("() => window.tablescanView().players[1].model") is not None  # the shipped scanner read it
    # correct the least certain reading from its chip: emptying a die always costs a point at least
    expect(bo.locator("svg.photo-view g.cell-poly")).to_have_count(20)
    review = page.evaluate("() => window.tablescanView().players[1].review")
    before = int(bo.locator(".player-score").inner_text())
    if review["needed"]:
        chip = bo.locator(".uncertain button.chip").first
        chip.click()
    else:  # the scanner stands behind the board: it says so, lists no chips, and a tap on the photo picks a cell
        expect(bo.locator(".verdict-ok")).to_have_text("The scanner stands behind this board.")
        expect(bo.locator(".uncertain button.chip")).to_have_count(0)
        bo.locator("svg.photo-view g.cell-poly").first.click()
    selected = page.evaluate("() => document.activeElement.dataset.cell")
    bo.locator('.palette [data-value="."]').click()
    expect(bo.locator(f'.board [data-cell="{selected}"]')).to_have_class(re.compile(r"\bempty\b"))
    expect(bo.locator(".player-score")).not_to_have_text(str(before))
    assert int(bo.locator(".player-score").inner_text()) < before
    bo_id = page.evaluate("() => window.tablescanView().players[1].id")
    game_id = page.evaluate("() => window.tablescanView().id")
    rows = page.request.get(f"{live_server}/api/games/{game_id}/players/{bo_id}/corrections").json()["corrections"]
    assert rows[-1]["cell"] == selected and rows[-1]["new_value"] == "." and rows[-1]["model"]
    assert rows[-1]["polygon"] and rows[-1]["confidence"] is not None

    # enter dice with the picker...
    ana.locator('.board [data-cell="0,0"]').click()
    ana.locator('.palette [data-value="B4"]').click()
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_class(re.compile(r"\bdie-B\b"))
    expect(ana.locator(".player-score")).to_have_text("-19")
    expect(page.locator("#standings .incomplete")).to_have_count(0)  # both boards entered: now they rank
    expect(page.locator("table.standings tbody tr")).to_have_count(2)
    # ...and with the keyboard: colour then value, arrows to move
    page.keyboard.press("ArrowRight")
    page.keyboard.press("y")
    page.keyboard.press("3")
    expect(ana.locator('.board [data-cell="0,1"] .pips')).to_have_text("3")
    expect(ana.locator(".player-score")).to_have_text("-18")

    # a rule break is highlighted on both cells
    page.keyboard.press("ArrowDown")
    page.keyboard.press("y")
    page.keyboard.press("3")
    expect(ana.locator(".board .cell.violation")).to_have_count(2)
    expect(ana.locator(".issues li")).not_to_have_count(0)
    expect(ana.locator(".issues li strong").first).to_have_text(re.compile(r"^[A-Z][a-z]+( [a-z]+)*:$"))  # the rule in words, no key

    # correct the misread die: the score and the standings change, the violation goes
    before = ana.locator(".player-score").inner_text()
    ana.locator('.board [data-cell="1,1"]').click()
    ana.locator('.palette [data-value="R5"]').click()
    expect(ana.locator(".board .cell.violation")).to_have_count(0)
    expect(ana.locator(".player-score")).not_to_have_text(before)
    expect(page.locator("table.standings tbody tr", has_text="Ana")).to_contain_text(ana.locator(".player-score").inner_text())

    # the page's JSON twin agrees with what the page shows
    game_url = page.url
    twin = page.request.get(game_url + ".json").json()
    window = twin["document"]["players"][0]["window"]
    assert window[0].startswith("B4 Y3") and window[1].startswith(". R5")
    assert twin["players"][1]["photo"]["width_px"] > 0
    assert str(twin["players"][0]["report"]["total"]) == ana.locator(".player-score").inner_text()

    # the game survives a reload (everything was written as it happened)
    page.reload()
    ana, bo = page.locator(".player").first, page.locator(".player").nth(1)
    expect(ana.locator('.board [data-cell="1,1"] .pips')).to_have_text("5")

    # dragging a corner of Bo's photo asks for a rescan with those corners; they are kept either way
    if not bo.locator("svg.photo-view").is_visible():
        bo.locator("details.photo-box summary").click()
    handle = bo.locator("svg.photo-view circle.corner").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 30, box["y"] + 20, steps=4)
    page.mouse.up()
    expect(page.locator("#notice")).to_be_visible()
    page.wait_for_function("() => window.tablescanView().players[1].corners !== null")
    bo_view = page.request.get(game_url + ".json").json()["players"][1]
    assert len(bo_view["corners"]) == 4
    assert {c["cell"]: c["value"] for c in bo_view["cells"]}[selected] == "."  # the re-read keeps Bo's correction
    assert errors == []


def test_alhambra_palace_by_keyboard_and_a_recorded_scoring(browser_page, live_server, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page = browser_page
    created = page.request.post(live_server + "/api/games", data={"game": "alhambra", "players": ["Ana", "Bo"]})
    assert created.status == 201
    game = created.json()
    page.goto(f"{live_server}/games/{game['id']}")
    ana = page.locator(".player").first
    bo = page.locator(".player").nth(1)
    # Bo's palace from a sample photo: read when the scanner can, else kept for manual entry with a notice
    bo.locator("input[type=file]").set_input_files(str(sample_photo(tmp_path)))
    expect(bo.locator("svg.photo-view image")).to_have_count(1)
    read = page.request.get(f"{live_server}/games/{game['id']}.json").json()["players"][1]
    assert read["model"] and len(read["cells"]) >= 10  # the shipped scanner read the sample palace
    expect(bo.locator("svg.photo-view g.cell-poly")).to_have_count(len(read["cells"]))
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_class(re.compile(r"\btype-fountain\b"))
    ana.locator('.board [data-cell="1,0"]').click()
    page.keyboard.press("5")  # garden
    expect(ana.locator('.board [data-cell="1,0"]')).to_have_class(re.compile(r"\btype-garden\b"))
    page.keyboard.press("n")  # a wall on the north side
    expect(ana.locator('.board [data-cell="1,0"]')).to_have_class(re.compile(r"\btype-garden wall-N\b"))
    expect(ana.locator(".player-score")).not_to_have_text("0")
    # another phone at the table places a tile for Bo: this page picks it up without a reload
    bo_id = game["players"][1]["id"]
    changed = page.request.put(f"{live_server}/api/games/{game['id']}/players/{bo_id}/cells", data={"cell": "0,-1", "value": "tower:N"})
    assert changed.ok
    expect(bo.locator('.board [data-cell="0,-1"]')).to_have_class(re.compile(r"\btype-tower\b"), timeout=9000)
    # Dirk's buildings decide majorities: until they are counted, the scoring cannot be recorded
    record = page.get_by_role("button", name="Record scoring 1 and go on to scoring 2")
    expect(record).to_be_disabled()
    expect(page.locator("#standings .incomplete")).to_have_text(
        "Incomplete: Dirk's buildings are not set (no ranking until these are entered)"
    )
    for index, count in enumerate((0, 1, 0, 0, 2, 0)):
        field = page.locator("#settings .row").nth(1).locator("input[type=number]").nth(index)
        field.fill(str(count))
        field.press("Tab")
        expect(page.locator("#settings .row").nth(1).locator(".field.unset")).to_have_count(5 - index)
    expect(record).to_be_enabled()
    record.click()
    expect(page.locator("#scoring-round")).to_have_value("2")
    expect(page.locator(".rounds table")).to_contain_text("Round 1")
