"""The LLM client against our OpenAI-protocol server: real HTTP through the real SDK."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from models.errors import LLMBadResponse, LLMStatusError, LLMTimeout, LLMUnreachable
from models.llm_client import (
    LLMClient,
    LLMConfig,
    LLMError,
    fit_pixels,
    image_part,
    text_part,
    unfenced,
)
from tests.openai_protocol import OpenAIProtocolServer, Step, image_parts
from tests.utils.servers import free_port

FAST_RETRY = {"retry-after-ms": "10"}  # the SDK honours it, so retry tests take milliseconds


def client(server: OpenAIProtocolServer, **overrides: object) -> LLMClient:
    config = {"base_url": server.url, "model": "test-model", "timeout_s": 5.0, "max_retries": 2} | overrides
    return LLMClient(LLMConfig(**config))  # type: ignore[arg-type]


def user(*parts: dict) -> list[dict]:
    return [{"role": "user", "content": list(parts)}]


def test_fit_pixels_keeps_aspect_and_budget() -> None:
    image = Image.new("RGB", (2000, 1000))
    fitted = fit_pixels(image, 500_000)
    assert fitted.width * fitted.height <= 500_000
    assert abs(fitted.width / fitted.height - 2.0) < 0.01
    assert fit_pixels(image, 5_000_000) is image  # small enough: untouched


def test_unfenced_strips_a_markdown_fence_only() -> None:
    assert unfenced(' ```json\n{"a": 1}\n``` ') == '{"a": 1}'
    assert unfenced('{"a": "```"}') == '{"a": "```"}'


def test_image_parts_arrive_as_sent(llm_server: OpenAIProtocolServer) -> None:
    rng = np.random.default_rng(7)
    page = Image.fromarray(rng.integers(0, 255, (1200, 900, 3), dtype=np.uint8))
    small = Image.fromarray(rng.integers(0, 255, (40, 30, 3), dtype=np.uint8))
    big_part, big_size = image_part(page, 250_000)
    small_part, small_size = image_part(small, 250_000)
    llm_server.script(Step(text="ok"))
    reply = client(llm_server).chat(user(text_part("look"), big_part, small_part))
    assert reply.text == "ok"
    body = llm_server.requests[0]
    assert body["model"] == "test-model" and body["max_tokens"] == 700
    received = image_parts(body)
    assert [im.size for im in received] == [big_size, small_size]
    assert big_size[0] * big_size[1] <= 250_000 and small_size == (30, 40)
    # lossless: the decoded pixels are exactly the resized page and the untouched small image
    assert np.array_equal(np.asarray(received[0].convert("RGB")), np.asarray(fit_pixels(page, 250_000)))
    assert np.array_equal(np.asarray(received[1].convert("RGB")), np.asarray(small))


def test_api_key_goes_as_bearer_and_local_servers_need_none(llm_server: OpenAIProtocolServer) -> None:
    client(llm_server, api_key="sk-test").chat(user(text_part("hi")))
    client(llm_server).chat(user(text_part("hi")))
    assert llm_server.headers[0]["authorization"] == "Bearer sk-test"
    assert llm_server.headers[1]["authorization"] == "Bearer not-needed"


def test_streaming_yields_the_chunks_as_they_come(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(Step(text="unused", chunks=["O canal ", "do Prado ", "[abc p.2]"]))
    pieces = list(client(llm_server).stream(user(text_part("hi"))))
    assert pieces == ["O canal ", "do Prado ", "[abc p.2]"]
    assert llm_server.requests[0]["stream"] is True


def test_rate_limit_and_server_error_are_retried_then_succeed(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(
        Step(status=429, headers=FAST_RETRY), Step(status=500, headers=FAST_RETRY), Step(text="ok")
    )
    assert client(llm_server).chat(user(text_part("hi"))).text == "ok"
    assert len(llm_server.requests) == 3


def test_streaming_is_retried_before_the_first_chunk(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(Step(status=503, headers=FAST_RETRY), Step(text="a b"))
    assert "".join(client(llm_server).stream(user(text_part("hi")))) == "a b"
    assert len(llm_server.requests) == 2


def test_persistent_server_error_names_the_status_and_retries(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(*[Step(status=500, headers=FAST_RETRY)] * 3)
    with pytest.raises(LLMError) as err:
        client(llm_server).chat(user(text_part("hi")))
    assert isinstance(err.value, LLMStatusError) and err.value.upstream_status == 500
    assert "HTTP 500" in err.value.message and "after 2 retries" in err.value.message
    assert len(llm_server.requests) == 3


def test_auth_failure_is_not_retried_and_names_the_key_setting(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(Step(status=401))
    with pytest.raises(LLMError) as err:
        client(llm_server).chat(user(text_part("hi")))
    assert isinstance(err.value, LLMStatusError) and err.value.upstream_status == 401
    assert "CARTA_LLM_API_KEY" in err.value.message
    assert len(llm_server.requests) == 1


def test_timeout_is_an_llm_timeout_naming_the_timeout_setting(llm_server: OpenAIProtocolServer) -> None:
    llm_server.script(Step(delay_s=1.5), Step(delay_s=1.5))
    with pytest.raises(LLMError) as err:
        client(llm_server, timeout_s=0.3, max_retries=1).chat(user(text_part("hi")))
    assert isinstance(err.value, LLMTimeout)
    assert "CARTA_LLM_TIMEOUT_S" in err.value.message
    assert len(llm_server.requests) == 2  # the first try and one retry


@pytest.mark.parametrize(
    "step",
    [
        Step(raw="<html>gateway</html>"),
        Step(raw='{"id": "x", "object": "chat.completion"}'),
        Step(raw='{"choices": []}'),
        Step(raw='{"choices": [{"index": 0, "message": {"role": "assistant", "content": null}}]}'),
    ],
    ids=["not-json", "no-choices", "empty-choices", "null-content"],
)
def test_malformed_replies_are_a_clear_bad_response(llm_server: OpenAIProtocolServer, step: Step) -> None:
    llm_server.script(step)
    with pytest.raises(LLMError) as err:
        client(llm_server).chat(user(text_part("hi")))
    assert isinstance(err.value, LLMBadResponse)
    assert "malformed" in err.value.message and "CARTA_LLM_BASE_URL" in err.value.message


@pytest.mark.parametrize(
    "step", [Step(text="a b c", break_stream_after=1), Step(raw="garbage\n\n")], ids=["broken", "empty"]
)
def test_malformed_streams_are_a_clear_bad_response(llm_server: OpenAIProtocolServer, step: Step) -> None:
    llm_server.script(step)
    with pytest.raises(LLMError) as err:
        list(client(llm_server).stream(user(text_part("hi"))))
    assert isinstance(err.value, LLMBadResponse)


def test_unreachable_endpoint_is_unreachable_naming_the_url_setting() -> None:
    dead = LLMClient(LLMConfig(f"http://127.0.0.1:{free_port()}/v1", "m", timeout_s=1, max_retries=0))
    with pytest.raises(LLMError) as err:
        dead.chat(user(text_part("hi")))
    assert isinstance(err.value, LLMUnreachable)
    assert "CARTA_LLM_BASE_URL" in err.value.message
