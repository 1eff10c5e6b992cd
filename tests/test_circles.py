"""Circles against independent references: brute force, networkx, and its invariants."""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from diversity_profiles.families._circles import circles, circles_sweep

METHODS = ["exact", "greedy", "auto"]


def lattice_distances(rng, n, d=2, side=4):
    """Points on a small integer grid: duplicates and many tied distances."""
    X = rng.integers(0, side, size=(n, d)).astype(float)
    return cdist(X, X)


def thresholds(D):
    """Every distinct distance (ties land exactly on τ), midpoints, 0 and beyond the max."""
    values = np.unique(D)
    return np.unique(np.r_[0.0, values, (values[:-1] + values[1:]) / 2, values[-1] + 1])


def brute_force(D, tau):
    """Largest subset with all pairwise distances > τ, by enumerating every subset."""
    n = len(D)
    adj = [sum(1 << j for j in range(n) if j != i and D[i, j] <= tau) for i in range(n)]
    best = 0
    for mask in range(1 << n):
        size = mask.bit_count()
        if size > best and all(not (mask >> i & 1) or not (adj[i] & mask) for i in range(n)):
            best = size
    return best


def networkx_mis(D, tau):
    """MIS of G_τ as the maximum clique of its complement (networkx branch and bound)."""
    n = len(D)
    far = (D > tau) & ~np.eye(n, dtype=bool)
    clique, _ = nx.algorithms.clique.max_weight_clique(nx.from_numpy_array(far), weight=None)
    return len(clique)


def paper_greedy(D, tau, rng):
    """#Circles as published: keep a sample unless one already kept lies within τ."""
    kept = []
    for i in rng.permutation(len(D)):
        if all(D[i, j] > tau for j in kept):
            kept.append(i)
    return len(kept)


# --- references -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    D = lattice_distances(rng, n, d=int(rng.integers(1, 4)))
    taus = thresholds(D)
    truth = np.array([brute_force(D, t) for t in taus])
    np.testing.assert_array_equal(circles(D, taus, method="exact"), truth)
    np.testing.assert_array_equal(circles(D, taus, method="auto"), truth)
    lower, upper = circles(D, taus, method="greedy", return_bounds=True)
    assert np.all(lower <= truth) and np.all(truth <= upper)


@pytest.mark.parametrize("seed", range(10))
def test_matches_brute_force_on_non_metric_dissimilarities(seed):
    """Any symmetric dissimilarity defines G_τ; nothing relies on the triangle inequality."""
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(2, 12))
    D = rng.random((n, n)).round(1)
    D = np.triu(D, 1) + np.triu(D, 1).T
    taus = thresholds(D)
    truth = np.array([brute_force(D, t) for t in taus])
    lower, upper = circles(D, taus, method="exact", return_bounds=True)
    np.testing.assert_array_equal(lower, truth)
    np.testing.assert_array_equal(upper, truth)
    lower, upper = circles(D, taus, method="greedy", return_bounds=True, seed=seed)
    assert np.all(lower <= truth) and np.all(truth <= upper)


@pytest.mark.parametrize(("n", "d"), [(40, 2), (50, 3), (60, 5), (60, 2)])
def test_matches_networkx(n, d):
    rng = np.random.default_rng(100 * n + d)
    X = rng.random((n, d))
    D = cdist(X, X)
    taus = np.quantile(D[np.triu_indices(n, 1)], [0.01, 0.03, 0.1, 0.2, 0.4, 0.7, 0.95])
    truth = [networkx_mis(D, t) for t in taus]
    lower, upper = circles(D, taus, method="exact", return_bounds=True)
    np.testing.assert_array_equal(lower, truth)
    np.testing.assert_array_equal(upper, truth)
    lower, upper = circles(D, taus, method="greedy", return_bounds=True)
    assert np.all(lower <= truth) and np.all(np.array(truth) <= upper)


