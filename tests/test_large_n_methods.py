"""Large-n numerical methods against the exact paths, closed forms and brute force.

Small n (≤ 1500) so the exact references are cheap; every bound that is called certified
must contain the truth, and every estimate must be within its stated tolerance.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.engines._distances import (
    gaussian_kernel,
    median_bandwidth,
    pairwise_distances,
)
from diversity_profiles.large._circles_large import circles_large
from diversity_profiles.large._magnitude_large import magnitude_large
from diversity_profiles.large._spectral_bounds import vendi_bracket
from diversity_profiles.large._vendi_large import gaussian_sum_squares, vendi_large


def _clustered(rng, n, d, k=8, spread=0.3):
    centres = rng.normal(size=(k, d)) * 3.0
    return centres[rng.integers(0, k, n)] + spread * rng.normal(size=(n, d))


def _datasets(n=500):
    rng = np.random.default_rng(7)
    gauss = rng.normal(size=(n, 16))
    clustered = _clustered(rng, n, 24)
    with_dups = np.vstack([clustered[: n // 2], clustered[: n // 5]])  # 20% exact duplicates
    return {"gaussian": gauss, "clustered": clustered, "duplicates": with_dups}


def _geometric_graph(rng, n, quantile):
    """Uniform points in the unit square, their distances, the threshold at ``quantile`` of
    them and the threshold graph circles_large builds at it."""
    from diversity_profiles.large._circles_large import _threshold_graphs

    X = rng.uniform(size=(n, 2))
    D = pairwise_distances(X)
    tau = float(np.quantile(D[np.triu_indices(n, 1)], quantile))
    g, _ = _threshold_graphs(X, "euclidean", np.array([tau]), 10**6)
    return D, tau, g


# --- magnitude ---------------------------------------------------------------------------


def test_magnitude_large_line_closed_form():
    # Finite subsets of the line: Mag(t) = 1 + Σ tanh(t·gap/2) (Leinster 2013, Thm 4.1.3?).
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 50, 300))
    ts = np.array([0.01, 0.1, 1.0, 10.0])
    truth = 1 + np.tanh(np.outer(ts, np.diff(x)) / 2).sum(axis=1)
    r = magnitude_large(x[:, None], ts)
    np.testing.assert_allclose(r.value, truth, rtol=1e-7)
    assert np.all(r.lower <= truth * (1 + 1e-12))
    assert np.all(r.upper >= truth * (1 - 1e-12))
    assert r.breakdowns == []


@pytest.mark.parametrize("name", ["gaussian", "clustered", "duplicates"])
def test_magnitude_large_matches_exact(name):
    X = _datasets()[name]
    D = pairwise_distances(X)
    med = float(np.median(D[D > 0]))
    ts = np.array([0.03, 0.3, 1.0, 3.0, 30.0]) / med
    exact = dp.magnitude(D, ts)  # the magnitude of the distinct points
    r = magnitude_large(X, ts)
    assert r.n_distinct == len(np.unique(X, axis=0))
    np.testing.assert_allclose(r.value, exact, rtol=1e-6)
    # The lower bound is certified; the upper wherever kind says so (and held in practice).
    assert np.all(r.lower <= exact * (1 + 1e-12))
    assert np.all(r.upper >= exact * (1 - 1e-12))
    assert set(r.kind) <= {"certified", "estimate"}
    if name == "gaussian":
        assert r.kind[-1] == "certified"  # Mag ≈ n: Gershgorin proves λ_min > 0
    assert np.all(r.iterations > 0)


def test_magnitude_large_cosine_and_every_memory_mode():
    rng = np.random.default_rng(3)
    X = _clustered(rng, 300, 12)
    D = pairwise_distances(X, "cosine")
    ts = np.array([0.5, 5.0, 50.0])
    exact = dp.magnitude(D, ts)
    # float64 D held once; float32 Z_t held (4n² bytes fit, D does not); tiles recomputed
    modes = [magnitude_large(X, ts, distance="cosine", memory_limit=m) for m in (None, 1e6, 1e3)]
    assert [r.mode for r in modes] == ["distances", "held", "recompute"]
    for r in modes:
        np.testing.assert_allclose(r.value, exact, rtol=1e-6)
        assert np.all(r.lower <= exact * (1 + 1e-12))


def test_magnitude_large_holds_one_z_at_a_time(monkeypatch):
    # "held" mode forms a float32 Z_t per scale (4 n² bytes, what the plan counts): the
    # last scale's must be gone before the next one is formed. Rebinding the operator
    # after forming the next kept both, twice the planned peak (20.6 GB at 50,000).
    import weakref

    from diversity_profiles.engines._blockwise import PairOperator

    alive: list = []
    live_at_formation: list[int] = []
    formed = PairOperator._formed

    def tracked(self, double):
        live_at_formation.append(sum(ref() is not None for ref in alive))
        K = formed(self, double)
        alive.append(weakref.ref(K))
        return K

    monkeypatch.setattr(PairOperator, "_formed", tracked)
    X = _clustered(np.random.default_rng(4), 300, 12)
    r = magnitude_large(X, [0.05, 0.5, 5.0, 50.0], memory_limit=1e6)
    assert r.mode == "held"
    assert len(live_at_formation) == 4 and live_at_formation == [0, 0, 0, 0]


def _benchmark_data(n, d=768, seed=0):
    """benchmarks/large_n.py's data: 50 clusters in a 64-d subspace plus noise."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.standard_normal((d, 64)))[0]
    centres = 3.0 * rng.standard_normal((50, 64))
    X = (centres[rng.integers(0, 50, n)] + rng.standard_normal((n, 64))) @ basis.T
    return X + 0.3 * rng.standard_normal((n, d))


def _default_grid(D, m):
    """The large-n default grid's span: where n²/1ᵀZ_t1 (normalised) reaches 1% and 95%."""
    n = len(D)
    d = D[np.triu_indices(n, 1)]
    ts = np.geomspace(1e-3, 1e3, 241) / d.mean()
    norm = np.array([(n * n / (n + 2 * np.exp(-t * d).sum()) - 1) / (n - 1) for t in ts])
    return np.geomspace(ts[np.searchsorted(norm, 0.01)], ts[np.searchsorted(norm, 0.95)], m)


def test_magnitude_large_meets_the_issue_target_on_benchmark_data():
    # Issue 12's target, at a size the dense exact path affords in a test: relative error
    # ≤ 1e-5 at every scale of the default grid's span, the truth inside the bounds, with
    # the float64 distances held once (the fast mode) and with Z_t formed per scale.
    X = _benchmark_data(1000)
    D = pairwise_distances(X)
    ts = _default_grid(D, 16)
    exact = dp.magnitude(D, ts)
    fast = magnitude_large(X, ts)
    assert fast.mode == "distances"
    per_scale = magnitude_large(X, ts[::5], memory_limit=4.0 * 1000**2 + 1)
    assert per_scale.mode == "held"
    for r, truth in ((fast, exact), (per_scale, exact[::5])):
        assert np.all(np.abs(r.value - truth) <= 1e-5 * truth)
        assert np.all(r.lower <= truth * (1 + 1e-12))
        assert np.all(truth <= r.upper * (1 + 1e-12))
        assert r.breakdowns == []
    assert "certified" in fast.kind  # Gershgorin certifies the upper end of the grid


