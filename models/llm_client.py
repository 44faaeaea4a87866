"""A chat client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio),
through the `openai` SDK: text and image parts, streaming, timeouts and retries.

Retries with exponential backoff (and `Retry-After`) are the SDK's own, on connection
errors, 408, 409, 429 and 5xx. What the endpoint does wrong becomes an `LLMError`
subclass (models/errors.py) that says what failed and which setting to check:
`LLMTimeout`, `LLMUnreachable`, `LLMStatusError` (the endpoint's status in
`upstream_status`) or `LLMBadResponse`.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PIL import Image

from models.errors import LLMBadResponse, LLMError, LLMStatusError, LLMTimeout, LLMUnreachable

if TYPE_CHECKING:
    import openai

# Local servers (Ollama, vLLM, LM Studio) ignore the key, but the SDK requires one.
NO_KEY = "not-needed"


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 2
    max_tokens: int = 700
    temperature: float = 0.0


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class Reply:
    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The response_format asking for a reply that follows `schema` strictly (structured output)."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


def unfenced(text: str) -> str:
    """A JSON reply without the Markdown fence some local models put around it despite the schema."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    return body


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def fit_pixels(image: Image.Image, max_pixels: int) -> Image.Image:
    """The image scaled down (aspect kept) so that width*height <= max_pixels."""
    w, h = image.size
    if w * h <= max_pixels:
        return image
    scale = math.sqrt(max_pixels / (w * h))
    size = (max(1, math.floor(w * scale)), max(1, math.floor(h * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def image_part(image: Image.Image, max_pixels: int) -> tuple[dict[str, Any], tuple[int, int]]:
    """An image_url part (PNG data URL, lossless so small print stays legible) and the
    size it was sent at."""
    fitted = fit_pixels(image.convert("RGB"), max_pixels)
    buf = io.BytesIO()
    fitted.save(buf, "PNG", optimize=False)
    url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}, fitted.size


class LLMClient:
    def __init__(self, config: LLMConfig) -> None:
        import openai  # half a second: loaded only where an endpoint is configured

        self.config = config
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or NO_KEY,
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )

    def _request(
        self, messages: list[dict[str, Any]], max_tokens: int | None, response_format: dict | None = None
    ) -> dict[str, Any]:
        request = {
            "model": self.config.model,
            "messages": messages,
            "max_tokens": max_tokens or self.config.max_tokens,
            "temperature": self.config.temperature,
        }
        if response_format is not None:
            request["response_format"] = response_format
        return request

    def chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        response_format: dict | None = None,
    ) -> Reply:
        """One completion (retried by the SDK on transient errors). `response_format`: e.g.
        {"type": "json_schema", "json_schema": {...}} for structured output; the caller
        validates the reply (endpoints differ in how strictly they honour it)."""
        import openai

        try:
            response = self._client.chat.completions.create(
                **self._request(messages, max_tokens, response_format)
            )
        except openai.APIError as exc:
            raise self._error(exc) from exc
        except ValueError as exc:  # a body that is not JSON
            raise self._malformed(f"the body is not JSON ({exc})") from exc
        try:
            choice = response.choices[0]
            text = choice.message.content
            if not isinstance(text, str) or not text.strip():
                raise TypeError("message.content is empty or not a string")
        except (AttributeError, IndexError, TypeError) as exc:
            raise self._malformed(f"no answer text in the reply ({exc})") from exc
        usage = getattr(response, "usage", None)
        return Reply(
            text,
            getattr(response, "model", None) or self.config.model,
            Usage(getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)),
            getattr(choice, "finish_reason", None),
        )

    def stream(self, messages: list[dict[str, Any]], max_tokens: int | None = None) -> Iterator[str]:
        """Answer text as it is generated. The SDK retries only before the first chunk;
        a failure later ends the stream with an LLMError."""
        import openai

        try:
            chunks = self._client.chat.completions.create(**self._request(messages, max_tokens), stream=True)
            got_text = False
            for chunk in chunks:
                if not getattr(chunk, "choices", None):
                    continue  # usage-only or keep-alive chunks
                delta = getattr(chunk.choices[0], "delta", None)
                text = getattr(delta, "content", None)
                if text:
                    if not isinstance(text, str):
                        raise self._malformed("a streamed chunk's delta.content is not a string")
                    got_text = True
                    yield text
            if not got_text:
                raise self._malformed("the stream carried no answer text")
        except openai.APIError as exc:
            raise self._error(exc) from exc
        except (AttributeError, TypeError, ValueError) as exc:
            raise self._malformed(f"a streamed chunk could not be read ({exc})") from exc

    # errors ---------------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"the LLM endpoint {self.config.base_url} (model {self.config.model!r})"

    def _malformed(self, detail: str) -> LLMBadResponse:
        return LLMBadResponse(
            f"{self._where()} sent a malformed reply: {detail}; check that CARTA_LLM_BASE_URL points at an "
            "OpenAI-compatible /v1 API.",
        )

    def _error(self, exc: openai.APIError) -> LLMError:
        import openai

        where = self._where()
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout(
                f"{where} did not answer within {self.config.timeout_s:g} s "
                f"({self.config.max_retries} retries); raise CARTA_LLM_TIMEOUT_S or check the server's load.",
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMUnreachable(
                f"{where} cannot be reached ({exc.__cause__ or exc}); check CARTA_LLM_BASE_URL.",
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            hint = {
                401: "check CARTA_LLM_API_KEY",
                403: "check CARTA_LLM_API_KEY",
                404: "check CARTA_LLM_MODEL and CARTA_LLM_BASE_URL (it usually ends in /v1)",
                429: "the endpoint is rate limiting; raise CARTA_LLM_MAX_RETRIES or lower the load",
            }.get(status, "check the endpoint's logs, CARTA_LLM_MODEL and CARTA_LLM_VISION")
            detail = _error_detail(exc)
            retried = status in (408, 409, 429) or status >= 500
            return LLMStatusError(
                f"{where} answered HTTP {status}{f' ({detail})' if detail else ''}"
                f"{f' after {self.config.max_retries} retries' if retried else ''}; {hint}.",
                upstream_status=status,
            )
        return self._malformed(str(exc))


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        return str(message)[:200] if message else ""
    return str(body)[:200] if body else ""
