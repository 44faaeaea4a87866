"""Real HTTP servers on loopback for tests, each in a thread of the test process:
`UvicornServer` runs any ASGI app, `LiveServer` runs Carta's API for a Carta, and
`ScriptedHTTPServer` answers POSTs from a function (a stand-in for a third-party API).

All are context managers: the server is listening when `with` enters and stopped when it
leaves. The `serve` fixture in tests/conftest.py starts LiveServers and stops them after the test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import uvicorn
from starlette.types import ASGIApp

from service.api.app import create_app
from service.carta import Carta

Reply = tuple[int, bytes]  # (HTTP status, body)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a server that must be told one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UvicornServer:
    """An ASGI app served by uvicorn on 127.0.0.1 at `url`, in a daemon thread."""

    def __init__(self, app: ASGIApp, *, start_timeout_s: float = 30) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout_s = start_timeout_s
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> UvicornServer:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"test server on port {self.port} did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class LiveServer(UvicornServer):
    """Carta's HTTP API (create_app) for `carta`, served for real on loopback."""

    def __init__(self, carta: Carta) -> None:
        super().__init__(create_app(carta=carta))
        self.carta = carta

    def __enter__(self) -> LiveServer:
        super().__enter__()
        return self


class ScriptedHTTPServer:
    """A plain HTTP server whose answer to every POST is `reply(body)`; the bodies it got are
    in `requests`, in order. `url` ends with `path`, so it can stand in for an API endpoint."""

    def __init__(self, reply: Callable[[str], Reply], *, path: str = "/") -> None:
        self.reply = reply
        self.requests: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                server.requests.append(body)
                status, payload = server.reply(body)
                self.send_response(status)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass  # keep the test output quiet

        return Handler

    def __enter__(self) -> ScriptedHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
