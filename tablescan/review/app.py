"""The review screen's web app: HTML pages, their JSON twins and the JSON API the pages use.

``create_app(db_path, token=None)`` builds a Starlette app. With a token (LAN mode) every request
must carry it, as ``?token=`` once (then a cookie) or the cookie itself.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import secrets
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from PIL import Image, UnidentifiedImageError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from scoring.data import load_data
from scoring.errors import StateError, TableError
from scoring.registry import GAMES
from tablescan.review import scanning
from tablescan.review.board import (
    ALHAMBRA_TYPES,
    COLOR_NAMES,
    CURRENCIES,
    PUBLIC_OBJECTIVES,
    blank_cells,
    default_fields,
    default_settings,
    normalize_cell,
    pattern_names,
)
from tablescan.review.db import Store
from tablescan.review.errors import ForbiddenError, LengthRequiredError, NotFoundError, UploadError, UploadTooLargeError
from tablescan.review.view import game_view

HERE = Path(__file__).parent
log = logging.getLogger("tablescan.review")
MAX_UPLOAD_BYTES = 30 * 1024 * 1024
MAX_PLAYERS = 6
TOKEN_COOKIE = "tablescan_token"
IMAGE_FORMATS = {"JPEG": (".jpg", "image/jpeg"), "PNG": (".png", "image/png"), "WEBP": (".webp", "image/webp")}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

templates = Jinja2Templates(directory=str(HERE / "templates"))


def _script_json(value: Any) -> str:
    """Return JSON safe to embed inside a <script> element."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _wants_json(request: Request) -> bool:
    path = request.url.path
    return path.startswith("/api/") or path.endswith(".json") or "application/json" in request.headers.get("accept", "")


def _error_response(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": message}, status_code=status)
    return templates.TemplateResponse(request, "error.html", {"status": status, "message": message}, status_code=status)


async def _table_error(request: Request, error: Exception) -> Response:
    status = getattr(error, "http_status", 500)
    return _error_response(request, status, str(error).replace("\n", " "))


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    return _error_response(request, error.status_code, error.detail or "error")


SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # the LAN token travels in the first address: never pass it on
]


class SecurityHeaders:
    """ASGI middleware: a strict same-origin content policy and no referrer on every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + SECURITY_HEADERS}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class TokenGate:
    """ASGI middleware: in LAN mode, refuse any request without the access token (403)."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.token:
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0]
        cookie = ""
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                jar = SimpleCookie()
                jar.load(value.decode("latin-1"))
                if TOKEN_COOKIE in jar:
                    cookie = jar[TOKEN_COOKIE].value
        if given and secrets.compare_digest(given, self.token):

            async def send_with_cookie(message: dict) -> None:
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers", []))
                    headers.append(
                        (b"set-cookie", f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode())
                    )
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        if cookie and secrets.compare_digest(cookie, self.token):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = _error_response(
            request, ForbiddenError.http_status, "access token missing or wrong: open the address tablescan review printed"
        )
        await response(scope, receive, send)


async def _json_body(request: Request) -> dict:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise StateError(f"request body: expected JSON ({error})") from None
    if not isinstance(body, dict):
        raise StateError("request body: expected a JSON object")
    return body


def _int_in(value: Any, path: str, low: int, high: int) -> int:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise StateError(f"{path}: expected an integer {low}-{high}, got {value!r}")
    return value


