"""Helpers shared by the benchmark scripts: machine facts recorded with every result,
allocated disk usage, percentiles."""

from __future__ import annotations

import contextlib
import os
import platform
from pathlib import Path

import numpy as np


def machine_facts() -> dict[str, object]:
    import torch

    blas = "unknown"
    with contextlib.suppress(Exception):  # older numpy has no dict mode
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]  # type: ignore[call-arg,index]
    cpu = platform.processor() or platform.machine()
    try:
        model = next(
            line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")
        )
        cpu = model.split(":", 1)[1].strip()
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numpy_blas": blas,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def disk_usage(path: Path) -> int:
    """Bytes actually allocated (st_blocks), so preallocated sparse WAL files count as used."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))
