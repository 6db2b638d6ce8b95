"""Routes of the game list and one game: pages, their JSON twins, settings and recorded rounds."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from scoring.errors import StateError
from tablescan.games import GAMES
from tablescan.review import usecases
from tablescan.review.pages import json_body, script_json, templates
from tablescan.review.routes import store_of
from tablescan.review.view import game_view

MAX_FORM_FIELDS = 20


NEW_GAME_FIELDS = ("game", "players", "name")


def index_page(request: Request, entered: dict | None = None, errors: dict | None = None, status: int = 200) -> Response:
    """The start page; after a refused new game, with what was entered and each error beside its field."""
    choices = [(entry.id, entry.title) for entry in GAMES.values()]
    listing = usecases.games_list(store_of(request))
    context = {**listing, "choices": choices, "join_url": request.app.state.join_url, "entered": entered or {}, "errors": errors or {}}
    return templates.TemplateResponse(request, "index.html", context, status_code=status)


def field_of(error: StateError, fields: tuple[str, ...]) -> tuple[str, str]:
    """Return which form field a ``StateError`` names (its message starts with the field's path, else the first
    field) and the message as said beside that field (without the path).

    >>> field_of(StateError("players[1]: expected a name of 1-40 characters, got ''"), NEW_GAME_FIELDS)
    ('players', "expected a name of 1-40 characters, got ''")
    """
    path, _, rest = str(error).partition(": ")
    head = path.split("[", 1)[0].split(".", 1)[0].strip()
    if head in fields and rest and " " not in path:
        return head, rest
    return fields[0], str(error)


async def index(request: Request) -> Response:
    """The start page: the stored games (with how each stands), the recently deleted, and a form for a new one."""
    return index_page(request)


async def index_json(request: Request) -> Response:
    """The start page's JSON twin."""
    choices = [{"id": entry.id, "title": entry.title} for entry in GAMES.values()]
    return JSONResponse({**usecases.games_list(store_of(request)), "choices": choices})


async def create_game_form(request: Request) -> Response:
    """The start page's form: create the game, then show it."""
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    entered = {key: str(form.get(key, "")) for key in NEW_GAME_FIELDS}
    names = entered["players"].replace(",", "\n").splitlines()
    try:
        game_id = usecases.create_game(store_of(request), entered["game"], entered["name"], names)
    except StateError as error:  # the form again, as typed, with the error beside the field it is about
        field, message = field_of(error, NEW_GAME_FIELDS)
        return index_page(request, entered, {field: message}, status=StateError.http_status)
    return RedirectResponse(f"/games/{game_id}", status_code=303)


async def api_games(request: Request) -> Response:
    """List the games (GET) or create one from JSON (POST)."""
    store = store_of(request)
    if request.method == "GET":
        return JSONResponse({"games": store.list_games()})
    body = await json_body(request)
    players = body.get("players")
    if not isinstance(players, list):
        raise StateError("players: expected a list of names")
    game_id = usecases.create_game(store, str(body.get("game", "")), str(body.get("name", "")), players, body.get("settings"))
    return JSONResponse(game_view(store, game_id), status_code=201)


async def game_page(request: Request) -> Response:
    """One game's page."""
    view = game_view(store_of(request), request.path_params["game_id"])
    context = {"view": view, "view_json": script_json(view), "join_url": request.app.state.join_url}
    return templates.TemplateResponse(request, "game.html", context)


async def game_json(request: Request) -> Response:
    """One game's page as JSON."""
    return JSONResponse(game_view(store_of(request), request.path_params["game_id"]))


async def api_game(request: Request) -> Response:
    """Show a game (GET), rename it and change its settings (PATCH), or delete it (DELETE; undone by restore)."""
    store, game_id = store_of(request), request.path_params["game_id"]
    if request.method == "DELETE":
        usecases.delete_game(store, game_id)
        return JSONResponse({**usecases.games_list(store), "deleted_id": game_id})
    if request.method == "PATCH":
        usecases.change_game(store, game_id, await json_body(request))
    return JSONResponse(game_view(store, game_id))


async def api_restore(request: Request) -> Response:
    """Bring a deleted game back."""
    store, game_id = store_of(request), request.path_params["game_id"]
    usecases.restore_game(store, game_id)
    return JSONResponse(game_view(store, game_id))


async def restore_form(request: Request) -> Response:
    """The games list's Undo button: bring the deleted game back, then show the list."""
    usecases.restore_game(store_of(request), request.path_params["game_id"])
    return RedirectResponse("/", status_code=303)


async def api_add_player(request: Request) -> Response:
    """Add a player (``name``) to a game."""
    store, game_id = store_of(request), request.path_params["game_id"]
    usecases.add_player(store, game_id, (await json_body(request)).get("name"))
    return JSONResponse(game_view(store, game_id), status_code=201)


async def api_undo(request: Request) -> Response:
    """Take back the game's last change."""
    store, game_id = store_of(request), request.path_params["game_id"]
    notice = usecases.undo(store, game_id)
    return JSONResponse({**game_view(store, game_id), "notice": notice})


async def api_redo(request: Request) -> Response:
    """Make the change undone last again."""
    store, game_id = store_of(request), request.path_params["game_id"]
    notice = usecases.redo(store, game_id)
    return JSONResponse({**game_view(store, game_id), "notice": notice})


async def api_rounds(request: Request) -> Response:
    """Record the current scoring round."""
    store, game_id = store_of(request), request.path_params["game_id"]
    usecases.record_round(store, game_id)
    return JSONResponse(game_view(store, game_id))


ROUTES = [
    Route("/", index),
    Route("/index.json", index_json),
    Route("/games", create_game_form, methods=["POST"]),
    Route("/games/{game_id:int}.json", game_json),
    Route("/games/{game_id:int}", game_page),
    Route("/api/games", api_games, methods=["GET", "POST"]),
    Route("/api/games/{game_id:int}", api_game, methods=["GET", "PATCH", "DELETE"]),
    Route("/api/games/{game_id:int}/restore", api_restore, methods=["POST"]),
    Route("/games/{game_id:int}/restore", restore_form, methods=["POST"]),
    Route("/api/games/{game_id:int}/players", api_add_player, methods=["POST"]),
    Route("/api/games/{game_id:int}/undo", api_undo, methods=["POST"]),
    Route("/api/games/{game_id:int}/redo", api_redo, methods=["POST"]),
    Route("/api/games/{game_id:int}/rounds", api_rounds, methods=["POST"]),
]
