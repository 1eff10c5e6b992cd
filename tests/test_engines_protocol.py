"""The engine protocol: every engine implements :class:`Engine` (same methods, same
signatures), :func:`engine_for` chooses among them, and each engine's passes and dual
spectrum equal the in-memory engine's on small data (dask bit for bit, torch within the
float64 rounding of another summation order; the module-level tests check each engine
against brute force)."""

import inspect

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from diversity_profiles.engines import (
    DaskEngine,
    Engine,
    LogDistanceHistogram,
    NumpyEngine,
    ThresholdCounts,
    TorchEngine,
    engine_for,
)
from diversity_profiles.engines._distances import prepare_embeddings
from diversity_profiles.engines._torch_engine import namespace
from diversity_profiles.families._vendi import dual_kernel_spectrum

METHODS = [
    "prepare", "distance_pass", "threshold_pass", "dual_spectrum", "solver_options", "provenance",
]  # fmt: skip


def _dask():
    pytest.importorskip("dask", reason="dask is optional: pip install '.[dask]'")
    return DaskEngine()


def _torch():
    pytest.importorskip("torch", reason="torch is optional: pip install '.[torch]'")
    return TorchEngine("cpu")


#: The engines compared with the numpy one; each skips where its library is missing.
OTHERS = {"dask": _dask, "torch": _torch}
ALL = {"numpy": NumpyEngine, **OTHERS}


