"""An OpenAI-protocol chat server of our own for tests: FastAPI + uvicorn on loopback,
spoken to over real HTTP by the real `openai` SDK.

Each test scripts it: `server.script(Step(...), ...)` queues replies (status, delay,
streamed chunks, raw malformed bodies, headers); when the queue is empty `server.responder`
(a function of the request body) writes the answer text. Every request body is recorded in
`server.requests`, so tests can decode the image parts that arrived.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from PIL import Image

from tests.utils.servers import UvicornServer


@dataclass
class Step:
    """One scripted reply. `text` None = ask the responder."""

    text: str | None = None
    status: int = 200
    delay_s: float = 0.0
    raw: str | None = None  # a body sent as is (malformed replies)
    chunks: list[str] | None = None  # streamed pieces (default: the text split into words)
    headers: dict[str, str] = field(default_factory=dict)
    break_stream_after: int | None = None  # send this many chunks, then a malformed line


def echo_first_citation(body: dict[str, Any]) -> str:
    """Default responder: the first sentence of the first context page, cited by its label."""
    import re

    text = "\n".join(part_texts(body))
    match = re.search(r'cite="(\[[^\]]+\])"[^\n]*\n((?:.*\n?){1,12})', text)
    if not match:
        return "Not found in the indexed documents."
    # the first line that reads as a sentence (not a heading such as "5. Vistoria", not a table row)
    lines = [line.strip() for line in match.group(2).splitlines()]
    line = next(
        (x for x in lines if len(x.split()) >= 5 and not x.startswith("|")), lines[0] if lines else ""
    )
    sentence = re.split(r"(?<=[.!?])\s", line)[0]
    return f"{sentence} {match.group(1)}"


def part_texts(body: dict[str, Any]) -> list[str]:
    """Every text part of every message of a chat request."""
    out = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out += [p["text"] for p in content or [] if p.get("type") == "text"]
    return out


def image_parts(body: dict[str, Any]) -> list[Image.Image]:
    """The images of a chat request, decoded from their data URLs."""
    images = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                header, _, data = url.partition(",")
                assert header.startswith("data:image/") and header.endswith(";base64"), header
                images.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return images


class OpenAIProtocolServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.steps: list[Step] = []
        self.responder: Callable[[dict[str, Any]], str] = echo_first_citation
        self._lock = threading.Lock()
        self._http = UvicornServer(self._app())
        self.port = self._http.port
        self.url = f"{self._http.url}/v1"

    def settings(self) -> dict[str, Any]:
        """Settings for a Carta whose LLM is this server: quick timeouts, no retries, no page
        captions (a test counting the server's requests counts only its own)."""
        return {
            "llm_base_url": self.url,
            "llm_model": "test-model",
            "llm_timeout_s": 5.0,
            "llm_max_retries": 0,
            "caption_pages": 0,
        }

    def script(self, *steps: Step) -> None:
        with self._lock:
            self.steps = list(steps)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.steps = []
            self.responder = echo_first_citation

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Step:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self.steps.pop(0) if self.steps else Step()

    def _app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            return {"object": "list", "data": [{"id": "test-model", "object": "model", "owned_by": "carta"}]}

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            body = await request.json()
            step = self._next(body, dict(request.headers))
            if step.delay_s:
                await asyncio.sleep(step.delay_s)
            if step.raw is not None:
                return Response(
                    step.raw, status_code=step.status, headers=step.headers, media_type="application/json"
                )
            if step.status >= 400:
                return JSONResponse(
                    {"error": {"message": f"scripted failure {step.status}", "type": "server_error"}},
                    status_code=step.status,
                    headers=step.headers,
                )
            text = step.text if step.text is not None else self.responder(body)
            model = body.get("model", "test-model")
            if body.get("stream"):
                pieces = step.chunks or _words(text)
                return StreamingResponse(
                    _sse(pieces, model, step.break_stream_after),
                    media_type="text/event-stream",
                    headers=step.headers,
                )
            return JSONResponse(
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": sum(len(t) for t in part_texts(body)) // 4,
                        "completion_tokens": len(text) // 4 + 1,
                        "total_tokens": 0,
                    },
                },
                headers=step.headers,
            )

        return app

    def __enter__(self) -> OpenAIProtocolServer:
        self._http.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.__exit__(*exc)


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]


async def _sse(pieces: list[str], model: str, break_after: int | None):  # type: ignore[no-untyped-def]
    for i, piece in enumerate(pieces):
        if break_after is not None and i == break_after:
            yield "data: {this is not json\n\n"
            return
        chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
        }
        yield f"data: {json.dumps(chunk)}\n\n"
        await asyncio.sleep(0)
    end = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    yield f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n"
