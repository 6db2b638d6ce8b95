"""The review screen's ASGI middleware: security headers on every response, the LAN access token."""

from __future__ import annotations

import secrets
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request

from tablescan.review.errors import ForbiddenError
from tablescan.review.pages import error_response

TOKEN_COOKIE = "tablescan_token"
# what the refusal page itself loads: the stylesheet and icon hold no game data, so they need no token
UNGATED_PATHS = frozenset({"/static/review.css", "/static/favicon.svg"})
REFUSAL = (
    "this review screen needs its access token: open the full address tablescan review printed when it started "
    "(it ends in ?token=...), or ask whoever started it for that link"
)

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
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
        if scope["type"] != "http" or not self.token or scope.get("path") in UNGATED_PATHS:
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
                    headers.append((b"set-cookie", f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()))
                    message = {**message, "headers": headers}
                await send(message)

            await self.app(scope, receive, send_with_cookie)
            return
        if cookie and secrets.compare_digest(cookie, self.token):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = error_response(request, ForbiddenError.http_status, REFUSAL)
        await response(scope, receive, send)
