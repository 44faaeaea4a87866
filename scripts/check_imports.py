"""Check the import structure of the project packages: no import cycles, and the web
framework only under service/api.

Every .py file of the packages pyproject.toml lists (`[tool.setuptools.packages.find]
include`) is parsed with `ast`; every import counts, at module level or inside a
function (an import moved into a function still ties the two modules together, it only
hides the cycle until the function runs). An import names the module it loads: `import
a.b` and `from a import b` (when a/b.py exists) point at `a.b`, `from a.b import name`
at `a.b`. The parent packages' `__init__` modules that Python also runs are not counted,
so a package that re-exports its submodules is not a cycle by itself.

Prints every cycle (each strongly connected component of more than one module, with the
import lines that close it) and every module outside service/api that imports fastapi or
starlette; exits 1 if there is any.

    python scripts/check_imports.py [--root PATH] [PACKAGE ...]
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WEB_FRAMEWORKS = ("fastapi", "starlette")
WEB_PACKAGE = "service.api"  # the HTTP layer: the only place that may import them


@dataclass(frozen=True)
class Import:
    """One import statement's target in one module (`line` in the importing file)."""

    source: str
    target: str
    line: int


def project_packages(root: Path) -> list[str]:
    """The top-level packages pyproject.toml ships (`include = ["service*", ...]`)."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({pattern.rstrip("*").rstrip(".") for pattern in include})


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """{dotted module name: file} for every .py file under the packages."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _resolve(name: str, known: set[str]) -> str | None:
    """The longest known module that `name` is or lies inside, else None (not ours)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` reads from (relative levels resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def imports_of(module: str, path: Path, known: set[str]) -> tuple[list[Import], list[Import]]:
    """(imports of project modules, imports of a web framework) anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    internal: list[Import] = []
    web: list[Import] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path.name == "__init__.py", node)
            # `from pkg import sub` loads pkg.sub when that is a module, else a name in pkg
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for name in dict.fromkeys(names):  # `from a import x, y` is one import of a
            if name.split(".")[0] in WEB_FRAMEWORKS:
                web.append(Import(module, name, node.lineno))
            target = _resolve(name, known)
            if target is not None and target != module:
                internal.append(Import(module, target, node.lineno))
    return internal, web


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of a directed graph, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def is_web_module(module: str) -> bool:
    return module == WEB_PACKAGE or module.startswith(WEB_PACKAGE + ".")


def check(root: Path, packages: Sequence[str]) -> list[str]:
    """The problems found, one printable block each (empty: all good)."""
    modules = module_files(root, packages)
    known = set(modules)
    edges: list[Import] = []
    problems: list[str] = []
    for module, path in modules.items():
        internal, web = imports_of(module, path, known)
        edges += internal
        if not is_web_module(module):
            problems += [
                f"web framework outside {WEB_PACKAGE}: {module} imports {imp.target} "
                f"({path.relative_to(root)}:{imp.line})"
                for imp in web
            ]
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in edges:
        graph[imp.source].add(imp.target)
    for component in strongly_connected(graph):
        if len(component) < 2:
            continue
        members = set(component)
        lines = [
            f"    {imp.source} -> {imp.target} ({modules[imp.source].relative_to(root)}:{imp.line})"
            for imp in sorted(set(edges), key=lambda i: (i.source, i.target, i.line))
            if imp.source in members and imp.target in members
        ]
        problems.append(f"import cycle between {', '.join(component)}:\n" + "\n".join(lines))
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=REPO, help="The project folder (with pyproject.toml).")
    ap.add_argument("packages", nargs="*", help="Top-level packages (default: those pyproject.toml ships).")
    args = ap.parse_args(argv)
    packages = args.packages or project_packages(args.root)
    problems = check(args.root, packages)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in {', '.join(packages)}", file=sys.stderr)
        return 1
    print(f"no import cycle; {', '.join(WEB_FRAMEWORKS)} only under {WEB_PACKAGE} ({', '.join(packages)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
