"""The review screen's smaller things (issue #19) in a real headless Chromium, on a 390 x 844 phone: values
marked "not set" for every game, blank boards "not entered", the breakdown in words, form errors beside their
field, a clean scan without chips, Alhambra tiles named in words, photo labels that never pile up and a photo
that zooms, and the LAN refusal page styled with nothing refused to click."""

from __future__ import annotations

import io
import itertools
import math
import re
import socket
from pathlib import Path

import pytest
from PIL import Image

from tablescan.review import scanning
from tablescan.review.scanning import ScanOutcome

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(chromium):
    """A page the size of a 390 x 844 phone that collects the page's script errors."""
    context = chromium.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


def photo_file(path: Path, size: tuple[int, int] = (320, 240)) -> Path:
    buffer = io.BytesIO()
    Image.new("RGB", size, (90, 60, 30)).save(buffer, format="JPEG", quality=80)
    path.write_bytes(buffer.getvalue())
    return path


def open_game(page, live_server: str, game: str, players=("Ana", "Bo")) -> dict:
    created = page.request.post(live_server + "/api/games", data={"game": game, "players": list(players)})
    assert created.status == 201
    view = created.json()
    page.goto(f"{live_server}/games/{view['id']}")
    return view


def fits_the_phone(page) -> bool:
    """Whether the page scrolls only up and down (wide boards and tables scroll inside their own frames)."""
    return page.evaluate("() => document.scrollingElement.scrollWidth") <= PHONE["width"]


def test_every_game_marks_what_is_not_set_and_ranks_no_blank_board(phone, live_server) -> None:
    from playwright.sync_api import expect

    page = phone
    open_game(page, live_server, "sagrada")
    standings = page.locator("#standings .incomplete")
    expect(standings).to_contain_text("the public objectives are not set; Ana's board is not entered")
    expect(page.locator(".player .player-score")).to_have_text(["not entered", "not entered"])  # never -20
    for slot in range(3):
        select = page.locator(f'select[data-objective="{slot}"]')
        expect(select).to_have_value("")
        assert select.evaluate("(s) => s.selectedOptions[0].textContent") == "— not set —"
    expect(page.locator("#settings .field.unset")).to_have_count(3)
    page.locator('select[data-objective="0"]').select_option("light-shades")
    expect(page.locator("#settings .field.unset")).to_have_count(2)
    expect(standings).to_contain_text("2 of the 3 public objectives are not set")
    # the objective names in words in the select, too
    assert page.locator('select[data-objective="1"] option[value="row-color-variety"]').inner_text() == "Row Color Variety"
    ana = page.locator(".player").first
    ana.locator('.board [data-cell="0,0"]').click()
    ana.locator('.palette [data-value="B4"]').click()
    expect(ana.locator(".player-score")).to_have_text("-19")
    expect(standings).not_to_contain_text("Ana's board is not entered")
    expect(standings).to_contain_text("Bo's board is not entered")
    expect(page.locator("table.standings")).to_have_count(0)
    assert fits_the_phone(page)

    open_game(page, live_server, "alhambra")
    dirk = page.locator("#settings .field.unset input[type=number]")
    expect(dirk).to_have_count(6)
    expect(dirk.first).to_have_attribute("placeholder", "not set")
    expect(page.locator("#standings .incomplete")).to_contain_text("Dirk's buildings are not set; Ana's board is not entered")
    expect(page.locator(".player .player-score")).to_have_text(["not entered", "not entered"])
    assert fits_the_phone(page)

    open_game(page, live_server, "splendor")
    nobles = page.locator(".player").first.get_by_label("Nobles")
    expect(nobles).to_have_value("")
    expect(nobles).to_have_attribute("placeholder", "not set")
    expect(page.locator("#standings .incomplete")).to_contain_text("Ana's board is not entered; Ana's nobles are not set")
    nobles.fill("0")
    nobles.press("Tab")
    expect(page.locator("#standings .incomplete")).not_to_contain_text("Ana's nobles")
    expect(page.locator(".player").first.locator(".field.unset")).to_have_count(0)
    assert fits_the_phone(page)
    assert page.errors == []


