"""The package's structure: each layer imports only its own layer and those below it, one
subpackage reaches another only through that subpackage's public names, only the display
imports the widget and chart libraries, nothing imports in a cycle, and the family registry
is the only place that knows a family (the browser code names none).

Every rule reads the import graph from the source (lazy imports inside functions included),
and each is shown able to fail on a toy package in a temporary folder.

Run alone: ``python -m pytest tests/test_structure.py``.
"""

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "diversity_profiles"

#: The layers, lowest first: a module imports its own layer and those below it, never one
#: above. Layers on one rung (comparison, explanation) may import each other. "" stands for
#: the package's root-level modules (``__init__``, ``_accessor``, ``cli``, ``demo``,
#: ``_deprecated``, ``vendi_compat``), the top layer.
LAYERS: list[set[str]] = [
    {"core"},
    {"engines"},
    {"families"},
    {"large"},
    {"pipeline"},
    {"comparison", "explanation"},
    {"files"},
    {"display"},
    {"featurisers"},
    {""},
]
RANK = {layer: rank for rank, rung in enumerate(LAYERS) for layer in rung}

#: Root-level modules any layer may import, by any path: leaves holding a constant.
LEAVES = {"_version"}

#: Third-party packages (top-level names) that only the display layer imports.
DISPLAY_ONLY = {"anywidget", "traitlets", "altair", "vl_convert"}


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


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Import:
    """One run-time import statement of the package, resolved to absolute names."""

    module: str  # the importing module
    file: str  # "diversity_profiles/pipeline/_profiles.py"
    line: int
    target: str  # the module the statement names (``from .. import x``: the package)
    names: tuple[str, ...]  # the names after ``import`` in ``from target import ...``; else ()
    level: int  # dots of a relative import, 0 for an absolute one
    deps: tuple[str, ...]  # the package's modules it loads, as the import graph counts them

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@functools.cache
def imports(package: Path = PACKAGE) -> tuple[Import, ...]:
    """Every ``import`` statement of the package that runs, at module level or inside a
    function (a lazy import is still a dependency: it only defers the cycle to the first
    call); only imports under ``if TYPE_CHECKING:`` are left out. ``from . import x``
    depends on the submodule ``x`` when there is one, else on the package itself."""
    modules = {_module_name(p, package): p for p in package.rglob("*.py")}
    found: list[Import] = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text("utf-8"))
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skip = _type_checking_nodes(tree)
        file = path.relative_to(package.parent).as_posix()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = tuple(a.name for a in node.names)
                subs = [f"{target}.{a}" for a in names if f"{target}.{a}" in modules]
                deps = subs if len(subs) == len(names) else [target, *subs]
                statements = [(target, names, node.level, deps)]
            elif isinstance(node, ast.Import):
                statements = [(a.name, (), 0, [a.name]) for a in node.names]
            else:
                continue
            for target, names, level, deps in statements:
                kept = tuple(d for d in deps if d in modules and d != name)
                found.append(Import(name, file, node.lineno, target, names, level, kept))
    return tuple(sorted(found, key=lambda i: (i.file, i.line)))


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the package's modules it imports at run time (see :func:`imports`)."""
    graph = {_module_name(p, package): set() for p in package.rglob("*.py")}
    for imp in imports(package):
        graph[imp.module].update(imp.deps)
    return graph


@functools.cache
def layers(package: Path = PACKAGE) -> dict[str, str]:
    """module -> its layer: the subpackage it lies in, or "" for a root-level module."""
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).parts
        found[_module_name(path, package)] = parts[0] if len(parts) > 1 else ""
    return found


def _leaf(module: str, layer: dict[str, str]) -> bool:
    return layer.get(module) == "" and module.rpartition(".")[2] in LEAVES


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Lines "file:line → module", one for each import of a module in a layer above the
    importer's."""
    layer = layers(package)
    return [
        f"{imp.where} → {dep}"
        for imp in imports(package)
        for dep in imp.deps
        if not _leaf(dep, layer) and RANK[layer[dep]] > RANK[layer[imp.module]]
    ]


