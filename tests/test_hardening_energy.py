"""Energy on concentrated and on unscaled data (issue 22): exact values where the
profile says exact, certified brackets where it says bounds, and default grids that
float64 can hold. References are independent: distances from exact integer
arithmetic or scipy, power means summed by mpmath at 50 digits."""

import re
import warnings

import mpmath
import numpy as np
import pytest
from scipy.spatial.distance import pdist

import diversity_profiles as dp

mpmath.mp.dps = 50


def _profile(sets, distance, families=("energy",), **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # progress notes of the resampling
        tree = dp.profiles(
            sets, representation="r", distance=distance, families=list(families), **kw
        )
    return tree[f"r/{distance}"].to_dataset()


def _mp_energy(pairs, s) -> mpmath.mpf:
    """-mean d^-s over the given pair distances (mpmath numbers), summed at 50 digits."""
    s = mpmath.mpf(float(s))
    return -mpmath.fsum(d**-s for d in pairs) / len(pairs)


def _rel_err(got, ref) -> float:
    return float(abs((mpmath.mpf(float(got)) - ref) / ref))


def _rademacher_cosine(n=14, d=100_000, seed=22):
    """±1 rows: every dot product is an exact integer, so 1 - cos is known to 50 digits."""
    X = np.random.default_rng(seed).choice([-1.0, 1.0], size=(n, d))
    G = X.astype(np.int64) @ X.T.astype(np.int64)  # exact
    iu = np.triu_indices(n, k=1)
    pairs = [1 - mpmath.mpf(int(g)) / d for g in G[iu]]  # |x|^2 = d exactly
    return X, pairs


@pytest.mark.parametrize("families", [("energy",), ("energy", "vendi")])
def test_exact_energy_on_concentrated_cosine_data_matches_50_digit_sums(families):
    # 14 samples in d = 100,000: cosine distances lie within 1% of 1 and the default grid
    # reaches s in the hundreds, where a histogram bin of log d (6.8e-4 wide) spans s·w ≈ 0.6.
    # ("energy" alone streams the pairs; with vendi the distance matrix is formed.)
    X, pairs = _rademacher_cosine()
    ds = _profile({"a": X}, "cosine", families, n_boot=0)
    s = ds.s.values
    assert s.max() > 300  # the regime of the report (grid up to s ≈ 961 there)
    errors = [
        _rel_err(e, _mp_energy(pairs, si)) for e, si in zip(ds.energy[0].values, s, strict=True)
    ]
    worst = max(errors)
    assert worst < 1e-9, worst  # the README promises 1e-6; it was 1e-4
    assert ds.energy.attrs.get("method", "exact") == "exact"


def test_large_energy_on_concentrated_data_records_bounds_that_hold():
    # The large-n path reads the energy off the histogram: it must say so and bracket the truth.
    X, pairs = _rademacher_cosine(n=30, d=50_000, seed=5)
    ds = _profile({"a": X}, "cosine", method="large", n_boot=0)
    assert ds.energy.attrs["method"] == "certified bounds"
    for k in range(0, ds.s.size, 9):
        ref = _mp_energy(pairs, ds.s.values[k])
        lo, hi = (mpmath.mpf(float(v[0, k])) for v in (ds.energy_lower, ds.energy_upper))
        slack = 1e-12 * abs(ref)  # the float64 distances' own round-off
        assert lo - slack <= ref <= hi + slack
        assert lo <= mpmath.mpf(float(ds.energy.values[0, k])) <= hi


def test_public_energy_is_exact_for_weighted_and_concentrated_pairs():
    X, pairs = _rademacher_cosine(n=10, d=100_000, seed=3)
    D = dp.pairwise_distances(X, "cosine")
    for s in (50.0, 400.0, 2000.0):
        assert _rel_err(dp.energy(D, s), _mp_energy(pairs, s)) < 1e-9


def _unscaled_cases():
    rng = np.random.default_rng(2)
    base = rng.integers(0, 256, size=(1, 12_288))  # raw pixels: one image, noisy copies
    pixels = np.clip(base + rng.integers(-60, 61, size=(50, 12_288)), 0, 255).astype(np.uint8)
    return {
        "uint8 pixels, d = 12,288": pixels,
        "normal * 1e4, d = 768": rng.normal(size=(50, 768)) * 1e4,
        "normal, d = 20,000": rng.normal(size=(50, 20_000)),
    }


@pytest.mark.parametrize("case", list(_unscaled_cases()))
def test_default_energy_grid_on_unscaled_data_is_representable_and_exact(case):
    X = _unscaled_cases()[case]
    ds = _profile({"a": X, "b": X[::-1][:40]}, "euclidean", n_boot=0)
    e = ds.energy.values
    assert np.all(np.isfinite(e)) and np.all(e < 0)
    assert np.all(np.abs(e) >= np.finfo(np.float64).tiny)  # no -0 or subnormal noise
    if X.dtype == np.uint8:  # integer squared distances: exact
        Z = X.astype(np.int64)
        sq = (Z**2).sum(1)
        G = sq[:, None] + sq[None, :] - 2 * Z @ Z.T
        pairs = [mpmath.sqrt(int(g)) for g in G[np.triu_indices(len(X), k=1)]]
    else:
        pairs = [mpmath.mpf(float(v)) for v in pdist(X)]
    s = ds.s.values
    for k in (0, s.size // 2, s.size - 1):
        assert _rel_err(e[0, k], _mp_energy(pairs, s[k])) < 1e-9
    # the grid stops where float64 stops, and says so
    assert "float64" in ds.s.attrs["domain"], ds.s.attrs


def test_user_domain_beyond_float64_is_refused_naming_the_argument():
    X = np.random.default_rng(4).normal(size=(20, 768)) * 1e4
    # distances ~4e5: d^-s of every pair is representable up to s = 708 / log(max d) ≈ 54.7
    safe = r"domains\['energy'\] with s up to 5[45]\.\d+ \(float64 holds d\^-s of every pair"
    with pytest.raises(ValueError, match=safe) as info:
        _profile({"a": X}, "euclidean", domains={"energy": (1.0, 500.0)}, n_boot=0)
    # the fix it names works
    top = float(re.search(r"s up to ([\d.]+)", str(info.value)).group(1))
    ds = _profile({"a": X}, "euclidean", domains={"energy": (1.0, top)}, n_boot=0)
    assert np.all(np.isfinite(ds.energy.values)) and np.all(ds.energy.values < 0)


def test_default_grid_holds_every_subset_categories_included():
    # 30 near-copies of one image (distances ~750) and 10 random images (~1.1e4): the set's
    # energy follows its close pairs, the "random" category's its far ones, 14× farther in
    # d^-s terms at the same s; both must stay representable on the set's default grid.
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, size=(1, 12_288))
    close = np.clip(base + rng.integers(-8, 9, size=(30, 12_288)), 0, 255)
    X = np.vstack([close, rng.integers(0, 256, size=(10, 12_288))]).astype(np.uint8)
    cats = ["copy"] * 30 + ["random"] * 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = dp.profiles(
            {"a": X},
            representation="r",
            distance="euclidean",
            families=["energy"],
            categories={"a": cats},
        )
    s_end = float(tree["r/euclidean"].to_dataset().s.values[-1])
    cat = tree["r/euclidean/categories/set_0"].to_dataset()
    Z = X[30:].astype(np.int64)
    sq = (Z**2).sum(1)
    G = sq[:, None] + sq[None, :] - 2 * Z @ Z.T
    pairs = [mpmath.sqrt(int(g)) for g in G[np.triu_indices(10, k=1)]]
    got = cat.energy.sel(category="random").values[-1]
    assert _rel_err(got, _mp_energy(pairs, s_end)) < 1e-9