def _name(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 40:
        raise StateError(f"{path}: expected a name of 1-40 characters, got {value!r}")
    return value.strip()


def _clean_settings(game: str, current: dict, change: dict, player_count: int) -> dict:
    """Merge a settings change into the current settings, checking each value."""
    settings = json.loads(json.dumps(current))
    if game == "sagrada":
        if "public_objectives" in change:
            chosen = change["public_objectives"]
            if not isinstance(chosen, list) or len(chosen) > 3 or any(item not in PUBLIC_OBJECTIVES for item in chosen):
                raise StateError(f"settings.public_objectives: expected up to 3 of {', '.join(PUBLIC_OBJECTIVES)}")
            settings["public_objectives"] = chosen
        if "solo" in change and player_count == 1:
            solo = change["solo"] if isinstance(change["solo"], dict) else {}
            privates = solo.get("private_objectives", settings.get("solo", {}).get("private_objectives", []))
            if not isinstance(privates, list) or len(privates) != 2 or any(c not in COLOR_NAMES for c in privates):
                raise StateError("settings.solo.private_objectives: expected two colour names")
            track = _int_in(solo.get("round_track_sum", 0), "settings.solo.round_track_sum", 0, 200)
            settings["solo"] = {"private_objectives": privates, "round_track_sum": track}
    elif game == "alhambra":
        if "scoring_round" in change:
            settings["scoring_round"] = _int_in(change["scoring_round"], "settings.scoring_round", 1, 3)
        if "dirk" in change and player_count == 2:
            dirk = change["dirk"]
            if not isinstance(dirk, dict):
                raise StateError("settings.dirk: expected counts per building type")
            settings["dirk"] = {
                kind: _int_in(dirk.get(kind, 0), f"settings.dirk.{kind}", 0, 20) for kind in ALHAMBRA_TYPES
            }
        if "market" in change:
            market = change["market"]
            if not isinstance(market, list) or len(market) > 4:
                raise StateError("settings.market: expected up to 4 tiles")
            tiles = []
            for index, tile in enumerate(market):
                path = f"settings.market[{index}]"
                if not isinstance(tile, dict) or tile.get("currency") not in CURRENCIES or tile.get("type") not in ALHAMBRA_TYPES:
                    raise StateError(f"{path}: expected currency ({', '.join(CURRENCIES)}), type and walls")
                _, cell_value = normalize_cell("alhambra", "0,0", f"{tile['type']}:{tile.get('walls', '')}")
                tiles.append({"currency": tile["currency"], "type": tile["type"], "walls": cell_value.partition(":")[2]})
            settings["market"] = tiles
    return settings


def _clean_fields(game: str, current: dict, change: dict) -> dict:
    """Merge a player-fields change into the player's fields, checking each value."""
    fields = json.loads(json.dumps(current))
    if game == "sagrada":
        if "private_objective" in change:
            if change["private_objective"] not in COLOR_NAMES:
                raise StateError(f"fields.private_objective: expected one of {', '.join(COLOR_NAMES)}")
            fields["private_objective"] = change["private_objective"]
        if "favor_tokens" in change:
            fields["favor_tokens"] = _int_in(change["favor_tokens"], "fields.favor_tokens", 0, 12)
        if "pattern" in change:
            pattern = change["pattern"] or None
            if pattern is not None and pattern not in pattern_names():
                raise StateError(f"fields.pattern: no window pattern named {pattern!r}")
            fields["pattern"] = pattern
    elif game == "alhambra":
        if "score_before" in change:
            fields["score_before"] = _int_in(change["score_before"], "fields.score_before", 0, 999)
        if "reserve" in change:
            reserve = change["reserve"]
            items = reserve.replace(";", ",").split(",") if isinstance(reserve, str) else reserve
            if not isinstance(items, list) or len(items) > 20:
                raise StateError("fields.reserve: expected tiles like 'garden:N, tower:ES'")
            tiles = []
            for index, item in enumerate(str(i).strip() for i in items):
                if not item:
                    continue
                _, value = normalize_cell("alhambra", "0,0", item)
                if value in ("", "fountain"):
                    raise StateError(f"fields.reserve[{index}]: expected a building tile like 'garden:N', got {item!r}")
                tiles.append(value)
            fields["reserve"] = tiles
        if "money" in change:
            money = change["money"]
            if not isinstance(money, dict):
                raise StateError("fields.money: expected an amount per currency")
            fields["money"] = {c: _int_in(money.get(c, 0), f"fields.money.{c}", 0, 200) for c in CURRENCIES}
    else:
        if "reserved" in change:
            fields["reserved"] = _int_in(change["reserved"], "fields.reserved", 0, 3)
        if "nobles" in change:
            nobles = change["nobles"]
            if isinstance(nobles, list):  # which nobles: the core checks the bonuses can meet each one
                known = {noble["id"] for noble in load_data("splendor", "cards")["nobles"]}
                if len(set(nobles)) != len(nobles) or any(noble not in known for noble in nobles):
                    raise StateError(f"fields.nobles: expected distinct noble ids of {', '.join(sorted(known))}")
                fields["nobles"] = list(nobles)
            else:
                fields["nobles"] = _int_in(nobles, "fields.nobles", 0, 10)
    return fields


def create_app(db_path: str | Path, token: str | None = None, profile: str | None = None) -> Starlette:
    """Build the review app over the SQLite file ``db_path`` (created and migrated as needed).

    ``profile`` names the calibration profile photo scans use (None: none).

    Raises:
        DatabaseError: the database cannot be opened or is from a newer tablescan.
    """
    from tablescan.adapt import adapt_endpoint  # the "Adapt to my set" button

    store = Store(db_path)

    def new_game(game: str, name: str, player_names: list[str], settings: dict | None = None) -> int:
        if game not in GAMES:
            raise StateError(f"game: expected one of {', '.join(GAMES)}, got {game!r}")
        names = [_name(n, f"players[{i}]") for i, n in enumerate(player_names) if str(n).strip()]
        if not 1 <= len(names) <= MAX_PLAYERS:
            raise StateError(f"players: expected 1-{MAX_PLAYERS} player names, got {len(names)}")
        if len(set(names)) != len(names):
            raise StateError("players: every player needs a different name")
        if game == "alhambra" and len(names) < 2:
            raise StateError("players: Alhambra needs 2-6 players (with 2, Dirk plays along)")
        title = str(name).strip()[:60] or f"{GAMES[game].title} night"
        chosen = default_settings(game, len(names))
        if settings is not None:
            if not isinstance(settings, dict):
                raise StateError("settings: expected an object")
            chosen = _clean_settings(game, chosen, settings, len(names))
        players = [(n, default_fields(game, i)) for i, n in enumerate(names)]
        return store.create_game(game, title, chosen, players, blank_cells(game))

    async def index(request: Request) -> Response:
        return templates.TemplateResponse(
            request, "index.html", {"games": store.list_games(), "choices": [(g.id, g.title) for g in GAMES.values()]}
        )

    async def index_json(request: Request) -> Response:
        return JSONResponse({"games": store.list_games(), "choices": [{"id": g.id, "title": g.title} for g in GAMES.values()]})

    async def create_game_form(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=20)
        names = str(form.get("players", "")).replace(",", "\n").splitlines()
        game_id = new_game(str(form.get("game", "")), str(form.get("name", "")), names)
        return RedirectResponse(f"/games/{game_id}", status_code=303)

    async def api_games(request: Request) -> Response:
        if request.method == "GET":
            return JSONResponse({"games": store.list_games()})
        body = await _json_body(request)
        players = body.get("players")
        if not isinstance(players, list):
            raise StateError("players: expected a list of names")
        game_id = new_game(str(body.get("game", "")), str(body.get("name", "")), players, body.get("settings"))
        return JSONResponse(game_view(store, game_id), status_code=201)

    async def game_page(request: Request) -> Response:
        view = game_view(store, request.path_params["game_id"])
        return templates.TemplateResponse(request, "game.html", {"view": view, "view_json": _script_json(view)})

    async def game_json(request: Request) -> Response:
        return JSONResponse(game_view(store, request.path_params["game_id"]))

    async def api_game(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        if request.method == "PATCH":
            body = await _json_body(request)
            game = store.game(game_id)
            settings = None
            if "settings" in body:
                if not isinstance(body["settings"], dict):
                    raise StateError("settings: expected an object")
                count = len(store.players(game_id))
                settings = _clean_settings(game["game"], game["settings"], body["settings"], count)
            name = _name(body["name"], "name") if "name" in body else None
            store.update_game(game_id, name=name, settings=settings)
        return JSONResponse(game_view(store, game_id))

    async def api_player(request: Request) -> Response:
        game_id, player_id = request.path_params["game_id"], request.path_params["player_id"]
        body = await _json_body(request)
        game = store.game(game_id)
        player = store.player(game_id, player_id)
        name = _name(body["name"], "name") if "name" in body else None
        if name is not None and name in {p["name"] for p in store.players(game_id) if p["id"] != player_id}:
            raise StateError(f"name: another player is already called {name!r}")
        fields = None
        if "fields" in body:
            if not isinstance(body["fields"], dict):
                raise StateError("fields: expected an object")
            fields = _clean_fields(game["game"], player["fields"], body["fields"])
        store.update_player(game_id, player_id, name=name, fields=fields)
        return JSONResponse(game_view(store, game_id))

    async def api_cells(request: Request) -> Response:
        game_id, player_id = request.path_params["game_id"], request.path_params["player_id"]
        body = await _json_body(request)
        game = store.game(game_id)
        store.player(game_id, player_id)
        changes = body.get("cells")
        if changes is None:
            changes = [{"cell": body.get("cell"), "value": body.get("value")}]
        if not isinstance(changes, list) or not changes:
            raise StateError("cells: expected a list of {cell, value}")
        cleaned = []
        for index, change in enumerate(changes):
            if not isinstance(change, dict):
                raise StateError(f"cells[{index}]: expected an object with cell and value")
            cleaned.append(normalize_cell(game["game"], change.get("cell"), change.get("value")))
        store.correct_cells(game_id, player_id, cleaned)
        return JSONResponse(game_view(store, game_id))

    async def api_corrections(request: Request) -> Response:
        game_id, player_id = request.path_params["game_id"], request.path_params["player_id"]
        store.player(game_id, player_id)
        return JSONResponse({"corrections": store.corrections(player_id)})

    async def read_upload(request: Request) -> tuple[bytes, str | None]:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_UPLOAD_BYTES + 64 * 1024:
            raise UploadTooLargeError(f"photo: {int(length) / 1e6:.1f} MB is over the {MAX_UPLOAD_BYTES // 2**20} MB limit")
        content_type = request.headers.get("content-type", "")
        if content_type.startswith("multipart/form-data"):
            if length is None:  # a chunked form would be parsed (and spooled) whole before any cap applies
                raise LengthRequiredError("photo: the upload must give its size (Content-Length); send it as a normal form")
            form = await request.form(max_files=1, max_fields=5)
            upload = form.get("photo")
            if upload is None or isinstance(upload, str):
                raise UploadError("photo: expected a file field named 'photo'")
            data = await upload.read(MAX_UPLOAD_BYTES + 1)
            original = Path(upload.filename or "photo").name[:120]
        else:
            chunks, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_UPLOAD_BYTES:
                    raise UploadTooLargeError(f"photo: over the {MAX_UPLOAD_BYTES // 2**20} MB limit")
                chunks.append(chunk)
            data = b"".join(chunks)
            original = Path(request.headers.get("x-filename", "photo")).name[:120]
        if len(data) > MAX_UPLOAD_BYTES:
            raise UploadTooLargeError(f"photo: over the {MAX_UPLOAD_BYTES // 2**20} MB limit")
        if not data:
            raise UploadError("photo: the upload is empty")
        return data, original

    def check_image(data: bytes, label: str) -> tuple[str, str, tuple[int, int]]:
        try:
            with Image.open(io.BytesIO(data)) as probe:
                probe.verify()
            with Image.open(io.BytesIO(data)) as image:
                kind = image.format
                width, height = image.size
                # the size as shown, EXIF orientation applied (as the scanner loads it), without decoding pixels
                turned = image.getexif().get(0x0112) in (5, 6, 7, 8)
                size = (height, width) if turned else (width, height)
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
            raise UploadError(f"{label}: not a readable image ({error.__class__.__name__}); upload a JPEG, PNG or WebP photo") from None
        if kind not in IMAGE_FORMATS:
            raise UploadError(f"{label}: {kind} images are not accepted; upload a JPEG, PNG or WebP photo")
        suffix, media_type = IMAGE_FORMATS[kind]
        return suffix, media_type, size

    def rescan(game_id: int, player_id: int, corners: list | None) -> str | None:
        """Scan the player's photo, storing readings; return a notice instead of failing on a bad photo."""
        game = store.game(game_id)
        player = store.player(game_id, player_id)
        if player["photo"] is None:
            raise StateError("photo: this player has no photo yet; upload one first")
        path = store.photo_path(player["photo"])
        try:
            outcome = scanning.scan_photo(
                path,
                game["game"],
                corners=corners,
                player_name=player["name"],
                name=player["photo"].original_name,
                profile=app.state.profile,  # the "Adapt to my set" button may switch it to the adapted profile
            )
        except TableError as error:
            if corners is not None:
                store.set_corners(game_id, player_id, corners)
            return scanning.in_screen_words(error)
        except Exception as error:  # a scanner bug must not cost the table its game: keep the photo, say so, log it
            log.exception("scanning %s for player %s failed", player["photo"].sha256[:12], player_id)
            if corners is not None:
                store.set_corners(game_id, player_id, corners)
            return f"the scanner failed ({error.__class__.__name__}: {error}); the photo is kept, enter the board by hand"
        # a re-read of the same photo (new corners) keeps the players' corrections; a new photo starts afresh
        store.store_scan(
            game_id,
            player_id,
            outcome.corners,
            outcome.model,
            outcome.readings,
            keep_corrected=corners is not None,
            examples=outcome.examples,  # each cell's crop, a labelled example for `tablescan adapt`
        )
        return None

    async def api_photo(request: Request) -> Response:
        game_id, player_id = request.path_params["game_id"], request.path_params["player_id"]
        game = store.game(game_id)
        store.player(game_id, player_id)
        data, original = await read_upload(request)
        suffix, media_type, size = check_image(data, original or "photo")
        record = store.add_photo(hashlib.sha256(data).hexdigest(), suffix, data, media_type, size, original)
        store.attach_photo(game_id, player_id, record.id)
        notice = None
        if game["game"] in scanning.scanner_games():
            notice = await run_in_threadpool(rescan, game_id, player_id, None)
        else:
            notice = f"photo stored; {GAMES[game['game']].title} has no photo scanner yet, so enter the board by hand"
        view = game_view(store, game_id)
        view["notice"] = notice
        return JSONResponse(view)

    async def api_rescan(request: Request) -> Response:
        game_id, player_id = request.path_params["game_id"], request.path_params["player_id"]
        body = await _json_body(request)
        corners = body.get("corners")
        if corners is not None:
            if (
                not isinstance(corners, list)
                or len(corners) != 4
                or any(not isinstance(p, list) or len(p) != 2 or not all(isinstance(v, (int, float)) for v in p) for p in corners)
            ):
                raise StateError("corners: expected 4 [x, y] points, clockwise from top-left")
            corners = [[float(x), float(y)] for x, y in corners]
        game = store.game(game_id)
        if game["game"] not in scanning.scanner_games():
            if corners is not None:
                store.set_corners(game_id, player_id, corners)
            view = game_view(store, game_id)
            view["notice"] = f"corners saved; {GAMES[game['game']].title} has no photo scanner yet"
            return JSONResponse(view)
        notice = await run_in_threadpool(rescan, game_id, player_id, corners)
        view = game_view(store, game_id)
        view["notice"] = notice
        return JSONResponse(view)

    async def api_rounds(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        game = store.game(game_id)
        if game["game"] != "alhambra":
            raise StateError(f"game {game_id}: only Alhambra has several scorings")
        view = game_view(store, game_id)
        if view["report"] is None:
            raise StateError(f"round {game['settings'].get('scoring_round', 1)}: cannot be recorded: {view['error']}")
        round_number = game["settings"].get("scoring_round", 1)
        totals = {p["id"]: (p["report"] or {}).get("total", 0) for p in view["players"]}
        settings = dict(game["settings"])
        if round_number < 3:
            settings["scoring_round"] = round_number + 1
            carry = totals
        else:
            carry = {}
        store.record_round(game_id, round_number, view["report"], carry, settings)
        return JSONResponse(game_view(store, game_id))

    async def photo_file(request: Request) -> Response:
        sha = request.path_params["sha"]
        if not _SHA256.match(sha):
            raise NotFoundError("photo: no such photo")
        record = store.photo_by_sha(sha)
        return FileResponse(store.photo_path(record), media_type=record.media_type, headers={"Cache-Control": "private, max-age=86400"})

    routes = [
        Route("/", index),
        Route("/index.json", index_json),
        Route("/games", create_game_form, methods=["POST"]),
        Route("/games/{game_id:int}.json", game_json),
        Route("/games/{game_id:int}", game_page),
        Route("/api/games", api_games, methods=["GET", "POST"]),
        Route("/api/games/{game_id:int}", api_game, methods=["GET", "PATCH"]),
        Route("/api/games/{game_id:int}/rounds", api_rounds, methods=["POST"]),
        Route("/api/games/{game_id:int}/players/{player_id:int}", api_player, methods=["PATCH"]),
        Route("/api/games/{game_id:int}/players/{player_id:int}/cells", api_cells, methods=["PUT"]),
        Route("/api/games/{game_id:int}/players/{player_id:int}/corrections", api_corrections),
        Route("/api/games/{game_id:int}/players/{player_id:int}/photo", api_photo, methods=["POST"]),
        Route("/api/games/{game_id:int}/players/{player_id:int}/rescan", api_rescan, methods=["POST"]),
        Route("/photos/{sha}", photo_file),
        Route("/adapt", adapt_endpoint, methods=["POST"]),  # tablescan adapt's button (tablescan/adapt.py)
        Route("/api/adapt", adapt_endpoint, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders), Middleware(TokenGate, token=token)],
        exception_handlers={TableError: _table_error, HTTPException: _http_error},
    )
    app.state.store = store
    app.state.profile = profile
    return app
