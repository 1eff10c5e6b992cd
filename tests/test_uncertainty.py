"""Subsampling bands, confident verdicts, subsampling to a common size, and the summary."""

import numpy as np
import pytest

import diversity_profiles as dp

ANISO = np.r_[1, 1, 1, 1, 0.3, 0.3, 0.3, 0.3]


def sets(rng, n_a=120, n_b=120):
    return {"round": rng.standard_normal((n_a, 8)), "flat": rng.standard_normal((n_b, 8)) * ANISO}


@pytest.fixture(scope="module")
def boot_tree():
    rng = np.random.default_rng(0)
    return dp.profiles(
        sets(rng),
        representation="g",
        distance="cosine",
        n_boot=60,
        n_points=15,
        families=["vendi", "energy", "average_distance", "magnitude"],
        seed=3,
    )


def test_bands_bracket_the_estimate_and_are_stored_with_replicates(boot_tree):
    ds = boot_tree["g/cosine"].to_dataset()
    for fam, dim in (
        ("vendi", "q"),
        ("energy", "s"),
        ("average_distance", None),
        ("magnitude", "t"),  # distinct-point families get bands too (no duplicates)
    ):
        est, lo, hi = ds[fam], ds[f"{fam}_ci_lower"], ds[f"{fam}_ci_upper"]
        assert (lo <= est).all() and (est <= hi).all()
        assert ds[f"{fam}_boot"].dims == ("set", "boot", *((dim,) if dim else ()))
        assert ds[f"{fam}_boot"].sizes["boot"] == 60
    assert ds.attrs["n_boot"] == 60 and ds.attrs["ci_method"].startswith("subsampling")
    assert ds.subsample_size.values.tolist() == [60, 60]  # half of 120, without replacement


def test_bootstrap_is_reproducible_from_the_seed():
    rng = np.random.default_rng(1)
    data = sets(rng, 40, 40)
    kw = dict(representation="g", distance="cosine", families=["vendi"], n_boot=10, n_points=8)
    a = dp.profiles(data, seed=5, **kw)["g/cosine"].vendi_boot.values
    b = dp.profiles(data, seed=5, **kw)["g/cosine"].vendi_boot.values
    c = dp.profiles(data, seed=6, **kw)["g/cosine"].vendi_boot.values
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_replicate_equals_the_family_on_a_half_subsample_without_replacement():
    # One replicate recomputed independently: half of the set, no sample twice.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 5))
    tree = dp.profiles(
        {"x": X, "y": X[:20]},
        representation="g",
        distance="cosine",
        families=["vendi", "average_distance", "richness"],
        domains={"vendi": [0.5, 1.0, 2.0]},
        n_boot=3,
        seed=11,
    )
    ds = tree["g/cosine"].to_dataset()
    idx = np.sort(np.random.default_rng([11, 0]).choice(30, 15, replace=False))
    Xr = X[idx] / np.linalg.norm(X[idx], axis=1, keepdims=True)
    K = Xr @ Xr.T
    np.fill_diagonal(K, 1.0)
    assert ds.vendi_boot.sel(set="x").values[0] == pytest.approx(
        dp.vendi_score(K, [0.5, 1.0, 2.0]), rel=1e-9
    )
    D = 1 - Xr @ Xr.T
    assert float(ds.average_distance_boot.sel(set="x")[0]) == pytest.approx(
        D[np.triu_indices(15, 1)].mean(), rel=1e-9
    )
    assert ds.richness_boot.sel(set="x").values.tolist() == [15, 15, 15]  # no duplicates
    # m = n/2 exactly for x (30 -> 15): the rate correction sqrt(m/(n-m)) is 1, so the
    # band is the estimate minus the replicates' centred quantiles (numpy's linear rule).
    reps = ds.average_distance_boot.sel(set="x").values
    est = float(ds.average_distance.sel(set="x"))
    q_lo, q_hi = np.quantile(reps, [0.025, 0.975])
    assert float(ds.average_distance_ci_lower.sel(set="x")) == pytest.approx(
        est - (q_hi - reps.mean()), rel=1e-12
    )
    assert float(ds.average_distance_ci_upper.sel(set="x")) == pytest.approx(
        est - (q_lo - reps.mean()), rel=1e-12
    )


def test_confident_verdicts_separate_real_differences_from_noise(boot_tree):
    res = boot_tree.dp.compare()["g/cosine"]
    assert res.verdict_ci.sel(set_a="round", set_b="flat", family="vendi") == "dominates"
    assert res.verdict_ci.sel(set_a="flat", set_b="round", family="vendi") == "dominated"
    across = res.verdict_ci.sel(set_a="round", set_b="flat").values.tolist()
    assert "no band" not in across  # every family has replicates, magnitude included
    rng = np.random.default_rng(4)
    same = {"a": rng.standard_normal((80, 8)), "b": rng.standard_normal((80, 8))}
    tree = dp.profiles(
        same, representation="g", distance="cosine", families=["vendi"], n_boot=60, n_points=15
    )
    assert tree.dp.compare()["g/cosine"].verdict_ci.sel(set_a="a", set_b="b").item() == "uncertain"