def test_magnitude_large_rebuilds_a_reused_preconditioner_and_stays_exact(monkeypatch):
    # A small preconditioner makes a rebuild cheap: it is reused across scales and rebuilt
    # when its extra iterations add up; every scale still matches the dense path.
    from diversity_profiles.large import _magnitude_large

    builds = []
    build = _magnitude_large.build_preconditioner

    def counted(*args, **kwargs):
        builds.append(1)
        return build(*args, **kwargs)

    # Patched where magnitude_large looks it up (it imports the name from the engines).
    monkeypatch.setattr(_magnitude_large, "build_preconditioner", counted)
    X = _benchmark_data(600, d=64, seed=1)
    D = pairwise_distances(X)
    ts = _default_grid(D, 20)
    r = magnitude_large(X, ts, rank=20, block=32)
    assert 1 < len(builds) < len(ts)
    exact = dp.magnitude(D, ts)
    assert np.all(np.abs(r.value - exact) <= 1e-5 * exact)
    assert np.all(r.lower <= exact * (1 + 1e-12)) and np.all(exact <= r.upper * (1 + 1e-12))


def test_held_distances_are_the_refined_distances():
    # Near-duplicates (recomputed from the difference) and exact duplicates across tiles.
    from scipy.spatial.distance import cdist

    from diversity_profiles.engines import HeldDistances
    from diversity_profiles.engines._distances import TILE

    rng = np.random.default_rng(5)
    X = rng.normal(size=(TILE + 300, 8))
    X[TILE + 10] = X[3] + 1e-9
    X[TILE + 20] = X[7]
    for distance in ("euclidean", "cosine"):
        Xp = X / np.linalg.norm(X, axis=1, keepdims=True) if distance == "cosine" else X
        D = HeldDistances(Xp, distance).D
        assert np.array_equal(D, D.T) and not np.diagonal(D).any()
        reference = cdist(Xp, Xp, "sqeuclidean" if distance == "euclidean" else "cosine")
        if distance == "euclidean":  # from the differences: no GEMM cancellation
            reference = np.sqrt(reference)
        np.testing.assert_allclose(D, reference, rtol=1e-12, atol=1e-14)
        assert D[TILE + 20, 7] == 0.0 and D[TILE + 10, 3] > 0


def test_magnitude_large_breakdown_is_caught_not_hidden():
    # Shifting the preconditioner's blocks makes M indefinite (what a zero residual
    # diagonal can do in floating point): CG must notice, say so, and still be right.
    X = _datasets(300)["clustered"]
    D = pairwise_distances(X)
    ts = np.array([0.3, 1.0]) / float(np.median(D[D > 0]))
    r = magnitude_large(X, ts, _shift=5.0)
    assert r.breakdowns and "switched to float32 CG" in r.breakdowns[0]
    exact = dp.magnitude(D, ts)
    np.testing.assert_allclose(r.value, exact, rtol=1e-6)
    assert np.all(r.lower <= exact * (1 + 1e-12))


def test_magnitude_large_single_point_and_errors():
    r = magnitude_large([[1.0, 2.0], [1.0, 2.0]], [0.5, 2.0])
    assert r.n_distinct == 1 and r.value.tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="'t' parameter of magnitude_large"):
        magnitude_large([[0.0], [1.0]], -1.0)
    with pytest.raises(ValueError, match="distance"):
        magnitude_large([[0.0], [1.0]], 1.0, distance="tanimoto")


# --- Vendi -------------------------------------------------------------------------------


QS = np.array([0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, np.inf])


def _exact_vendi(X, h):
    return dp.vendi_score(gaussian_kernel(pairwise_distances(X), h), QS)


@pytest.mark.parametrize("name", ["gaussian", "clustered", "duplicates"])
def test_vendi_large_matches_exact(name):
    X = _datasets(800)[name]
    h = median_bandwidth([pairwise_distances(X)])
    exact = _exact_vendi(X, h)
    r = vendi_large(X, QS, bandwidth=h, rank=150)
    # Certified brackets contain the truth (the exact path renormalises after dropping
    # round-off eigenvalues, which moves it by ~1e-10).
    assert np.all(r.lower <= exact * (1 + 1e-9)), (r.lower, exact)
    assert np.all(r.upper >= exact * (1 - 1e-9)), (r.upper, exact)
    # Low orders: within the stated error bar; from q = 0.5 on also within 0.5%.
    low = (QS > 0) & (QS <= 1)
    assert np.all(np.abs(r.value[low] - exact[low]) <= r.error[low]), (r.value, r.error, exact)
    mid = (QS >= 0.5) & (QS <= 1)
    np.testing.assert_allclose(r.value[mid], exact[mid], rtol=5e-3)
    high = QS >= 2
    np.testing.assert_allclose(r.value[high], exact[high], rtol=1e-6)
    assert r.kind[list(QS).index(2.0)] == "exact"


def test_vendi_large_on_a_numerically_low_rank_set_keeps_to_its_certified_bracket():
    """50 clustered points in 2-d: the complement probes' Lanczos can lose orthogonality
    (Gauss nodes of 78 and 1.7e7 for a trace-1 operator); their estimate once overflowed
    into a NaN at q = 40 with a warning. The orders are then read from the certified
    boxes alone, which hold the dense truth; where the Lanczos holds, its estimate is within
    its error bar. Which of the two happens is decided by rounding: over ten sets both do
    (seed 1 is one that falls back, measured)."""
    qs = np.array([0.5, 1.0, 2.0, 10.0, 39.8])
    fallbacks = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(50, 2)) + rng.integers(0, 4, size=(50, 1)) * 3.0
        h = median_bandwidth([pairwise_distances(X)])
        exact = dp.vendi_score(gaussian_kernel(pairwise_distances(X), h), qs)
        r = vendi_large(X, qs, bandwidth=h)
        assert np.all(np.isfinite(r.value))
        assert np.all(r.lower <= exact * (1 + 1e-9)) and np.all(r.upper >= exact * (1 - 1e-9))
        assert np.all(np.abs(r.value - exact) <= r.error * (1 + 1e-9) + 1e-12)
        fallbacks += r.details["precision"] == "none"
    assert 0 < fallbacks < 10


def test_vendi_large_without_held_kernel_agrees():
    X = _datasets(200)["clustered"]
    h = median_bandwidth([pairwise_distances(X)])
    held = vendi_large(X, QS, bandwidth=h, rank=50, probes=10, steps=15)
    tiles = vendi_large(X, QS, bandwidth=h, rank=50, probes=10, steps=15, memory_limit=0)
    assert held.details["held"] and not tiles.details["held"]
    np.testing.assert_allclose(tiles.value, held.value, rtol=1e-5)
    with pytest.raises(ValueError, match="'bandwidth' argument of vendi_large"):
        vendi_large(X, 1.0, bandwidth=0.0)


def test_vendi_large_runs_its_lanczos_beside_k_and_u_only(monkeypatch):
    """When the Lanczos runs start, the Ritz step's other n × rank blocks (its basis, the
    products, the residuals; 0.37 GiB at n = 50,000) and a copy of every start column are
    gone: beside the held float32 K, only U, the probes, the projected-out U columns and
    the pilot's start columns are left (tracemalloc counts numpy's memory)."""
    import tracemalloc

    from diversity_profiles.large import _vendi_large as V

    n, rank = 1000, 200
    X = np.random.default_rng(2).normal(size=(n, 3))
    at_start: list[int] = []
    lanczos = V._lanczos

    def counted(op, *args, **kwargs):
        at_start.append(tracemalloc.get_traced_memory()[0])
        return lanczos(op, *args, **kwargs)

    vendi_large(X[:50], [1.0], bandwidth=1.0, rank=20, progress=False)  # imports done
    monkeypatch.setattr(V, "_lanczos", counted)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        vendi_large(X, [1.0], bandwidth=1.0, rank=rank, precision="single", progress=False)
    finally:
        tracemalloc.stop()
    block = 8 * n  # one float64 column
    # U, sep ⊆ U, the 128 probes and the pilot's rank + 16 start columns: at most 744
    # columns (821 measured with the imports' bytes; before: the Ritz step's five more
    # blocks and a copy of all columns, about 2,100)
    assert at_start[0] - before <= 4 * n * n + 900 * block, (at_start[0] - before) / block


