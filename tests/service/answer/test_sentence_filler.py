"""The background sentence-vector pass: it stores what the inline pass stores, off the
ingestion's clock, at a lower CPU priority, and an erasure during a pass leaves nothing."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ingest.upload import IngestRequest
from models.text_encoder import TextEncoder
from service.answer.sentence_filler import NICE, BackgroundSentences
from service.answer.sentence_vectors import SentenceVectors, embedded_texts
from service.carta import Carta
from tests.conftest import corpus_path

CHUNKS = [
    ("The river rose two metres in Recife. Schools closed for a week.", False),
    ("Choveu 300 mm em abril. A Defesa Civil abriu abrigos no bairro.", False),
]


class _HeldEncoder:
    """The real encoder, held at its first call until the test lets it go (to erase a
    document while its pass is computing)."""

    def __init__(self, text: TextEncoder) -> None:
        self.text = text
        self.slug, self.dim = text.slug, text.dim
        self.started, self.go = threading.Event(), threading.Event()

    def embed(self, texts: list[str], bulk: bool | None = None) -> np.ndarray:
        self.started.set()
        assert self.go.wait(30)
        return self.text.embed(texts, bulk=bulk)


def test_background_pass_stores_the_gates_vectors(tmp_path: Path, text_encoder: TextEncoder) -> None:
    store = SentenceVectors(tmp_path / "sv.sqlite3", text_encoder)
    filler = BackgroundSentences(store)
    filler.submit("t", "doc", CHUNKS)
    filler.wait()
    texts = [t for text, table in CHUNKS for t in embedded_texts(text, table)]
    assert store.has_document("t", "doc") and store.count() == len(texts) == 4
    # what the gate would compute itself (a small call: the same NumPy runtime)
    np.testing.assert_allclose(store.embed(texts), text_encoder.embed(texts), atol=1e-6)
    assert (store.hits, store.misses) == (4, 0)
    filler.close()
    filler.submit("t", "other", CHUNKS)  # after close: ignored, not a hang
    assert not store.has_document("t", "other")
    store.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_background_thread_runs_niced(tmp_path: Path, text_encoder: TextEncoder) -> None:
    store = SentenceVectors(tmp_path / "sv.sqlite3", text_encoder)
    filler = BackgroundSentences(store)
    filler.submit("t", "doc", CHUNKS[:1])
    filler.wait()
    thread = filler._thread
    assert thread is not None and thread.native_id is not None
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == min(base + NICE, 19)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller is untouched
    filler.close()
    store.close()


def test_erasure_during_a_pass_stores_nothing(tmp_path: Path, text_encoder: TextEncoder) -> None:
    held = _HeldEncoder(text_encoder)
    store = SentenceVectors(tmp_path / "sv.sqlite3", held)  # type: ignore[arg-type]
    filler = BackgroundSentences(store)
    filler.submit("t", "doc", CHUNKS)
    assert held.started.wait(30)  # the pass is embedding the document's sentences
    filler.cancel("t", "doc")  # the document is erased meanwhile
    held.go.set()
    filler.wait()
    assert store.count() == 0
    filler.submit("t", "doc", CHUNKS)  # uploaded again: stored again
    filler.wait()
    assert store.count() == 4
    filler.close()
    store.close()


def test_carta_ingests_without_waiting_and_stores_the_same(make_carta: Callable[..., Carta]) -> None:
    pdf = corpus_path("pdf", "dib_2019_corrosion_inhibitor_p454.pdf")
    inline = make_carta(geotag=False, graph_enabled=False, sentence_vectors_background=False)
    inline.ingest(IngestRequest(pdf.read_bytes(), pdf.name, "default"))
    background = make_carta(
        inline.settings.data_dir.parent / "background",
        geotag=False,
        graph_enabled=False,
        sentence_vectors_background=True,
    )
    result = background.ingest(IngestRequest(pdf.read_bytes(), pdf.name, "default"))
    assert "sentences" in result.seconds  # the hook that queued the document
    background.settle()
    assert inline.sentence_vectors is not None and background.sentence_vectors is not None
    assert background.sentence_vectors.count() == inline.sentence_vectors.count() > 0
    question = "What is the corrosion rate with the egg shell inhibitor?"
    misses = background.sentence_vectors.misses
    answer = background.ask(background.query(question, "default")).answer
    assert background.sentence_vectors.misses == misses  # every candidate sentence was stored
    assert answer == inline.ask(inline.query(question, "default")).answer
    background.delete("default", result.document.id)
    assert background.sentence_vectors.count() == 0
