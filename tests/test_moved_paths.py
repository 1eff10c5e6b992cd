"""Version 0.1's module paths keep working: every old path of ``_deprecated.MOVED`` gives the
module now holding its code and warns with the new path (the public namespaces ``text``,
``molecules``, ``images``, ``datasets`` and ``sharing`` stay silent), and the entry points
that name a module (the console scripts, ``%load_ext``) still work.

Run alone: ``python -m pytest tests/test_moved_paths.py``.
"""

import importlib
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from diversity_profiles._deprecated import MOVED, SILENT

PUBLIC_NAMESPACES = {"text", "molecules", "images", "datasets", "sharing"}
CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def _import_old(old: str):
    """Import ``diversity_profiles.<old>`` as a first import would, recording its warnings."""
    name = f"diversity_profiles.{old}"
    if getattr(sys.modules.get(name), "__name__", name) != name:
        del sys.modules[name]  # an alias: the module it names stays loaded
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        __import__(name)  # no frame of its own: the warning points here, at the import
    return sys.modules[name], [w for w in caught if issubclass(w.category, DeprecationWarning)]


def test_only_the_public_namespaces_are_silent():
    assert set(SILENT) == PUBLIC_NAMESPACES and PUBLIC_NAMESPACES <= set(MOVED)


def test_every_new_path_is_a_module_of_the_package():
    root = Path(importlib.import_module("diversity_profiles").__file__).parent
    missing = [
        new
        for new in MOVED.values()
        if not (root / f"{new.replace('.', '/')}.py").is_file()
        and not (root / new.replace(".", "/") / "__init__.py").is_file()
    ]
    assert missing == []


def test_the_changelog_lists_every_moved_path():
    text = CHANGELOG.read_text("utf-8")
    section = text[text.index("\n## 0.2.0") :].split("\n## ")[1]
    flat = " ".join(section.split())
    assert [old for old, new in MOVED.items() if f"`{old}` → `{new}`" not in flat] == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_module_holding_its_code(old):
    module, _ = _import_old(old)
    new = importlib.import_module(f"diversity_profiles.{MOVED[old]}")
    assert module is new, f"diversity_profiles.{old} gave {module.__name__}, not {new.__name__}"
    assert module.__name__ == f"diversity_profiles.{MOVED[old]}"


@pytest.mark.parametrize("old", sorted(set(MOVED) - PUBLIC_NAMESPACES))
def test_an_old_path_warns_with_the_new_one(old):
    _, caught = _import_old(old)
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert f"diversity_profiles.{old} moved to diversity_profiles.{MOVED[old]}" in message
    assert caught[0].filename == __file__  # the line that imports, as stacklevel=2 intends


@pytest.mark.parametrize("old", sorted(PUBLIC_NAMESPACES))
def test_a_public_namespace_imports_without_a_warning(old):
    assert _import_old(old)[1] == []


@pytest.mark.parametrize("old", ["streaming", "profiles", "condition"])
def test_an_old_path_leaves_the_new_module_its_own_spec(old):
    """The module keeps its own ``__spec__``: with the alias's, every relative import inside
    its functions warns ``__package__ != __spec__.parent`` (ImportWarning)."""
    module, _ = _import_old(old)
    assert module.__spec__.name == module.__name__
    assert module.__spec__.parent == module.__package__


def test_names_import_from_an_old_path():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from diversity_profiles.condition import Condition
        from diversity_profiles.profiler import Profiler
        from diversity_profiles.streaming import ThresholdCounts

    import diversity_profiles as dp
    from diversity_profiles.engines._streaming import ThresholdCounts as now
    from diversity_profiles.pipeline._condition import Condition as condition_now

    assert Profiler is dp.Profiler and ThresholdCounts is now and Condition is condition_now


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _script(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"the console script {name} is not installed next to {sys.executable}"
    return found


@pytest.mark.integration
@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["diversity-profiles", "--help"], "usage: diversity-profiles"),
        (["diversity-profiles-demo", "--help"], "usage: diversity-profiles-demo"),
        (["-m", "diversity_profiles.demo", "--help"], "usage: diversity-profiles-demo"),
        (["-m", "diversity_profiles.cli", "--help"], "usage: diversity-profiles"),
    ],
    ids=" ".join,
)
def test_the_console_scripts_still_run(command, usage):
    if command[0] == "-m":
        done = _run(sys.executable, "-W", "error::DeprecationWarning", *command)
    else:
        done = _run(_script(command[0]), *command[1:])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(usage) and "DeprecationWarning" not in done.stderr


LOAD_EXT = """
import xarray as xr
from IPython.core.interactiveshell import InteractiveShell

from diversity_profiles.display._notebook import tree_mimebundle

shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "diversity_profiles")
fmt = shell.display_formatter.mimebundle_formatter
print(fmt.lookup_by_type(xr.DataTree) is tree_mimebundle)
"""


@pytest.mark.integration
def test_load_ext_still_registers_the_tree_display():
    done = _run(sys.executable, "-c", LOAD_EXT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "True"
