"""How the review screen answers: HTML pages from the templates, or their JSON twins, errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.templating import Jinja2Templates

from scoring.errors import StateError, TableError

HERE = Path(__file__).parent

templates = Jinja2Templates(directory=str(HERE / "templates"))


def script_json(value: Any) -> str:
    """Return JSON safe to embed inside a <script> element.

    >>> script_json({"name": "</script>"})
    '{"name": "\\\\u003c/script\\\\u003e"}'
    """
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def wants_json(request: Request) -> bool:
    """Whether the request asks for JSON: the API, a ``.json`` twin, or an ``Accept`` header."""
    path = request.url.path
    return path.startswith("/api/") or path.endswith(".json") or "application/json" in request.headers.get("accept", "")


def error_response(request: Request, status: int, message: str) -> Response:
    """Return an error as ``{"error": message}`` or the error page, as the request wants."""
    if wants_json(request):
        return JSONResponse({"error": message}, status_code=status)
    return templates.TemplateResponse(request, "error.html", {"status": status, "message": message}, status_code=status)


async def table_error(request: Request, error: Exception) -> Response:
    """Serve a ``TableError`` with its HTTP status, its message on one line."""
    status = error.http_status if isinstance(error, TableError) else 500
    return error_response(request, status, str(error).replace("\n", " "))


async def http_error(request: Request, error: Exception) -> Response:
    """Serve Starlette's own HTTP errors (unknown address, wrong method) the same way."""
    if not isinstance(error, HTTPException):  # pragma: no cover - registered for HTTPException only
        raise error
    return error_response(request, error.status_code, error.detail or "error")


async def json_body(request: Request) -> dict:
    """Return the request's JSON object body.

    Raises:
        StateError: not JSON, or not an object.
    """
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise StateError(f"request body: expected JSON ({error})") from None
    if not isinstance(body, dict):
        raise StateError("request body: expected a JSON object")
    return body