def test_min_degree_greedy_beats_paper_greedy():
    """The min-degree lower bound is no worse in total than the paper's first-fit order."""
    rng = np.random.default_rng(7)
    ours = paper = 0
    for _ in range(4):
        X = rng.random((80, 2))
        D = cdist(X, X)
        taus = np.quantile(D[np.triu_indices(80, 1)], np.linspace(0.01, 0.5, 15))
        exact = circles(D, taus, method="exact")
        lower = circles(D, taus, method="greedy")
        first_fit = np.array([paper_greedy(D, t, rng) for t in taus])
        assert np.all(first_fit <= exact) and np.all(lower <= exact)
        ours, paper = ours + lower.sum(), paper + first_fit.sum()
    assert ours >= paper


# --- invariants -----------------------------------------------------------------------

points = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=9)


@settings(max_examples=40, deadline=None)
@given(points, st.randoms(use_true_random=False))
def test_exact_is_permutation_invariant_and_nonincreasing(pts, random):
    X = np.array(pts, dtype=float)
    D = cdist(X, X)
    taus = thresholds(D)
    perm = np.array(random.sample(range(len(X)), len(X)))
    lower, upper = circles(D, taus, method="exact", return_bounds=True)
    np.testing.assert_array_equal(lower, upper)
    np.testing.assert_array_equal(circles(D[np.ix_(perm, perm)], taus, method="exact"), lower)
    assert np.all(np.diff(lower) <= 0)
    assert lower[0] == len(np.unique(X, axis=0))  # τ = 0 counts distinct points


@settings(max_examples=40, deadline=None)
@given(points, st.integers(0, 2**32 - 1))
def test_greedy_bounds_are_ordered_and_nonincreasing(pts, seed):
    X = np.array(pts, dtype=float)
    D = cdist(X, X)
    taus = thresholds(D)
    lower, upper = circles(D, taus, method="greedy", return_bounds=True, seed=seed)
    assert np.all(lower <= upper)
    assert np.all(np.diff(lower) <= 0) and np.all(np.diff(upper) <= 0)
    assert np.all(lower >= 1) and np.all(upper <= len(X))


def test_bounds_certify_on_larger_sets():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 8))
    D = cdist(X, X)
    taus = np.quantile(D[np.triu_indices(300, 1)], np.linspace(0.01, 0.99, 12))
    lower, upper, exact = circles_sweep(D, taus, method="greedy")
    assert lower.dtype == upper.dtype == np.int64 and isinstance(exact, bool)
    assert np.all(lower <= upper) and np.all(np.diff(lower) <= 0)
    assert exact == bool(np.all(lower == upper))
    # seeded and deterministic
    again = circles_sweep(D, taus, method="greedy")
    np.testing.assert_array_equal(again[0], lower)
    np.testing.assert_array_equal(again[1], upper)


# --- edge cases and return types ------------------------------------------------------


def test_line_example():
    x = np.arange(4.0)
    D = np.abs(x[:, None] - x[None, :])
    for method in METHODS:
        got = circles(D, [0.5, 1.0, 1.5, 2.0, 3.0], method=method, return_bounds=True)
        np.testing.assert_array_equal(got[0], [4, 2, 2, 2, 1])
        np.testing.assert_array_equal(got[1], [4, 2, 2, 2, 1])


@pytest.mark.parametrize("method", METHODS)
def test_one_point_and_duplicates(method):
    assert circles([[0.0]], 0.0, method=method) == 1
    assert circles([[0.0]], [0.0, 5.0], method=method).tolist() == [1, 1]
    assert circles(np.zeros((5, 5)), [0.0, 1.0], method=method).tolist() == [1, 1]
    X = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [3.0]])
    D = cdist(X, X)
    assert circles(D, [0.0, 1.0, 2.0, 3.0], method=method).tolist() == [3, 2, 2, 1]


def test_return_types_and_order():
    X = np.arange(6.0)[:, None]
    D = cdist(X, X)
    value = circles(D, 1.0)
    assert type(value) is int and value == 3
    bounds = circles(D, 1.0, method="greedy", return_bounds=True)
    assert all(type(b) is int for b in bounds)
    taus = [2.5, 0.5, 6.0, 1.0, 0.5]
    got = circles(D, taus)
    assert got.dtype == np.int64
    assert got.tolist() == [2, 6, 1, 3, 6]
    assert circles(D, np.array([[0.5, 1.0], [2.5, 6.0]])).tolist() == [[6, 3], [2, 1]]


