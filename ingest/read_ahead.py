"""Pages read by one thread ahead of the pipeline that encodes them.

Reading a page (render, text layer, OCR, the table detector's child process) and encoding
a batch of pages (the text model, torch) used to take turns on one thread, so a 2-core
machine ran one of them at a time. Here the document's pages are read on their own thread,
at most `depth` pages ahead, while the caller chunks, encodes and stores the ones before:
the encoder's kernels, the table child and the WebP encoder run without Python's lock, so
the two overlap. The document is touched by the reading thread only (PyMuPDF must not run
on two threads at once) until `close`, which stops and joins that thread before the caller
closes the document.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
_POLL_S = 0.1  # how often a blocked reader checks that it was stopped


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_END = object()


class ReadAhead(Generic[T]):
    """Iterate `pages` on a background thread, `depth` items ahead; `prepare` (if given)
    runs on that thread for each item before it is handed over (e.g. saving its image)."""

    def __init__(self, pages: Iterator[T], depth: int, prepare: Callable[[T], None] | None = None) -> None:
        self._pages = pages
        self._prepare = prepare
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max(depth, 1))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="carta-read-ahead", daemon=True)
        self._thread.start()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        item = self._queue.get()
        if item is _END:
            self._queue.put(_END)  # a later next() ends too
            raise StopIteration
        if isinstance(item, _Failed):
            self._queue.put(_END)
            raise item.error
        return item  # type: ignore[return-value]

    def close(self) -> None:
        """Stop reading and wait for the thread (it finishes the page it is on)."""
        self._stop.set()  # a reader waiting for room sees it within _POLL_S
        self._thread.join()

    def _read(self) -> None:
        try:
            for page in self._pages:
                if self._prepare is not None:
                    self._prepare(page)
                if not self._put(page):
                    return
        except BaseException as exc:  # handed to the caller's next()
            self._put(_Failed(exc))
            return
        self._put(_END)

    def _put(self, item: object) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False
