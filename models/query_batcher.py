"""Concurrent query encodings run as one batch.

Under load, many request threads each encode one short question. One forward pass over
eight questions costs far less than eight passes (the matrix products get wider, the
per-layer Python overhead is paid once), so the questions that arrive while the encoder
is busy wait for it and then go through together. Nothing waits when the encoder is
idle: the first caller encodes its question at once. When its batch is done, the oldest
waiting caller becomes the one that encodes the next batch (no extra thread, no timer,
and no caller serves others' batches after its own).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Waiter(Generic[T]):
    """One caller's text and, once its batch ran, its result or error."""

    __slots__ = ("text", "woken", "lead", "done", "result", "error")

    def __init__(self, text: str) -> None:
        self.text = text
        self.woken = threading.Event()  # set when the result is in, or when it must lead
        self.lead = False
        self.done = False
        self.result: T | None = None
        self.error: BaseException | None = None


class QueryBatcher(Generic[T]):
    """Calls `encode(texts)` on batches of the texts that callers of `one` pass concurrently.

    Args:
        encode: texts -> one result per text, in order.
        max_batch: at most this many texts per call (the rest go in the next one).
    """

    def __init__(self, encode: Callable[[list[str]], list[T]], max_batch: int = 16) -> None:
        self._encode = encode
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._pending: list[_Waiter[T]] = []
        self._busy = False
        self.batches = 0  # calls of `encode` so far, and the texts they took (for benchmarks)
        self.texts = 0

    def one(self, text: str) -> T:
        """The result for one text, encoded alone or with the texts of concurrent callers."""
        waiter: _Waiter[T] = _Waiter(text)
        with self._lock:
            self._pending.append(waiter)
            if not self._busy:
                self._busy = waiter.lead = True
        while not waiter.done:
            if waiter.lead:
                self._run_batch()  # its text is the oldest pending one, so it is in this batch
            else:
                waiter.woken.wait()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result  # type: ignore[return-value]

    def _run_batch(self) -> None:
        with self._lock:
            batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch :]
        try:
            results = self._encode([w.text for w in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"encoder returned {len(results)} results for {len(batch)} texts")
        except BaseException as exc:  # every caller of the batch gets the error
            for w in batch:
                w.error, w.done = exc, True
        else:
            for w, result in zip(batch, results, strict=True):
                w.result, w.done = result, True
        with self._lock:
            self.batches += 1
            self.texts += len(batch)
            if self._pending:  # the oldest waiting caller encodes the next batch
                self._pending[0].lead = True
                self._pending[0].woken.set()
            else:
                self._busy = False
        for w in batch:
            w.woken.set()