def test_vendi_large_releases_its_float32_k_for_a_float64_rerun_from_tiles(monkeypatch):
    """Where K fits only in float32, the float64 rerun of the probes forms float64 tiles at
    every step and never reads the held float32 K: it is released first (9.3 GiB at
    n = 50,000, beside a float64 Krylov basis of 2 GiB)."""
    from scipy.spatial.distance import pdist

    from diversity_profiles.large import _vendi_large as V

    held: list[tuple[bool, object]] = []
    lanczos = V._lanczos

    def recorded(op, Vs, steps, double, *args, **kwargs):
        held.append((double, None if op.held is None else op.held.dtype))
        return lanczos(op, Vs, steps, double, *args, **kwargs)

    monkeypatch.setattr(V, "_lanczos", recorded)
    X = np.random.default_rng(1).normal(size=(1500, 3))
    h = float(np.median(pdist(X)))
    r = vendi_large(X, [1.0], bandwidth=h, progress=False, memory_limit=5.0 * 1500**2)
    assert r.details["precision"] == "double"
    assert held == [(False, np.float32), (True, None)]


def test_the_plan_counts_vendi_larges_krylov_bases():
    """The planner's peak for the large-n Vendi covers what vendi_large allocates (numpy's
    memory, counted by tracemalloc) and is not far above it. 6,000 points in 3-d: the
    probes' float64 rerun (most eigenvalues lie below the float32 noise) beside K held in
    float64. Its Krylov basis, 128 probes × 40 steps of float64 a point (2 GiB at n =
    50,000), is as large as K here; the plan once counted three blocks of 256 columns
    for every solver and came out below the measured peak."""
    import tracemalloc

    from scipy.spatial.distance import pdist

    from diversity_profiles.pipeline._planning import _large_bytes

    n = 6000
    X = np.random.default_rng(1).normal(size=(n, 3))
    h = float(np.median(pdist(X[:1000])))
    vendi_large(X[:50], [1.0], bandwidth=h, rank=20, progress=False)  # imports done
    tracemalloc.start()
    try:
        r = vendi_large(X, [1.0], bandwidth=h, progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.details["precision"] == "double"
    planned = _large_bytes("vendi", n, 3, 1, available=64 * 1024**3, distance="euclidean")
    assert peak <= planned <= 1.5 * peak, (peak / 2**20, planned / 2**20)


def test_pair_operator_held_in_float64_against_dense():
    """K held in float64 replaces the float32 one and serves both precisions with float64
    products: against K formed densely from scipy's distances, to float64 rounding (the
    float32 K is ~1e-7 off)."""
    from scipy.spatial.distance import cdist

    from diversity_profiles.engines._blockwise import PairOperator

    X = np.random.default_rng(3).normal(size=(900, 5))
    V = np.random.default_rng(4).normal(size=(900, 40))  # split by rows on threads
    K = np.exp(-cdist(X, X, "sqeuclidean") / 8.0)
    op = PairOperator(X, "euclidean", lambda D, out: np.exp(-(D * D) / 8.0, out=out))
    op.hold()
    assert op.held.dtype == np.float32
    assert np.abs(op.matmat(V) - K @ V).max() > 1e-9  # float32: not to float64 rounding
    for cols in (V, V[:, :3]):  # split by rows (transposed GEMMs) and one GEMM
        # within float32's worst-case dot-product bound (n + 2)·u·(|K| |V|)
        assert (np.abs(op.matmat(cols) - K @ cols) <= 902 * 2**-24 * (K @ np.abs(cols))).all()
    assert op.hold_double() and op.held.dtype == np.float64
    for double in (True, False):
        np.testing.assert_allclose(op.matmat(V, double=double), K @ V, rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(op.matmat(V[:, 0], double=True), K @ V[:, 0], rtol=1e-12,
                               atol=1e-11)  # fmt: skip


def test_gaussian_sum_squares_is_q2():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(size=(200, 5))] * 2)
    K = gaussian_kernel(pairwise_distances(X), 2.0)
    assert math.isclose(gaussian_sum_squares(X, 2.0), (K**2).sum() / K.shape[0] ** 2, rel_tol=1e-12)


def _coverage_sweep(count, n, **options):
    """(covered, total, worst relative error at q in [1, 1.5], bars) of vendi_large's
    error bars against dense eigvalsh, over ``count`` clustered and Gaussian datasets."""
    rng = np.random.default_rng(11)
    qs = np.array([0.25, 0.5, 1.0, 1.5])
    hits = total = 0
    worst, bars = 0.0, []
    for k in range(count):
        d = int(rng.integers(8, 40))
        X = _clustered(rng, n, d, k=int(rng.integers(2, 20))) if k % 2 else rng.normal(
            size=(n, d)
        )  # fmt: skip
        D = pairwise_distances(X)
        h = median_bandwidth([D]) * float(rng.uniform(0.5, 2.0))
        exact = dp.vendi_score(gaussian_kernel(D, h), qs)
        r = vendi_large(X, qs, bandwidth=h, seed=k, **options)
        hits += int(np.sum(np.abs(r.value - exact) <= r.error))
        total += len(qs)
        worst = max(worst, float(np.max(np.abs(r.value - exact)[2:] / exact[2:])))
        bars.append(r.error / r.value)
        assert np.all(r.lower <= exact * (1 + 1e-9)) and np.all(r.upper >= exact * (1 - 1e-9))
        assert set(r.kind) == {"estimate"}
    return hits, total, worst, np.array(bars)


def test_vendi_large_error_bars_cover():
    # The error bar (3 probe standard errors plus the Gauss/Gauss-Radau gaps) is what
    # large.py claims: over 6 datasets it must cover the dense eigvalsh value (at most one
    # miss in 24), while staying far narrower than the certified bracket. The earlier
    # estimator (Lanczos on the deflated complement plus the Ritz values) was biased by
    # a pinching of the spectrum and covered 52.5% in the benchmark sweep.
    hits, total, worst, bars = _coverage_sweep(6, 500, rank=50, probes=30, steps=40)
    assert hits >= total - 1, f"coverage {hits}/{total}"
    assert worst <= 5e-3, worst  # q >= 1; lower orders are wide at small d (d = 8-40)
    assert np.median(bars[:, 2:]) < 5e-3, bars


def test_vendi_large_has_no_pinching_bias():
    # With many probes the probe error is small, so a bias shows. Evaluating f on the Ritz
    # values plus the deflated complement (a pinching of A) erred one-sidedly by more than
    # its bar here (3 of 8 orders missed); tr f(A) split by U and estimated with products
    # by A itself must stay within the bar at every order.
    rng = np.random.default_rng(4)
    qs = np.array([0.25, 0.5, 1.0, 1.5])
    for d in (300, 120):
        X = rng.normal(size=(400, d))
        D = pairwise_distances(X)
        h = median_bandwidth([D])
        exact = dp.vendi_score(gaussian_kernel(D, h), qs)
        r = vendi_large(X, qs, bandwidth=h, seed=1, rank=40, probes=400, steps=30)
        assert np.all(np.abs(r.value - exact) <= r.error), (d, (r.value - exact) / r.error)
        assert np.all(r.error <= 4e-3 * r.value)