def test_breakdown_columns_are_words_for_every_game(phone, live_server) -> None:
    from playwright.sync_api import expect

    page = phone
    for game, words in (
        ("sagrada", ["Private objective", "Favor tokens", "Empty cells"]),
        ("alhambra", ["Longest wall", "This scoring"]),
        ("splendor", ["Development cards", "Nobles"]),
    ):
        view = open_game(page, live_server, game)
        if game == "sagrada":  # objectives chosen, so the public columns show their cards' names
            page.request.patch(
                f"{live_server}/api/games/{view['id']}", data={"settings": {"public_objectives": ["light-shades", "shade-variety"]}}
            )
            page.reload()
            words = ["Light Shades", "Shade Variety", *words]
        head = page.locator("table.breakdown thead")
        expect(head).to_be_visible()
        text = head.inner_text()
        for word in words:
            assert word in text, (game, word, text)
        assert "_" not in text and not re.search(r"\b[a-z]+-[a-z]+\b", text), text  # no key names
        assert page.locator("table.breakdown thead th[title]").count() == 0
    assert page.errors == []


def test_form_errors_show_beside_their_field_and_keep_what_was_typed(phone, live_server) -> None:
    from playwright.sync_api import expect

    page = phone
    page.goto(live_server + "/")
    page.get_by_label("Alhambra").check()
    page.locator("textarea[name=players]").fill("Ana")
    page.locator("input[name=name]").fill("Friday")
    page.get_by_role("button", name="Create game").click()
    # the same page, not an error page: the error under the players, everything as typed
    expect(page.locator("#players-error")).to_have_text("Alhambra needs 2-6 players (with 2, Dirk plays along)")
    expect(page.locator("textarea[name=players]")).to_have_value("Ana")
    expect(page.locator("textarea[name=players]")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("input[name=name]")).to_have_value("Friday")
    expect(page.get_by_label("Alhambra")).to_be_checked()
    expect(page.locator("h1")).to_have_text("New game")
    assert fits_the_phone(page)
    page.locator("textarea[name=players]").fill("Ana\nBo")
    page.get_by_role("button", name="Create game").click()
    page.wait_for_url("**/games/*")

    # on the game page a refused value is explained beside its input, and stays as typed
    open_game(page, live_server, "sagrada")
    ana = page.locator(".player").first
    tokens = ana.get_by_label("Favor tokens left")
    tokens.fill("99")
    tokens.press("Tab")
    field = ana.locator(".field", has=page.get_by_label("Favor tokens left"))
    expect(field.locator(".field-error")).to_have_text("expected an integer 0-12, got 99")  # beside the field: no key path
    expect(tokens).to_have_value("99")
    expect(tokens).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#notice")).to_be_hidden()  # said once, where it belongs
    tokens.fill("2")
    tokens.press("Tab")
    expect(ana.locator(".field-error")).to_have_count(0)
    expect(ana.get_by_label("Favor tokens left")).not_to_have_attribute("aria-invalid", "true")
    # a name another player has: the error beside the name
    name = ana.get_by_label("Player name")
    name.fill("Bo")
    name.press("Tab")
    expect(ana.locator(".player-head .field-error")).to_have_text("another player is already called 'Bo'")
    expect(name).to_have_value("Bo")
    assert fits_the_phone(page)
    assert page.errors == []


def fake_scanner(monkeypatch, game: str, readings: list[dict], review: dict | None) -> None:
    def scan(path, game_id, corners=None, player_name=None, name=None, profile=None):
        return ScanOutcome(
            corners=[[0, 0], [100, 0], [100, 100], [0, 100]], model="stand-in", readings=[dict(r) for r in readings], review=review
        )

    monkeypatch.setattr(scanning, "scanner_games", lambda: (game,))
    monkeypatch.setattr(scanning, "scan_photo", scan)


