"""Static types on both sides: mypy on the Python package, tsc (strict) on the view.

Both run in the suite (marked ``types``); the public API declares its return types.
"""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "diversity_profiles"


def _public_functions_without_return_types(source: str) -> list[str]:
    """Public functions and methods of public classes that declare no return type."""
    missing = []
    for node in ast.parse(source).body:
        scope, members = "", [node]
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            scope, members = f"{node.name}.", node.body
        for fn in members:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                if not fn.name.startswith("_") and fn.returns is None:
                    missing.append(f"{scope}{fn.name} (line {fn.lineno})")
    return missing


def test_public_functions_declare_their_return_types():
    missing = {
        str(path.relative_to(SRC)): found
        for path in sorted(SRC.rglob("*.py"))
        if (found := _public_functions_without_return_types(path.read_text("utf-8")))
    }
    assert missing == {}


def test_a_missing_return_type_is_found():
    source = "def f(x) -> int:\n    return x\n\nclass A:\n    def g(self):\n        pass\n"
    assert _public_functions_without_return_types(source) == ["A.g (line 5)"]


def test_mypy_finds_no_errors_in_the_package():
    pytest.importorskip("mypy", reason="mypy comes with the test extra: pip install -e .[test]")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-color-output"],  # files and options: pyproject
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_tsc_finds_no_errors_in_the_view():
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npm is not installed: the TypeScript check needs it")
    if not (ROOT / "node_modules" / "typescript").exists():
        pytest.skip("node_modules has no typescript: run `npm install`")
    run = subprocess.run(
        [npx, "--no-install", "tsc", "--noEmit", "-p", "tsconfig.json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"},
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
