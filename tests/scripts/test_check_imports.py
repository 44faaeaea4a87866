"""scripts/check_imports.py: finds cycles (also through imports inside functions and
relative imports) and web-framework imports outside service/api, and the repo has none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO
from tests.utils.scripts import load_script

SCRIPT = REPO / "scripts" / "check_imports.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("check_imports")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    (root / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["alpha*", "service*"]\n', encoding="utf-8"
    )
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "alpha/__init__.py": "from alpha.base import Base\n",  # a re-exporting package is no cycle
    "alpha/base.py": "class Base: ...\n",
    "alpha/impl.py": "from alpha.base import Base\nimport json\n",
    "alpha/factory.py": "from . import impl\nfrom .base import Base\n",
    "service/__init__.py": "",
    "service/api/__init__.py": "",
    "service/api/app.py": "import fastapi\nfrom starlette import requests\nimport alpha.factory\n",
}


def test_a_clean_tree_passes(script: ModuleType, tmp_path: Path) -> None:
    root = write_tree(tmp_path, CLEAN)
    assert script.project_packages(root) == ["alpha", "service"]
    assert script.check(root, ["alpha", "service"]) == []
    assert script.main(["--root", str(root)]) == 0


def test_a_cycle_hidden_in_a_function_is_found(script: ModuleType, tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {**CLEAN, "alpha/base.py": "class Base: ...\n\ndef make():\n    from alpha.factory import impl\n"},
    )
    problems = script.check(root, ["alpha", "service"])
    assert len(problems) == 1
    # base -> factory (inside make) -> impl -> base
    assert problems[0].startswith("import cycle between alpha.base, alpha.factory, alpha.impl:")
    assert "alpha.base -> alpha.factory (alpha/base.py:4)" in problems[0]
    assert "alpha.factory -> alpha.impl (alpha/factory.py:1)" in problems[0]
    assert script.main(["--root", str(root)]) == 1


def test_relative_imports_close_cycles_too(script: ModuleType, tmp_path: Path) -> None:
    root = write_tree(tmp_path, {**CLEAN, "alpha/impl.py": "from .factory import Base\n"})
    [problem] = script.check(root, ["alpha", "service"])
    assert "alpha.factory, alpha.impl" in problem


def test_web_frameworks_outside_service_api_are_reported(script: ModuleType, tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            **CLEAN,
            "service/auth.py": "from fastapi import Depends, Request\n",
            "alpha/web.py": "def f():\n    import starlette.responses\n",
        },
    )
    problems = script.check(root, ["alpha", "service"])
    assert sorted(problems) == [
        "web framework outside service.api: alpha.web imports starlette.responses (alpha/web.py:2)",
        "web framework outside service.api: service.auth imports fastapi (service/auth.py:1)",
    ]


def test_the_repo_has_no_import_cycle_and_fastapi_only_under_service_api() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stdout + run.stderr
