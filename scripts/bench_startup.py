"""Start-up benchmark: wall seconds of real `carta` processes, lite profile, on one data dir
holding the sample report (indexed once, not timed):

    carta --help                 the import floor
    carta list / keys list       commands that need no model
    carta search "..."           a local search (text model + GeoNames index + store)
    carta serve                  to the first /healthz 200, and to the first /readyz 200

Each is run --runs times; the table gives the median and the worst. `--repo PATH` runs
another checkout's code on the same data dir (e.g. `git worktree add /tmp/base <commit>`)
for a before/after in one run.

    .venv/bin/python scripts/bench_startup.py [--runs 3] [--repo PATH] [--out bench/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from benchlib import machine_facts  # noqa: E402

SAMPLE = "relatorio_ambiental_recife_2024.pdf"
QUESTION = "coordenadas do Parque da Jaqueira"
COMMANDS = {
    "help": ["--help"],
    "list": ["list", "--json"],
    "keys list": ["keys", "list", "--json"],
    "search": ["search", QUESTION, "--json"],
}
SERVE_TIMEOUT_S = 300.0


def carta_env(repo: Path, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(repo),
        "CARTA_DATA_DIR": str(data_dir),
        "CARTA_PROFILE": "lite",
        "CARTA_SERVER": "",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def timed_command(repo: Path, data_dir: Path, argv: list[str]) -> float:
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "service.cli", *argv],
        cwd=repo,
        env=carta_env(repo, data_dir),
        capture_output=True,
        text=True,
        timeout=SERVE_TIMEOUT_S,
    )
    seconds = time.perf_counter() - t0
    if run.returncode != 0:
        raise SystemExit(f"carta {' '.join(argv)} failed: {run.stderr[-1000:]}")
    return seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, proc: subprocess.Popen, t0: float) -> float:
    """Seconds from t0 until `url` answers 200 (the process must stay up)."""
    while True:
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > SERVE_TIMEOUT_S:
            raise SystemExit(f"carta serve did not answer {url} (exit {proc.poll()})")
        time.sleep(0.05)


def timed_serve(repo: Path, data_dir: Path) -> tuple[float, float]:
    """(seconds to the first /healthz 200, seconds to the first /readyz 200)."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        cwd=repo,
        env=carta_env(repo, data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        health = wait_for(f"http://127.0.0.1:{port}/healthz", proc, t0)
        ready = wait_for(f"http://127.0.0.1:{port}/readyz", proc, t0)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return health, ready


def bench(repo: Path, data_dir: Path, runs: int) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {name: [] for name in [*COMMANDS, "serve: /healthz", "serve: /readyz"]}
    for _ in range(runs):
        for name, argv in COMMANDS.items():
            seconds[name].append(timed_command(repo, data_dir, argv))
        health, ready = timed_serve(repo, data_dir)
        seconds["serve: /healthz"].append(health)
        seconds["serve: /readyz"].append(ready)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path, action="append", help="Checkout(s) to time (default: this one).")
    parser.add_argument("--samples", type=Path, default=REPO / "samples")
    parser.add_argument("--out", type=Path, default=None, help="Write the numbers as JSON here.")
    args = parser.parse_args(argv)
    repos = [p.resolve() for p in args.repo] if args.repo else [REPO]
    with tempfile.TemporaryDirectory(prefix="carta-bench-startup-") as tmp:
        data_dir = Path(tmp) / "data"
        timed_command(repos[-1], data_dir, ["ingest", str((args.samples / SAMPLE).resolve())])
        results = {str(repo): bench(repo, data_dir, args.runs) for repo in repos}
    names = list(next(iter(results.values())))
    header = f"{'command':<18}" + "".join(f"{Path(r).name[:22]:>26}" for r in results)
    print(f"start-up, seconds: median (worst) of {args.runs} runs, lite profile")
    print(header)
    for name in names:
        cells = "".join(
            f"{statistics.median(v[name]):>17.2f} ({max(v[name]):5.2f})" for v in results.values()
        )
        print(f"{name:<18}{cells}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        body = {"machine": machine_facts(), "runs": args.runs, "seconds": results}
        args.out.write_text(json.dumps(body, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
