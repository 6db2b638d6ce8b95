"""A game night in headless Chromium: two players, a correction, undo and redo, rename, export; deleting
and bringing back a game, players in and out, two phones sharing one undo, local times, the join QR code."""

from __future__ import annotations

import csv
import io
import re
import threading
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tablescan.review.app import create_app

pytestmark = pytest.mark.e2e


def collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def open_game(page, live_server: str, game: str = "sagrada", players: tuple = ("Ana", "Bo"), name: str = "Friday") -> dict:
    created = page.request.post(live_server + "/api/games", data={"game": game, "players": list(players), "name": name})
    assert created.status == 201
    view = created.json()
    page.goto(f"{live_server}/games/{view['id']}")
    return view


def test_a_whole_night_two_players_a_correction_undo_rename_export(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    errors = collect_errors(page)
    page.goto(live_server + "/")
    page.get_by_label("Sagrada").check()
    page.locator("textarea[name=players]").fill("Ana\nBo")
    page.locator("input[name=name]").fill("Friday")
    page.get_by_role("button", name="Create game").click()
    expect(page.locator("#game-name")).to_have_text("Friday")
    ana, bo = page.locator(".player").nth(0), page.locator(".player").nth(1)
    undo, redo = page.locator("#night button.undo"), page.locator("#night button.redo")
    expect(undo).to_be_disabled()
    expect(page.locator("#shortcuts dt", has_text="Ctrl+Z")).to_have_count(1)
    # what decides the score, for both players
    for card, name, colour, tokens in ((ana, "Ana", "blue", "2"), (bo, "Bo", "red", "1")):
        card.get_by_label("Private objective").select_option(colour)
        expect(page.locator("#standings")).not_to_contain_text(f"{name}'s private objective")  # the page is drawn afresh
        card.get_by_label("Favor tokens left").fill(tokens)
        card.get_by_label("Favor tokens left").press("Enter")
        expect(page.locator("#standings")).not_to_contain_text(f"{name}'s favor tokens")
    for slot, objective in enumerate(("row-color-variety", "column-color-variety", "color-variety")):  # none scores here
        page.locator(f'select[data-objective="{slot}"]').select_option(objective)
        page.wait_for_function("(n) => window.tablescanView().settings.public_objectives.length === n", arg=slot + 1)
    # only the boards are left to enter: no ranking on blank windows
    expect(page.locator("#standings .incomplete")).to_have_text(
        "Incomplete: Ana's board is not entered; Bo's board is not entered (no ranking until these are entered)"
    )
    # a correction, then Ctrl+Z and Ctrl+Shift+Z
    ana.locator('.board [data-cell="0,0"]').click()
    page.keyboard.press("b")
    page.keyboard.press("5")
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_attribute("aria-label", "row 1 column 1: blue 5")
    expect(ana.locator(".player-score")).to_have_text("-12")  # 19 empty, blue 5, 2 tokens
    expect(undo).to_contain_text("set a cell of Ana's board to B5")
    page.locator("body").click(position={"x": 5, "y": 5})  # out of any field: the keys are the page's
    page.keyboard.press("Control+z")
    expect(page.locator("#notice")).to_have_text("undone: set a cell of Ana's board to B5")
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_attribute("aria-label", re.compile(r"row 1 column 1: empty"))
    expect(ana.locator(".player-score")).to_have_text("not entered")  # blank again: no score on an empty window
    page.keyboard.press("Control+Shift+z")
    expect(ana.locator('.board [data-cell="0,0"]')).to_have_attribute("aria-label", "row 1 column 1: blue 5")
    undo.click()  # the button does the same
    expect(ana.locator(".player-score")).to_have_text("not entered")
    redo.click()
    expect(ana.locator(".player-score")).to_have_text("-12")
    # rename
    page.locator("#night details.manage summary").click()
    page.get_by_label("Game name").fill("Friday at Bo's")
    page.get_by_label("Game name").press("Enter")
    expect(page.locator("#game-name")).to_have_text("Friday at Bo's")
    # export: the CSV download holds the standings, the image is a PNG
    with page.expect_download() as download_info:
        page.locator("#night a.export-csv").click()
    download = download_info.value
    assert download.suggested_filename.startswith("friday-at-bo-s-") and download.suggested_filename.endswith(".csv")
    rows = list(csv.reader(io.StringIO(Path(download.path()).read_text(encoding="utf-8-sig"))))
    assert rows[0][:3] == ["Place", "Player", "Score"] and "Favor tokens" in rows[0]
    assert {row[1]: row[2] for row in rows[1:]} == {"Ana": "-12", "Bo": "-19"}
    image = page.request.get(live_server + page.locator("#night a.export-png").get_attribute("href"))
    assert image.status == 200 and image.body()[:8] == b"\x89PNG\r\n\x1a\n"
    assert errors == []


def test_delete_asks_and_the_list_brings_the_game_back(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    errors = collect_errors(page)
    view = open_game(page, live_server, name="Doomed")
    page.locator("#night details.manage summary").click()
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.locator("#night button.delete-game").click()
    expect(page.locator("#game-name")).to_have_text("Doomed")  # said no: nothing happened
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#night button.delete-game").click()
    page.wait_for_url(live_server + "/")
    expect(page.locator(".deleted-games")).to_contain_text("Deleted Doomed")
    expect(page.locator(f'.games li[data-game-id="{view["id"]}"]')).to_have_count(0)
    page.locator(".deleted-games button.undo-delete").click()
    expect(page.locator(f'.games li[data-game-id="{view["id"]}"]')).to_contain_text("Doomed")
    expect(page.locator(".deleted-games")).to_have_count(0)
    assert errors == []


def test_add_and_remove_players_and_undo_the_removal(browser_page, live_server) -> None:
    from playwright.sync_api import expect

    page = browser_page
    errors = collect_errors(page)
    open_game(page, live_server)
    page.locator("#night details.manage summary").click()
    page.get_by_label("New player's name").fill("Cy")
    page.locator("#night button.add-player").click()
    expect(page.locator(".player .player-name")).to_have_count(3)
    expect(page.locator(".player").nth(2).locator(".player-name")).to_have_value("Cy")
    page.locator(".player").nth(1).locator('.board [data-cell="2,2"]').click()
    page.keyboard.press("g")
    page.keyboard.press("3")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Remove Bo").click()
    expect(page.locator(".player .player-name")).to_have_count(2)
    expect(page.locator("#night button.undo")).to_contain_text("remove Bo")
    page.locator("#night button.undo").click()
    expect(page.locator(".player .player-name")).to_have_count(3)
    bo = page.locator(".player").nth(1)
    expect(bo.locator(".player-name")).to_have_value("Bo")
    expect(bo.locator('.board [data-cell="2,2"]')).to_have_attribute("aria-label", "row 3 column 3: green 3")  # the board came back
    # removed, then the night goes on: "Bring back" still returns them
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Remove Cy").click()
    expect(page.locator(".player .player-name")).to_have_count(2)
    page.locator(".player").first.locator('.board [data-cell="0,0"]').click()
    page.keyboard.press("y")
    page.keyboard.press("1")
    expect(page.locator("#night button.undo")).to_contain_text("set a cell of Ana's board to Y1")
    page.get_by_role("button", name="Bring Cy back").click()
    expect(page.locator(".player").nth(2).locator(".player-name")).to_have_value("Cy")
    expect(page.locator(".player").first.locator('.board [data-cell="0,0"]')).to_have_attribute("aria-label", "row 1 column 1: yellow 1")
    assert errors == []


def test_two_phones_share_one_undo(chromium, live_server) -> None:
    from playwright.sync_api import expect

    phones = [chromium.new_context(viewport={"width": 390, "height": 844}) for _ in range(2)]
    try:
        first, second = (context.new_page() for context in phones)
        view = open_game(first, live_server)
        second.goto(f"{live_server}/games/{view['id']}")
        first.locator(".player").first.locator('.board [data-cell="1,1"]').click()
        first.keyboard.press("p")
        first.keyboard.press("6")
        cell = '.board [data-cell="1,1"]'
        expect(first.locator(".player").first.locator(cell)).to_have_attribute("aria-label", "row 2 column 2: purple 6")
        expect(second.locator(".player").first.locator(cell)).to_have_attribute("aria-label", "row 2 column 2: purple 6", timeout=10_000)
        expect(second.locator("#night button.undo")).to_be_enabled()
        second.locator("#night button.undo").click()
        expect(second.locator(".player").first.locator(cell)).to_have_attribute("aria-label", re.compile("row 2 column 2: empty"))
        # the other phone sees the undo within its refresh, and can redo it
        expect(first.locator(".player").first.locator(cell)).to_have_attribute(
            "aria-label", re.compile("row 2 column 2: empty"), timeout=10_000
        )
        expect(first.locator("#night button.redo")).to_be_enabled()
    finally:
        for context in phones:
            context.close()


def test_the_games_list_shows_local_time_and_the_winner(chromium, live_server) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(timezone_id="America/New_York", locale="en-US")
    try:
        page = context.new_page()
        errors = collect_errors(page)
        view = open_game(page, live_server, game="splendor", players=("Ana", "Bo"), name="Cards")
        page.request.put(
            f"{live_server}/api/games/{view['id']}/players/{view['players'][0]['id']}/cells", data={"cell": "white:1", "value": "3"}
        )
        # Bo's tableau and both players' nobles: nothing left unset
        page.request.put(
            f"{live_server}/api/games/{view['id']}/players/{view['players'][1]['id']}/cells", data={"cell": "blue:0", "value": "2"}
        )
        for player in view["players"]:
            page.request.patch(f"{live_server}/api/games/{view['id']}/players/{player['id']}", data={"fields": {"nobles": 0}})
        page.goto(live_server + "/")
        row = page.locator(f'.games li[data-game-id="{view["id"]}"]')
        expect(row.locator(".result")).to_have_text("Winner: Ana (3)")
        stamp = row.locator("time").get_attribute("datetime")
        local = datetime.fromisoformat(stamp).astimezone(ZoneInfo("America/New_York"))
        expected = f"{local.hour % 12 or 12}:{local.minute:02d}"
        expect(row.locator("time")).to_contain_text(expected)
        expect(row.locator("time")).not_to_contain_text("UTC")
        assert errors == []
    finally:
        context.close()


@pytest.fixture
def lan_server(tmp_path: Path):
    """The review app in LAN mode (a token) on a free port; yield (base URL, join address)."""
    import socket

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    join = f"http://127.0.0.1:{port}/?token=night-token"
    app = create_app(tmp_path / "lan.sqlite3", token="night-token", join_url=join)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("review server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", join
    server.should_exit = True
    thread.join(timeout=5)


def test_the_join_qr_code_opens_the_game_on_a_phone(chromium, lan_server, read_qr) -> None:
    from playwright.sync_api import expect

    base, join = lan_server
    host = chromium.new_context()
    phone = chromium.new_context(viewport={"width": 390, "height": 844})
    try:
        page = host.new_page()
        page.goto(join)
        image = page.locator("#join img")
        expect(image).to_be_visible()
        assert page.evaluate("document.querySelector('#join img').naturalWidth") > 100
        png = page.request.get(base + "/join.png").body()
        read = read_qr(png)
        assert read == join
        other = phone.new_page()
        assert other.goto(base + "/").status == 403  # without the code's token, refused
        assert other.goto(read).status == 200  # with it, in
        expect(other.locator("#games-panel")).to_be_visible()
    finally:
        host.close()
        phone.close()