def square(x: float, y: float, side: float, turn: float = 0.0) -> list[list[float]]:
    """A cell outline: a square of ``side`` at (x, y), turned by ``turn`` radians about its centre."""
    c, s = math.cos(turn), math.sin(turn)
    half = side / 2
    return [
        [x + half + c * dx - s * dy, y + half + s * dx + c * dy] for dx, dy in ((-half, -half), (half, -half), (half, half), (-half, half))
    ]


@pytest.mark.parametrize("needed", [False, True])
def test_a_clean_scan_lists_no_chips_and_a_doubtful_one_only_its_doubts(phone, live_server, tmp_path, monkeypatch, needed) -> None:
    from playwright.sync_api import expect

    page = phone
    readings = [
        {
            "cell": f"{r},{c}",
            "value": "B4" if (r + c) % 2 else "Y2",
            "confidence": 1.0 if (r, c) != (1, 1) else 0.97,
            "polygon": square(20 * c, 20 * r, 18),
        }
        for r in range(4)
        for c in range(5)
    ]
    review = {"needed": True, "reasons": ["cell r2c2 read Y2 at 97%"]} if needed else {"needed": False, "reasons": []}
    fake_scanner(monkeypatch, "sagrada", readings, review)
    open_game(page, live_server, "sagrada")
    ana = page.locator(".player").first
    ana.locator("input[type=file]").set_input_files(str(photo_file(tmp_path / "window.jpg")))
    expect(ana.locator(".photo-view g.cell-poly")).to_have_count(20)
    if needed:
        expect(ana.locator(".verdict-look")).to_contain_text("Needs a look: cell r2c2 read Y2 at 97%")
        expect(ana.locator(".uncertain button.chip")).to_have_text(["r2c2: yellow 2 97%"])  # the one doubt, never the 100% ones
    else:
        expect(ana.locator(".verdict-ok")).to_contain_text("The scanner stands behind this board.")
        expect(ana.locator(".uncertain")).to_have_count(0)
    assert "100%" not in ana.inner_text()
    assert page.errors == []


def palace(columns: int, rows: int, side: float, turn: float, origin: tuple[float, float]) -> list[dict]:
    types = itertools.cycle(["garden:NS", "tower:ESW", "seraglio:E", "arcades:", "chambers:NW", "pavilion:N"])
    readings = []
    for gx in range(columns):
        for gy in range(rows):
            x, y = gx - columns // 2, gy - rows // 2
            c, s = math.cos(turn), math.sin(turn)
            px, py = origin[0] + c * x * side - s * y * side, origin[1] + s * x * side + c * y * side
            value = "fountain" if (x, y) == (0, 0) else next(types)
            readings.append({"cell": f"{x},{y}", "value": value, "confidence": 0.999, "polygon": square(px, py, side, turn)})
    return readings


def visible_label_boxes(page, card) -> list[dict]:
    return card.locator(".photo-view g.cell-poly:not(.label-hidden) text").evaluate_all(
        "(nodes) => nodes.filter((n) => n.textContent).map((n) => { const b = n.getBoundingClientRect(); return {x: b.x, y: b.y, w: b.width, h: b.height, text: n.textContent}; })"
    )


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["text"], b["text"])
        for a, b in itertools.combinations(boxes, 2)
        if a["x"] < b["x"] + b["w"] - 0.5
        and b["x"] < a["x"] + a["w"] - 0.5
        and a["y"] < b["y"] + b["h"] - 0.5
        and b["y"] < a["y"] + a["h"] - 0.5
    ]


