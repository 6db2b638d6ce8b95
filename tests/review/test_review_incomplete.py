"""Standings never rank on a guess (issue #19): a value that decides a score and nobody entered is "not set"."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from tablescan.review.forms.sagrada import FORM as SAGRADA


def new_game(client: TestClient, game: str = "sagrada", players: tuple[str, ...] = ("Ana", "Bo")) -> dict:
    response = client.post("/api/games", json={"game": game, "players": list(players)})
    assert response.status_code == 201, response.text
    return response.json()


def set_fields(client: TestClient, view: dict, index: int, fields: dict):
    return client.patch(f"/api/games/{view['id']}/players/{view['players'][index]['id']}", json={"fields": fields})


def enter_boards(client: TestClient, view: dict, objectives: bool = True) -> dict:
    """Choose the public objectives and put one die on each window, so only the players' fields can be missing."""
    if objectives:
        chosen = ["row-color-variety", "light-shades", "color-diagonals"]
        assert client.patch(f"/api/games/{view['id']}", json={"settings": {"public_objectives": chosen}}).status_code == 200
    for player in view["players"]:
        response = client.put(f"/api/games/{view['id']}/players/{player['id']}/cells", json={"cell": "0,0", "value": "B4"})
        assert response.status_code == 200, response.text
    return response.json()


def test_a_new_sagrada_game_guesses_nothing_and_ranks_nobody(client: TestClient) -> None:
    view = new_game(client)
    assert [p["fields"] for p in view["players"]] == [{"private_objective": None, "favor_tokens": None, "pattern": None}] * 2
    assert view["settings"]["public_objectives"] == []  # no cards pre-filled
    assert [p["entered"] for p in view["players"]] == [False, False]
    assert view["incomplete"] == [
        "the public objectives are not set",
        "Ana's board is not entered",
        "Ana's private objective is not set",
        "Ana's favor tokens are not set",
        "Bo's board is not entered",
        "Bo's private objective is not set",
        "Bo's favor tokens are not set",
    ]
    assert view["standings"] == [] and view["tie_breaks"] == []  # no order, not even a tie-break, on a guess
    for entry in view["document"]["players"]:  # the document holds no stand-in values
        assert "private_objective" not in entry and "favor_tokens" not in entry
    page = client.get(f"/games/{view['id']}")
    assert '<p class="incomplete">Incomplete: the public objectives are not set; Ana&#39;s board is not entered' in page.text


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ([(0, {"private_objective": "red", "favor_tokens": 2}), (1, {"private_objective": "blue"})], ["Bo's favor tokens are not set"]),
        ([(0, {"private_objective": "red", "favor_tokens": 0}), (1, {"favor_tokens": "0", "private_objective": "green"})], []),  # 0 is set
        (
            [(0, {"private_objective": "red", "favor_tokens": 1}), (0, {"private_objective": "", "favor_tokens": ""})],
            [
                "Ana's private objective is not set",
                "Ana's favor tokens are not set",
                "Bo's private objective is not set",
                "Bo's favor tokens are not set",
            ],
        ),
        (
            [(1, {"private_objective": None, "favor_tokens": None})],
            [
                "Ana's private objective is not set",
                "Ana's favor tokens are not set",
                "Bo's private objective is not set",
                "Bo's favor tokens are not set",
            ],
        ),
    ],
)
def test_the_standings_rank_only_once_every_value_is_entered(client: TestClient, changes, expected) -> None:
    view = enter_boards(client, new_game(client))
    for index, fields in changes:
        response = set_fields(client, view, index, fields)
        assert response.status_code == 200, response.text
        view = response.json()
    assert view["incomplete"] == expected
    assert (len(view["standings"]) == 2) == (not expected)
    twin = client.get(f"/games/{view['id']}.json").json()
    assert twin["incomplete"] == expected


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [({"private_objective": "pink"}, "fields.private_objective: expected one of"), ({"favor_tokens": "lots"}, "fields.favor_tokens")],
)
def test_bad_field_values_are_still_refused(client: TestClient, fields, fragment) -> None:
    response = set_fields(client, new_game(client), 0, fields)
    assert response.status_code == 400 and fragment in response.json()["error"]


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        ([], ["the public objectives are not set"]),
        (["light-shades"], ["2 of the 3 public objectives are not set"]),
        (["light-shades", "deep-shades"], ["1 of the 3 public objectives is not set"]),
        (["light-shades", "deep-shades", "color-variety"], []),
    ],
)
def test_public_objectives_are_not_set_until_chosen(client: TestClient, chosen, expected) -> None:
    view = enter_boards(client, new_game(client), objectives=False)
    for index in (0, 1):
        view = set_fields(client, view, index, {"private_objective": "red", "favor_tokens": 1}).json()
    view = client.patch(f"/api/games/{view['id']}", json={"settings": {"public_objectives": chosen}}).json()
    assert view["incomplete"] == expected
    assert (len(view["standings"]) == 2) == (not expected)