def test_vendi_large_low_orders_unbiased_by_leaked_top_eigenvalues():
    # Clusters in a subspace plus isotropic noise: a spectrum with far separated top
    # eigenvalues over a flat tail. Their leaked components in the probes took most of
    # the probes' Lanczos steps and left the Gauss-Radau node at 0 far off, so the
    # midpoint estimate sat 3.4% low at q = 0.1 here (bar 4%; 0.95% low at n = 10,000 in
    # the benchmark). Deflating the separated Ritz pairs from the probes' Lanczos must
    # leave it within 0.5% at every low order, inside a bar that stays narrow.
    rng = np.random.default_rng(3)
    n, d = 1500, 200
    basis = np.linalg.qr(rng.normal(size=(d, 16)))[0]
    centres = rng.normal(size=(20, 16)) * 2
    X = (centres[rng.integers(0, 20, n)] + rng.normal(size=(n, 16))) @ basis.T
    X += 0.3 * rng.normal(size=(n, d))
    D = pairwise_distances(X)
    h = median_bandwidth([D])
    qs = np.array([0.1, 0.25, 0.5, 1.0])
    exact = dp.vendi_score(gaussian_kernel(D, h), qs)
    r = vendi_large(X, qs, bandwidth=h, rank=60, probes=30, steps=25, seed=2)
    np.testing.assert_allclose(r.value, exact, rtol=5e-3)
    assert np.all(np.abs(r.value - exact) <= r.error), (r.value - exact) / r.error
    assert r.error[0] <= 5e-3 * r.value[0], r.error / r.value


def test_vendi_large_short_lanczos_still_brackets_each_quadratic_form():
    # A deadline already past stops every column after two steps: the Gauss and
    # Gauss-Radau rules of two steps must still bracket each exact quadratic form vᵀf(A)v
    # (dense eigh) for 0 < q < 2 and the entropy, the basis of the honest error bar.
    import time

    from diversity_profiles.large import _vendi_large as vl

    rng = np.random.default_rng(6)
    X = _clustered(rng, 200, 10)
    h = median_bandwidth([pairwise_distances(X)])
    op, _ = vl._operator(X, h, None)
    A = gaussian_kernel(pairwise_distances(X), h) / 200
    w, E = np.linalg.eigh(A)
    V = rng.normal(size=(200, 6))
    V /= np.linalg.norm(V, axis=0)
    rules, steps = vl._lanczos(op, V.copy(), 30, True, deadline=time.perf_counter() - 1.0)
    assert steps == 2
    weights = (E.T @ V) ** 2
    for q in (0.25, 0.5, 1.0, 1.5):
        exact = weights.T @ vl._f(np.maximum(w, 0.0), q, 0.0)
        gauss = np.array([r[1] @ vl._f(r[0], q, 0.0) for r in rules])
        radau = np.array([r[3] @ vl._f(r[2], q, 0.0) for r in rules])
        tol = 1e-12 * np.abs(exact).max()
        assert np.all(np.minimum(gauss, radau) <= exact + tol), q
        assert np.all(exact <= np.maximum(gauss, radau) + tol), q
        assert np.all(np.abs(gauss - radau) > 1e-9 * np.abs(exact)), q  # not trivially exact


def test_vendi_large_time_budget_gives_the_certified_bracket():
    X = _datasets(300)["clustered"]
    D = pairwise_distances(X)
    h = median_bandwidth([D])
    exact = _exact_vendi(X, h)
    r = vendi_large(X, QS, bandwidth=h, rank=40, time_budget=1e-9)
    assert r.details["steps"] == 0
    kinds = dict(zip(QS.tolist(), r.kind, strict=True))
    assert kinds[2.0] == "exact" and kinds[0.5] == "bounds" and kinds[1.0] == "bounds"
    assert np.all(r.lower <= exact * (1 + 1e-9)) and np.all(r.upper >= exact * (1 - 1e-9))
    # value ± error is the bracket itself: honest without any estimate.
    np.testing.assert_allclose(r.value - r.error, r.lower, rtol=1e-12)
    np.testing.assert_allclose(r.value + r.error, r.upper, rtol=1e-12)
    assert np.all(np.abs(r.value - exact) <= r.error * (1 + 1e-9) + 1e-12 * exact)
    full = vendi_large(X, QS, bandwidth=h, rank=40)
    assert full.details["steps"] > 2 and "bounds" not in full.kind


def test_profiles_large_vendi_claims_its_error_bar_and_honours_the_budget():
    X = _datasets(300)["gaussian"]
    kw = dict(representation="x", distance="euclidean", families=["vendi"], n_points=5)
    ds = dp.profiles({"A": X}, method="large", **kw)["x/euclidean"].to_dataset()
    assert ds.vendi.attrs["method"] == "estimate ± error"
    assert ds.vendi_lower.attrs["method"] == ds.vendi_upper.attrs["method"] == "certified bounds"
    assert "vendi_error" in ds and "covered" in ds.vendi.attrs["method_note"]
    lo, hi, v, e = (ds[k][0].values for k in ("vendi_lower", "vendi_upper", "vendi", "vendi_error"))
    assert np.all(lo <= v) and np.all(v <= hi) and np.all(e <= np.maximum(v - lo, hi - v) + 1e-12)
    spent = dp.profiles({"A": X}, method="large", time_budget=1e-9, **kw)["x/euclidean"]
    spent = spent.to_dataset()
    assert spent.vendi.attrs["method"] == "certified bounds"
    assert "time budget was spent" in spent.vendi.attrs["method_note"]
    lo, hi = spent.vendi_lower[0].values, spent.vendi_upper[0].values
    np.testing.assert_allclose(spent.vendi[0].values, (lo + hi) / 2, rtol=1e-12)


def test_circles_large_time_budget_skips_with_valid_bounds():
    X = _datasets(300)["clustered"]
    D = pairwise_distances(X)
    taus = np.quantile(D[np.triu_indices(300, 1)], [0.002, 0.02, 0.1, 0.3])
    lo_ex, hi_ex = dp.circles(D, taus, method="greedy", return_bounds=True)
    r = circles_large(X, taus, exact_max_component=0, time_budget=1e-9)
    # The first threshold's cover is made, then the budget is spent: nothing is complete.
    assert "skipped" in r.kind and r.upper[0] < 300
    assert np.all(r.lower <= hi_ex) and np.all(r.upper >= lo_ex)
    _check_witnesses(r, D)
    full = circles_large(X, taus, exact_max_component=0)
    assert "skipped" not in full.kind
    assert np.all(full.lower >= r.lower) and np.all(full.upper <= r.upper)


def test_subsample_witnesses_check_only_the_pairs_near_a_threshold():
    # 3,000 samples of d = 768 pairwise apart: recomputing all 4.5 million pairs from their
    # differences would take 27 GB; only pairs within the GEMM error of τ may be.
    from diversity_profiles.large._circles_large import _subsample_witnesses

    X = np.random.default_rng(2).normal(size=(3100, 768))
    out = _subsample_witnesses(X, "euclidean", np.array([0.0, 1.0, 40.0]), range(3), seed=0)
    assert len(out[0]) == len(out[1]) == 3000 and 1 <= len(out[2]) < 3000
    w = out[2]
    D = pairwise_distances(X[w])
    assert np.all(D[np.triu_indices(len(w), 1)] > 40.0)