def test_alhambra_photo_labels_never_pile_up_and_the_photo_zooms(phone, live_server, tmp_path, monkeypatch) -> None:
    """A small, tilted palace in a big photo: its labels fit their cells or hide, the photo zooms to full size, where
    every label shows without touching another; tiles are named from the fountain in words."""
    from playwright.sync_api import expect

    page = phone
    readings = palace(5, 4, side=70, turn=0.5, origin=(1500, 1000))
    review = {"needed": True, "reasons": ["the tile 1 east of the fountain read a tower walled E, S and W at 61%"]}
    readings[0]["confidence"] = 0.61
    fake_scanner(monkeypatch, "alhambra", readings, review)
    open_game(page, live_server, "alhambra")
    ana = page.locator(".player").first
    ana.locator("input[type=file]").set_input_files(str(photo_file(tmp_path / "palace.jpg", (3000, 2000))))
    polys = ana.locator(".photo-view g.cell-poly")
    expect(polys).to_have_count(20)
    # fitted to a phone, 70 px cells of a 3000 px photo are 8 px wide: their labels would only be a smudge
    expect(ana.locator(".photo-view g.cell-poly.label-hidden")).to_have_count(20)
    expect(ana.locator(".label-note")).to_be_visible()
    assert overlapping(visible_label_boxes(page, ana)) == []
    ana.get_by_role("button", name="Full size").click()
    wrap = ana.locator(".photo-wrap")
    expect(wrap).to_have_class(re.compile(r"\bzoomed\b"))
    expect(ana.locator(".photo-view g.cell-poly.label-hidden")).to_have_count(0)
    expect(ana.locator(".label-note")).to_be_hidden()
    width = ana.locator(".photo-view").evaluate("(n) => n.getBoundingClientRect().width")
    assert width >= 2900  # the photo's own pixels
    boxes = visible_label_boxes(page, ana)
    assert len(boxes) == 20 and overlapping(boxes) == []
    # a tap on a cell redraws the page: the zoom stays, and the tile is named in words
    ana.locator('.photo-view g.cell-poly[data-cell="1,0"] polygon').dispatch_event("click")
    expect(ana.locator(".palette-head strong")).to_have_text(
        re.compile(r"^Set \d east|^Set \d west|^Set \d (north|south)|^Set the fountain")
    )
    assert "(" not in ana.locator(".palette-head strong").inner_text()
    expect(wrap).to_have_class(re.compile(r"\bzoomed\b"))
    ana.get_by_role("button", name="Fit").click()
    expect(wrap).not_to_have_class(re.compile(r"\bzoomed\b"))
    ana.get_by_role("button", name="Zoom in on the photo").click()
    expect(wrap).to_have_attribute("data-zoom", "2.00")
    # two fingers spread on the photo zoom it further (a pinch); back to fit, then pinch closed stays at fit
    pinch = """([spread]) => {
        const image = document.querySelector('.player .photo-view');
        const box = image.getBoundingClientRect(), x = box.left + box.width / 2, y = box.top + box.height / 2;
        const send = (type, id, dx) => image.dispatchEvent(new PointerEvent(type, {pointerId: id, pointerType: 'touch', bubbles: true, clientX: x + dx, clientY: y}));
        send('pointerdown', 11, -20); send('pointerdown', 12, 20);
        send('pointermove', 11, -20 * spread); send('pointermove', 12, 20 * spread);
        send('pointerup', 11, -20 * spread); send('pointerup', 12, 20 * spread);
    }"""
    page.evaluate(pinch, [2])
    expect(wrap).to_have_attribute("data-zoom", "4.00")  # 2 x the 2 it was at
    ana.get_by_role("button", name="Fit").click()
    page.evaluate(pinch, [0.5])
    expect(wrap).to_have_attribute("data-zoom", "1.00")
    expect(wrap).not_to_have_class(re.compile(r"\bzoomed\b"))
    # the doubtful tile's chip names it from the fountain, in words
    chip = ana.locator(".uncertain button.chip")
    expect(chip).to_have_count(1)
    assert re.match(r"^\d (east|west|north|south).* of the fountain: ", chip.inner_text()), chip.inner_text()
    assert fits_the_phone(page)
    assert page.errors == []


