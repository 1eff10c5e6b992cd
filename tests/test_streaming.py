"""The large-n engine: streamed passes against dense float64 references, the planner, routes.

References are independent of the streamed code: dense ``pairwise_distances`` in float64,
exact energies from :func:`dp.energy`, exact magnitudes, Vendi from the dense kernel.
"""

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.engines._distances import prepare_embeddings
from diversity_profiles.engines._histogram import LogDistanceHistogram
from diversity_profiles.engines._streaming import distance_pass, threshold_pass
from diversity_profiles.pipeline import _planning as planning


def _clustered(n, d=16, seed=0, k=8):
    rng = np.random.default_rng(seed)
    centres = 4 * rng.standard_normal((k, d))
    X = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    X[3] = X[5]  # an exact duplicate
    X[7] = X[8] + 1e-7  # a near-duplicate: float32 GEMM alone would get this pair wrong
    return X


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "tanimoto"])
def test_threshold_pass_counts_and_sum_k2_match_dense(distance):
    rng = np.random.default_rng(1)
    n = 700
    X = (rng.random((n, 64)) < 0.2).astype(float) if distance == "tanimoto" else _clustered(n)
    X = prepare_embeddings(X, distance, "test")
    D = dp.pairwise_distances(X, distance)
    d = D[np.triu_indices(n, k=1)]
    # Thresholds between distinct distances, so float32 rounding cannot move a pair across.
    values = np.unique(d)
    wide = np.flatnonzero(np.diff(values) > 1e-9 * values[1:])  # float64 round-off is below
    pick = wide[np.linspace(1, wide.size - 2, 15).astype(int)]
    taus = (values[pick] + values[pick + 1]) / 2
    c = threshold_pass(X, distance, taus, lambda B: np.exp(-(B * B)), block=256)
    assert c.pairs.tolist() == [int((d <= t).sum()) for t in taus]
    deg = np.stack([(D <= t).sum(axis=1) - 1 for t in taus], axis=1)
    assert np.array_equal(c.degrees, deg)
    assert c.sum_k2 == pytest.approx(np.exp(-2 * d**2).sum(), rel=1e-6)


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_distance_pass_energy_bounds_contain_exact_energy(distance):
    X = prepare_embeddings(_clustered(600)[10:], distance, "test")  # no duplicate: finite energy
    D = dp.pairwise_distances(X, distance)
    h = distance_pass(X, distance, block=128)
    n = X.shape[0]
    assert h.n_pairs == n * (n - 1) / 2 and h.n_zero == 0
    assert h.mean_distance() == pytest.approx(D[np.triu_indices(n, k=1)].mean(), rel=1e-12)
    ss = np.geomspace(0.05, 40, 25)
    exact = -np.asarray(dp.energy(D, ss))  # mean of d^-s, dense float64
    lo, hi = h.mean_power_bounds(ss)
    assert np.all(lo <= exact * (1 + 1e-12)) and np.all(exact <= hi * (1 + 1e-12))
    assert np.all((hi - lo) / exact < 1e-3)  # the bins are narrow: the bracket is tight


def test_diagonal_is_skipped_and_duplicates_are_zero():
    X = np.repeat(np.random.default_rng(2).standard_normal((50, 300)) * 100, 2, axis=0)
    h = distance_pass(X, "euclidean", block=32, precision="float32")
    assert h.n_pairs == 100 * 99 / 2
    assert h.n_zero == 50  # exactly the duplicate pairs, none of the self-distances


def _sets(n=300):
    rng = np.random.default_rng(3)
    return {k: _clustered(n, seed=s)[10:] for s, k in enumerate("AB")} | {
        "C": rng.standard_normal((n - 50, 16))
    }


def test_auto_is_exact_and_unchanged_for_small_n():
    sets = _sets(70)
    kw = dict(representation="x", distance="euclidean", n_points=12, bandwidth=3.0)
    auto = dp.profiles(sets, **kw)["x/euclidean"].to_dataset()
    exact = dp.profiles(sets, method="exact", **kw)["x/euclidean"].to_dataset()
    for ds in (auto, exact):
        assert "methods" not in ds.attrs
        assert not [v for v in ds.data_vars if v.endswith("_lower") and "_ci_" not in v]
    auto.attrs.pop("created"), exact.attrs.pop("created")
    assert auto.identical(exact)


