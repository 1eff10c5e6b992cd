"""Circles between its exact solver and its large-n method (250 < n <= 4,000): greedy
bounds, half-sample bands by default, and verdicts that respect the bounds."""

from __future__ import annotations

import numpy as np
import pytest

import diversity_profiles as dp

N = 300  # above Circles' exact solver (250): greedy lower bound and clique-cover upper


def clusters(k: int, n: int, seed: int) -> np.ndarray:
    """n points in k tight clusters (sd 0.3 in 12-d) whose centres are 10√2 ≈ 14.1 apart."""
    rng = np.random.default_rng(seed)
    return 10.0 * np.eye(12)[rng.integers(k, size=n)] + 0.3 * rng.standard_normal((n, 12))


def cluster_gap(X: np.ndarray) -> tuple[float, float]:
    """(largest distance within a cluster, smallest between two): for τ in between, the
    most circles pairwise > τ apart are one per cluster."""
    from scipy.spatial.distance import cdist

    D = cdist(X, X)
    same = cdist(np.round(X / 10.0), np.round(X / 10.0)) == 0
    return float(D[same].max()), float(D[~same].min())


def _profile(sets, **kw):
    return dp.profiles(sets, representation="x", distance="euclidean", families=["circles"], **kw)


@pytest.fixture(scope="module")
def different():
    # An explicit grid: quantiles of the distances would jump over the clusters' gap.
    taus = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.5, 5.0, 7.5, 10.0, 12.0, 16.0]
    return _profile(
        {"ten": clusters(10, N, 1), "three": clusters(3, N, 2)}, domains={"circles": taus}
    )


def test_default_circles_get_half_sample_bands_and_say_they_are_bounds(different):
    ds = different["x/euclidean"].ds
    assert ds.attrs["uncertainty_circles"] == "half-sample replicates (40)"
    assert ds["circles_boot"].attrs["kind"] == "half-sample"
    assert ds["subsample_size"].values.tolist() == [N // 2, N // 2]
    # Greedy leaves gaps at small thresholds: the values are bounds, and say so.
    assert (ds.circles < ds.circles_upper).any()
    assert ds.circles.attrs["method"] == "certified bounds"
    # Between the clusters' spread (pairs within a cluster are < 3 apart) and the distance
    # between centres (14.1), the answer is the number of clusters, bounds closed.
    for k, label, seed in ((10, "ten", 1), (3, "three", 2)):
        within, between = cluster_gap(clusters(k, N, seed))
        gap = (ds.tau > within) & (ds.tau < between)
        assert gap.sum() > 0
        at = ds.sel(set=label).where(gap, drop=True)
        assert at.circles.values.tolist() == [k] * int(gap.sum())
        assert at.circles_upper.values.tolist() == [k] * int(gap.sum())


def test_a_difference_the_bounds_and_bands_support_is_a_finding(different):
    res = dp.compare(different)["x/euclidean"]
    pair = dict(set_a="ten", set_b="three", family="circles")
    assert res.attrs["method_circles"] == "certified bounds"
    assert str(res.finding.sel(**pair).values) == "dominates"


def test_same_source_sets_are_not_a_finding():
    tree = _profile({"a": clusters(10, N, 3), "b": clusters(10, N, 4)})
    res = dp.compare(tree)["x/euclidean"]
    pair = dict(set_a="a", set_b="b", family="circles")
    assert str(res.finding.sel(**pair).values) in {"not distinguishable", "tied"}


def test_circles_bands_stop_where_its_large_n_method_starts():
    from diversity_profiles.pipeline import FAMILIES
    from diversity_profiles.pipeline._profiles import AUTO_HALF_SAMPLE_MAX_N

    assert AUTO_HALF_SAMPLE_MAX_N == FAMILIES["circles"].cost.auto_exact_max_n


def test_large_n_subsamples_and_half_samples_keep_their_own_sizes():
    """Vendi on its large-n method (subsamples of n/4) beside richness' half-samples (n/2):
    each kind keeps its replicate dimension and sizes, and compare scales each by its own."""
    rng = np.random.default_rng(5)
    sets = {"a": rng.standard_normal((160, 4)), "b": 0.5 * rng.standard_normal((160, 4))}
    tree = dp.profiles(
        sets,
        representation="x",
        distance="euclidean",
        families=["vendi", "richness"],
        method="large",
    )
    ds = tree["x/euclidean"].ds
    assert ds["vendi_boot"].attrs["kind"] == "subsample"
    assert ds["richness_boot"].attrs["kind"] == "half-sample"
    assert ds["large_subsample_size"].values.tolist() == [40, 40]
    assert ds["subsample_size"].values.tolist() == [80, 80]
    assert ds.sizes["subsample"] == 30 and ds.sizes["boot"] == 40
    from diversity_profiles.pipeline import replicate_sizes

    assert replicate_sizes(ds, "vendi").tolist() == [40.0, 40.0]
    assert replicate_sizes(ds, "richness").tolist() == [80.0, 80.0]
    # Vendi of a narrower cloud is no lower (the Gaussian kernel's bandwidth is shared):
    # the wide set leads by far more than any noise, found at the large-n scale.
    res = dp.compare(tree)["x/euclidean"]
    assert str(res.finding.sel(set_a="a", set_b="b", family="vendi").values) == "dominates"
