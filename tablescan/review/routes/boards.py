"""Routes of one player's board: name and fields, cell corrections and their history."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tablescan.review import usecases
from tablescan.review.pages import json_body
from tablescan.review.routes import store_of
from tablescan.review.view import game_view

PLAYER = "/api/games/{game_id:int}/players/{player_id:int}"


async def api_player(request: Request) -> Response:
    """Rename a player and/or change their fields (PATCH), or remove them from the game (DELETE; undo brings them back)."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    if request.method == "DELETE":
        usecases.remove_player(store, game_id, player_id)
    else:
        usecases.change_player(store, game_id, player_id, await json_body(request))
    return JSONResponse(game_view(store, game_id))


async def api_restore_player(request: Request) -> Response:
    """Bring a removed player back."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    usecases.restore_player(store, game_id, player_id)
    return JSONResponse(game_view(store, game_id))


async def api_cells(request: Request) -> Response:
    """Correct one cell (``cell``, ``value``) or several (``cells``)."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    body = await json_body(request)
    changes = body.get("cells")
    if changes is None:
        changes = [{"cell": body.get("cell"), "value": body.get("value")}]
    advice = usecases.correct_cells(store, game_id, player_id, changes)
    view = game_view(store, game_id)
    if advice is not None:  # a grid that reads as misplaced: the corners come before more cell corrections
        view["corners_first"] = {"player": player_id, "message": advice}
        view["notice"] = advice  # the page shows it above the boards
    return JSONResponse(view)


async def api_corrections(request: Request) -> Response:
    """A player's corrections, oldest first."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    store.player(game_id, player_id)
    return JSONResponse({"corrections": store.corrections(player_id)})


ROUTES = [
    Route(PLAYER, api_player, methods=["PATCH", "DELETE"]),
    Route(f"{PLAYER}/cells", api_cells, methods=["PUT"]),
    Route(f"{PLAYER}/restore", api_restore_player, methods=["POST"]),
    Route(f"{PLAYER}/corrections", api_corrections),
]