def test_forced_large_path_brackets_the_exact_values():
    sets = _sets()
    kw = dict(representation="x", distance="euclidean", n_points=12, bandwidth=3.0)
    ds = dp.profiles(sets, method="large", **kw)["x/euclidean"].to_dataset()
    assert "energy: large" in ds.attrs["methods"]
    # Energy: the certified band holds the dense exact energy on the large path's own grid.
    for k, label in enumerate(sets):
        D = dp.pairwise_distances(sets[label])
        exact = dp.energy(D, ds.s.values)
        assert np.all(ds.energy_lower[k] <= exact + 1e-12 * np.abs(exact))
        assert np.all(exact <= ds.energy_upper[k] + 1e-12 * np.abs(exact))
        assert float(ds.average_distance[k]) == pytest.approx(
            D[np.triu_indices(len(D), k=1)].mean(), rel=1e-12
        )
        # Magnitude: certified bounds around the exact magnitude.
        mag = dp.magnitude(D, ds.t.values)
        assert np.all(ds.magnitude_lower[k] <= mag * (1 + 1e-9))
        assert np.all(mag <= ds.magnitude_upper[k] * (1 + 1e-9))
        # Vendi: exact at q = 2, bracketed elsewhere, with the same bandwidth.
        K = np.exp(-(D**2) / (2 * 3.0**2))
        vendi = dp.vendi_score(K, ds.q.values)
        assert float(ds.vendi.sel(q=2)[k]) == pytest.approx(vendi[list(ds.q.values).index(2)])
        assert np.all(ds.vendi_lower[k] <= vendi * (1 + 1e-6))
        assert np.all(vendi <= ds.vendi_upper[k] * (1 + 1e-6))
        # Circles: certified against the exact solver on the same thresholds.
        lo, hi = dp.circles(D, ds.tau.values, method="greedy", return_bounds=True)
        assert np.all(ds.circles[k] <= hi) and np.all(lo <= ds.circles_upper[k])
    for var in ("energy", "circles"):
        assert ds[var].attrs["method"] == "certified bounds"
    # The iterative modules report an estimate inside certified bounds (checked above).
    for var in ("vendi", "magnitude"):
        assert ds[var].attrs["method"] in ("certified bounds", "estimate ± error")
    # Vendi's bracket is certified at every order even where its value is an SLQ estimate
    # (whose error bar is its own variable); magnitude's lower bound is always certified.
    assert ds.vendi_lower.attrs["method"] == ds.vendi_upper.attrs["method"] == "certified bounds"
    assert "upper bound estimated" not in ds.vendi.attrs["method_note"]
    # Its SLQ error bar covered the exact value in the benchmark sweep: value ± vendi_error.
    assert ds.vendi.attrs["method"] == "estimate ± error" and "vendi_error" in ds
    assert np.all((ds.vendi_lower <= ds.vendi) & (ds.vendi <= ds.vendi_upper))
    assert ds.magnitude_lower.attrs["method"] == "certified bounds"
    assert ds.magnitude_upper.attrs["method"] == ds.magnitude.attrs["method"]
    assert ds.average_distance.attrs["method"] == "exact"


def test_planner_refuses_with_the_plan(monkeypatch):
    # What cannot exist here: a machine with 64 MiB free. Monkeypatched memory reading.
    monkeypatch.setattr(planning, "available_memory_bytes", lambda: 64 * 1024**2)
    X = np.random.default_rng(4).standard_normal((3000, 8))
    with pytest.raises(MemoryError) as err:
        dp.profiles({"A": X}, representation="x", distance="euclidean", method="exact")
    text = str(err.value)
    assert "magnitude: exact" in text and "method='auto' or 'large'" in text
    assert "subsample" in text


