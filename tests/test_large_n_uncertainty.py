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


def test_magnitude_large_n_jackknife_matches_the_exact_route(pair):
    """On its large-n method magnitude keeps the exact jackknife (on 10 scales, float32
    where accurate enough); the exact route's (on every scale here, float64; checked against
    brute-force leave-one-out and the spread over draws in test_findings.py) is the
    reference: standard errors within 5% at every scale, findings read from them."""
    kw = dict(
        representation="x",
        distance="euclidean",
        families=["magnitude"],
        domains={"magnitude": np.geomspace(0.3, 6.0, 24)},
    )
    large = dp.profiles(pair, method="large", **kw)
    ds = large["x/euclidean"].ds
    exact = dp.profiles(pair, method="exact", **kw)["x/euclidean"].ds
    assert ds.attrs["methods"] == "magnitude: large"
    assert ds.attrs["uncertainty_magnitude"] == "multiplier draws (200)"
    ratio = ds.magnitude_boot.std("draw") / exact.magnitude_boot.std("draw")
    assert np.all(np.abs(ratio.values - 1) < 0.05), ratio.values
    finding = dp.compare(large)["x/euclidean"].finding.sel(set_a="A", set_b="B")
    assert str(finding.sel(family="magnitude").values) != "no uncertainty"


def test_magnitude_above_the_jackknife_size_says_why_it_has_no_band():
    """Above 10,000 samples the jackknife (an n³ factorisation per scale) is not run: that
    set has no band, and the summary's first line says no verdict is supported and why."""
    rng = np.random.default_rng(0)
    sets = {"A": rng.normal(size=(10_001, 2)), "B": rng.normal(size=(300, 2))}
    tree = dp.profiles(
        sets,
        representation="x",
        distance="euclidean",
        families=["magnitude"],
        n_points=5,
        method="large",
        time_budget=2,
    )
    how = tree["x/euclidean"].attrs["uncertainty_magnitude"]
    assert how.startswith("none: large-n method on more than 10,000 samples per set"), how
    summary = tree.dp.summary(markdown=False)
    first = summary.splitlines()[2]
    assert "No verdict is supported" in first and "10,000 samples" in first, first


def test_large_n_vendi_subsample_spread_matches_the_exact_influences(pair):
    """Gaussian Vendi on its large-n method gets replicates of the exact method on 750
    samples (n/4), scaled to n; the exact path's delta-method/jackknife spread at n (checked
    against the spread over independent draws in test_findings.py) is the reference."""
    q = {"vendi": [0.5, 1.0, 2.0, 5.0]}
    kw = dict(representation="x", distance="euclidean", families=["vendi"], domains=q)
    large = dp.profiles(pair, method="large", **kw)["x/euclidean"].ds
    exact = dp.profiles(pair, method="exact", **kw)["x/euclidean"].ds
    assert large.attrs["uncertainty_vendi"] == (
        "subsample replicates (30, exact method on 750 samples)"
    )
    assert large["vendi_boot"].attrs["kind"] == "subsample"
    assert large["large_subsample_size"].values.tolist() == [750, 750]
    # The replicates' spread, centred and scaled to n like compare does (sqrt(m/(n-m)) g).
    m, n = 750, N
    reps = large["vendi_boot"]
    g = (large["vendi"] / reps.mean("subsample")).clip(1, n / m)
    sd_large = np.sqrt(m / (n - m)) * g * reps.std("subsample")
    ratio = sd_large / exact["vendi_boot"].std("draw")
    assert np.all((ratio.values > 0.5) & (ratio.values < 2.0)), ratio.values
    # The bands hold the estimate, and compare reads them: a finding or "not distinguishable".
    assert np.all(large["vendi_ci_lower"] <= large["vendi"])
    assert np.all(large["vendi"] <= large["vendi_ci_upper"])
    finding = dp.compare(dp.profiles(pair, method="large", **kw))["x/euclidean"].finding
    assert str(finding.sel(set_a="A", set_b="B", family="vendi").values) != "no uncertainty"


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


def test_a_subset_that_misses_the_pairs_carrying_the_value_gives_no_band_there():
    """Two sets of one source, one of them with a single near-duplicate pair (as MOSES
    molecules have): at large exponents that pair carries its whole energy. A subset of
    2,000 of 3,000 misses it with probability 5/9, and its influences then give a band
    far too narrow around a value it does not see (the calibration benchmark's molecule
    halves at n = 5,000: 3 false claims in 4 pairs). The check against the whole set's
    value takes the band away at those points, so no finding is claimed; the same sets
    without the pair keep every band (the check does not fire by chance)."""
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(N, 8)), rng.normal(size=(N, 8))
    kw = dict(representation="x", distance="euclidean", families=["energy"], method="large")
    plain = dp.profiles({"A": A, "B": B}, **kw)["x/euclidean"].ds
    assert "no band at" not in plain.attrs["uncertainty_energy"]
    assert np.isfinite(plain.energy_ci_lower.values).all()
    # the pair that the seeded subset of A leaves out, so the failure is certain here
    from diversity_profiles.pipeline import Condition, prepare_sets
    from diversity_profiles.pipeline._resampling import influence_subset

    cond = Condition("x", "euclidean", prepare_sets({"A": A, "B": B}, "euclidean"))
    kept = set(influence_subset(cond, cond.sets[0])[0].tolist())
    i, j = [k for k in range(N) if k not in kept][:2]
    A = A.copy()
    A[j] = A[i] + 1e-3
    tree = dp.profiles({"A": A, "B": B}, **kw)
    ds = tree["x/euclidean"].ds
    assert "no band at" in ds.attrs["uncertainty_energy"]
    lost = ~np.isfinite(ds.energy_ci_lower.sel(set="A").values)
    assert lost.any() and lost[-1]  # the largest exponents, where the pair dominates
    assert float(ds.energy.sel(set="A")[-1]) < 100 * float(ds.energy.sel(set="B")[-1])
    res = dp.compare(tree)["x/euclidean"].sel(set_a="A", set_b="B", family="energy")
    assert str(res.finding.values) == "not distinguishable"
    assert not np.isfinite(float(res.part_side)) if "part_side" in res else True


