"""Schemathesis over the live OpenAPI spec, with a bounded number of examples: stateless
(every operation) and stateful (links between operations), zero 5xx, and the
ignored-auth and use-after-free checks, with auth on (a key of one tenant)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import ignored_auth, use_after_free

from models.text_encoder import TextEncoder
from service.auth import KeyStore
from service.carta import Carta
from tests.conftest import settings_for
from tests.utils.api import ingest_via_api
from tests.utils.servers import LiveServer

CHECKS = [not_a_server_error, ignored_auth, use_after_free]
FUZZ = settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def fuzzed(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder, samples_dir: Path
) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("fuzz")
    # no limits: the fuzzer sends many requests and many bad keys (it wants 401, not 429)
    carta = Carta(
        settings_for(data, rate_limit_per_second=0, auth_fail_per_second=0, max_upload_bytes=2_000_000),
        text_encoder=text_encoder,
    )
    keys = KeyStore(carta.settings.auth_path)
    secret = keys.create("fuzz", admin=True, label="schemathesis")[1]
    keys.close()
    headers = {"Authorization": f"Bearer {secret}"}
    with LiveServer(carta) as server:
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            ingest_via_api(client, "g.png", (samples_dir / "grafico_chuvas_2024.png").read_bytes())
        yield {
            "url": server.url,
            "headers": headers,
            "schema": schemathesis.openapi.from_url(f"{server.url}/openapi.json"),
        }
    carta.close()


def served(url: str) -> float:
    """Requests the server answered so far (and none with a 5xx)."""
    metrics = httpx.get(f"{url}/metrics").text
    assert 'status="5' not in metrics
    lines = [line for line in metrics.splitlines() if line.startswith("carta_http_requests_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def test_stateless_no_server_errors(fuzzed: dict[str, Any]) -> None:
    operations = [result.ok() for result in fuzzed["schema"].get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:

        @given(case=operation.as_strategy())
        @FUZZ
        def call(case: Any) -> None:
            case.call_and_validate(headers=fuzzed["headers"], checks=CHECKS)

        call()
    metrics = httpx.get(f"{fuzzed['url']}/metrics").text
    served = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("carta_http_requests_total{")
    )
    assert served >= 3 * len(operations)  # the examples really reached the server
    assert 'status="5' not in metrics


def test_stateful_no_server_errors(fuzzed: dict[str, Any]) -> None:
    before = served(fuzzed["url"])
    base = fuzzed["schema"].as_state_machine()

    class Workflow(base):  # type: ignore[valid-type, misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": fuzzed["headers"]}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            case.validate_response(response, checks=CHECKS)

    Workflow.run(
        settings=settings(
            max_examples=8,
            stateful_step_count=5,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )
    assert served(fuzzed["url"]) >= before + 8