def display_only_imports(package: Path = PACKAGE) -> list[str]:
    """Lines "file:line → name", one for each import of a :data:`DISPLAY_ONLY` package
    outside the display layer."""
    layer = layers(package)
    return [
        f"{imp.where} → {imp.target}"
        for imp in imports(package)
        if imp.level == 0
        and imp.target.partition(".")[0] in DISPLAY_ONLY
        and layer[imp.module] != "display"
    ]


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Lines "file:line → module import names", one for each import across layers that
    names an underscore module or an underscore name: another subpackage is reached through its
    package (``from ..engines import pairwise_distances``) or one of its public modules
    (``featurisers.text``), as its users outside would. Root-level modules count as one layer
    (the top); the :data:`LEAVES` may be imported from anywhere."""
    layer = layers(package)
    top = package.name
    found = []
    for imp in imports(package):
        if not (imp.target == top or imp.target.startswith(f"{top}.")):
            continue
        named = []
        for name in imp.names or ("",):
            full = f"{imp.target}.{name}" if f"{imp.target}.{name}" in layer else imp.target
            if full not in layer or _leaf(full, layer) or layer[full] == layer[imp.module]:
                continue
            path = full.split(".")[1:] + ([name] if full == imp.target and name else [])
            if any(_private(part) for part in path):
                named.append(name)
        if named:
            names = f" import {', '.join(named)}" if any(named) else ""
            found.append(f"{imp.where} → {imp.target}{names}")
    return found


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


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "pkg"


def _toy(tmp_path: Path) -> Path:
    """A package with one breach of each layer rule (and imports each rule allows)."""
    return _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .engines._a import f\nfrom . import _deprecated, _version\n",
            "pkg/_version.py": "v = '1'\n",
            "pkg/_deprecated.py": "",
            "pkg/core/__init__.py": "",
            "pkg/core/_checks.py": "def check():\n    pass\n",
            "pkg/engines/__init__.py": "from ._a import f\n",
            "pkg/engines/_a.py": (
                "from typing import TYPE_CHECKING\n"
                "from ..core import _checks\n"
                "from .._version import v\n"
                "import altair\n"
                "if TYPE_CHECKING:\n"
                "    from ..pipeline import g\n"
                "def f():\n"
                "    from ..pipeline import g\n"
            ),
            "pkg/pipeline/__init__.py": "from ._p import g\n",
            "pkg/pipeline/_p.py": (
                "from ..engines import f\n"
                "from ..engines._a import f as f2\n"
                "import pkg.core._checks\n"
                "def g():\n"
                "    pass\n"
            ),
            "pkg/comparison/__init__.py": "",
            "pkg/comparison/_c.py": "from ..display import view\nfrom ..explanation import why\n",
            "pkg/explanation/__init__.py": "from .. import comparison\ndef why():\n    pass\n",
            "pkg/display/__init__.py": "import altair\nfrom traitlets import Unicode\n",
        },
    )


def test_the_layer_check_finds_an_upward_import(tmp_path):
    pkg = _toy(tmp_path)
    assert layers(pkg)["pkg._version"] == "" and layers(pkg)["pkg.engines._a"] == "engines"
    # The lazy import counts, the one under TYPE_CHECKING does not; comparison and explanation
    # share a rung; the version is a leaf anyone may import.
    assert upward_imports(pkg) == [
        "pkg/comparison/_c.py:1 → pkg.display",
        "pkg/engines/_a.py:8 → pkg.pipeline",
    ]


def test_the_display_only_check_finds_a_chart_import_elsewhere(tmp_path):
    assert display_only_imports(_toy(tmp_path)) == ["pkg/engines/_a.py:4 → altair"]


def test_the_private_check_finds_underscore_imports_across_layers(tmp_path):
    assert private_imports(_toy(tmp_path)) == [
        "pkg/__init__.py:1 → pkg.engines._a import f",
        "pkg/engines/_a.py:2 → pkg.core import _checks",
        "pkg/pipeline/_p.py:2 → pkg.engines._a import f",
        "pkg/pipeline/_p.py:3 → pkg.core._checks",
    ]


def test_every_subpackage_has_a_layer():
    assert set(layers().values()) == set(RANK)


@pytest.mark.parametrize("layer", sorted(RANK, key=RANK.get), ids=lambda layer: layer or "root")
def test_no_layer_imports_a_layer_above_it(layer):
    """core < engines < families < large < pipeline < {comparison, explanation} < display <
    files < featurisers < the root modules: engines, families and large never import the
    pipeline, the comparison never imports the display."""
    found = [v for v in upward_imports() if _importer(v) == layer]
    assert not found, "imports of a layer above:\n" + "\n".join(found)


def test_the_comparison_never_imports_the_display():
    layer = layers()
    found = {
        (module, dep)
        for module, deps in import_graph().items()
        for dep in deps
        if layer[module] == "comparison" and layer[dep] == "display"
    }
    assert found == set()


def test_only_the_display_imports_widget_and_chart_libraries():
    found = display_only_imports()
    assert not found, f"imports of {sorted(DISPLAY_ONLY)} outside display:\n" + "\n".join(found)


@pytest.mark.parametrize("layer", sorted(RANK, key=RANK.get), ids=lambda layer: layer or "root")
def test_no_layer_imports_another_layers_private_names(layer):
    found = [v for v in private_imports() if _importer(v) == layer]
    assert not found, (
        "import these through the subpackage (from ..engines import name):\n" + "\n".join(found)
    )


def _importer(violation: str) -> str:
    """The importing module's layer, from a "file:line → ..." line of the checks above."""
    return layers()[_module_name(PACKAGE.parent / violation.partition(":")[0], PACKAGE)]


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
    # it reads the registry
    assert "diversity_profiles.pipeline._registry" in graph["diversity_profiles.pipeline._profiles"]
    assert cycles(graph) == []


def test_nothing_in_the_package_imports_the_accessor_but_the_package():
    importers = {m for m, deps in import_graph().items() if "diversity_profiles._accessor" in deps}
    assert importers == {"diversity_profiles"}


@pytest.mark.parametrize("path", sorted((ROOT / "js").glob("*.ts")), ids=lambda p: p.name)
def test_the_browser_code_names_no_family(path):
    """Family facts reach the view in its state (``pipeline._registry.Family.display``), so the
    TypeScript stays the same when a family is added."""
    from diversity_profiles import FAMILIES

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