def test_the_refusal_page_is_styled_and_points_to_the_token_address(chromium, tmp_path) -> None:
    import threading
    import time

    import uvicorn

    from tablescan.review.app import create_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(tmp_path / "lan.sqlite3", token="s3cret"), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        response = page.goto(f"http://127.0.0.1:{port}/games/1")
        assert response.status == 403
        assert page.locator("h1").inner_text() == "This address needs its access token"
        assert "?token=" in page.locator("main").inner_text()
        # styled like the rest: the stylesheet loaded (the page's own background and panel)
        assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == "rgb(244, 241, 234)"
        assert page.locator(".panel").evaluate("(n) => getComputedStyle(n).borderRadius") == "10px"
        assert page.locator("a").count() == 0  # every page here would be refused the same way
        # with the token the same phone gets in, and stays in without it
        assert page.goto(f"http://127.0.0.1:{port}/?token=s3cret").status == 200
        assert page.goto(f"http://127.0.0.1:{port}/").status == 200
    finally:
        context.close()
        server.should_exit = True
        thread.join(timeout=5)


def test_quick_choices_in_a_row_all_stay_while_the_answers_come(phone, live_server, monkeypatch) -> None:
    """Three objectives chosen before the first answer is back: an older answer never redraws over the newer
    choices (it would show them unset again for a moment, and the next choice would read them so)."""
    import time

    from playwright.sync_api import expect

    from tablescan.review import usecases

    page = phone
    view = open_game(page, live_server, "sagrada")
    slow = usecases.change_game

    def change_game(store, game_id, change):  # a slow phone network: each answer takes a while
        time.sleep(0.4)
        return slow(store, game_id, change)

    monkeypatch.setattr(usecases, "change_game", change_game)
    chosen = ["row-color-variety", "light-shades", "color-diagonals"]
    with page.expect_response(lambda r: r.request.method == "PATCH") as first:
        for slot, objective in enumerate(chosen):
            page.locator(f'select[data-objective="{slot}"]').select_option(objective)
    assert first.value.ok
    page.wait_for_timeout(100)  # the first answer is in: the page has not drawn it over the later choices
    assert [page.locator(f'select[data-objective="{slot}"]').input_value() for slot in range(3)] == chosen
    page.wait_for_function("(n) => window.tablescanView().settings.public_objectives.length === n", arg=3)
    assert [page.locator(f'select[data-objective="{slot}"]').input_value() for slot in range(3)] == chosen
    expect(page.locator("#settings .field.unset")).to_have_count(0)
    assert page.request.get(f"{live_server}/games/{view['id']}.json").json()["settings"]["public_objectives"] == chosen
    assert page.errors == []


def test_alhambra_issues_name_tiles_from_the_fountain(phone, live_server) -> None:
    from playwright.sync_api import expect

    page = phone
    view = open_game(page, live_server, "alhambra")
    ana = view["players"][0]["id"]
    cells = [{"cell": "1,0", "value": "tower:N"}, {"cell": "2,0", "value": "garden:W"}, {"cell": "4,3", "value": "arcades:"}]
    assert page.request.put(f"{live_server}/api/games/{view['id']}/players/{ana}/cells", data={"cells": cells}).ok
    page.reload()
    issues = page.locator(".player").first.locator(".issues li")
    assert page.errors == []
    expect(issues.first).to_be_visible()
    text = " ".join(issues.all_inner_texts())
    assert "the W wall of the tile 2 east of the fountain" in text and "the open E side of the tile 1 east of the fountain" in text
    assert "the tile 4 east, 3 south of the fountain" in text
    assert not re.search(r"\(-?\d+, ?-?\d+\)", text), text  # no grid coordinates
    assert page.errors == []