def test_circles_large_budget_spent_in_the_pair_pass_keeps_subsample_witnesses():
    rng = np.random.default_rng(5)
    X = _clustered(rng, 2300, 3)  # two row blocks: the budget is checked before the second
    D = pairwise_distances(X)
    taus = np.quantile(D[np.triu_indices(len(X), 1)], [0.001, 0.05, 0.5, 0.95])
    _, hi_ex = dp.circles(D, taus, method="greedy", return_bounds=True)
    lo_ex = dp.circles(D, taus, method="greedy", return_bounds=True)[0]
    r = circles_large(X, taus, exact_max_component=0, time_budget=1e-9)
    assert r.n_pairs == 0 and r.kind == ["skipped"] * 4
    assert np.all(r.lower <= hi_ex) and np.all(r.lower > 1)  # more than a single sample
    # the geometric bounds, made first (MIN_CENTRES and the root's split even out of time)
    assert np.all(r.upper >= lo_ex) and r.upper[-1] < len(X)
    _check_witnesses(r, D)


def test_circles_large_stops_a_pair_pass_predicted_to_overrun_its_budget(monkeypatch):
    # 4 rows of 64-sample tiles (10 tiles), each tile slowed to 0.3 s: the first row
    # (4 tiles, 1.2 s) predicts 3 s for the pass, over OVERRUN (1.25) times a 2 s budget,
    # so it stops there instead of running its second row too (2.1 s: the budget is
    # checked before the third). Counted in tiles, not seconds: a slower machine only
    # makes the prediction longer.
    # A small memory_limit keeps only the near pairs: every tile goes through candidates.
    import time

    from diversity_profiles.large import _circles_large as cl

    make, tiles = cl._host_candidates, []

    def slowed(X, distance):
        candidates = make(X, distance)

        def slow(a, b, cap):
            tiles.append((a, b))
            time.sleep(0.3)
            return candidates(a, b, cap)

        slow.precise, slow.whole = candidates.precise, candidates.whole
        return slow

    monkeypatch.setattr(cl, "TILE", 64)
    monkeypatch.setattr(cl, "_host_candidates", slowed)
    X = _clustered(np.random.default_rng(6), 256, 3)
    taus = np.quantile(pairwise_distances(X)[np.triu_indices(256, 1)], [0.001, 0.01])
    r = cl.circles_large(X, taus, exact_max_component=0, time_budget=2.0, memory_limit=1e3)
    assert r.kind == ["skipped"] * 2 and r.n_pairs == 0
    assert len(tiles) == 4  # the first row only
    # A pass predicted to fit its budget runs to the end.
    tiles.clear()
    r = cl.circles_large(X, taus, exact_max_component=0, time_budget=60.0, memory_limit=1e3)
    assert "skipped" not in r.kind and r.n_pairs > 0 and len(tiles) == 10


def test_profiles_large_circles_fills_skipped_thresholds_from_the_pass():
    X = _datasets(300)["clustered"]
    kw = dict(representation="x", distance="euclidean", families=["circles"], n_points=6)
    spent = dp.profiles({"A": X}, method="large", time_budget=1e-9, **kw)["x/euclidean"]
    spent = spent.to_dataset()
    D = pairwise_distances(X)
    lo, hi = dp.circles(D, spent.tau.values, method="exact", return_bounds=True)
    got_lo, got_hi = spent.circles[0].values, spent.circles_upper[0].values
    assert np.all(got_lo <= lo) and np.all(hi <= got_hi)
    assert spent.circles.attrs["method"] == "certified bounds"
    assert "time budget spent" in spent.circles.attrs["method_note"]
    # Caro-Wei beats the single carried sample at the small thresholds.
    assert got_lo.max() > 1


def _hill(lam, q):
    """Hill number of a distribution, straight from the definition."""
    lam = lam[lam > 0]
    if q == 0:
        return float(lam.size)
    if q == 1:
        return math.exp(-float(np.sum(lam * np.log(lam))))
    if np.isinf(q):
        return 1.0 / float(lam.max())
    return float(np.sum(lam**q)) ** (1.0 / (1.0 - q))


def test_vendi_bracket_contains_every_spectrum_in_the_boxes():
    # Brute force: random spectra, boxes drawn around them; the bracket holds for each.
    rng = np.random.default_rng(2)
    for _ in range(200):
        lam = np.sort(rng.dirichlet(np.full(12, rng.uniform(0.1, 3))))[::-1]
        lo = np.sort(lam * rng.uniform(0.5, 1.0, 12))[::-1] * (rng.random(12) < 0.7)
        hi = np.minimum(lam + rng.uniform(0, 0.2, 12), 1.0)
        hi = np.maximum.accumulate(hi[::-1])[::-1]  # caps of sorted entries are sorted
        for q in (0.0, 0.3, 1.0, 2.0, 7.0, np.inf):
            truth = _hill(lam, q)
            a, b = vendi_bracket(lo, hi, q, rank_floor=int(np.count_nonzero(lo)))
            assert a <= truth * (1 + 1e-12) and truth <= b * (1 + 1e-12), (q, a, truth, b)


# --- Circles -----------------------------------------------------------------------------


def _check_witnesses(r, D):
    for k, w in enumerate(r.witness):
        assert len(w) == r.lower[k]
        sub = D[np.ix_(w, w)]
        assert np.all(sub[~np.eye(len(w), dtype=bool)] > r.tau[k])


@pytest.mark.parametrize("name", ["gaussian", "clustered", "duplicates"])
def test_circles_large_brackets_exact(name):
    X = _datasets(160)[name]
    D = pairwise_distances(X)
    off = D[np.triu_indices(len(D), 1)]
    # Thresholds a hair's breadth (1e-9 relative, far below the float32 error) above or
    # below pair distances: edge decisions must be made in float64. (Exactly at a distance
    # the answer hinges on the last bit of how the distance was computed.)
    srt = np.sort(off)
    near = np.array([srt[5] * (1 + 1e-9), srt[400] * (1 - 1e-9), srt[2000] * (1 + 1e-9)])
    # Above the median distance the sweep works on the complement graph.
    taus = np.concatenate([np.quantile(off, [0.002, 0.02, 0.1, 0.3, 0.6, 0.9, 0.99]), near])
    lo_ex, hi_ex = dp.circles(D, taus, method="exact", return_bounds=True)
    assert np.array_equal(lo_ex, hi_ex)
    r = circles_large(X, taus, exact_max_component=0)
    assert np.all(r.lower <= lo_ex) and np.all(r.upper >= lo_ex)
    _check_witnesses(r, D)
    solved = circles_large(X, taus, exact_max_component=200, time_limit=5.0)
    assert np.all(solved.lower <= lo_ex) and np.all(solved.upper >= lo_ex)
    assert np.array_equal(solved.lower[solved.exact], lo_ex[solved.exact])
    assert solved.exact.sum() >= r.exact.sum()
    _check_witnesses(solved, D)


def test_non_adjacent_pair_is_the_first_apart_pair_in_order():
    """Against brute force on the distance matrix: the first (u, w) of the group, u before
    w in its order, farther apart than τ; None when the group is a clique. The scratch
    marks are all cleared again."""
    from diversity_profiles.large._circles_large import _non_adjacent_pair, _threshold_graphs

    rng = np.random.default_rng(8)
    X = rng.uniform(size=(80, 2))
    D = pairwise_distances(X)
    tau = float(np.quantile(D[np.triu_indices(80, 1)], 0.3))
    g, _ = _threshold_graphs(X, "euclidean", np.array([tau]), 10**6)
    scratch = np.zeros(80, dtype=bool)
    for size in (2, 3, 5, 12):
        for _ in range(20):
            group = rng.choice(80, size, replace=False)
            expected = next(
                ((int(u), int(w)) for i, u in enumerate(group) for w in group[i + 1 :]
                 if D[u, w] > tau),
                None,
            )  # fmt: skip
            assert _non_adjacent_pair(g, 0, group, scratch) == expected
            assert _non_adjacent_pair(g, 0, group) == expected
            assert not scratch.any()