def test_a_solo_game_wants_its_cards_and_round_track(client: TestClient) -> None:
    view = new_game(client, "sagrada", ("Ana",))
    assert view["settings"]["solo"] == {"private_objectives": [None, None], "round_track_sum": None}  # nothing dealt
    assert view["incomplete"] == [
        "the public objectives are not set",
        "the solo private objectives are not set",
        "the round track's sum is not set",
        "Ana's board is not entered",
    ]
    view = enter_boards(client, view, objectives=False)
    game = f"/api/games/{view['id']}"
    view = client.patch(game, json={"settings": {"public_objectives": ["light-shades", "deep-shades"]}}).json()
    view = client.patch(game, json={"settings": {"solo": {"private_objectives": [None, "green"]}}}).json()
    assert view["incomplete"] == ["the second solo private objective is not set", "the round track's sum is not set"]
    assert view["document"]["solo"]["private_objectives"][0] == "green"  # a stand-in beside it while the standings wait
    view = client.patch(game, json={"settings": {"solo": {"round_track_sum": "0"}}}).json()  # 0 is a sum the player gives
    assert view["incomplete"] == ["the second solo private objective is not set"] and view["standings"] == []
    view = client.patch(game, json={"settings": {"solo": {"private_objectives": ["blue", "green"]}}}).json()
    assert view["incomplete"] == [] and [row["name"] for row in view["standings"]] == ["Ana"]
    assert view["document"]["solo"] == {"private_objectives": ["blue", "green"], "round_track_sum": 0}
    twice = client.patch(game, json={"settings": {"solo": {"private_objectives": ["blue", "blue"]}}})
    assert twice.status_code == 400 and "two different colours" in twice.json()["error"]


def test_a_board_nobody_entered_does_not_rank(client: TestClient) -> None:
    """A blank Sagrada window scores -20: without a photo or a die it is "not entered", and the standings wait."""
    view = enter_boards(client, new_game(client))
    for index in (0, 1):
        view = set_fields(client, view, index, {"private_objective": "red", "favor_tokens": 1}).json()
    assert view["incomplete"] == [] and len(view["standings"]) == 2
    bo = view["players"][1]
    view = client.put(f"/api/games/{view['id']}/players/{bo['id']}/cells", json={"cell": "0,0", "value": "."}).json()
    assert view["incomplete"] == ["Bo's board is not entered"]
    assert view["standings"] == [] and [p["entered"] for p in view["players"]] == [True, False]


@pytest.mark.parametrize(
    ("game", "first", "blank"),
    [
        ("alhambra", {"cell": "1,0", "value": "garden:N"}, {"cell": "1,0", "value": ""}),
        ("splendor", {"cell": "red:1", "value": "2"}, {"cell": "red:1", "value": "0"}),
    ],
)
def test_alhambra_and_splendor_boards_nobody_entered_do_not_rank(client: TestClient, game, first, blank) -> None:
    view = new_game(client, game)
    assert "Ana's board is not entered" in view["incomplete"] and "Bo's board is not entered" in view["incomplete"]
    ana, bo = (p["id"] for p in view["players"])
    view = client.put(f"/api/games/{view['id']}/players/{ana}/cells", json=first).json()
    assert "Ana's board is not entered" not in view["incomplete"] and "Bo's board is not entered" in view["incomplete"]
    view = client.put(f"/api/games/{view['id']}/players/{ana}/cells", json=blank).json()
    assert "Ana's board is not entered" in view["incomplete"]  # emptied again: nothing entered


def test_alhambra_dirk_is_not_set_until_counted(client: TestClient) -> None:
    view = new_game(client, "alhambra")
    assert view["settings"]["dirk"] == dict.fromkeys(view["options"]["tile_types"])
    assert view["incomplete"][0] == "Dirk's buildings are not set"
    for player in view["players"]:
        view = client.put(f"/api/games/{view['id']}/players/{player['id']}/cells", json={"cell": "1,0", "value": "garden:N"}).json()
    assert view["incomplete"] == ["Dirk's buildings are not set"] and view["standings"] == []
    half = {"pavilion": 1, "seraglio": 0, "arcades": 2}
    view = client.patch(f"/api/games/{view['id']}", json={"settings": {"dirk": half}}).json()
    assert view["incomplete"] == ["Dirk's buildings are not set"]  # three types still uncounted
    view = client.patch(f"/api/games/{view['id']}", json={"settings": {"dirk": {"chambers": 0, "garden": 3, "tower": 0}}}).json()
    assert view["incomplete"] == [] and len(view["standings"]) == 2
    assert view["document"]["dirk"] == {**half, "chambers": 0, "garden": 3, "tower": 0}  # the first edit's counts kept
    view = client.patch(f"/api/games/{view['id']}", json={"settings": {"dirk": {"tower": ""}}}).json()
    assert view["incomplete"] == ["Dirk's buildings are not set"]  # cleared again: not set


