"""Routes of board photos: upload (then scan), re-read with moved corners, and serving a stored photo."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from tablescan.review import usecases
from tablescan.review.errors import LengthRequiredError, NotFoundError, UploadError, UploadTooLargeError
from tablescan.review.pages import json_body
from tablescan.review.routes import store_of
from tablescan.review.routes.boards import PLAYER
from tablescan.review.view import game_view

MAX_UPLOAD_BYTES = 30 * 1024 * 1024
FORM_OVERHEAD_BYTES = 64 * 1024  # a multipart form's boundaries and headers around the photo
MAX_FILENAME = 120
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


async def read_upload(request: Request) -> tuple[bytes, str | None]:
    """Return an uploaded photo's bytes and file name (a form field ``photo`` or the raw body).

    Raises:
        UploadTooLargeError: over the size cap.
        LengthRequiredError: a form upload that does not give its size.
        UploadError: no photo, or an empty one.
    """
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_UPLOAD_BYTES + FORM_OVERHEAD_BYTES:
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
        original = Path(upload.filename or "photo").name[:MAX_FILENAME]
    else:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                raise UploadTooLargeError(f"photo: over the {MAX_UPLOAD_BYTES // 2**20} MB limit")
            chunks.append(chunk)
        data = b"".join(chunks)
        original = Path(request.headers.get("x-filename", "photo")).name[:MAX_FILENAME]
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadTooLargeError(f"photo: over the {MAX_UPLOAD_BYTES // 2**20} MB limit")
    if not data:
        raise UploadError("photo: the upload is empty")
    return data, original


async def api_photo(request: Request) -> Response:
    """Keep an uploaded board photo and read it when the game has a scanner."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    store.game(game_id)
    store.player(game_id, player_id)
    data, original = await read_upload(request)
    # decoding and reading a 12 MP photo takes a while: off the event loop
    profile = request.app.state.profile  # the "Adapt to my set" button may switch it to the adapted profile
    notice = await run_in_threadpool(usecases.upload_photo, store, game_id, player_id, data, original, profile)
    view = game_view(store, game_id)
    view["notice"] = notice
    return JSONResponse(view)


async def api_rescan(request: Request) -> Response:
    """Read the player's photo again, with the corners the players dragged into place (or searched afresh)."""
    store, game_id, player_id = store_of(request), request.path_params["game_id"], request.path_params["player_id"]
    body = await json_body(request)
    corners = usecases.check_corners(body.get("corners"))
    if not usecases.scannable(store, game_id):
        if corners is not None:
            store.set_corners(game_id, player_id, corners)
        view = game_view(store, game_id)
        view["notice"] = usecases.unscanned_notice(store, game_id, "corners saved")
        return JSONResponse(view)
    notice = await run_in_threadpool(usecases.rescan, store, game_id, player_id, corners, request.app.state.profile)
    view = game_view(store, game_id)
    view["notice"] = notice
    return JSONResponse(view)


async def photo_file(request: Request) -> Response:
    """Serve a stored photo by its SHA-256."""
    store, sha = store_of(request), request.path_params["sha"]
    if not _SHA256.match(sha):
        raise NotFoundError("photo: no such photo")
    record = store.photo_by_sha(sha)
    return FileResponse(store.photo_path(record), media_type=record.media_type, headers={"Cache-Control": "private, max-age=86400"})


ROUTES = [
    Route(f"{PLAYER}/photo", api_photo, methods=["POST"]),
    Route(f"{PLAYER}/rescan", api_rescan, methods=["POST"]),
    Route("/photos/{sha}", photo_file),
]
