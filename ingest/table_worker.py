"""Table detection in a child process, under a time budget per page.

`find_tables` with the layout model is one long call into PyMuPDF and ONNX: a thread
cannot stop it, and PyMuPDF must not run on two threads at once. So it runs in one
child process (spawned on first use, shared by every PDF of this process, one request
at a time), which is killed when a page runs past its budget or dies on a bad PDF; the
caller then reads the page, and the rest of its document, as plain text. The child's
start (imports, the layout model) is not counted in a page's budget.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

from ingest.tables import Table

START_TIMEOUT_S = 120.0  # importing PyMuPDF and loading the layout model
REMEMBERED_PAGES = 512  # detected pages kept in memory, by document content and page


class TableDetectionFailed(Exception):
    """Table detection raised, crashed or ran past its budget on a page."""


class TableWorker:
    """The child process that detects tables, one page per request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (document key, page) -> tables: the same file ingested again (reindex, a second
        # tenant, the test suite's samples) costs no second detection
        self._found: OrderedDict[tuple[str, int], list[Table]] = OrderedDict()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._document: str | None = None  # the key of the document the child holds open

    def tables(self, key: str, data: bytes, index: int, timeout_s: float) -> list[Table]:
        """The tables of page `index` (0-based) of the PDF `data` (`key` names it, so the
        child opens each document once)."""
        with self._lock:
            if (key, index) in self._found:
                self._found.move_to_end((key, index))
                return self._found[key, index]
            conn = self._started()
            try:
                conn.send(("page", key, data if key != self._document else None, index))
                self._document = key
                if not conn.poll(timeout_s):
                    self._stop()
                    raise TableDetectionFailed(f"it ran past {timeout_s:g} s")
                status, value = conn.recv()
            except (EOFError, OSError, BrokenPipeError) as exc:
                self._stop()
                raise TableDetectionFailed(f"the detector stopped ({exc.__class__.__name__})") from exc
            if status != "ok":
                raise TableDetectionFailed(str(value))
            self._found[key, index] = value
            while len(self._found) > REMEMBERED_PAGES:
                self._found.popitem(last=False)
            return value

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._stop()
        ctx = multiprocessing.get_context("spawn")  # no fork: the parent has threads (jobs, torch)
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child,), daemon=True, name="carta-tables")
        process.start()
        child.close()
        if not parent.poll(START_TIMEOUT_S):
            process.kill()
            raise TableDetectionFailed("the table detector did not start")
        try:
            parent.recv()  # "ready"
        except EOFError as exc:
            raise TableDetectionFailed("the table detector did not start") from exc
        self._process, self._conn, self._document = process, parent, None
        return parent

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn, self._document = None, None, None


def _serve(conn: Connection) -> None:
    """The child: open documents as they come, answer one page's tables per request."""
    import pymupdf
    import pymupdf.layout  # noqa: F401 - activates the layout model find_tables uses

    from ingest.tables import detect_tables

    conn.send("ready")
    pdf: Any = None
    while True:
        try:
            _, _key, data, index = conn.recv()
        except EOFError:
            return
        try:
            if data is not None:
                if pdf is not None:
                    pdf.close()
                pdf = pymupdf.open(stream=data, filetype="pdf")
            conn.send(("ok", detect_tables(pdf[index])))
        except Exception as exc:  # a bad page: the caller reads it as text
            conn.send(("error", f"{exc.__class__.__name__}: {exc}"))


_shared: TableWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> TableWorker:
    """The process-wide worker (one child process for every ingestor of this process)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = TableWorker()
        return _shared
