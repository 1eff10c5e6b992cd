"""The large-n solver table: every record agrees with its function's real signature (so
the table cannot drift from the code), undeclared options and unknown families are errors
that list what is allowed, and an import error in a solver module propagates."""

import importlib.util
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

from diversity_profiles.engines import DaskEngine, NumpyEngine, TorchEngine
from diversity_profiles.large import (
    SOLVERS,
    _circles_large,
    _magnitude_large,
    _vendi_large,
    open_solver,
    run_solver,
    solver,
)

MODULES = {"vendi": _vendi_large, "magnitude": _magnitude_large, "circles": _circles_large}


@pytest.mark.parametrize("family", SOLVERS)
def test_declared_options_are_the_functions_keyword_parameters(family):
    s = SOLVERS[family]
    params = inspect.signature(s.function).parameters.values()
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keyword = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
    assert len(positional) == 2  # (X, grid): run_solver passes them by position
    assert s.options == {k for k in keyword if not k.startswith("_")}  # test hooks left out
    assert not any(p.kind is p.VAR_KEYWORD for p in params)  # **kw would accept anything


@pytest.mark.parametrize("family", [f for f in SOLVERS if SOLVERS[f].session is not None])
def test_a_session_takes_the_functions_options_and_its_own(family):
    s = SOLVERS[family]
    params = inspect.signature(s.session).parameters.values()
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keyword = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
    assert len(positional) == 1  # X only: the grid goes to solve()
    assert s.options | s.session_options == {k for k in keyword if not k.startswith("_")}


def test_a_session_gives_the_numbers_of_one_call_with_every_point():
    # Vendi: the same spectral work, read at more orders; magnitude: warm starts from the
    # scales solved before, the same values to the solver's tolerance.
    X = np.random.default_rng(2).normal(size=(80, 3))
    qs, ts = np.array([0.5, 1.0, 2.0, 4.0]), np.array([0.3, 1.0, 3.0, 10.0])
    vendi = open_solver("vendi", X, bandwidth=1.0)
    first, later = vendi.solve(qs[::2]), vendi.solve(qs[1::2])
    once = run_solver("vendi", X, qs, bandwidth=1.0)
    np.testing.assert_array_equal(np.r_[first.value, later.value], once.value[[0, 2, 1, 3]])
    magnitude = open_solver("magnitude", X, keep=False)
    first, later = magnitude.solve(ts[::2]), magnitude.solve(ts[1::2])
    once = run_solver("magnitude", X, ts)
    got = np.r_[first.value, later.value]
    np.testing.assert_allclose(got, once.value[[0, 2, 1, 3]], rtol=1e-7)
    assert np.all(np.r_[first.lower, later.lower] <= once.upper[[0, 2, 1, 3]] * (1 + 1e-12))
    with pytest.raises(ValueError, match=r"circles_large has no session"):
        open_solver("circles", X)
    with pytest.raises(ValueError, match=r"takes no option 'keep'"):
        run_solver("magnitude", X, ts, keep=True)


@pytest.mark.parametrize("family", SOLVERS)
def test_each_record_describes_its_own_module(family):
    s = SOLVERS[family]
    assert s.family == family and s.name == f"{family}_large"
    assert s.function is getattr(MODULES[family], s.name)
    assert s.distances == MODULES[family].DISTANCES  # the module's own check reads these
    # The engines its products run on are the options that put them there.
    assert ("dask" in s.engines) == ("shipped" in s.options)
    assert ("torch" in s.engines) == ("device" in s.options)
    assert "numpy" in s.engines


@pytest.mark.parametrize("family", SOLVERS)
def test_engine_options_are_declared_options(family):
    s, X = SOLVERS[family], np.zeros((2, 1))
    engines = [(NumpyEngine(), X), (TorchEngine("cpu"), X)]
    if importlib.util.find_spec("dask") is not None:
        engines.append((DaskEngine(), DaskEngine().prepare(X, "euclidean")))
    for engine, prepared in engines:
        options = s.engine_options(engine, prepared)
        assert set(options) <= s.options
        assert bool(options) == (engine.name in s.engines and engine.name != "numpy")


def test_an_undeclared_option_is_an_error_naming_the_accepted_ones():
    X = [[0.0], [1.0], [3.0]]
    with pytest.raises(ValueError) as err:
        run_solver("vendi", X, [1.0], bandwidth=1.0, distance="cosine")
    msg = str(err.value)
    assert msg.startswith("run_solver('vendi', X, grid, bandwidth=..., distance=...): ")
    assert "vendi_large takes no option 'distance'." in msg
    assert "Its options are: " + ", ".join(sorted(SOLVERS["vendi"].options)) in msg
    with pytest.raises(ValueError, match=r"takes no options 'accuracy', 'rtol'\. .*Leave them"):
        run_solver("circles", X, [1.0], rtol=1e-6, accuracy=1e-6)
    with pytest.raises(ValueError, match="no option '_shift'"):  # private hooks are not options
        run_solver("magnitude", X, [1.0], _shift=1.0)


def test_an_unknown_family_is_an_error_listing_the_known():
    msg = "must be one of 'vendi', 'magnitude', 'circles' .* Got 'energy' instead"
    with pytest.raises(ValueError, match=msg):
        run_solver("energy", [[0.0]], [1.0])
    with pytest.raises(ValueError, match=r"Got \['vendi'\] instead"):
        solver(["vendi"])  # type: ignore[arg-type]


def test_run_solver_calls_the_function_and_leaves_none_to_its_default():
    X = np.random.default_rng(0).normal(size=(60, 3))
    t = np.array([0.5, 2.0])
    got = run_solver("magnitude", X, t, rtol=None, time_budget=None, device=None, shipped=None)
    ref = _magnitude_large.magnitude_large(X, t)
    assert np.array_equal(got.lower, ref.lower) and np.array_equal(got.upper, ref.upper)
    c = run_solver("circles", X, [0.5, 1.0], distance="euclidean", seed=None)
    assert np.array_equal(c.lower, _circles_large.circles_large(X, [0.5, 1.0]).lower)


def test_an_import_error_in_a_solver_module_propagates():
    # A broken solver module must fail the import, not quietly leave its family without
    # a solver (the pipeline used to swallow every ImportError and fall back on bounds).
    code = (
        "import sys; sys.modules['diversity_profiles.large._circles_large'] = None\n"
        "try:\n"
        "    import diversity_profiles.large\n"
        "except ImportError as exc:\n"
        "    print('ImportError', exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ImportError") and "_circles_large" in out.stdout
