"""The CLI package's import graph: acyclic, every service.cli import at module level, and
only the entry points import the assembled app (main.py)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import service.cli

PACKAGE = Path(service.cli.__file__).parent
ENTRY_POINTS = {"service.cli", "service.cli.__main__"}


def module_name(path: Path) -> str:
    return "service.cli" if path.name == "__init__.py" else f"service.cli.{path.stem}"


def cli_imports(tree: ast.AST, inside_functions: bool) -> set[str]:
    """The service.cli modules imported in `tree` (only those inside function bodies, or all)."""
    nodes = ast.walk(tree)
    if inside_functions:
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        nodes = (n for f in functions for n in ast.walk(f))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("service.cli"):
            if node.module == "service.cli":  # `from service.cli import documents, ...`
                found |= {f"service.cli.{alias.name}" for alias in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("service.cli")}
    return found


def graph() -> dict[str, set[str]]:
    return {
        module_name(p): cli_imports(ast.parse(p.read_text()), inside_functions=False)
        for p in PACKAGE.glob("*.py")
    }


def test_cli_modules_import_each_other_without_a_cycle() -> None:
    imports = graph()
    assert {"service.cli.client", "service.cli.common", "service.cli.main"} <= imports.keys()
    try:
        order = list(TopologicalSorter(imports).static_order())
    except CycleError as exc:  # pragma: no cover - the failure message names the cycle
        raise AssertionError(f"import cycle in service/cli: {exc.args[1]}") from exc
    assert order.index("service.cli.client") < order.index("service.cli.main")


def test_no_cli_import_hides_in_a_function() -> None:
    hidden = {
        module_name(p): found
        for p in PACKAGE.glob("*.py")
        if (found := cli_imports(ast.parse(p.read_text()), inside_functions=True))
    }
    assert hidden == {}


def test_only_the_entry_points_import_the_assembled_app() -> None:
    importers = {name for name, imported in graph().items() if "service.cli.main" in imported}
    assert importers == ENTRY_POINTS
