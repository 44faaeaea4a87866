"""Durable ingestion jobs: an upload is checked, written to `<data_dir>/uploads/<job>/`
and recorded in `<data_dir>/jobs.sqlite3` before the API answers 202; a pool of worker
threads indexes it. After a crash, jobs left queued or running are resumed on start
(the ingestor purges whatever the interrupted attempt wrote first), and fail cleanly
after `job_max_attempts` interrupted attempts, so every job ends ready or failed.

Who sees what. A document id is the content hash per tenant, so one content is one
document: an upload of content the tenant already holds answers that document (or the
job already indexing it) only when the caller may see it, and is refused with
HiddenDuplicate, naming nothing, when it may not. A private copy was not chosen: it
needs a second id for the same bytes (every path keyed by doc id, erasure included,
would then have to tell copies apart) or widening the first document's groups, which
would hand its title and metadata to the new uploader. A job is visible to the key that
uploaded it, to admins, and to every key of the tenant that may see its document (the
registry's ACL, else the job's own), so concurrent uploads of one file by several keys
share one job that each of them can follow.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import sqlite3
import threading
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from index.acl import is_visible
from index.registry import Document
from index.sqlite import SqliteFile
from ingest.errors import IngestError
from service.errors import HiddenDuplicate

if TYPE_CHECKING:  # the pipeline imports the document loaders (PyMuPDF): only the runner needs them
    from ingest.pipeline import Ingestor, Progress

log = logging.getLogger(__name__)
JobStatus = Literal["queued", "running", "ready", "failed"]
TERMINAL = ("ready", "failed")
SIDECAR_SUFFIXES = frozenset(
    {".pgw", ".jgw", ".tfw", ".wld", ".pngw", ".jpgw", ".tifw", ".tiffw", ".webpw", ".prj", ".aux.xml"}
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    key_id      TEXT NOT NULL,
    filename    TEXT NOT NULL,
    title       TEXT,
    metadata    TEXT NOT NULL DEFAULT '{}',
    acl         TEXT NOT NULL DEFAULT '[]',
    sidecars    TEXT NOT NULL DEFAULT '[]',
    status      TEXT NOT NULL,
    stage       TEXT NOT NULL,
    pages_done  INTEGER NOT NULL DEFAULT 0,
    pages_total INTEGER NOT NULL DEFAULT 0,
    document_id TEXT,
    error       TEXT,
    warnings    TEXT NOT NULL DEFAULT '[]',
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status);
CREATE INDEX IF NOT EXISTS jobs_doc ON jobs (tenant, document_id);
"""
_JSON = ("metadata", "acl", "sidecars", "warnings")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class Job:
    id: str
    tenant: str
    key_id: str
    filename: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    acl: list[str] = field(default_factory=list)
    sidecars: list[str] = field(default_factory=list)  # suffixes of the stored sidecar files
    status: JobStatus = "queued"
    stage: str = "queued"
    pages_done: int = 0
    pages_total: int = 0
    document_id: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    attempts: int = 0
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)

    def out(self) -> dict[str, Any]:
        """The JobOut shape of the API."""
        keys = ("id", "status", "stage", "pages_done", "pages_total", "document_id", "error")
        return {
            **{k: getattr(self, k) for k in keys},
            "warnings": self.warnings,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


class JobStore(SqliteFile):
    """The job table (one SQLite file): jobs by id, in flight per document, unfinished ones."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, [_SCHEMA], synchronous="FULL")  # jobs must survive a power cut

    def add(self, job: Job) -> None:
        row = asdict(job)
        for k in _JSON:
            row[k] = json.dumps(row[k], ensure_ascii=False)
        cols = ", ".join(row)
        self._query(f"INSERT INTO jobs ({cols}) VALUES ({', '.join('?' for _ in row)})", *row.values())

    def update(self, job_id: str, **values: Any) -> None:
        values["updated_at"] = _now()
        for k in _JSON:
            if k in values:
                values[k] = json.dumps(values[k], ensure_ascii=False)
        sets = ", ".join(f"{k}=?" for k in values)
        self._query(f"UPDATE jobs SET {sets} WHERE id=?", *values.values(), job_id)

    def get(self, job_id: str) -> Job | None:
        rows = self._query("SELECT * FROM jobs WHERE id=?", job_id)
        return self._job(rows[0]) if rows else None

    def in_flight(self, tenant: str, document_id: str) -> Job | None:
        rows = self._query(
            "SELECT * FROM jobs WHERE tenant=? AND document_id=? AND status IN ('queued', 'running') "
            "ORDER BY created_at LIMIT 1",
            tenant,
            document_id,
        )
        return self._job(rows[0]) if rows else None

    def uploader(self, tenant: str, document_id: str) -> str | None:
        """The key that uploaded a document: that of its first job that indexed it (later
        jobs naming it are duplicate uploads), else of its first job; None without jobs."""
        rows = self._query(
            "SELECT key_id FROM jobs WHERE tenant=? AND document_id=? "
            "ORDER BY status != 'ready', created_at, rowid LIMIT 1",
            tenant,
            document_id,
        )
        return rows[0]["key_id"] if rows else None

    def unfinished(self) -> list[Job]:
        rows = self._query("SELECT * FROM jobs WHERE status IN ('queued', 'running') ORDER BY created_at")
        return [self._job(r) for r in rows]

    def counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self._query("SELECT status, COUNT(*) FROM jobs GROUP BY status")}

    def delete_tenant_document(self, tenant: str, document_id: str) -> None:
        """Erasure: finished jobs of a deleted document go too (they name its file)."""
        self._query(
            "DELETE FROM jobs WHERE tenant=? AND document_id=? AND status IN ('ready', 'failed')",
            tenant,
            document_id,
        )

    @staticmethod
    def _job(row: sqlite3.Row) -> Job:
        data = dict(row)
        for k in _JSON:
            data[k] = json.loads(data[k])
        return Job(**data)


@dataclass
class Submitted:
    """What an upload became: its job, and the document when the content was indexed already."""

    job: Job
    document: Document | None
    created: bool


class Submitter(Protocol):
    """The caller of an upload, as jobs need it (a service.auth.Principal is one)."""

    @property
    def tenant(self) -> str: ...

    @property
    def key_id(self) -> str: ...

    @property
    def admin(self) -> bool: ...

    def acl(self) -> list[str] | None:
        """The caller's ACL tokens (index.acl); None for an admin."""
        ...


class JobRunner:
    """Accepts uploads as jobs and runs them on `workers` threads; files wait in `uploads`
    (`<data_dir>/uploads`) until their job ends."""

    def __init__(
        self, ingestor: Ingestor, store: JobStore, uploads: Path, workers: int, max_attempts: int
    ) -> None:
        self.ingestor = ingestor
        self.store = store
        self.uploads = uploads
        self.max_attempts = max_attempts
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._submit_lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._work, name=f"carta-ingest-{i}", daemon=True) for i in range(workers)
        ]

    def start(self) -> None:
        """Resume (or fail) jobs a previous process left unfinished, then start the workers."""
        unfinished = self.store.unfinished()
        pending = {job.id for job in unfinished}
        if self.uploads.exists():  # uploads of a process killed before its job row was written
            for folder in self.uploads.iterdir():
                if folder.name not in pending:
                    shutil.rmtree(folder, ignore_errors=True)
        for job in unfinished:
            if job.attempts >= self.max_attempts:
                self._finish_failed(job, f"interrupted {job.attempts} times; upload the file again")
            elif not (self.uploads / job.id / "file").exists():
                self._finish_failed(job, "the uploaded file was lost; upload it again")
            else:
                log.warning("resuming ingestion job %s (%s)", job.id, job.filename)
                self.store.update(job.id, status="queued", stage="queued", pages_done=0)
                self._queue.put(job.id)
        for t in self._threads:
            t.start()

    def stop(self, timeout: float = 10.0) -> None:
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            if t.is_alive():
                t.join(timeout)

    def submit(
        self,
        who: Submitter,
        data: bytes,
        filename: str,
        title: str | None,
        metadata: dict[str, Any],
        acl: list[str],
        sidecars: dict[str, bytes] | None = None,
    ) -> Submitted:
        """Check the upload as ingestion would (its IngestError refuses it, nothing stored),
        then answer the indexed document, the job already indexing the same content, or a
        new queued job whose file is written durably first."""
        from ingest.pipeline import content_id
        from ingest.upload import IngestRequest

        request = IngestRequest(data, filename, who.tenant, title, metadata, sidecars or None, acl=acl)
        self.ingestor.validate(request)
        doc_id = content_id(data)
        tokens = who.acl()
        with self._submit_lock:
            held = self.ingestor.registry.get(who.tenant, doc_id)
            running = self.store.in_flight(who.tenant, doc_id)
            # a hidden document (of any status) or a hidden job of this content: refused,
            # since answering it, indexing over it or joining its job would name it
            if (held is not None and not is_visible(held.acl, tokens)) or (
                running is not None and not is_visible(running.acl, tokens)
            ):
                raise HiddenDuplicate(
                    "this tenant already holds the same file in a document this key may not see; "
                    "ask an admin or a key of its groups"
                )
            existing = self.ingestor.indexed(who.tenant, doc_id)
            if existing is not None:
                job = Job(
                    _new_id(),
                    who.tenant,
                    who.key_id,
                    filename,
                    title,
                    acl=list(existing.acl),
                    status="ready",
                    stage="done",
                )
                job.document_id, job.pages_done, job.pages_total = doc_id, existing.pages, existing.pages
                self.store.add(job)
                return Submitted(job, existing, created=False)
            if running:  # the same content is being indexed already: one job, not two racing
                return Submitted(running, None, created=False)
            job = Job(
                _new_id(),
                who.tenant,
                who.key_id,
                filename,
                title,
                metadata,
                sorted(set(acl)),
                sorted(sidecars or {}),
                document_id=doc_id,
            )
            folder = self.uploads / job.id
            folder.mkdir(parents=True, exist_ok=True)
            _write_durably(folder / "file", data)
            for suffix, content in (sidecars or {}).items():
                _write_durably(folder / f"sidecar{suffix}", content)
            self.store.add(job)
        self._queue.put(job.id)
        return Submitted(job, None, created=True)

    def visible_job(self, who: Submitter, job_id: str) -> Job | None:
        """The job when the caller may follow it: its uploader, an admin of its tenant, or
        a key of its tenant that may see its document (the registry's groups, which also
        cover job rows written before jobs carried them; else the job's own)."""
        job = self.store.get(job_id)
        if job is None or job.tenant != who.tenant:
            return None
        if who.admin or job.key_id == who.key_id:
            return job
        doc = self.ingestor.registry.get(job.tenant, job.document_id) if job.document_id else None
        return job if is_visible(doc.acl if doc is not None else job.acl, who.acl()) else None

    def _work(self) -> None:
        while True:
            job_id = self._queue.get()
            if job_id is None:
                return
            job = self.store.get(job_id)
            if job is None or job.status in TERMINAL:
                continue
            try:
                self._run(job)
            except Exception:  # a bug must not kill the worker; the job says what happened
                log.exception("ingestion job %s failed unexpectedly", job.id)
                self._finish_failed(job, "internal error while indexing; see the server log")

    def _run(self, job: Job) -> None:
        from ingest.upload import IngestRequest

        folder = self.uploads / job.id
        self.store.update(job.id, status="running", stage="reading", attempts=job.attempts + 1)
        data = (folder / "file").read_bytes()
        sidecars = {s: (folder / f"sidecar{s}").read_bytes() for s in job.sidecars if s in SIDECAR_SUFFIXES}

        def progress(p: Progress) -> None:
            if p.stage == "entities":  # the LLM reads the ready document's chunks (docgraph)
                self.store.update(job.id, stage=f"entities {p.done}/{p.total} chunks")
                return
            stage = "indexing" if p.stage == "pages" else "finishing"
            self.store.update(job.id, stage=stage, pages_done=p.done, pages_total=p.total)

        request = IngestRequest(
            data, job.filename, job.tenant, job.title, job.metadata, sidecars or None, acl=job.acl
        )
        try:
            result = self.ingestor.ingest(request, progress)
        except IngestError as exc:
            self._finish_failed(job, str(exc))
            return
        doc = result.document
        self.store.update(
            job.id,
            status="ready",
            stage="done",
            document_id=doc.id,
            pages_done=doc.pages,
            pages_total=doc.pages,
            warnings=result.warnings,
        )
        shutil.rmtree(folder, ignore_errors=True)

    def _finish_failed(self, job: Job, error: str) -> None:
        self.store.update(job.id, status="failed", stage="failed", error=error)
        shutil.rmtree(self.uploads / job.id, ignore_errors=True)


def _new_id() -> str:
    return uuid.uuid4().hex


def _write_durably(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
