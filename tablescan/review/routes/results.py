"""Routes of what leaves the table: a game's results as CSV and as an image, and the QR code phones join by."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tablescan.review import export
from tablescan.review.errors import NotFoundError
from tablescan.review.qr import qr_png
from tablescan.review.routes import store_of
from tablescan.review.view import game_view


def _download(body: bytes, media_type: str, filename: str) -> Response:
    headers = {"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"}
    return Response(body, media_type=media_type, headers=headers)


async def results_csv(request: Request) -> Response:
    """The game's standings and every category, one row per player."""
    view = game_view(store_of(request), request.path_params["game_id"])
    return _download(export.results_csv(view).encode("utf-8-sig"), "text/csv; charset=utf-8", export.results_filename(view, ".csv"))


async def results_png(request: Request) -> Response:
    """The game's standings and boards as a picture to share."""
    view = game_view(store_of(request), request.path_params["game_id"])
    return _download(export.results_png(view), "image/png", export.results_filename(view, ".png"))


async def join_png(request: Request) -> Response:
    """The QR code of the address phones join by (LAN mode only: it carries the access token)."""
    join_url = request.app.state.join_url
    if not join_url:
        raise NotFoundError("join code: only in LAN mode (tablescan review --host 0.0.0.0)")
    return Response(qr_png(join_url), media_type="image/png", headers={"Cache-Control": "no-store"})


ROUTES = [
    Route("/games/{game_id:int}/results.csv", results_csv),
    Route("/games/{game_id:int}/results.png", results_png),
    Route("/join.png", join_png),
]
