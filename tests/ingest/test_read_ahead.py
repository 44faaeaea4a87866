"""Pages read on their own thread: handed over in order, at most `depth` ahead, a reading
error raised where the caller asks for the next page, and `close` stops the thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from index.types import Filter
from ingest.read_ahead import ReadAhead
from ingest.upload import IngestRequest
from service.carta import Carta
from tests.utils.documents import make_pdf


def _counted(n: int, read: list[int], fail_at: int | None = None) -> Iterator[int]:
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"page {i} is damaged")
        read.append(i)
        yield i


def test_pages_come_in_order_prepared_on_the_reading_thread() -> None:
    read: list[int] = []
    threads: set[str] = set()
    ahead = ReadAhead(
        _counted(20, read), depth=3, prepare=lambda _: threads.add(threading.current_thread().name)
    )
    assert list(ahead) == list(range(20))
    assert next(ahead, None) is None  # ended for good
    ahead.close()
    assert threads == {"carta-read-ahead"}


def test_reading_stays_within_depth_and_close_stops_it() -> None:
    read: list[int] = []
    ahead = ReadAhead(_counted(1000, read), depth=4)
    assert next(ahead) == 0
    ahead.close()
    # the queue holds at most 4, plus the page in hand, plus the one being put when stopped
    assert len(read) <= 1 + 4 + 2
    assert not ahead._thread.is_alive()


def test_a_reading_error_reaches_the_caller_after_the_pages_before_it() -> None:
    read: list[int] = []
    ahead = ReadAhead(_counted(10, read, fail_at=5), depth=2)
    got = [next(ahead) for _ in range(5)]
    with pytest.raises(ValueError, match="page 5 is damaged"):
        next(ahead)
    assert got == [0, 1, 2, 3, 4]
    ahead.close()


def test_read_ahead_and_one_thread_index_the_same(make_carta: Callable[..., Carta], tmp_path: Path) -> None:
    data = make_pdf(
        [[f"Página {i}: {i * 3} pontos de alagamento no bairro {i} de Recife."] for i in range(11)]
    )
    stored = []
    for pages in (0, 3):
        carta = make_carta(tmp_path / f"data{pages}", read_ahead_pages=pages, geotag=False)
        doc = carta.ingest(IngestRequest(data, "enchentes.pdf", "default")).document
        texts = sorted(
            p.payload["text"]
            for p in carta.store.scroll(carta.collections.chunks.name, Filter({"tenant": "default"}))
        )
        stored.append((doc.id, doc.pages, texts, len(carta.images.files_of("default", doc.id))))
    assert stored[0] == stored[1] and stored[0][1] == 11 and stored[0][3] == 22