def test_swaps_grow_a_greedy_set_to_the_optimum_of_a_star_and_stay_independent():
    """(1,2)-swaps: the centre of a star gives way to two leaves, and the third leaf, left
    with no taken neighbour, is taken (3, the optimum). On random geometric graphs the
    result stays independent and never exceeds the exact optimum (CP-SAT)."""
    from diversity_profiles.large._circles_large import _improved_by_swaps, _threshold_graphs

    star = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    g, _ = _threshold_graphs(star, "euclidean", np.array([1.0]), 10**6)
    chosen = np.array([True, False, False, False])
    got = _improved_by_swaps(g, 0, chosen, np.arange(4))
    assert got.tolist() == [False, True, True, True] and chosen.sum() == 1  # not mutated
    rng = np.random.default_rng(4)
    for trial in range(6):
        D, tau, g = _geometric_graph(rng, 60, 0.05 + 0.05 * trial)
        first = np.zeros(60, dtype=bool)
        for v in rng.permutation(60):  # a random maximal independent set
            if not first[g.neighbours(int(v), 0)].any():
                first[v] = True
        got = _improved_by_swaps(g, 0, first, rng.permutation(60))
        w = np.flatnonzero(got)
        assert np.all(D[np.ix_(w, w)][~np.eye(len(w), dtype=bool)] > tau)
        assert first.sum() <= len(w) <= dp.circles(D, tau, method="exact")


def test_dsatur_far_cover_is_textbook_dsatur_on_the_complement():
    """Against a plain DSATUR written from its definition on the dense complement (next:
    most distinct colours among uncoloured vertices' complement neighbours, then most
    complement neighbours, then the lowest rank; the lowest free colour): the same labels,
    and every colour class a clique of G_τ. Below the median G_τ's rows are read, above it
    the complement's: both readings are checked."""
    from diversity_profiles.large._circles_large import _dsatur_far_cover

    rng = np.random.default_rng(12)
    for quantile in (0.03, 0.2, 0.45, 0.5, 0.6, 0.7, 0.8):
        D, tau, g = _geometric_graph(rng, 90, quantile)
        rank = rng.permutation(90)
        far = D > tau
        label = np.full(90, -1)
        for _ in range(90):
            todo = np.flatnonzero(label < 0)
            keys = [(len(set(label[far[v]]) - {-1}), int(far[v].sum()), -rank[v]) for v in todo]
            v = todo[max(range(len(todo)), key=keys.__getitem__)]
            taken = set(label[far[v]].tolist())
            label[v] = next(c for c in itertools.count() if c not in taken)
        got = _dsatur_far_cover(g, 0, rank)
        assert got.tolist() == label.tolist()
        for c in range(got.max() + 1):
            w = np.flatnonzero(got == c)
            assert not far[np.ix_(w, w)].any()


def test_dsatur_is_skipped_where_the_greedy_set_meets_the_cover(monkeypatch):
    """12 tight clusters far apart, thresholds between their diameter and their distance:
    G_τ is 12 disjoint cliques, Circles is 12 (one point per cluster), and the greedy set
    meets the merged cover at every threshold, so DSATUR, which could not shorten an optimal
    cover, never runs; below the clusters' diameter it does."""
    from diversity_profiles.large import _circles_large as circles_module

    calls = []
    dsatur = circles_module._dsatur_far_cover
    monkeypatch.setattr(circles_module, "_dsatur_far_cover",
                        lambda g, k, rank: calls.append(k) or dsatur(g, k, rank))  # fmt: skip
    rng = np.random.default_rng(4)  # clusters of diameter < √2, 100 apart
    X = np.repeat(np.arange(12)[:, None] * 100.0, 25, axis=0) + rng.uniform(size=(300, 2))
    gap = circles_large(X, [5.0, 20.0, 50.0], exact_max_component=0, progress=False)
    assert gap.lower.tolist() == gap.upper.tolist() == [12, 12, 12]
    assert calls == []
    inside = circles_large(X, [0.2, 0.4, 0.6, 0.8], exact_max_component=0, progress=False)
    assert calls and (inside.lower <= inside.upper).all()


def test_merge_cover_is_first_fit_from_its_definition():
    """Against the first-fit merge written from its definition on the dense adjacency:
    cliques taken biggest first (then by their lowest rank), each joining the biggest placed
    clique it is wholly joined to (the lowest label among equals) or opening a new one, from
    the previous threshold's cover, below and above the median (the complement side)."""
    from diversity_profiles.large._circles_large import _merge_cover, _threshold_graphs

    rng = np.random.default_rng(6)
    X = rng.normal(size=(160, 2)) + rng.integers(0, 6, size=(160, 1)) * 1.5
    D = pairwise_distances(X)
    grid = np.quantile(D[np.triu_indices(160, 1)], [0.02, 0.1, 0.3, 0.6, 0.8, 0.95])
    g, _ = _threshold_graphs(X, "euclidean", grid, 10**6)
    rank = rng.permutation(160)
    cover = np.arange(160)
    for k, tau in enumerate(grid):
        A = D <= tau
        cliques = [np.flatnonzero(cover == c) for c in range(cover.max() + 1)]
        cliques.sort(key=lambda m: (-len(m), rank[m].min()))
        placed: list[list[int]] = []
        for m in cliques:
            joined = [j for j, p in enumerate(placed) if A[np.ix_(m, p)].all()]
            if joined:
                best = max(joined, key=lambda j: (len(placed[j]), -j))
                placed[best] += m.tolist()
            else:
                placed.append(m.tolist())
        expected = np.empty(160, dtype=np.int64)
        for j, p in enumerate(placed):
            expected[p] = j
        cover = _merge_cover(g, k, cover, rank)
        assert cover.tolist() == expected.tolist(), k


def test_threshold_graphs_match_the_dense_adjacency_across_row_blocks():
    from scipy.sparse.csgraph import connected_components

    from diversity_profiles.large._circles_large import _threshold_graphs

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(1500, 3)), 6.0 + rng.normal(size=(1000, 3))])  # 2 tiles
    D = pairwise_distances(X)
    grid = np.quantile(D[np.triu_indices(len(X), 1)], [0.0, 0.01, 0.3, 0.5, 0.8, 1.0])
    g, top = _threshold_graphs(X, "euclidean", grid, 10**8)
    assert top == len(grid) - 1 and g.complete
    below = None
    for k, tau in enumerate(grid):
        A = D <= tau
        np.fill_diagonal(A, False)
        assert g.edges[k] == A.sum() // 2
        assert np.array_equal(g.degrees(k), A.sum(axis=1))
        for v in (0, 1499, 1500, 2047, 2048, 2499):
            assert sorted(g.neighbours(v, k)) == np.flatnonzero(A[v]).tolist()
            far = ~A[v]
            far[v] = False
            assert sorted(g.neighbours_far(v, k)) == np.flatnonzero(far).tolist()
        below = g.components(k, below)
        ncomp, lab = connected_components(A, directed=False)
        assert below[1] == ncomp
        # same partition: each label pairs with exactly one label of the other
        assert len(set(zip(below[0].tolist(), lab.tolist(), strict=True))) == ncomp
        members = np.array([3, 1600, 2100, 2400])
        assert np.array_equal(g.dense(members, k), A[np.ix_(members, members)])


