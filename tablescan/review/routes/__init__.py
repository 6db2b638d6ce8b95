"""The review screen's routes, one module per part of the screen, over ``tablescan.review.usecases``.

Handlers read the request, call a use case with the app's store, and answer with the page or its
JSON twin; the store and the calibration profile live on ``app.state``.
"""

from __future__ import annotations

from starlette.requests import Request

from tablescan.review.db import Store


def store_of(request: Request) -> Store:
    """Return the app's review store."""
    store: Store = request.app.state.store
    return store