def test_time_limit_warns_and_returns_bounds():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 16))
    D = cdist(X, X)
    tau = float(np.quantile(D[np.triu_indices(200, 1)], 0.3))
    with pytest.warns(UserWarning, match="time limit"):
        lower, upper = circles(D, tau, method="exact", time_limit=0.01, return_bounds=True)
    greedy_lower, greedy_upper = circles(D, tau, method="greedy", return_bounds=True)
    assert greedy_lower <= lower <= upper <= greedy_upper


def test_auto_above_exact_size_warns_unless_bounds_requested():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((260, 16))
    D = cdist(X, X)
    tau = float(np.quantile(D[np.triu_indices(260, 1)], 0.3))
    with pytest.warns(UserWarning, match="lower bound"):
        value = circles(D, tau)
    lower, upper = circles(D, tau, return_bounds=True)  # no warning: bounds were asked for
    assert value == lower < upper


def test_missing_ortools_is_explained(monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    D = cdist(np.arange(4.0)[:, None], np.arange(4.0)[:, None])
    with pytest.raises(ImportError, match="pip install ortools"):
        circles(D, 1.0, method="exact")
    assert circles(D, 1.0, method="greedy") == 2


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tau": -1.0}, ValueError, r"'tau' parameter of circles must be in \[0, inf\)"),
        ({"tau": [0.5, np.nan]}, ValueError, "'tau' parameter"),
        ({"tau": np.inf}, ValueError, "'tau' parameter"),
        ({"D": [[0.0, np.nan], [np.nan, 0.0]]}, ValueError, "non-finite"),
        ({"D": np.zeros((2, 3))}, ValueError, "square"),
        ({"D": np.zeros((0, 0))}, ValueError, "at least 1"),
        ({"D": [[0.0, 1.0], [2.0, 0.0]]}, ValueError, "symmetric"),
        ({"D": [[0.0, -1.0], [-1.0, 0.0]]}, ValueError, "non-negative"),
        ({"method": "fast"}, ValueError, "'auto', 'exact', 'greedy'. Got 'fast'"),
        ({"seed": -1}, ValueError, "'seed' argument"),
        ({"seed": 1.5}, ValueError, "'seed' argument"),
        ({"time_limit": 0}, ValueError, "'time_limit' argument"),
        ({"time_limit": "10"}, ValueError, "'time_limit' argument"),
    ],
)
def test_errors_name_the_argument(kwargs, error, match):
    args = {"D": [[0.0, 1.0], [1.0, 0.0]], "tau": 0.5} | kwargs
    D, tau = args.pop("D"), args.pop("tau")
    with pytest.raises(error, match=match):
        circles(D, tau, **args)


def test_threshold_components_and_degrees_match_scipy_and_networkx():
    """graph_at's components (pointer jumping on the single-linkage merges) are fcluster's
    partition at every threshold, and its degrees are the graph's (column_counts)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    from diversity_profiles.families._circles import column_counts, graph_at

    rng = np.random.default_rng(3)
    X = np.round(rng.standard_normal((120, 3)), 1)  # ties: equal distances and merges
    D = cdist(X, X)
    Z = linkage(squareform(D, checks=False), method="single")
    at = graph_at(D)
    for tau in [0.0, *np.quantile(D[np.triu_indices(120, 1)], np.linspace(0, 1, 25))]:
        A, lab, ncomp, _ = at(tau)
        ref = fcluster(Z, tau, criterion="distance")
        assert ncomp == len(set(ref.tolist()))
        assert len(set(zip(ref.tolist(), lab.tolist(), strict=True))) == ncomp  # same partition
        G = nx.from_numpy_array(A.astype(int))
        assert column_counts(A).tolist() == [d for _, d in sorted(G.degree())]