def test_threshold_bins_agree_with_binary_search_and_flag_what_is_near():
    """Against numpy's searchsorted: every sure lookup has the same bin and lies farther
    than the slack from every threshold; distances on or within the slack of a threshold,
    at bucket edges and far beyond the grid are never answered wrongly."""
    from diversity_profiles.large._threshold_bins import ThresholdBins

    rng = np.random.default_rng(21)
    grid = np.sort(rng.uniform(0.5, 3.0, 100))
    slack = 1e-6
    table = ThresholdBins(grid, slack)
    d = np.concatenate([
        rng.uniform(0.0, 4.0, 200_000),
        grid, grid + 0.5 * slack, grid - 0.9 * slack, grid + 1.1 * slack,  # on and near
        np.arange(70_000) * table.width,  # bucket edges
        [0.0, 1e-300, 1e6, 1e300],
    ])  # fmt: skip
    found, unsure = table.lookup(d.reshape(-1, 7) if d.size % 7 == 0 else d)
    found, unsure = found.ravel(), unsure.ravel()
    sure = ~unsure
    assert np.array_equal(found[sure], np.searchsorted(grid, d[sure], side="left"))
    gap = np.abs(d[sure, None] - grid[None, :]).min(axis=1)
    assert gap.min() > slack
    n_grid = len(grid)
    assert unsure[200_000 : 200_000 + 3 * n_grid].all()  # on or within the slack
    assert unsure.mean() < 0.02  # the table answers nearly all of them


def test_threshold_graphs_with_distances_tied_to_thresholds():
    """A lattice with duplicates whose distances equal thresholds exactly (0, 1, √2, 2 …;
    also scaled by 2⁻¹⁰ and shifted by 7, exact in binary, where float64 GEMM cannot
    resolve them): each
    pair is joined exactly from the first threshold at or above its distance, against
    scipy's pairwise distances (from differences: exact here), with and without the
    lookup table."""
    from scipy.spatial.distance import cdist

    from diversity_profiles.large import _circles_large as circles_module

    base = np.stack(np.meshgrid(np.arange(46.0), np.arange(46.0)), -1).reshape(-1, 2)  # 2 tiles
    base = np.vstack([base, base[::40]])  # and duplicates, joined from τ = 0 on
    steps = np.array([0.0, 1.0, np.sqrt(2.0), 2.0, np.sqrt(5.0), 3.0, 5.0])
    for X, grid in ((base, steps), (2.0**-10 * base + 7.0, 2.0**-10 * steps)):
        D = cdist(X, X)
        for table in (True, False):
            if table:
                candidates = circles_module._host_candidates(X, "euclidean")
                assert circles_module._bin_table(X, "euclidean", grid, candidates) is not None
                g, top = circles_module._threshold_graphs(X, "euclidean", grid, 10**8)
            else:
                original = circles_module._bin_table
                circles_module._bin_table = lambda *a: None
                try:
                    g, top = circles_module._threshold_graphs(X, "euclidean", grid, 10**8)
                finally:
                    circles_module._bin_table = original
            assert top == len(grid) - 1 and g.complete
            for k, tau in enumerate(grid):
                A = D <= tau  # ties join
                np.fill_diagonal(A, False)
                assert np.array_equal(g.degrees(k), A.sum(axis=1)), (table, k)


def test_circles_large_memory_cap_keeps_bounds_valid():
    X = _datasets(200)["gaussian"]
    D = pairwise_distances(X)
    taus = np.quantile(D[np.triu_indices(200, 1)], [0.01, 0.05, 0.5, 0.9])
    exact_lo = dp.circles(D, taus, method="greedy", return_bounds=True)
    r = circles_large(X, taus, exact_max_component=0, memory_limit=16 * 2000)
    assert r.tau_cap < taus[-1] and r.n_pairs <= 2000
    assert np.all(r.lower <= exact_lo[1]) and np.all(r.upper >= exact_lo[0])
    assert np.all(np.diff(r.upper) <= 0) and r.lower[-1] >= 1
    # above the cap, witnesses from a subsample (here all 200 samples): more than one
    assert r.lower[taus > r.tau_cap].min() > 1
    _check_witnesses(r, D)


def _separated_clusters(rng, k, size, d, radius=0.1, apart=10.0):
    """``k`` clusters of ``size`` samples within ``radius`` of centres on a simplex's
    vertices ``apart`` from each other: Circles is k for thresholds between 2·radius and
    apart − 2·radius (one sample per cluster; no two of a cluster)."""
    centres = np.eye(k, d) * apart / np.sqrt(2.0)
    u = rng.normal(size=(k * size, d))
    u *= radius * rng.uniform(0, 1, (k * size, 1)) / np.linalg.norm(u, axis=1, keepdims=True)
    return np.repeat(centres, size, axis=0) + u


def _exercise_both_tree_paths(monkeypatch, variant):
    from diversity_profiles.large import _geometric_cover as gc

    monkeypatch.setattr(gc, "EXACT_DIAMETER", 2048 if variant % 2 else 8)
    monkeypatch.setattr(gc, "TOP_DEPTH", 9 if variant % 3 else 2)
    return gc


@pytest.mark.parametrize("variant", range(6))
def test_geometric_bounds_bracket_exact_circles(monkeypatch, variant):
    """Against CP-SAT's exact Circles on small sets (Gaussian, clustered, a lattice with
    duplicates and tied distances), both ways of growing the tree, few and many centres:
    lower ≤ exact ≤ upper at every threshold and every witness pairwise farther than τ."""
    gc = _exercise_both_tree_paths(monkeypatch, variant)
    rng = np.random.default_rng(100 + variant)
    n, d = 40 + 5 * variant, 1 + variant % 4
    X = [
        rng.normal(size=(n, d)),
        _clustered(rng, n, d, k=4, spread=0.05),
        rng.integers(0, 3, (n, d)).astype(float),
    ][variant % 3]
    D = pairwise_distances(X)
    off = D[np.triu_indices(n, 1)]
    taus = np.unique(np.r_[0.0, np.quantile(off[off > 0], np.linspace(0, 1, 11))])
    b = gc.geometric_bounds(X, taus, centres=[3, 1024][variant % 2])
    exact = dp.circles(D, taus, method="exact")
    assert np.all(b.lower <= exact) and np.all(exact <= b.upper)
    _check_witnesses(b, D)


def test_geometric_bounds_are_exact_for_separated_clusters(monkeypatch):
    # Closed form (see _separated_clusters): 5 clusters of 600 in 8-d, radius 0.1, 10 apart.
    gc = _exercise_both_tree_paths(monkeypatch, 1)
    X = _separated_clusters(np.random.default_rng(3), 5, 600, 8)
    b = gc.geometric_bounds(X, np.array([0.25, 1.0, 5.0, 9.5, 20.0]))
    assert b.lower.tolist() == [5, 5, 5, 5, 1]
    assert b.upper.tolist() == [5, 5, 5, 5, 1]


