"""/healthz answers before any model is loaded; the models load behind it (warm-up) and
/readyz reports ready once the text model encodes."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from models.text_encoder import TextEncoder
from service.carta import Carta
from tests.conftest import settings_for
from tests.utils.servers import LiveServer


def test_healthz_answers_before_the_models_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    carta = Carta(settings_for(tmp_path / "data"), text_encoder=TextEncoder())  # weights not loaded
    release = threading.Event()
    real_warm_up = carta.warm_up
    monkeypatch.setattr(carta, "warm_up", lambda: release.wait(60) and real_warm_up())
    try:
        with LiveServer(carta) as server, httpx.Client(base_url=server.url, timeout=120) as client:
            health = client.get("/healthz")
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert not carta.text.loaded
            release.set()
            ready = client.get("/readyz")
            assert ready.status_code == 200 and ready.json()["checks"]["text_model"] == "ok"
            assert carta.text.loaded
    finally:
        release.set()
        carta.close()
