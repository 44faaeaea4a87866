"""Refuse a request body larger than the limit while it streams in, before a route reads it."""

from __future__ import annotations

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import error_response

SIDECAR_ALLOWANCE = 8 * 1_000_000  # multipart overhead, form fields and sidecars on top of the file
# A JSON body (search, ask, keys) is a question and its filters: a 10,000-vertex polygon is
# about 400 kB. Held to the upload limit, 6 MB of `"doc_ids": [1, 1, ...]` took 4 GB to
# report its three million validation errors, and 100 MB would have taken the machine.
MAX_JSON_BYTES = 1_000_000


class BodyLimitMiddleware:
    """413 for a POST body over the limit: by its Content-Length when it has one, else by
    counting the bytes received (the app's handler turns that into the same 413 JSON). A
    multipart body (an upload) may hold the upload limit plus sidecars; any other body
    (JSON) MAX_JSON_BYTES."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_json_bytes: int = MAX_JSON_BYTES) -> None:
        self.app = app
        self.max_upload = max_bytes + SIDECAR_ALLOWANCE
        self.max_json = max_json_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        upload = headers.get(b"content-type", b"").lower().startswith(b"multipart/form-data")
        limit = self.max_upload if upload else self.max_json
        message = self._message(upload, limit)
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await error_response(413, "too_large", message)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            received = await receive()
            seen += len(received.get("body", b""))
            if seen > limit:
                raise StarletteHTTPException(413, message)
            return received

        await self.app(scope, counted, send)

    @staticmethod
    def _message(upload: bool, limit: int) -> str:
        if upload:
            return f"the request body exceeds {limit:,} bytes (CARTA_MAX_UPLOAD_BYTES plus sidecars)"
        return (
            f"the JSON body exceeds {limit:,} bytes; send fewer doc_ids or H3 cells, or a simpler polygon "
            "(uploads go as multipart/form-data)"
        )