def test_refusal_suggests_large_n_only_where_a_family_has_one():
    # Leinster–Cobbold diversity has no large-n method: at 50k the plan is refused (its
    # exact matrices need ~75 GiB), and switching methods must not be offered for it.
    with pytest.raises(MemoryError) as err:
        planning.plan(["similarity_diversity", "magnitude"], [50_000, 50_000], 768,
                      method="exact", available=20e9)  # fmt: skip
    text = str(err.value)
    assert "similarity_diversity: exact (no large-n method)" in text
    assert "use method='auto' or 'large' for 'magnitude'" in text
    assert "'large' for 'similarity_diversity'" not in text
    assert "'similarity_diversity', 'magnitude'" not in text.split("use method")[1].split(";")[0]


def test_planner_routes_by_size():
    routes = planning.plan(["magnitude", "energy", "vendi"], [50_000, 40_000], 768,
                           available=100e9)  # fmt: skip
    assert {f: r.method for f, r in routes.items()} == {
        "magnitude": "large",
        "energy": "large",
        "vendi": "large",
    }
    # The plan counts what the iterative modules hold: float32 Z_t (magnitude) and K
    # (Gaussian Vendi) when 4 n^2 bytes fit the solver's memory, Circles' pairs (16 bytes
    # each) up to it; otherwise they recompute tiles and the plan stays small.
    routes = planning.plan(["magnitude", "vendi", "circles"], [50_000], 768, available=16e9)
    limit = planning.solver_memory(16e9)
    assert 4.0 * 50_000**2 <= limit
    assert routes["magnitude"].nbytes >= 4.0 * 50_000**2
    assert routes["vendi"].nbytes >= 4.0 * 50_000**2
    assert limit <= routes["circles"].nbytes <= 0.8 * 16e9
    # magnitude_large holds the float64 distances beside Z_t (12 n²) where both fit
    held = planning.plan(["magnitude"], [10_000], 768, available=16e9)["magnitude"].nbytes
    assert 12.0 * 10_000**2 <= held < 12.0 * 10_000**2 + 1e9
    small = planning.plan(["magnitude", "vendi"], [50_000], 768, available=8e9)
    assert small["magnitude"].nbytes < 2e9  # X in float64 and float32, its CG blocks
    # no K held, but the float64 rerun's Krylov basis: 128 probes × 40 steps × 8 bytes a
    # point (2.05 GB at 50,000)
    assert 128 * 40 * 8 * 50_000 < small["vendi"].nbytes < 3.5e9
    routes = planning.plan(["vendi"], [50_000], 768, dual_vendi=True, available=100e9)
    assert routes["vendi"].method == "exact"  # cosine Vendi: the d × d dual, any n


def test_bootstrap_with_large_methods_is_refused():
    with pytest.raises(ValueError, match="n_boot"):
        dp.profiles(
            {"A": np.random.default_rng(5).standard_normal((50, 3))},
            representation="x",
            distance="euclidean",
            families="energy",
            method="large",
            n_boot=10,
        )


