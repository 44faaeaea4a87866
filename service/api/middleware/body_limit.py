"""Refuse an upload larger than the limit while it streams in, before a route reads it."""

from __future__ import annotations

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import error_response

SIDECAR_ALLOWANCE = 8 * 1_000_000  # multipart overhead, form fields and sidecars on top of the file


class BodyLimitMiddleware:
    """413 for a POST body over the limit: by its Content-Length when it has one, else by
    counting the bytes received (the app's handler turns that into the same 413 JSON)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes + SIDECAR_ALLOWANCE

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await error_response(413, "too_large", self._message())(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise StarletteHTTPException(413, self._message())
            return message

        await self.app(scope, counted, send)

    def _message(self) -> str:
        return f"the request body exceeds {self.max_bytes:,} bytes (CARTA_MAX_UPLOAD_BYTES plus sidecars)"