def test_large_n_circles_takes_the_exact_greedy_on_halves(pair):
    """On its large-n method Circles gets the default's half-samples of the exact method's
    greedy bound (up to CIRCLES_LARGE_HALF_SAMPLE_MAX_N): the very replicates that
    ``method="exact", n_boot=40`` draws (same halves, same bound), read against the
    large-n brackets."""
    kw = dict(
        representation="x", distance="euclidean", families=["circles"],
        domains={"circles": [1.0, 2.0, 2.5, 3.0, 3.5, 4.5]},
    )  # fmt: skip
    large = dp.profiles(pair, method="large", **kw)["x/euclidean"].ds
    exact = dp.profiles(pair, method="exact", n_boot=40, **kw)["x/euclidean"].ds
    assert large.attrs["methods"] == "circles: large"
    how = large.attrs["uncertainty_circles"]
    assert how == "half-sample replicates (40) of its exact method", how
    np.testing.assert_array_equal(large.circles_boot.values, exact.circles_boot.values)
    assert large.circles_ci_lower.attrs["method"] == exact.circles_ci_lower.attrs["method"]
    assert np.all(large.circles_ci_lower.values < large.circles.values)


def test_large_n_circles_band_matches_the_spread_over_draws():
    """The band's standard error against the spread of the large-n value itself over 16
    independent draws (n = 1,500, method="large"): within [0.6, 1.8] of it at every
    threshold that varies. Measured on the default route at n = 6,000: 0.85-1.51 (20 draws,
    d = 16, Euclidean) and 0.71-1.26 (16 draws, d = 64, cosine)."""
    rng0 = np.random.default_rng(5)
    centres = rng0.normal(size=(5, 8)) * 2.5
    taus = [1.2, 2.0, 3.0, 4.5]
    values, sds = [], []
    for r in range(16):
        rng = np.random.default_rng(100 + r)
        X = centres[rng.integers(0, 5, 1500)] + rng.normal(size=(1500, 8))
        auto = r < 4
        ds = dp.profiles(
            {"A": X},
            representation="x",
            distance="euclidean",
            families=["circles"],
            domains={"circles": taus},
            method="large",
            n_boot="auto" if auto else 0,
        )["x/euclidean"].ds
        value = ds.circles.values[0]
        values.append(value)
        if auto:  # the band's own rule: half-sample spread, times g = clip(value / mean, 1, 2)
            boot = ds.circles_boot.values[0]
            g = np.clip(value / boot.mean(axis=0), 1.0, 2.0)
            sds.append(g * boot.std(axis=0, ddof=1))
    truth = np.std(values, axis=0, ddof=1)
    varies = truth > 0.5
    assert varies.sum() >= 3, truth
    ratio = np.array(sds)[:, varies].mean(axis=0) / truth[varies]
    assert np.all((ratio > 0.6) & (ratio < 1.8)), (ratio, truth)


def test_circles_above_its_half_sample_size_on_the_large_method_says_why(pair, monkeypatch):
    """Above ``half_samples_when_large`` Circles has no band on its large-n method, and the
    reason names the size and the remedy that works there (method='exact')."""
    from dataclasses import replace

    from diversity_profiles.pipeline import _registry

    small = replace(_registry.FAMILIES["circles"], half_samples_when_large=2_000)
    monkeypatch.setitem(_registry.FAMILIES, "circles", small)
    tree = dp.profiles(
        pair, representation="x", distance="euclidean", families=["circles"], n_points=5,
        method="large",
    )  # fmt: skip
    how = tree["x/euclidean"].attrs["uncertainty_circles"]
    assert how.startswith("none: large-n method, and the default draws half-samples of its "
                          "exact method only up to 2,000 samples;"), how
    assert "method='exact' with n_boot=40" in how, how
    assert "circles_boot" not in tree["x/euclidean"].ds


def test_large_n_circles_half_samples_beside_vendi_subsamples(pair):
    """Gaussian Vendi's subsample replicates (m = 750) and Circles' half-samples (m = 1,500)
    on their large-n methods in one tree: each family's band is scaled by its own m, and both
    take part in the findings."""
    tree = dp.profiles(
        pair, representation="x", distance="euclidean", families=["vendi", "circles"],
        n_points=6, method="large",
    )  # fmt: skip
    ds = tree["x/euclidean"].ds
    assert ds.attrs["uncertainty_vendi"].startswith("subsample replicates (30")
    assert ds.attrs["uncertainty_circles"].startswith("half-sample replicates (40)")
    assert int(ds.subsample_size.values[0]) == N // 2
    assert int(ds.large_subsample_size.values[0]) == 750
    findings = dp.compare(tree)["x/euclidean"].finding.sel(set_a="A", set_b="B")
    assert "no uncertainty" not in [str(f) for f in findings.values], findings.values
