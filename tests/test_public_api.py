"""The public API, listed by hand: adding or removing a name of ``diversity_profiles`` is a
deliberate change to this file (and to the changelog). scipy.stats keeps the same kind of
test; scikit-learn's ``test_public_functions.py`` loops over every public function.

Run alone: ``python -m pytest tests/test_public_api.py``.
"""

import importlib
import subprocess
import sys
import types
import warnings

import pytest

import diversity_profiles as dp

PUBLIC = [
    "FAMILIES",
    "CoincidentPointsWarning",
    "ProfileExplorer",
    "Pairwise",
    "Profiler",
    "Representation",
    "__version__",
    "average_distance",
    "circles",
    "compare",
    "convergence",
    "energy",
    "explain",
    "magnitude",
    "merge",
    "open_profiles",
    "pairwise",
    "pairwise_distances",
    "permutation_test",
    "profiles",
    "report",
    "richness",
    "similarity_diversity",
    "vendi_score",
    "vendi_score_dual",
]

#: Public modules of the package, reached as attributes (``dp.text``).
NAMESPACES = ["text", "molecules", "images", "datasets", "sharing", "vendi_compat"]

#: Functions named like a module of version 0.1 (``diversity_profiles.profiles``): importing
#: the old module path must not replace the function with the module.
SHADOWED = ["profiles", "compare", "circles", "energy", "magnitude", "explain", "convergence"]


def fresh(code: str) -> str:
    """stdout of ``code`` run in a new interpreter (nothing imported before it)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_all_lists_exactly_the_public_names():
    assert sorted(dp.__all__) == sorted(PUBLIC)
    assert len(set(dp.__all__)) == len(dp.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name):
    value = getattr(dp, name)
    assert value is not None and not isinstance(value, types.ModuleType)
    namespace: dict = {}
    exec(f"from diversity_profiles import {name}", namespace)
    assert namespace[name] is value


def test_star_import_gives_the_public_names():
    namespace: dict = {}
    exec("from diversity_profiles import *", namespace)
    assert set(PUBLIC) <= set(namespace)


def test_the_public_namespaces_are_modules_in_a_fresh_interpreter():
    # Fresh: in this process another test may already have imported them.
    out = fresh(
        "import types, diversity_profiles as dp\n"
        f"for name in {NAMESPACES!r}:\n"
        "    print(name, isinstance(getattr(dp, name), types.ModuleType))\n"
    )
    assert out.split() == [w for name in NAMESPACES for w in (name, "True")]


@pytest.mark.parametrize("name", NAMESPACES)
def test_the_public_namespaces_are_modules(name):
    module = getattr(dp, name)
    assert isinstance(module, types.ModuleType)
    assert module is importlib.import_module(f"diversity_profiles.{name}")


@pytest.mark.parametrize("name", SHADOWED)
def test_a_function_stays_a_function_after_its_old_module_is_imported(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(f"diversity_profiles.{name}")
    assert isinstance(module, types.ModuleType)
    assert isinstance(dp.__dict__[name], types.FunctionType)
    namespace: dict = {}
    exec(f"from diversity_profiles import {name}", namespace)
    assert isinstance(namespace[name], types.FunctionType)


def test_functions_stay_functions_after_every_old_module_in_a_fresh_interpreter():
    out = fresh(
        "import importlib, types, warnings\n"
        "import diversity_profiles as dp\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        f"for name in {SHADOWED!r}:\n"
        "    importlib.import_module('diversity_profiles.' + name)\n"
        f"print(*(isinstance(getattr(dp, n), types.FunctionType) for n in {SHADOWED!r}))\n"
    )
    assert out.split() == ["True"] * len(SHADOWED)


IMPORT_TIME = """
import sys, time
start = time.perf_counter()
import diversity_profiles
print(time.perf_counter() - start)
print(*sorted(m for m in ("xarray", "scipy", "anywidget", "altair") if m in sys.modules))
"""


def test_import_is_fast_and_light():
    """``import diversity_profiles`` stays under half a second (best of 3, in a fresh
    interpreter) and loads none of the heavy libraries: scipy and xarray load on first use,
    anywidget and altair only for the display."""
    runs = [fresh(IMPORT_TIME).split("\n") for _ in range(3)]
    assert [run[1] for run in runs] == [""] * 3, runs
    assert min(float(run[0]) for run in runs) < 0.5, runs