def test_splendor_nobles_are_not_set_until_entered(client: TestClient) -> None:
    view = new_game(client, "splendor")
    for player in view["players"]:
        view = client.put(f"/api/games/{view['id']}/players/{player['id']}/cells", json={"cell": "red:1", "value": "2"}).json()
    assert view["incomplete"] == ["Ana's nobles are not set", "Bo's nobles are not set"]
    view = set_fields(client, view, 0, {"nobles": 0}).json()  # none visited Ana: 0 is a value
    view = set_fields(client, view, 1, {"nobles": ["N1"]}).json()
    assert view["incomplete"] == [] and len(view["standings"]) == 2
    view = set_fields(client, view, 0, {"nobles": ""}).json()  # cleared: not set again
    assert view["incomplete"] == ["Ana's nobles are not set"]


def test_breakdown_columns_have_words_for_every_key(client: TestClient) -> None:
    """Every key a game's report breaks a score into has a label in words (the page shows no "favor_tokens")."""
    for game in ("sagrada", "alhambra", "splendor"):
        view = new_game(client, game)
        labels = view["form"]["labels"]
        report = client.get(f"/games/{view['id']}.json").json()["report"]
        keys: set[str] = set()
        for entry in report["players"]:
            for key, value in entry.items():
                if key in ("name", "total", "violations", view["form"]["score_key"]):
                    continue
                keys.add(key)
                if isinstance(value, dict):
                    keys.update(value)
                    for inner in value.values():
                        keys.update(inner if isinstance(inner, dict) else ())
        keys.discard("breakdown")
        missing = sorted(key for key in keys if key not in labels)
        assert not missing, f"{game}: no words for {missing}"
        assert all("_" not in text and text[0].isupper() for text in labels.values())


@pytest.mark.parametrize(
    ("fields", "count", "expected"),
    [
        ({"private_objective": None, "favor_tokens": None}, 2, ["private objective is not set", "favor tokens are not set"]),
        ({"private_objective": "red", "favor_tokens": 0}, 2, []),
        ({"private_objective": "red"}, 3, ["favor tokens are not set"]),
        ({"private_objective": None, "favor_tokens": None}, 1, []),  # solo: objectives are settings, no tokens
    ],
)
def test_sagrada_form_names_what_is_unset(fields, count, expected) -> None:
    assert SAGRADA.unset({"fields": fields}, count) == expected


def test_alhambra_points_before_a_later_scoring_are_not_set_until_carried_or_entered(client: TestClient) -> None:
    view = new_game(client, "alhambra", ("Ana", "Bo", "Cy"))  # three players: no Dirk
    game = f"/api/games/{view['id']}"
    for player in view["players"]:
        view = client.put(f"{game}/players/{player['id']}/cells", json={"cell": "1,0", "value": "garden:N"}).json()
    assert view["incomplete"] == []  # before the first scoring nobody has points: 0 is the rule, not a guess
    jumped = client.patch(game, json={"settings": {"scoring_round": 2}}).json()  # round 1 never recorded here
    assert jumped["incomplete"] == [f"{name}'s points before this scoring are not set" for name in ("Ana", "Bo", "Cy")]
    assert jumped["standings"] == []
    cy = jumped["players"][2]["id"]
    typed = client.patch(f"{game}/players/{cy}", json={"fields": {"score_before": "0"}}).json()
    assert typed["incomplete"] == ["Ana's points before this scoring are not set", "Bo's points before this scoring are not set"]
    # recording round 1 carries every total into the next scoring's points before
    client.patch(game, json={"settings": {"scoring_round": 1}})
    recorded = client.post(f"{game}/rounds").json()
    assert recorded["settings"]["scoring_round"] == 2 and recorded["incomplete"] == []


def test_a_round_with_a_value_not_set_cannot_be_recorded(client: TestClient) -> None:
    view = new_game(client, "alhambra")  # two players: Dirk's buildings are not set
    game = f"/api/games/{view['id']}"
    for player in view["players"]:
        client.put(f"{game}/players/{player['id']}/cells", json={"cell": "1,0", "value": "garden:N"})
    refused = client.post(f"{game}/rounds")
    assert refused.status_code == 400
    assert refused.json()["error"] == "round 1: cannot be recorded yet: Dirk's buildings are not set"
    assert client.get(f"/games/{view['id']}.json").json()["rounds"] == []
