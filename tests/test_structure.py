"""The package's structure: no import cycles, and the family registry is the only place
that knows a family (the browser code names none).

Run alone: ``python -m pytest tests/test_structure.py``.
"""

import ast
import re
from pathlib import Path

import pytest

from diversity_profiles.pipeline._registry import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "diversity_profiles"


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """Nodes under ``if TYPE_CHECKING:`` (never run, so no import at run time)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports at run time.

    Every ``import`` statement counts, at module level and inside functions alike
    (a lazy import is still a dependency: it only defers the cycle to the first call);
    only imports under ``if TYPE_CHECKING:`` are left out. ``from . import x`` depends on
    the submodule ``x`` when there is one, else on the package itself.
    """
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skip = _type_checking_nodes(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
                deps.update(subs if len(subs) == len(node.names) else [target, *subs])
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_check_finds_a_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
    )
    graph = import_graph(pkg)
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "diversity_profiles.pipeline._registry" in graph["diversity_profiles.pipeline._profiles"]  # it reads
    assert cycles(graph) == []


def test_nothing_in_the_package_imports_the_accessor_but_the_package():
    importers = {m for m, deps in import_graph().items() if "diversity_profiles._accessor" in deps}
    assert importers == {"diversity_profiles"}


@pytest.mark.parametrize("path", sorted((ROOT / "js").glob("*.ts")), ids=lambda p: p.name)
def test_the_browser_code_names_no_family(path):
    """Family facts reach the view in its state (families.Family.display), so the
    TypeScript stays the same when a family is added."""
    words = {name for name in FAMILIES} | {f.parameter for f in FAMILIES.values() if f.parameter}
    words -= {"q", "t", "s", "order"}  # single letters and plain words: checked as names below
    text = path.read_text("utf-8")
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    named = sorted(w for w in words if re.search(rf"\b{re.escape(w)}\b", code))
    # Parameter names that are letters or words may appear, but not as string literals or
    # object keys ("s" is left out: it is the plural suffix in the view's wording).
    literal = sorted(
        p for p in ("q", "t", "order") if re.search(rf"""["'`]{p}["'`]|[{{,]\s*{p}\s*:""", code)
    )
    assert named == [] and literal == []
