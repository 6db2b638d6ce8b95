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


def test_a_new_sagrada_game_guesses_nothing_and_ranks_nobody(client: TestClient) -> None:
    view = new_game(client)
    assert [p["fields"] for p in view["players"]] == [{"private_objective": None, "favor_tokens": None, "pattern": None}] * 2
    assert view["incomplete"] == [
        "Ana's private objective is not set",
        "Ana's favor tokens are not set",
        "Bo's private objective is not set",
        "Bo's favor tokens are not set",
    ]
    assert view["standings"] == [] and view["tie_breaks"] == []  # no order, not even a tie-break, on a guess
    for entry in view["document"]["players"]:  # the document holds no stand-in values
        assert "private_objective" not in entry and "favor_tokens" not in entry
    page = client.get(f"/games/{view['id']}")
    assert '<p class="incomplete">Incomplete: Ana&#39;s private objective is not set; Ana&#39;s favor tokens' in page.text


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
    view = new_game(client)
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
    ("game", "players"),
    [("sagrada", ("Ana",)), ("alhambra", ("Ana", "Bo")), ("splendor", ("Ana", "Bo"))],
)
def test_games_without_unset_values_rank_at_once(client: TestClient, game, players) -> None:
    view = new_game(client, game, players)
    assert view["incomplete"] == []
    assert len(view["standings"]) == len(players)


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
