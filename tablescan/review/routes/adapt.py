"""The "Adapt to my set" button: POST /adapt (form, HTML page) and POST /api/adapt (JSON)."""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from calibration.errors import CalibrationError
from calibration.profile import check_name
from scoring.errors import StateError
from tablescan import adapt as adaptation
from tablescan.review.pages import templates
from tablescan.review.routes import store_of
from tablescan.review.routes.games import index_page

_BODY_HINT = 'body: expected a JSON object like {"profile": "default"}'


async def _profile_from(request: Request) -> str:
    if request.url.path.startswith("/api/"):
        body = await request.body()
        try:
            data = json.loads(body) if body.strip() else {}
        except ValueError:
            raise StateError(_BODY_HINT) from None
        if not isinstance(data, dict):
            raise StateError(_BODY_HINT)
        name = data.get("profile")
    else:
        name = (await request.form()).get("profile")
    if name is None or (isinstance(name, str) and not name.strip()):
        name = request.app.state.profile or adaptation.DEFAULT_PROFILE
    if not isinstance(name, str):
        raise StateError(f"profile: expected a profile name, got {name!r}")
    try:
        return check_name(name.strip())
    except CalibrationError as error:  # a bad name typed in the form is bad input
        raise StateError(str(error)) from None


async def adapt_endpoint(request: Request) -> Response:
    """Adapt a profile to the review database: ``profile`` from the JSON body or form, else the one the
    review's scans use, else ``default``; when kept, the review's later scans use that profile."""
    try:
        name = await _profile_from(request)
    except StateError as error:
        if request.url.path.startswith("/api/"):
            raise
        # the form again, with what was typed and the error beside the field
        typed = str((await request.form()).get("profile", ""))
        return index_page(request, {"profile": typed}, {"profile": str(error)}, status=StateError.http_status)
    # looked up on the module at call time: `tablescan adapt` and this button run the same function
    outcome = await run_in_threadpool(adaptation.adapt_profile, name, store=store_of(request))
    if outcome.saved is not None:
        request.app.state.profile = name  # later scans on this screen read with the adapted heads
    if request.url.path.startswith("/api/"):
        return JSONResponse(outcome.to_json())
    return templates.TemplateResponse(request, "adapt.html", {"outcome": outcome, "text": outcome.to_text()})


ROUTES = [
    Route("/adapt", adapt_endpoint, methods=["POST"]),
    Route("/api/adapt", adapt_endpoint, methods=["POST"]),
]
