"""The review screen's web app: HTML pages, their JSON twins and the JSON API the pages use.

``create_app(db_path, token=None)`` builds a Starlette app. With a token (LAN mode) every request
must carry it, as ``?token=`` once (then a cookie) or the cookie itself. The routes live in
``tablescan/review/routes/`` (games, boards, photos, adapt), over ``tablescan.review.usecases``.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from scoring.errors import TableError
from tablescan.review.db import Store
from tablescan.review.middleware import SecurityHeaders, TokenGate
from tablescan.review.pages import HERE, http_error, table_error
from tablescan.review.routes import adapt, boards, games, photos, results
from tablescan.review.routes.photos import MAX_UPLOAD_BYTES

__all__ = ["MAX_UPLOAD_BYTES", "create_app"]


def create_app(db_path: str | Path, token: str | None = None, profile: str | None = None, join_url: str | None = None) -> Starlette:
    """Build the review app over the SQLite file ``db_path`` (created and migrated as needed).

    ``profile`` names the calibration profile photo scans use (None: none); ``join_url`` is the address
    (token included) phones join by in LAN mode, shown as a QR code (None: not in LAN mode).

    Raises:
        DatabaseError: the database cannot be opened or is from a newer tablescan.
    """
    store = Store(db_path)
    routes = [
        *games.ROUTES,
        *boards.ROUTES,
        *photos.ROUTES,
        *adapt.ROUTES,
        *results.ROUTES,
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders), Middleware(TokenGate, token=token)],
        exception_handlers={TableError: table_error, HTTPException: http_error},
    )
    app.state.store = store
    app.state.profile = profile
    app.state.join_url = join_url
    return app