def test_bands_cover_the_truth_at_about_the_stated_rate():
    # What the band promises (resampling.py): E[Vendi at n = 150] of the cosine kernel of
    # N(0, diag(ANISO^2)), the mean over 2000 fresh samples (Monte Carlo sd ~0.1% of it).
    rng = np.random.default_rng(5)
    draws = rng.standard_normal((2000, 150, 8)) * ANISO
    truth = np.mean([dp.vendi_score_dual(x, 1.0) for x in draws])
    covered = 0
    reps = 40
    for rep in range(reps):
        X = {"a": rng.standard_normal((150, 8)) * ANISO, "b": rng.standard_normal((20, 8))}
        ds = dp.profiles(
            X,
            representation="g",
            distance="cosine",
            families=["vendi"],
            domains={"vendi": [1.0]},
            n_boot=100,
            ci=0.9,
            seed=rep,
        )["g/cosine"]
        lo, hi = (
            float(ds.vendi_ci_lower.sel(set="a", q=1.0)),
            float(ds.vendi_ci_upper.sel(set="a", q=1.0)),
        )
        covered += lo <= truth <= hi
    # Nominal 0.9; binomial sd with 40 reps is ~0.05. benchmarks/coverage.py measures it at scale.
    assert 0.75 <= covered / reps <= 1.0


def test_common_n_subsampling_equalises_sizes():
    rng = np.random.default_rng(6)
    data = sets(rng, 200, 50)
    tree = dp.profiles(
        data,
        representation="g",
        distance="cosine",
        common_n="min",
        n_subsamples=8,
        families=["richness", "average_distance", "vendi"],
        n_points=10,
    )
    ds = tree["g/cosine"].to_dataset()
    assert ds.attrs["common_n"] == 50
    assert ds.richness.values.tolist() == [50, 50]  # every subsample has 50 distinct points
    assert float(ds.richness_sd.sel(set="flat")) == 0.0
    # The smaller set is its own only subsample: no spread, the plain value.
    plain = dp.profiles(data, representation="g", distance="cosine", families=["average_distance"])
    assert float(ds.average_distance.sel(set="flat")) == pytest.approx(
        float(plain["g/cosine"].average_distance.sel(set="flat")), rel=1e-12
    )
    assert float(ds.average_distance_sd.sel(set="flat")) == pytest.approx(0.0, abs=1e-12)
    assert float(ds.average_distance_sd.sel(set="round")) > 0
    text = tree.dp.summary()
    assert "mean over 8 subsamples of 50" in text and "Warning" not in text


def test_summary_states_conclusions_with_conditions_and_warns_on_unequal_sizes():
    tree = dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
        representation="line",
        distance="euclidean",
        families=["richness", "average_distance", "circles"],
        domains={"circles": [0.5, 1.5, 2.5, 3.5]},
    )
    text = tree.dp.summary()
    assert text.startswith("### line/euclidean")
    assert "representation `line`, distance `euclidean`" in text
    # Display names in prose (Markdown-escaped where they hold punctuation).
    assert "A ≻ B in richness \\(distinct items\\)" in text
    assert "B ≻ A in average pairwise distance" in text and "average\\_distance" not in text
    assert "A and B cross in number of circles at τ ≈ 1.5" in text
    # The headline first: one sentence per family, the crossing pair in the table.
    assert "- **number of circles**: A and B cross at τ ≈ 1.5" in text
    assert "| A vs B | number of circles (τ ≈ 1.5) | – |" in text
    assert text.index("- **number of circles**") < text.index("Condition: ")
    assert "Warning" in text and "common_n='min'" in text


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_boot=1), r"'n_boot'.*'auto'.*0.*or an int >= 2"),
        (dict(n_boot=10, ci=1.5), r"'ci'.*\(0, 1\)"),
        (dict(common_n=500), r"'common_n'.*\[2, 2\]"),
    ],
)
def test_bad_uncertainty_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dp.profiles(
            {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
            representation="l",
            distance="euclidean",
            families="richness",
            **kwargs,
        )


def test_margins_are_settable_and_checked():
    tree = dp.profiles(
        {"A": [[1.0], [2.0], [3.0]], "B": [[0.0], [4.0]]},
        representation="l",
        distance="euclidean",
        families=["richness", "average_distance", "circles"],
        domains={"circles": [0.5, 1.5, 2.5, 3.5]},
    )
    res = tree.dp.compare(margins=0)["l/euclidean"]
    assert (res.verdict.values == res.verdict_plain.values).all()
    assert res.attrs["margin_circles"] == 0.0 and res.attrs["margin_unit_circles"] == "n"
    # Richness 3 vs 2 is a lead of one sample: within a margin of half of n = 2.
    wide = tree.dp.compare(margins={"richness": 0.5})["l/euclidean"]
    assert str(wide.verdict.sel(set_a="A", set_b="B", family="richness").values) == "tied"
    with pytest.raises(ValueError, match=r"margin of 'richness' .* number >= 0.*Got -1"):
        tree.dp.compare(margins={"richness": -1})
    with pytest.raises(ValueError, match=r"names a family not compared here: 'vendi'"):
        tree.dp.compare(margins={"vendi": 0.1})
    with pytest.raises(ValueError, match=r"'min_share'.*\[0, 1\]"):
        tree.dp.compare(min_share=2)
    with pytest.raises(ValueError, match=r"band"):
        tree.dp.compare(band="sup")