def _data(n=2300, d=8, seed=0):
    """Clustered rows, a duplicate pair (distance exactly 0) and a near-duplicate pair (the
    engines recompute it from the row difference); n > 2048 spans two row blocks in memory."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, d)) * 3
    X = centres[rng.integers(0, 4, n)] + rng.normal(size=(n, d))
    X[1] = X[0]
    X[3] = X[2] + 1e-9
    return X


def _prepared(distance, n=2300):
    X = _data(n)
    if distance == "tanimoto":
        X = (X > 0.5).astype(np.float64)
    return prepare_embeddings(X, distance, "test")


def _gaussian(D, h=3.0):  # as the pipeline writes it: numpy blocks or torch tensors
    K = D * D
    K *= -0.5 / h**2
    return namespace(D).exp(K, out=K)


@pytest.mark.parametrize("make", ALL.values(), ids=ALL.keys())
def test_every_engine_implements_the_protocol(make):
    engine = make()
    assert isinstance(engine, Engine)
    assert engine.name in ALL
    for name in METHODS:  # the protocol's signatures, parameter for parameter
        want = inspect.signature(getattr(Engine, name))
        got = inspect.signature(getattr(type(engine), name))
        assert list(got.parameters) == list(want.parameters), name
        for p, q in zip(got.parameters.values(), want.parameters.values(), strict=True):
            assert (p.kind, p.default) == (q.kind, q.default), (name, p.name)
    assert engine == make() and hash(engine) == hash(make())  # values, no state


def test_engine_for_is_the_one_choice():
    assert engine_for() == NumpyEngine()
    assert engine_for(distributed=True) == DaskEngine()
    assert engine_for(device="cpu") == TorchEngine("cpu")
    assert engine_for(distributed=True, device="cuda:1") == TorchEngine("cuda:1")  # device wins
    with pytest.raises(TypeError):
        engine_for(True)  # type: ignore[misc]  # keyword-only: which flag is meant must show


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "tanimoto"])
@pytest.mark.parametrize("make", OTHERS.values(), ids=OTHERS.keys())
def test_distance_pass_equals_the_numpy_engine(make, distance):
    engine, ref_engine = make(), NumpyEngine()
    X = _prepared(distance)
    ref = ref_engine.distance_pass(ref_engine.prepare(X, distance), distance)
    got = engine.distance_pass(engine.prepare(X, distance), distance, desc="test")
    assert isinstance(got, LogDistanceHistogram)
    assert np.array_equal(got.counts, ref.counts)  # every pair in the same bin
    assert (got.n_pairs, got.n_zero, got.n_clipped, got.anchor) == (
        ref.n_pairs, ref.n_zero, ref.n_clipped, ref.anchor
    )  # fmt: skip
    if engine.name == "dask":  # the same per-row partials and tree: bit for bit
        assert np.array_equal(got.sum_u, ref.sum_u) and got.sum_d == ref.sum_d
    else:  # float64 GEMMs on another library: the last digits differ
        # Each pair's offset u (log d within its bin) to 1e-9, a thousand times finer than
        # the energy reads the histogram (1e-6). Usually they agree to 1e-13; in some whole-
        # suite runs (CI and here, 2026-12-06; never in isolation or in the suite's first
        # half) the torch engine's offsets sat up to 3e-11 per pair from numpy's.
        np.testing.assert_array_less(np.abs(got.sum_u - ref.sum_u), 1e-9 * ref.counts + 1e-15)
        np.testing.assert_allclose(got.sum_d, ref.sum_d, rtol=1e-9)
    assert ref.n_pairs == len(X) * (len(X) - 1) / 2


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
@pytest.mark.parametrize("make", OTHERS.values(), ids=OTHERS.keys())
def test_threshold_pass_equals_the_numpy_engine(make, distance):
    engine, ref_engine = make(), NumpyEngine()
    X = _prepared(distance, n=1200)  # one block: the module tests walk many (block=128)
    taus = np.quantile(pdist(X[:300]), [0.01, 0.1, 0.5, 0.9])
    kernel = _gaussian if distance == "euclidean" else None
    ref = ref_engine.threshold_pass(X, distance, taus, kernel)
    got = engine.threshold_pass(engine.prepare(X, distance), distance, taus, kernel, desc="t")
    assert isinstance(got, ThresholdCounts)
    assert np.array_equal(got.degrees, ref.degrees) and np.array_equal(got.pairs, ref.pairs)
    assert np.array_equal(got.taus, ref.taus)
    if kernel is None:
        assert np.isnan(got.sum_k2) and np.isnan(ref.sum_k2)
    elif engine.name == "dask":
        assert got.sum_k2 == ref.sum_k2
    else:
        np.testing.assert_allclose(got.sum_k2, ref.sum_k2, rtol=1e-12)


@pytest.mark.parametrize("make", ALL.values(), ids=ALL.keys())
def test_passes_take_the_bare_embeddings_too(make):
    engine = make()
    X = _prepared("euclidean", n=300)
    a = engine.distance_pass(X, "euclidean")
    b = engine.distance_pass(engine.prepare(X, "euclidean"), "euclidean")
    assert np.array_equal(a.counts, b.counts) and a.sum_d == b.sum_d
    c = engine.threshold_pass(X, "euclidean")  # no thresholds, no kernel: nothing to count
    assert c.degrees.shape == (300, 0) and np.isnan(c.sum_k2)


def test_numpy_dual_spectrum_is_what_the_pipeline_computes_in_memory():
    X = _prepared("cosine", n=5000)  # two row blocks of the covariance
    lam = NumpyEngine().dual_spectrum(X)
    # families' dual_kernel_spectrum (the in-memory route today): the same blocks, bit for bit
    assert np.array_equal(lam, dual_kernel_spectrum(X, None, normalize=False))
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(X.T @ X / len(X)), atol=1e-13)
    assert lam.shape == (X.shape[1],) and np.isclose(lam.sum(), 1.0)  # unit rows: trace 1


@pytest.mark.parametrize("make", OTHERS.values(), ids=OTHERS.keys())
def test_dual_spectrum_equals_the_numpy_engine(make):
    engine = make()
    X = _prepared("cosine", n=3000)
    ref = NumpyEngine().dual_spectrum(X)
    got = engine.dual_spectrum(engine.prepare(X, "cosine"))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-14)


def test_numpy_engine_solver_options_and_provenance_are_empty():
    X = _prepared("euclidean", n=50)
    assert NumpyEngine().prepare(X, "euclidean") is X  # nothing copied
    assert NumpyEngine().solver_options(X) == {} and NumpyEngine().provenance() == {}


def test_dask_engine_ships_once_and_hands_the_solvers_that_copy():
    dask = _dask()
    shipped = dask.prepare(_prepared("euclidean", n=50), "euclidean")
    assert dask.solver_options(shipped)["shipped"] is shipped  # the same copy, not resent
    assert dask.provenance()["engine"] == "dask (local scheduler)"


def test_torch_engine_puts_the_solvers_on_its_device():
    engine = _torch()
    prepared = engine.prepare(_prepared("euclidean", n=50), "euclidean")
    assert prepared.device == "cpu" and prepared.n == 50
    assert engine.solver_options(prepared) == {"device": "cpu"}
    assert engine.provenance()["device"] == "cpu"
