"""The review page's scripts keep one home per game: a shared core naming no game, one module per game.

Like ``tests/test_game_switches.py`` for Python: ``static/review.js`` holds no game id at all, each
game's script lives in ``static/games/<game>.js`` and registers itself under its own id, no script
branches on a game id, and the game page loads its game's module. The constants a module draws with
come from its form (the view's ``form.constants``), so they are checked against the scoring cores.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from scoring import alhambra, sagrada, splendor
from tablescan.games import GAMES

STATIC = Path(__file__).resolve().parents[2] / "tablescan" / "review" / "static"
CORE = STATIC / "review.js"
MODULES = STATIC / "games"


def _id_pattern(ids: set[str]) -> str:
    return "|".join(sorted(re.escape(game_id) for game_id in ids))


def game_ids_named(source: str, ids: set[str]) -> list[str]:
    """``line: id`` of each game id written anywhere in ``source`` (a word, any case)."""
    word = re.compile(rf"\b({_id_pattern(ids)})\b", re.IGNORECASE)
    return [f"{number}: {match.group(1)}" for number, line in enumerate(source.splitlines(), 1) for match in word.finditer(line)]


def js_game_switches(source: str, ids: set[str]) -> list[str]:
    """``line: what`` of each comparison with, or ``case`` on, a quoted game id in a script."""
    quoted = rf"""["'`]({_id_pattern(ids)})["'`]"""
    compare = re.compile(rf"""(?:[!=]==?\s*{quoted})|(?:{quoted}\s*[!=]==?)|(?:\bcase\s+{quoted})""")
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        for match in compare.finditer(line):
            name = next(group for group in match.groups() if group)
            found.append(f"{number}: comparison with {name}")
    return found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if (view.game === "sagrada") return 1;', ["1: comparison with sagrada"]),
        ("x = 'alhambra' !== view.game;", ["1: comparison with alhambra"]),
        ("if (g == `splendor`) {}", ["1: comparison with splendor"]),
        ('switch (id) {\n  case "splendor": break;\n}', ["2: comparison with splendor"]),
        ('tablescan.register("sagrada", (ui) => ({}));', []),
        ('if (view.game === "chess") return;', []),
    ],
)
def test_the_detector_sees_each_kind_of_script_switch(source: str, expected: list[str]) -> None:
    assert js_game_switches(source, set(GAMES)) == expected


def test_the_detector_finds_a_game_id_anywhere_in_a_line() -> None:
    source = "const A = 1;\nconst COLORS = { sagrada: 1 }; // Alhambra too\nconst sagradaish = 2;"
    assert game_ids_named(source, set(GAMES)) == ["2: sagrada", "2: Alhambra"]


def test_the_shared_core_names_no_game() -> None:
    offenders = game_ids_named(CORE.read_text(encoding="utf-8"), set(GAMES))
    assert offenders == [], "static/review.js names a game; move that code to static/games/<game>.js:\n" + "\n".join(offenders)


def test_no_script_switches_on_a_game_id() -> None:
    offenders = [
        f"{path.relative_to(STATIC).as_posix()}:{where}"
        for path in sorted(STATIC.rglob("*.js"))
        for where in js_game_switches(path.read_text(encoding="utf-8"), set(GAMES))
    ]
    assert offenders == [], "game switches in the page scripts:\n" + "\n".join(offenders)


def test_each_game_has_one_module_registering_itself() -> None:
    assert sorted(path.stem for path in MODULES.glob("*.js")) == sorted(GAMES)
    for game_id in GAMES:
        source = (MODULES / f"{game_id}.js").read_text(encoding="utf-8")
        assert re.findall(r"""tablescan\.register\(\s*["']([^"']+)["']""", source) == [game_id]
        others = set(GAMES) - {game_id}
        assert game_ids_named(source, others) == [], f"games/{game_id}.js names another game"


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_game_page_loads_the_core_then_its_games_module(client: TestClient, game_id: str) -> None:
    players = ["Ana", "Bo"]
    created = client.post("/api/games", json={"game": game_id, "players": players, "name": "Scripts"})
    assert created.status_code == 201, created.text
    page = client.get(f"/games/{created.json()['id']}").text
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert scripts == ["/static/review.js", f"/static/games/{game_id}.js", "/static/night.js"]  # night.js: every game's management
    module = client.get(scripts[1])
    assert module.status_code == 200 and f'tablescan.register("{game_id}"' in module.text


@pytest.mark.parametrize(
    ("game_id", "expected"),
    [
        (
            "sagrada",
            {
                "colors": sagrada.COLOR_NAMES,
                "rows": sagrada.ROWS,
                "cols": sagrada.COLS,
                "public_slots": sagrada.PUBLIC_COUNT,
                "solo_public_slots": sagrada.SOLO_PUBLIC_COUNT,
            },
        ),
        ("alhambra", {"types": list(alhambra.BUILDING_TYPES), "fountain": "fountain", "sides": "NESW"}),
        ("splendor", {"max_reserved": splendor.MAX_RESERVED}),
    ],
)
def test_the_form_sends_the_cores_constants(client: TestClient, game_id: str, expected: dict) -> None:
    created = client.post("/api/games", json={"game": game_id, "players": ["Ana", "Bo"], "name": "Constants"})
    form = client.get(f"/games/{created.json()['id']}.json").json()["form"]
    assert {key: form["constants"][key] for key in expected} == expected
    assert form["score_key"] == GAMES[game_id].form.score_key
    assert form["last_round"] == GAMES[game_id].form.last_round
