"""Sampling uncertainty on the large-n methods: energy and average distance estimate their
influences on a random subset, scaled to n; findings respect the large-n brackets."""

import numpy as np
import pytest

import diversity_profiles as dp

N = 3000  # above the subset (2,000): the subset path runs
FAMS = ["energy", "average_distance"]


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(3)
    return {"A": rng.normal(size=(N, 8)), "B": rng.normal(size=(N, 8)) * 1.02}


@pytest.fixture(scope="module")
def trees(pair):
    kw = dict(representation="x", distance="euclidean", families=FAMS, n_points=6)
    return {m: dp.profiles(pair, method=m, **kw)["x/euclidean"].ds for m in ("large", "exact")}


def test_subset_standard_errors_match_the_whole_sets(trees):
    """The exact path's influences use all n rows (validated against the spread over
    draws in test_findings.py); the large path's, 2,000 of them scaled to n: within 10%."""
    large, exact = trees["large"], trees["exact"]
    assert large.attrs["methods"].count("large") == 2
    for fam in FAMS:
        assert "random 2,000 samples" in large.attrs[f"uncertainty_{fam}"]
        ratio = large[f"{fam}_boot"].std("draw") / exact[f"{fam}_boot"].std("draw")
        assert np.all(np.abs(ratio.values - 1) < 0.1), (fam, ratio.values)


def test_vendi_and_magnitude_say_they_have_no_uncertainty_on_large_n(pair):
    tree = dp.profiles(
        pair,
        representation="x",
        distance="euclidean",
        families=["vendi", "magnitude"],
        n_points=5,
        method="large",
        time_budget=5,
    )
    attrs = tree["x/euclidean"].attrs
    for fam in ("vendi", "magnitude"):
        assert attrs[f"uncertainty_{fam}"].startswith("none: large-n method")


def test_wide_brackets_take_a_finding_away(trees):
    """Energy's bounds widened to ±50% of the value: the sets can no longer be ordered."""
    ds = trees["large"]
    base = dp.compare(_tree(ds))
    before = base["x/euclidean"].finding.sel(set_a="A", set_b="B", family="average_distance")
    wide = ds.copy()
    e = ds["energy"]
    wide["energy_lower"] = e - 0.5 * abs(e)
    wide["energy_upper"] = e + 0.5 * abs(e)
    after = dp.compare(_tree(wide))["x/euclidean"].finding.sel(set_a="A", set_b="B")
    assert str(after.sel(family="energy").values) in ("not distinguishable", "tied")
    assert str(before.values) == str(after.sel(family="average_distance").values)


def _tree(ds):
    import xarray as xr

    return xr.DataTree.from_dict({"x/euclidean": ds})
