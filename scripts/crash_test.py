"""Crash test: kill -9 a `carta serve` process at random moments while it ingests, restart
it, and check after every restart that every job ends ready or failed, that no document
is partially visible (listed or found while not fully indexed), and at the end that the
store opens and holds no point of a document that is not ready.

    python scripts/crash_test.py --kills 30            # prints a table, exit 1 on any violation
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pymupdf

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@dataclass
class Round:
    kill_after_s: float
    submitted: int
    ready: int = 0
    failed: int = 0
    stuck: int = 0  # jobs neither ready nor failed after the restart (must be 0)
    partial_visible: int = 0  # documents listed/searchable but not ready (must be 0)
    restart_s: float = 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_pdf(rng: random.Random, tag: str) -> bytes:
    doc = pymupdf.open()
    for i in range(rng.randint(4, 24)):
        page = doc.new_page()
        words = " ".join(
            rng.choice(["chuva", "drenagem", "bairro", "report", "flood", "canal"]) for _ in range(60)
        )
        page.insert_text((72, 72), f"{tag} page {i + 1}", fontsize=14)
        page.insert_textbox(pymupdf.Rect(72, 100, 520, 760), words, fontsize=10)
    return doc.tobytes()


class Server:
    def __init__(
        self, data_dir: Path, extra_args: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.data_dir = data_dir
        self.extra_args = extra_args or []
        self.extra_env = env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, timeout: float = 300) -> float:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "CARTA_DATA_DIR": str(self.data_dir),
            "CARTA_RATE_LIMIT_PER_SECOND": "0",
            "CARTA_GEOTAG": "false",
            "CARTA_INGEST_WORKERS": "2",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **self.extra_env,
        }
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(port), *self.extra_args],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while time.perf_counter() - started < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"carta serve exited with {self.proc.returncode} on start")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("carta serve did not come up")

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)


def settle(client: httpx.Client, job_ids: list[str], timeout: float = 300) -> dict[str, str]:
    """Wait until every job is ready or failed (or the timeout); status per job."""
    deadline = time.time() + timeout
    status: dict[str, str] = {}
    while time.time() < deadline:
        status = {j: client.get(f"/v1/jobs/{j}").json().get("status", "missing") for j in job_ids}
        if all(s in ("ready", "failed") for s in status.values()):
            break
        time.sleep(0.3)
    return status


def partial_visible(client: httpx.Client) -> int:
    """Documents visible through the API that are not fully indexed."""
    docs = client.get("/v1/documents").json()
    bad = sum(
        1
        for d in docs
        if d["status"] != "ready"
        and d["pages"]
        and client.get(f"/v1/documents/{d['id']}/pages/1/image").status_code == 200
    )
    ready = {d["id"] for d in docs if d["status"] == "ready"}
    for query in ("chuva drenagem", "flood report canal"):
        hits = client.post("/v1/search", json={"query": query, "top_k": 50}).json()["results"]
        bad += sum(1 for h in hits if h["doc_id"] not in ready)
    return bad


def check_store(data_dir: Path) -> list[str]:
    """Open the store in-process (the server is stopped): every point belongs to a ready
    document, every ready document has its points and page images."""
    from index.types import Filter
    from service.carta import Carta
    from service.settings import Settings

    problems: list[str] = []
    carta = Carta(Settings(data_dir=data_dir, geotag=False, _env_file=None))
    try:
        docs = carta.registry.list("default")
        for d in docs:
            flt = Filter({"tenant": "default", "doc_id": d.id})
            points = sum(carta.store.count(s.name, flt) for s in carta.collections.all())
            if d.status == "ready":
                if points == 0 or len(carta.images.files_of("default", d.id)) != 2 * d.pages:
                    problems.append(f"ready document {d.id} lacks points or page images")
            elif points or carta.images.files_of("default", d.id):
                problems.append(f"{d.status} document {d.id} left {points} points / images behind")
        known = {d.id for d in docs}
        for spec in carta.collections.all():
            stray = carta.store.count(
                spec.name, Filter({"tenant": "default"}, exclude={"doc_id": sorted(known)})
            )
            if known and stray:
                problems.append(f"{stray} points of unknown documents in {spec.name}")
            indexing = carta.store.count(spec.name, Filter({"state": "indexing"}))
            if indexing:
                problems.append(f"{indexing} points still 'indexing' in {spec.name}")
    finally:
        carta.close()
    return problems


def run(
    kills: int, data_dir: Path, seed: int = 0, uploads_per_round: int = 3
) -> tuple[list[Round], list[str]]:
    rng = random.Random(seed)
    server = Server(data_dir)
    rounds: list[Round] = []
    all_jobs: list[str] = []
    server.start()
    try:
        for k in range(kills):
            with httpx.Client(base_url=server.url, timeout=120) as client:
                for u in range(uploads_per_round):
                    r = client.post(
                        "/v1/documents",
                        files={"file": (f"r{k}-{u}.pdf", make_pdf(rng, f"round {k} doc {u}"))},
                    )
                    r.raise_for_status()
                    all_jobs.append(r.json()["job"]["id"])
            delay = rng.uniform(0.2, 4.0)
            time.sleep(delay)
            server.kill9()
            row = Round(round(delay, 2), uploads_per_round)
            row.restart_s = round(server.start(), 1)
            with httpx.Client(base_url=server.url, timeout=120) as client:
                row.partial_visible = partial_visible(client)  # right after the restart, mid-resume
                status = settle(client, all_jobs)
                row.ready = sum(s == "ready" for s in status.values())
                row.failed = sum(s == "failed" for s in status.values())
                row.stuck = len(status) - row.ready - row.failed
                row.partial_visible += partial_visible(client)
            rounds.append(row)
    finally:
        server.stop()
    return rounds, check_store(data_dir)


def resumed_jobs(data_dir: Path) -> tuple[int, int]:
    """(jobs that needed more than one attempt, jobs in all): proof the kills hit mid-ingestion."""
    import sqlite3

    with sqlite3.connect(data_dir / "jobs.sqlite3") as conn:
        more, total = conn.execute("SELECT SUM(attempts > 1), COUNT(*) FROM jobs").fetchone()
    return int(more or 0), int(total)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a temporary folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="carta-crash-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        rounds, problems = run(args.kills, data_dir, args.seed)
        resumed, jobs = resumed_jobs(data_dir)
    head = ("kill", "after_s", "jobs_ready", "jobs_failed", "stuck", "partial", "restart_s")
    print(" ".join(f"{h:>11}" for h in head))
    for i, r in enumerate(rounds, 1):
        cells = (i, r.kill_after_s, r.ready, r.failed, r.stuck, r.partial_visible, r.restart_s)
        print(" ".join(f"{c:>11}" for c in cells))
    stuck = sum(r.stuck for r in rounds)
    partial = sum(r.partial_visible for r in rounds)
    print(
        f"kills: {len(rounds)}, jobs: {jobs} ({resumed} resumed after a kill), stuck jobs: {stuck}, "
        f"partially visible documents: {partial}, store problems: {len(problems)}"
    )
    for p in problems:
        print("  store:", p)
    return 0 if not stuck and not partial and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