def test_dual_vendi_matches_dense_kernel():
    X = np.random.default_rng(6).standard_normal((5000, 40)).astype(np.float32)
    Xn = X.astype(np.float64) / np.linalg.norm(X.astype(np.float64), axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(Xn.T @ Xn / len(X))
    lam = lam[lam > 1e-12] / lam[lam > 1e-12].sum()
    qs = [0.5, 1.0, 2.0, np.inf]
    ref = [
        (lam**0.5).sum() ** 2,
        np.exp(-(lam * np.log(lam)).sum()),
        1 / (lam**2).sum(),
        1 / lam.max(),
    ]
    assert dp.vendi_score_dual(X, qs) == pytest.approx(ref, rel=1e-5)
    bad = X.copy()
    bad[4321] = 0
    with pytest.raises(ValueError, match="row 4321"):
        dp.vendi_score_dual(bad)


def test_pooled_histogram_quantiles_across_different_anchors():
    rng = np.random.default_rng(7)
    a, b = rng.random(5000) + 0.5, 40 * (rng.random(5000) + 0.5)  # anchors 2 octaves apart
    ha, hb = LogDistanceHistogram(), LogDistanceHistogram()
    ha.add(a)
    hb.add(b)
    assert ha.anchor != hb.anchor
    pooled = ha.merged([hb])
    probs = np.array([0.05, 0.2, 0.35, 0.65, 0.8, 0.95])  # not in the gap between the two
    ref = np.quantile(np.concatenate([a, b]), probs)
    assert pooled.n_pairs == 10000 and pooled.mean_distance() == pytest.approx(
        np.concatenate([a, b]).mean()
    )
    assert pooled.quantile(probs) == pytest.approx(ref, rel=2e-3)


def test_auto_keeps_exact_where_the_large_method_would_only_bound_loosely():
    # Tanimoto: no iterative module for Vendi, magnitude or Circles, so above their n
    # limits auto stays exact while that fits; energy's streamed bounds are tight anyway.
    fams = ["vendi", "magnitude", "circles", "energy"]
    tanimoto = planning.plan(fams, [5000, 5000], 2048, distance="tanimoto", available=16e9)
    assert {f: r.method for f, r in tanimoto.items()} == {
        "vendi": "exact", "magnitude": "exact", "circles": "exact", "energy": "large",
    }  # fmt: skip
    assert "loosely" in tanimoto["vendi"].why
    # ... up to 2.5 times the exact limit (the exact methods grow as n³); beyond, loose bounds.
    far = planning.plan(fams, [20_000, 20_000], 2048, distance="tanimoto", available=64e9)
    assert all(r.method == "large" for r in far.values())
    euclidean = planning.plan(fams, [5000, 5000], 768, distance="euclidean", available=16e9)
    assert all(r.method == "large" for r in euclidean.values())
    # When exact does not fit, the loose bounds are still better than a refusal.
    short = planning.plan(fams, [5000, 5000], 2048, distance="tanimoto", available=0.6e9)
    assert all(r.method == "large" for r in short.values())


def test_large_circles_with_tanimoto_brackets_the_exact_value():
    # circles_large takes Euclidean/cosine only; Tanimoto (molecules, notebook 06) takes the
    # certified Caro-Wei / edge-count bounds of the threshold pass instead of raising.
    rng = np.random.default_rng(8)
    X = (rng.random((120, 48)) < 0.25).astype(float)
    ds = dp.profiles({"A": X}, representation="fp", distance="tanimoto", families=["circles"],
                     method="large", n_points=8)["fp/tanimoto"].to_dataset()  # fmt: skip
    D = dp.pairwise_distances(X, "tanimoto")
    lo, hi = dp.circles(D, ds.tau.values, method="exact", return_bounds=True)
    assert np.all(ds.circles[0].values <= lo) and np.all(hi <= ds.circles_upper[0].values)
    assert ds.circles.attrs["method"] == "certified bounds"


def test_magnitude_time_budget_returns_certified_bounds_for_the_rest():
    # A budget spent at once: no scale fits it (a scale starts only when its products do),
    # so every scale carries the streamed-pass bounds, which bracket the exact magnitude.
    X = _clustered(150, seed=3)
    kw = dict(representation="x", distance="euclidean", families=["magnitude"], n_points=6)
    ds = dp.profiles({"A": X}, method="large", time_budget=1e-9, **kw)["x/euclidean"]
    ds = ds.to_dataset()
    exact = dp.magnitude(dp.pairwise_distances(X), ds.t.values)
    lo, hi = ds.magnitude_lower[0].values, ds.magnitude_upper[0].values
    assert np.all(lo <= exact * (1 + 1e-9)) and np.all(exact <= hi * (1 + 1e-9))
    assert "time budget spent after 0 of 6 scales" in ds.magnitude.attrs["method_note"]
    assert ds.magnitude.attrs["method"] == "certified bounds"
    assert np.all(hi == len(np.unique(X, axis=0)))  # distinct points above
    full = dp.profiles({"A": X}, method="large", **kw)["x/euclidean"].to_dataset()
    assert "time budget" not in full.magnitude.attrs["method_note"]
    assert np.all(full.magnitude_upper[0] - full.magnitude_lower[0] <= 1e-5 * exact)
