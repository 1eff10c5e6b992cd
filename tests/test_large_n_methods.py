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
from diversity_profiles._spectral_bounds import vendi_bracket
from diversity_profiles.circles_large import circles_large
from diversity_profiles.distances import gaussian_kernel, median_bandwidth, pairwise_distances
from diversity_profiles.magnitude_large import magnitude_large
from diversity_profiles.vendi_large import gaussian_sum_squares, vendi_large


def _clustered(rng, n, d, k=8, spread=0.3):
    centres = rng.normal(size=(k, d)) * 3.0
    return centres[rng.integers(0, k, n)] + spread * rng.normal(size=(n, d))


def _datasets(n=500):
    rng = np.random.default_rng(7)
    gauss = rng.normal(size=(n, 16))
    clustered = _clustered(rng, n, 24)
    with_dups = np.vstack([clustered[: n // 2], clustered[: n // 5]])  # 20% exact duplicates
    return {"gaussian": gauss, "clustered": clustered, "duplicates": with_dups}


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
    from diversity_profiles import _pcg

    builds = []
    build = _pcg.build_preconditioner

    def counted(*args, **kwargs):
        builds.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(_pcg, "build_preconditioner", counted)
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
    from diversity_profiles._blockwise import TILE
    from diversity_profiles._held_distances import distance_matrix_tiled

    rng = np.random.default_rng(5)
    X = rng.normal(size=(TILE + 300, 8))
    X[TILE + 10] = X[3] + 1e-9
    X[TILE + 20] = X[7]
    for distance in ("euclidean", "cosine"):
        Xp = X / np.linalg.norm(X, axis=1, keepdims=True) if distance == "cosine" else X
        D = distance_matrix_tiled(Xp, distance)
        assert np.array_equal(D, D.T) and not np.diagonal(D).any()
        np.testing.assert_allclose(D, pairwise_distances(X, distance), rtol=1e-12, atol=1e-14)
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


def test_vendi_large_without_held_kernel_agrees():
    X = _datasets(200)["clustered"]
    h = median_bandwidth([pairwise_distances(X)])
    held = vendi_large(X, QS, bandwidth=h, rank=50, probes=10, steps=15)
    tiles = vendi_large(X, QS, bandwidth=h, rank=50, probes=10, steps=15, memory_limit=0)
    assert held.details["held"] and not tiles.details["held"]
    np.testing.assert_allclose(tiles.value, held.value, rtol=1e-5)
    with pytest.raises(ValueError, match="'bandwidth' argument of vendi_large"):
        vendi_large(X, 1.0, bandwidth=0.0)


def test_gaussian_sum_squares_is_q2():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(size=(200, 5))] * 2)
    K = gaussian_kernel(pairwise_distances(X), 2.0)
    assert math.isclose(gaussian_sum_squares(X, 2.0), (K**2).sum() / K.shape[0] ** 2, rel_tol=1e-12)


def test_vendi_large_error_bars_cover():
    # Over 20 small datasets and 4 orders, the estimate is within its error bar ≥ 95% of the
    # time (the bar is an estimate: 3 probe standard errors plus the quadrature error).
    rng = np.random.default_rng(11)
    qs = np.array([0.25, 0.5, 1.0, 1.5])
    hits = total = 0
    for k in range(20):
        d = int(rng.integers(4, 40))
        X = _clustered(rng, 300, d, k=int(rng.integers(2, 20))) if k % 2 else rng.normal(
            size=(300, d)
        )  # fmt: skip
        h = median_bandwidth([pairwise_distances(X)]) * float(rng.uniform(0.5, 2.0))
        exact = dp.vendi_score(gaussian_kernel(pairwise_distances(X), h), qs)
        r = vendi_large(X, qs, bandwidth=h, rank=40, probes=20, steps=20, seed=k)
        hits += int(np.sum(np.abs(r.value - exact) <= r.error))
        total += len(qs)
        assert np.all(r.lower <= exact * (1 + 1e-9)) and np.all(r.upper >= exact * (1 - 1e-9))
    assert hits / total >= 0.95, f"coverage {hits}/{total}"


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
    taus = np.concatenate([np.quantile(off, [0.002, 0.02, 0.1, 0.3]), near])
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


def test_circles_large_memory_cap_keeps_bounds_valid():
    X = _datasets(200)["gaussian"]
    D = pairwise_distances(X)
    taus = np.quantile(D[np.triu_indices(200, 1)], [0.01, 0.05, 0.5, 0.9])
    exact_lo = dp.circles(D, taus, method="greedy", return_bounds=True)
    r = circles_large(X, taus, exact_max_component=0, memory_limit=16 * 2000)
    assert r.tau_cap < taus[-1] and r.n_pairs <= 2000
    assert np.all(r.lower <= exact_lo[1]) and np.all(r.upper >= exact_lo[0])
    assert np.all(np.diff(r.upper) <= 0) and r.lower[-1] >= 1
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
