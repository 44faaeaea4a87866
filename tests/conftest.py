"""Shared fixtures. The text model loads once per session; each test that writes gets
its own data dir; the sample corpus is generated once by the project's own script; live
servers started with `serve` stop after the test. Factories are in tests/utils/."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder  # noqa: E402
from service.carta import Carta, llm_answerer  # noqa: E402
from service.settings import Settings  # noqa: E402
from tests.openai_protocol import OpenAIProtocolServer  # noqa: E402
from tests.tiny_visual import tiny_visual_models  # noqa: E402, F401 - session fixture: tiny ColPali/CLIP models
from tests.utils.scripts import load_script  # noqa: E402
from tests.utils.servers import LiveServer  # noqa: E402

RAM_TEMP_ROOT = Path("/dev/shm")
RAM_TEMP_MIN_FREE = 4 * 2**30  # bytes, on the tmpfs and in memory: the data dirs take < 1 GiB at a time


def _memory_available() -> int:
    """Bytes of memory the kernel can still give (a tmpfs's files live in it); 0 if unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            line = next(row for row in meminfo if row.startswith("MemAvailable:"))
    except (OSError, StopIteration):
        return 0
    return int(line.split()[1]) * 1024


def use_ram_temp_root(root: Path = RAM_TEMP_ROOT, min_free: int = RAM_TEMP_MIN_FREE) -> bool:
    """Put the tests' temporary folders (tmp_path, tempfile, and so the data dirs of every
    Carta, server and CLI run) on a RAM-backed tmpfs when there is one with room. Every Carta
    creates its collections and every ingest writes the store's WAL and SQLite with fsync: on
    a busy disk that is seconds per test (opening a Carta: 2-4 s on disk, 0.2 s on tmpfs).
    CARTA_TEST_TMPFS=0, or a PYTEST_DEBUG_TEMPROOT or TMPDIR already set, keeps the default."""
    kept = {"PYTEST_DEBUG_TEMPROOT", "TMPDIR"} & set(os.environ)
    if os.environ.get("CARTA_TEST_TMPFS", "1") == "0" or kept:
        return False
    try:
        stats = os.statvfs(root)
    except OSError:
        return False
    if not os.access(root, os.W_OK) or min(stats.f_bavail * stats.f_frsize, _memory_available()) < min_free:
        return False
    os.environ["PYTEST_DEBUG_TEMPROOT"] = os.environ["TMPDIR"] = str(root)  # subprocesses too
    tempfile.tempdir = None  # recomputed from TMPDIR at the next call
    return True


use_ram_temp_root()

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("CARTA_CORPUS_DIR", REPO.parent / "shared" / "corpus"))


def corpus_path(*parts: str) -> Path:
    """A file of the shared real-world corpus; the test is skipped (saying why) if absent."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus file {path} not found (set CARTA_CORPUS_DIR)")
    return path


@pytest.fixture(scope="session")
def text_encoder() -> TextEncoder:
    return TextEncoder()


@pytest.fixture(scope="session")
def samples_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    assert load_script("make_samples").main(["--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def ground_truth(samples_dir: Path) -> list[dict[str, Any]]:
    return json.loads((samples_dir / "ground_truth.json").read_text())


def settings_for(data_dir: Path, **overrides: Any) -> Settings:
    """Test settings: deleted documents leave the disk when the Carta closes (each immediate
    erasure costs seconds; tests/service/test_erasure.py checks the immediate mode)."""
    return Settings(data_dir=data_dir, _env_file=None, **{"erasure": "on_close", **overrides})


@pytest.fixture
def make_carta(tmp_path: Path, text_encoder: TextEncoder) -> Iterator[Callable[..., Carta]]:
    """Build a Carta on a fresh data dir (or a given one); closed after the test."""
    opened: list[Carta] = []

    def factory(data_dir: Path | None = None, **overrides: Any) -> Carta:
        carta = Carta(settings_for(data_dir or tmp_path / "data", **overrides), text_encoder=text_encoder)
        opened.append(carta)
        return carta

    yield factory
    for carta in opened:
        carta.close()


@pytest.fixture(scope="session")
def sample_carta(
    tmp_path_factory: pytest.TempPathFactory, text_encoder: TextEncoder, samples_dir: Path
) -> Iterator[Carta]:
    """The sample corpus indexed once; tests must not modify it."""
    carta = Carta(settings_for(tmp_path_factory.mktemp("sample-data")), text_encoder=text_encoder)
    for path in sorted(samples_dir.iterdir()):
        if path.suffix in {".pdf", ".png"}:
            carta.ingest(IngestRequest(path.read_bytes(), path.name, "default"))
    yield carta
    carta.close()


@pytest.fixture
def serve(make_carta: Callable[..., Carta]) -> Iterator[Callable[..., LiveServer]]:
    """Start Carta's API on loopback: `serve(carta)`, or `serve(**overrides)` for a fresh Carta
    built by make_carta; every server started is stopped after the test (before the Cartas close)."""
    with ExitStack() as running:

        def start(carta: Carta | None = None, **overrides: Any) -> LiveServer:
            return running.enter_context(LiveServer(carta or make_carta(**overrides)))

        yield start


@pytest.fixture(scope="session")
def _openai_server() -> Iterator[OpenAIProtocolServer]:
    with OpenAIProtocolServer() as server:
        yield server


@pytest.fixture
def llm_server(_openai_server: OpenAIProtocolServer) -> Iterator[OpenAIProtocolServer]:
    """The OpenAI-protocol test server (one per session), reset for each test."""
    _openai_server.reset()
    yield _openai_server
    _openai_server.reset()


@pytest.fixture
def attach_llm(llm_server: OpenAIProtocolServer) -> Iterator[Callable[..., Carta]]:
    """Give a Carta an LLM answerer on the protocol server (settings overridable); removed after."""
    attached: list[Carta] = []

    def attach(carta: Carta, **overrides: Any) -> Carta:
        llm = {"llm_base_url": llm_server.url, "llm_model": "test-model", "llm_timeout_s": 5.0}
        settings = settings_for(carta.settings.data_dir, **(llm | overrides))
        carta.llm = llm_answerer(settings, carta.gate, carta.page_text, carta.images.open)
        attached.append(carta)
        return carta

    yield attach
    for carta in attached:
        carta.llm = None
