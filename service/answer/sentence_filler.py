"""Sentence vectors stored in the background, once a document is ready.

Embedding every sentence of a document's chunks (service/answer/sentence_vectors.py) is a
second encoder pass over the document's text, about as long as the chunks' own: done inside
ingestion it was the largest stage of an upload, yet nothing the document is searched or
answered with waits for it. The gate embeds any sentence the store lacks on the fly, with
the same encoder, so a question asked before the pass is done gets the same answer, only
slower. So the pass runs here, after the document is ready: one thread, at a lower CPU
priority than ingestion and queries (Linux: `nice` of that thread alone), embedding a few
sentences per call on the NumPy runtime (so the vectors are the gate's own, and a query's
encoding waits for one slice, not a document).

Erasure wins over a pass in flight: a document deleted while its vectors are computed gets
none stored (`cancel`, checked under the store's lock before the rows are written).
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import queue
import threading
from collections.abc import Sequence

from service.answer.sentence_vectors import SentenceVectors

log = logging.getLogger(__name__)
NICE = 10  # added to the process's niceness for the filler thread
SLICE = 16  # sentences per encoder call: a query's encoding never waits for more than this


class BackgroundSentences:
    """A queue of ready documents whose sentence vectors are stored by one low-priority thread."""

    def __init__(self, store: SentenceVectors) -> None:
        self.store = store
        self._queue: queue.Queue[tuple[str, str, int, list[tuple[str, bool]]] | None] = queue.Queue()
        self._pending: dict[tuple[str, str], int] = {}  # document -> its latest submission
        self._lock = threading.Lock()  # guards _pending (never held while calling the store)
        self._tokens = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False

    def submit(self, tenant: str, doc_id: str, chunks: Sequence[tuple[str, bool]]) -> None:
        """Queue a ready document's chunks ((text, is a table) each) for its vectors."""
        if self._closed:
            return
        with self._lock:
            token = next(self._tokens)
            self._pending[tenant, doc_id] = token
        self._started()
        self._queue.put((tenant, doc_id, token, list(chunks)))

    def cancel(self, tenant: str, doc_id: str) -> None:
        """Forget a queued or running document and erase what it has stored (the erasure hook)."""
        with self._lock:
            self._pending.pop((tenant, doc_id), None)
        self.store.delete_document(tenant, doc_id)

    def wait(self) -> None:
        """Return once every submitted document has its vectors stored (or was cancelled)."""
        if self._thread is not None:
            self._queue.join()

    def close(self) -> None:
        """Store what is queued, then stop the thread (a CLI run's documents keep their vectors)."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()

    def _started(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="carta-sentences", daemon=True)
                self._thread.start()

    def _wanted(self, tenant: str, doc_id: str, token: int) -> bool:
        """Whether this submission is still the document's (not cancelled, not superseded)."""
        with self._lock:
            return self._pending.get((tenant, doc_id)) == token

    def _run(self) -> None:
        _lower_priority()
        while (item := self._queue.get()) is not None:
            tenant, doc_id, token, chunks = item
            try:
                if self._wanted(tenant, doc_id, token):
                    wanted = functools.partial(self._wanted, tenant, doc_id, token)
                    self.store.add_document(tenant, doc_id, chunks, wanted=wanted, slice_size=SLICE)
            except Exception:  # a failed pass leaves the gate its on-the-fly embedding
                log.exception("sentence vectors of %s/%s not stored", tenant, doc_id)
            finally:
                with self._lock:
                    if self._pending.get((tenant, doc_id)) == token:
                        del self._pending[tenant, doc_id]
                self._queue.task_done()
        self._queue.task_done()


def _lower_priority() -> None:
    """Nice the calling thread alone (Linux: a thread id is a PRIO_PROCESS target), so the
    filler runs on what ingestion and queries leave idle; elsewhere it runs as it is."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + NICE)
    except (AttributeError, OSError):
        pass
