"""OCR under concurrency: tesseract is not thread-safe, so ingest workers OCR one page at a
time (ingest/ocr.py); scanned PDFs uploaded together all come out read."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pymupdf
import pytest

from index.types import Filter
from ingest.ocr import ocr_blocks, tesseract_available
from service.auth import Principal
from service.carta import Carta
from service.jobs import Job, JobRunner, JobStore
from tests.utils.documents import scanned_pdf

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract (por+eng) is not installed")

WORDS = ["enchentes", "drenagem", "deslizamento", "alagamento"]  # one per PDF of a round
ROUNDS = 3
LOCAL = Principal("local", "default", admin=True)


def _scans(round_no: int) -> list[tuple[str, bytes]]:
    # distinct content per round, or the second round would be answered as duplicates
    return [(word, scanned_pdf(f"Relatório de {word} {2021 + round_no}")) for word in WORDS]


def _read(word: str, data: bytes, results: dict[str, str], errors: list[BaseException]) -> None:
    try:
        with pymupdf.open(stream=data, filetype="pdf") as pdf:
            page = pdf[0]
            results[word] = " ".join(b[4] for b in ocr_blocks(page, "por+eng", 300)).lower()
    except BaseException as exc:  # the test reports every failure
        errors.append(exc)


def test_ocr_from_four_threads_at_once_reads_every_page() -> None:
    # Without the lock this failed in most rounds: "Attempt to use Leptonica from 2 threads
    # at once!", then MuPDF's FzErrorArgument (11 of 20 calls in 5 rounds).
    for round_no in range(ROUNDS):
        results: dict[str, str] = {}
        errors: list[BaseException] = []
        threads = [
            threading.Thread(target=_read, args=(word, data, results, errors))
            for word, data in _scans(round_no)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert all(word in results[word] for word in WORDS), results


def _wait(store: JobStore, job_ids: list[str], timeout: float = 300) -> list[Job]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = [store.get(i) for i in job_ids]
        if all(j is not None and j.status in ("ready", "failed") for j in jobs):
            return [j for j in jobs if j is not None]
        time.sleep(0.1)
    raise AssertionError(f"jobs still running after {timeout} s")


def test_four_scanned_pdfs_at_once_on_two_workers_all_index_their_ocr_text(
    make_carta: Callable[..., Carta],
) -> None:
    # The probe's case: 2 ingest workers, 4 scanned PDFs submitted together; 1 of 8 jobs
    # failed with "internal error while indexing". Now 3 rounds, 0 failures.
    carta = make_carta()
    runner = JobRunner(carta.ingestor, carta.job_store, carta.settings.uploads_dir, workers=2, max_attempts=1)
    runner.start()
    try:
        for round_no in range(ROUNDS):
            scans = _scans(round_no)
            submitted = [runner.submit(LOCAL, data, f"{word}.pdf", None, {}, []) for word, data in scans]
            assert all(s.created for s in submitted)
            jobs = _wait(carta.job_store, [s.job.id for s in submitted])
            assert [(j.status, j.error) for j in jobs] == [("ready", None)] * len(WORDS)
            for (word, _), job in zip(scans, jobs, strict=True):
                assert job.document_id is not None
                (record,) = carta.registry.pages("default", job.document_id)
                assert record.text_source == "ocr"
                hits = carta.store.scroll(
                    carta.collections.chunks.name, Filter({"tenant": "default", "doc_id": job.document_id})
                )
                assert any(word in h.payload["text"].lower() for h in hits), (word, [h.payload for h in hits])
    finally:
        runner.stop()