def test_geometric_bounds_use_the_ball_bound_above_root_two_radii():
    """Points on the unit sphere pairwise farther than τ > √2 number at most
    ⌈2/(τ² − 2)⌉ (their pairwise inner products are below 1 − τ²/2 < 0): 4 at τ = 1.6.
    The regular simplex meets the bound: its m vertices lie at R = s·√((m − 1)/(2m)) from
    their centre, and just below s the bound is m."""
    from diversity_profiles.large._geometric_cover import geometric_bounds, in_ball

    rng = np.random.default_rng(8)
    X = rng.normal(size=(75, 30))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = np.vstack([X, -X])  # antipodal pairs: their mean is the centre, their radius 1
    D = pairwise_distances(X)
    taus = np.array([1.5, 1.6, 1.8])
    b = geometric_bounds(X, taus)
    exact = dp.circles(D, taus, method="exact")
    assert np.all(b.lower <= exact) and np.all(exact <= b.upper)
    assert b.upper[1] <= 4 and b.upper[2] == exact[2] == 2  # each pair is 2 apart
    m, s = 7, 3.0
    R2 = s * s * (m - 1) / (2 * m)
    assert in_ball(np.full(m, R2), np.array([0.999 * s, 1.001 * s])).tolist() == [m, m - 1]


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_circles_large_bounds_thresholds_past_its_memory_from_geometry(distance):
    """Pairs within the larger thresholds do not fit ``memory_limit``: before, those
    thresholds carried the cover of the last one that fitted (about n, here) and a
    subsample's witnesses. Now the geometric bounds give the closed form there. Cosine
    thresholds map to Euclidean ones on the unit sphere (1 − cos = |x − y|²/2)."""
    X = _separated_clusters(np.random.default_rng(4), 4, 800, 6, radius=0.05, apart=1.0)
    if distance == "cosine":
        X = X + 3.0 * np.ones(6)  # off the origin: directions, 4 clusters of them
    D = dp.pairwise_distances(X, distance=distance)
    within = max(D[k * 800 : (k + 1) * 800, k * 800 : (k + 1) * 800].max() for k in range(4))
    between = min(
        D[a * 800 : (a + 1) * 800, b * 800 : (b + 1) * 800].min()
        for a in range(4) for b in range(a + 1, 4)
    )  # fmt: skip
    assert within < between
    taus = np.array([0.0, within * 1.01, (within + between) / 2, between * 0.99])
    r = circles_large(X, taus, distance=distance, exact_max_component=0, memory_limit=16 * 5000)
    assert r.tau_cap < taus[1]  # only the smallest threshold's pairs fitted
    assert r.lower[1:].tolist() == [4, 4, 4] and r.upper[2:].tolist() == [4, 4]
    # just above the clusters' diameter the tree may split a cluster (principal direction)
    assert 4 <= r.upper[1] <= 8
    assert r.seconds["geometric"] > 0
    _check_witnesses(r, D)


def test_circles_large_tiny_cases():
    r = circles_large([[0.0], [1.0], [2.0], [3.0]], [0.5, 1.0, 2.0, 3.0])
    assert r.lower.tolist() == [4, 2, 2, 1] and r.exact.all()
    dup = circles_large([[0.0, 1.0]] * 3 + [[5.0, 1.0]], [0.0, 1.0, 10.0])
    assert dup.lower.tolist() == dup.upper.tolist() == [2, 2, 1]
    assert list(itertools.chain(*[w.tolist() for w in dup.witness[:1]])) in ([0, 3], [1, 3], [2, 3])


def test_vendi_large_error_bar_covers_rounding_at_high_orders():
    # At q >= 3 the Ritz values carry the whole sum and the probe error vanishes (1e-43
    # and below was reported), but the value still differs from the dense eigenvalues by
    # float64 rounding (~1e-14): the error bar must cover it. Reference: dense eigvalsh.
    X = np.random.default_rng(21).normal(size=(400, 12))
    D = dp.pairwise_distances(X)
    h = float(np.median(D[np.triu_indices(400, 1)]))
    qs = [3.0, 5.0, 10.0, 46.4, np.inf]
    exact = dp.vendi_score(np.exp(-(D**2) / (2 * h * h)), qs)
    r = vendi_large(X, qs, bandwidth=h, rank=60, probes=10, steps=15)
    assert np.all(np.abs(r.value - exact) <= r.error)
    assert np.all(r.error <= np.maximum(r.value - r.lower, r.upper - r.value))


@pytest.mark.parametrize("memory_limit", [None, 5.0 * 1500**2])
def test_vendi_large_redoes_its_probes_in_float64_and_stays_covered(memory_limit):
    """1,500 points in 3-d: most eigenvalues of K/n lie below the float32 noise, so
    precision="auto" redoes the probes' Lanczos in float64 (the Ritz columns keep float32,
    their unresolved part in the error bar), with K held in float64 (default memory) or
    from float64 tiles at every step (room for the float32 K only). Dense eigvalsh is the
    reference: every order within its error bar."""
    from scipy.spatial.distance import cdist, pdist

    X = np.random.default_rng(1).normal(size=(1500, 3))
    h = float(np.median(pdist(X)))
    qs = np.array([0.25, 0.5, 1.0, 1.5, 2.0, np.inf])
    r = vendi_large(X, qs, bandwidth=h, progress=False, memory_limit=memory_limit)
    assert r.details["precision"] == "double"
    lam = np.linalg.eigvalsh(np.exp(-cdist(X, X, "sqeuclidean") / (2 * h * h)) / len(X))
    lam = lam[lam > 0]
    ref = [np.sum(lam**q) ** (1 / (1 - q)) for q in qs[:2]]
    ref += [np.exp(-np.sum(lam * np.log(lam)))]
    ref += [np.sum(lam**q) ** (1 / (1 - q)) for q in qs[3:5]] + [1 / lam.max()]
    assert np.all(np.abs(r.value - ref) <= r.error + 1e-12 * np.asarray(ref)), (r.value, ref)


def test_vendi_large_pilot_probes_decide_and_the_rest_match_one_batch():
    """precision="auto" runs PILOT_PROBES probes beside the Ritz columns, then the rest:
    where no rerun follows, the values are those of running every probe in one float32
    batch (precision="single") to float32 rounding, and both cover dense eigvalsh. A
    deadline passed during the pilot keeps the pilot's probes alone, consistently."""
    import time

    from scipy.spatial.distance import cdist, pdist

    from diversity_profiles.large import _vendi_large as V

    X = np.random.default_rng(5).normal(size=(1200, 32))  # no mass below the noise
    h = float(np.median(pdist(X)))
    qs = np.array([0.25, 0.5, 1.0, 1.5, 3.0])
    auto = vendi_large(X, qs, bandwidth=h, progress=False)
    single = vendi_large(X, qs, bandwidth=h, precision="single", progress=False)
    assert auto.details["precision"] == "single"
    np.testing.assert_allclose(auto.value, single.value, rtol=1e-5)
    np.testing.assert_allclose(auto.error, single.error, rtol=1e-3)
    lam = np.linalg.eigvalsh(np.exp(-cdist(X, X, "sqeuclidean") / (2 * h * h)) / len(X))
    lam = lam[lam > 1e-300]
    ref = np.array([np.sum(lam**q) ** (1 / (1 - q)) if q != 1 else np.exp(-lam @ np.log(lam))
                    for q in qs])  # fmt: skip
    assert np.all(np.abs(auto.value - ref) <= auto.error), (auto.value, ref)

    # the deadline already passed: two pilot steps, no rest, z2 cut to the pilot
    op, _ = V._operator(X, h, None)
    U = np.linalg.qr(np.random.default_rng(0).normal(size=(1200, 5)))[0]
    theta = np.full(5, 1e-3)
    out = V._deflated_slq(op, U, theta, np.ones(5, dtype=bool), 128, (40, 20), 0, 0.1,
                          ("auto", None), deadline=time.perf_counter() - 1.0)  # fmt: skip
    assert len(out["quad"]) == len(out["z2"]) == V.PILOT_PROBES and len(out["ritz"]) == 5
    assert out["steps"] == 2 and out["precision"] == "single"
