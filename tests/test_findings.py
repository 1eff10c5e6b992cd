"""The default uncertainty and the findings it supports (issue #21).

Each influence is checked against an independent computation: a numerical derivative of the
weighted plug-in (Vendi), the direct row means of the kernel (energy, average distance),
brute-force leave-one-out magnitudes. The findings are checked for their error rate on pairs
drawn from one distribution, their power on pairs that differ, and ``n_needed`` against
repeated draws at the size it names.
"""

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as rule
from diversity_profiles.comparison import _wording as wording
from diversity_profiles.families import (
    average_distance_influence,
    clean_spectrum,
    dual_eigen_shares,
    energy,
    energy_influence,
    kernel_eigen_shares,
    magnitude,
    magnitude_jackknife,
    spectrum_of_kernel,
    vendi_from_spectrum,
    vendi_log_influence,
)
from diversity_profiles.pipeline import multiplier_replicates

QS = np.array([0.5, 1.0, 2.0, 3.5, np.inf])


def _weighted_log_vendi(K, p, qs):
    lam = clean_spectrum(spectrum_of_kernel(K, p), "test", K.shape[0])
    return np.log(vendi_from_spectrum(lam, qs))


def _gaussian_kernel(X):
    D = cdist(X, X)
    return np.exp(-((D / np.median(D[D > 0])) ** 2))


def test_vendi_influence_is_the_derivative_of_the_weighted_score():
    """d/dε log VS at weights (1 - ε)/n + ε δ_i, by central differences, for every sample."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    K = _gaussian_kernel(X)
    n = len(X)
    lam, shares = kernel_eigen_shares(K, "test")
    got = vendi_log_influence(lam, shares, QS)
    eps = 1e-6
    for i in range(n):
        bump = np.zeros(n)
        bump[i] = 1.0
        up = _weighted_log_vendi(K, (1 - eps) / n + eps * bump, QS)
        down = _weighted_log_vendi(K, (1 + eps) / n - eps * bump, QS)
        np.testing.assert_allclose(got[i], (up - down) / (2 * eps), rtol=1e-4, atol=1e-6)


def test_dual_shares_match_the_kernel_shares():
    """For unit rows, the d × d covariance gives the n × n kernel's influences."""
    X = np.random.default_rng(1).normal(size=(40, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    from_kernel = vendi_log_influence(*kernel_eigen_shares(X @ X.T, "test"), QS)
    from_dual = vendi_log_influence(*dual_eigen_shares(X), QS)
    np.testing.assert_allclose(from_dual, from_kernel, rtol=1e-8, atol=1e-10)


def test_vendi_influence_at_q0_is_undefined():
    lam, shares = np.array([0.5, 0.5]), np.eye(2)
    assert np.isnan(vendi_log_influence(lam, shares, np.array([0.0]))).all()


@pytest.mark.parametrize("s", [0.5, 3.0, 400.0])
def test_energy_influence_is_the_hoeffding_projection(s):
    """2 (r_i - E) with r_i the mean of -d^-s over i's pairs, summed directly; at s = 400
    the direct sum is done on distances rescaled so it stays representable."""
    X = np.random.default_rng(2).normal(size=(25, 4))
    D = cdist(X, X)
    D = D / D[D > 0].min() if s > 100 else D  # d >= 1: d^-400 underflows gracefully
    n = len(D)
    with np.errstate(divide="ignore"):
        kernel = -np.where(np.eye(n, dtype=bool), 0.0, D ** (-s))
    rows = kernel.sum(axis=1) / (n - 1)
    e = energy(D, s)
    got = energy_influence(D, np.array([s]))[:, 0]
    np.testing.assert_allclose(got, 2 * (rows - e), rtol=1e-9, atol=1e-300)


def test_average_distance_influence():
    D = cdist(*[np.random.default_rng(3).normal(size=(20, 3))] * 2)
    rows = D.sum(axis=1) / 19
    np.testing.assert_allclose(average_distance_influence(rows), 2 * (rows - D.sum() / 380))


def test_magnitude_jackknife_matches_brute_force_leave_one_out():
    X = np.random.default_rng(4).normal(size=(15, 2))
    D = cdist(X, X)
    ts = np.array([0.3, 1.0, 4.0])
    n = len(D)
    loo = np.array(
        [[magnitude(np.delete(np.delete(D, i, 0), i, 1), t) for t in ts] for i in range(n)]
    )
    want = np.sqrt(n * (n - 1.0)) * (loo.mean(axis=0) - loo)
    np.testing.assert_allclose(magnitude_jackknife(D, ts), want, rtol=1e-8, atol=1e-10)


def test_magnitude_jackknife_in_float32_gives_the_float64_standard_errors():
    """The large-n route factorises in float32 where LAPACK's condition estimate allows:
    at every scale the influences agree with the float64 ones (checked against brute-force
    leave-one-out above) to 1e-3 of their spread, and at the smallest scale, where Z_t is too
    ill-conditioned for float32, both are the float64 values."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(5, 16))[rng.integers(0, 5, 700)] * 2 + rng.normal(size=(700, 16))
    D = cdist(X, X)
    ts = np.concatenate([[1e-4], np.geomspace(0.05, 2.0, 6)])
    h64 = magnitude_jackknife(D, ts)
    h32 = magnitude_jackknife(D, ts, precision="auto")
    spread = np.sqrt(np.mean(h64**2, axis=0))
    assert np.all(np.isfinite(h64[:, 1:]))
    np.testing.assert_array_less(np.abs(h32 - h64).max(axis=0), 1e-3 * spread)
    assert not np.array_equal(h32[:, -1], h64[:, -1])  # float32 did run at a large scale
    np.testing.assert_array_equal(h32[:, 0], h64[:, 0])  # and not at t = 1e-4


def test_magnitude_influences_interpolate_in_proportion_to_the_variance_shape():
    """The large-n route computes the jackknife on 10 scales (7 above 5,000 samples): divided
    by (Mag - 1)(n - Mag)/n and interpolated in log t, the influences' standard error stays
    within 3% of the jackknife computed at every one of 40 scales."""
    from diversity_profiles.pipeline._registry import _on_subgrid

    rng = np.random.default_rng(7)
    X = rng.normal(size=(5, 32))[rng.integers(0, 5, 600)] * 3 + rng.normal(size=(600, 32))
    D = cdist(X, X)
    ts = np.geomspace(0.12, 1.5, 40)
    full = magnitude_jackknife(D, ts)
    mag = magnitude(D, ts)
    n = len(D)
    shape = (mag - 1) * (n - mag) / n
    for points in (10, 7):  # 7 above MAGNITUDE_FEWER_INFLUENCE_N samples
        got = _on_subgrid(lambda sub: magnitude_jackknife(D, sub), ts, points, shape)
        ratio = got.std(axis=0) / full.std(axis=0)
        assert np.all(np.abs(ratio - 1) < 0.03), (points, ratio)


def test_multiplier_draws_have_the_influence_standard_error():
    h = np.random.default_rng(5).normal(size=(300, 2)) * [1.0, 3.0]
    reps = multiplier_replicates({"v": np.zeros((1, 2))}, {"v": [h]}, 4000, 0)["v"][0]
    centred = h - h.mean(axis=0)
    want = np.sqrt((centred**2).sum(axis=0)) / 300
    np.testing.assert_allclose(reps.std(axis=0), want, rtol=0.05)


def test_influence_standard_errors_match_the_spread_over_draws():
    """Over 150 draws of 150 points, the mean standard error from the influences is within
    15% of the standard deviation of the estimates (energy, average distance, magnitude
    within 10%; Vendi at q >= 1 within 15%)."""
    centers = np.random.default_rng(0).normal(size=(4, 8)) * 1.5
    ts, ss, qs = np.array([0.3, 1.0]), np.array([1.0, 4.0]), np.array([1.0, 2.0, np.inf])
    values, errors = {k: [] for k in "vema"}, {k: [] for k in "vema"}
    for r in range(150):
        rng = np.random.default_rng(100 + r)
        X = centers[rng.integers(0, 4, 150)] + rng.normal(size=(150, 8))
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        D = cdist(X, X) / 4
        lam, shares = dual_eigen_shares(U)
        v = vendi_from_spectrum(lam / lam.sum(), qs)
        hv = v * vendi_log_influence(lam, shares, qs)
        rows = D.sum(axis=1) / 149
        for key, est, h in (
            ("v", v, hv),
            ("e", energy(D, ss), energy_influence(D, ss)),
            ("m", magnitude(D, ts), magnitude_jackknife(D, ts)),
            ("a", np.array([rows.mean()]), average_distance_influence(rows)[:, None]),
        ):
            values[key].append(est)
            errors[key].append(np.sqrt((h**2).sum(axis=0)) / 150)
    for key, tol in (("v", 0.15), ("e", 0.1), ("m", 0.1), ("a", 0.1)):
        ratio = np.mean(errors[key], axis=0) / np.std(values[key], axis=0, ddof=1)
        assert np.all(np.abs(ratio - 1) < tol), (key, ratio)


def _pair(rng, n, scale_b=1.0, d=8):
    return {"A": rng.normal(size=(n, d)), "B": rng.normal(size=(n, d)) * scale_b}


CHEAP = ["vendi", "energy", "average_distance"]


def test_default_profiles_carry_uncertainty_and_say_how():
    tree = dp.profiles(_pair(np.random.default_rng(0), 60), representation="x", distance="cosine")
    node = tree["x/cosine"]
    assert node.attrs["n_boot"] == "auto"
    assert node.attrs["uncertainty_vendi"].startswith("multiplier draws")
    assert node["vendi_boot"].attrs["kind"] == "multiplier"
    assert node["vendi_boot"].dims == ("set", "draw", "q")


def test_findings_on_pairs_from_one_distribution_claim_nothing_at_the_nominal_rate():
    """40 same-distribution pairs at n = 80 (fixed seeds): at most 2 with any claimed
    difference (the family-wise level is 5%; 2/40 leaves room for sampling)."""
    claims = 0
    for r in range(40):
        sets = _pair(np.random.default_rng(1000 + r), 80)
        tree = dp.profiles(sets, representation="x", distance="euclidean", families=CHEAP)
        res = dp.compare(tree)["x/euclidean"].sel(set_a="A", set_b="B")
        on_part = bool(np.isfinite(res.part_side.values).any())  # step 9's claims count too
        claims += (
            any(f in ("dominates", "dominated", "crosses") for f in res.finding.values) or on_part
        )
    assert claims <= 2


def test_findings_detect_a_real_difference():
    """B's scale 1.3 × A's: average distance and energy find B ahead in every draw."""
    for r in range(5):
        sets = _pair(np.random.default_rng(2000 + r), 150, scale_b=1.3)
        tree = dp.profiles(sets, representation="x", distance="euclidean", families=CHEAP)
        res = dp.compare(tree)["x/euclidean"]
        found = dict(
            zip(res.family.values, res.finding.sel(set_a="A", set_b="B").values, strict=True)
        )
        assert found["average_distance"] == "dominated"


def test_without_uncertainty_no_verdict_is_supported():
    sets = _pair(np.random.default_rng(0), 40, scale_b=2.0)
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=CHEAP, n_boot=0)
    res = dp.compare(tree)
    assert set(res["x/euclidean"].finding.sel(set_a="A", set_b="B").values) == {"no uncertainty"}
    text = res.dp.summary()
    first = text.splitlines()[2]
    assert first.startswith("**No verdict is supported**") and "n\\_boot=0" in first


def test_n_needed_names_a_size_that_resolves_the_lead():
    """A 3% scale difference (average distance 3% larger): not distinguishable at n = 100.
    Read at a draw whose lead is near the true one (from 4,000 samples per set), n_needed
    is a size at which about half of fresh draws find the lead — the size where the
    expected lead just meets the family-wise noise — and a quarter of it finds it rarely."""

    def average_distance_finding(n, seed):
        sets = _pair(np.random.default_rng(seed), n, scale_b=1.03)
        tree = dp.profiles(
            sets, representation="x", distance="euclidean", families=["average_distance"]
        )
        return dp.compare(tree)["x/euclidean"].sel(set_a="B", set_b="A", family="average_distance")

    big = _pair(np.random.default_rng(1), 4000, scale_b=1.03)
    true_lead = 1 - np.mean(cdist(big["A"][:2000], big["A"][2000:])) / np.mean(
        cdist(big["B"][:2000], big["B"][2000:])
    )
    small = [average_distance_finding(100, 3000 + r) for r in range(12)]
    open_ = [r for r in small if str(r.finding.values) == "not distinguishable"]
    assert len(open_) >= 9  # at n = 100 the lead is mostly below the noise
    # At the true effect size, with the noise the small draws measure: the size they imply.
    noise = float(np.nanmedian([float(r.noise_at) for r in small]))
    need = int(100 * (noise / (true_lead - 0.01)) ** 2)
    reported = [float(r.n_needed) for r in open_ if np.isfinite(float(r.n_needed))]
    assert need / 3 < np.median(reported) < 3 * need, (need, reported)
    at_need = [str(average_distance_finding(need, 4000 + r).finding.values) for r in range(12)]
    at_quarter = [
        str(average_distance_finding(max(need // 4, 20), 5000 + r).finding.values)
        for r in range(12)
    ]
    hit, hit_quarter = at_need.count("dominates"), at_quarter.count("dominates")
    assert 3 <= hit <= 10, (need, at_need)
    assert hit_quarter <= 3, (need, at_quarter)


def test_samples_needed_is_none_when_the_other_side_also_leads():
    d = np.array([0.1, 0.1, -0.1, -0.1])
    sd = np.full(4, 0.05)
    need, at, side = rule.samples_needed(d, sd, 3.0, np.zeros(4), 100, 0.05)
    assert np.isnan(need) and at == -1 and np.isnan(side)


def test_samples_needed_names_the_leader_where_the_binding_point_is_level():
    # A leads by 1 on three points and is level on the fourth. With a margin of 0.25 the
    # level point binds: the band there (2 × 0.5 / sqrt(n/100)) must fall under the 0.25
    # margin, n = 100 (2 × 0.5 / 0.25)^2 = 1,600 (the lead points need 100 (1 / 0.75)^2);
    # the leader is still A, not "whoever is ahead at the binding point" (nobody).
    d = np.array([1.0, 1.0, 1.0, 0.0])
    need, at, side = rule.samples_needed(d, np.full(4, 0.5), 2.0, np.full(4, 0.25), 100, 0.05)
    assert (need, at, side) == (1600.0, 3, 1.0)
    reading = wording.Reading(
        "vendi",
        "dominates",
        symbol="q",
        finding="not distinguishable",
        n_needed=need,
        needed_at=4.0,
        lead_at=0.0,
        noise_at=0.05,
        lead_side=side,
    )
    note = wording.needed_note("A", "B", [reading])
    assert note == (
        "not yet supported — vendi: A leads elsewhere; level at q ≈ 4 (noise ±5%); about "
        "1,600 samples per set would resolve it"
    )
    behind = wording.needed_note("A", "B", [replace(reading, lead_at=-0.002)])
    assert "vendi: A leads elsewhere; B ahead by 0.2% at q ≈ 4" in behind


def _share(q, mask):
    """Step 4's share of a log axis on which ``mask`` holds."""
    ind = mask.astype(np.int8)
    return rule.share_ahead(q, ind.astype(float), np.zeros(q.size), ind, "log", False)


def test_finding_parts_are_the_runs_where_the_band_clears_the_margin():
    """Step 9 against a direct reading of the band d ± z sd: the runs of grid points whose
    lower end clears the margin, only when that side holds on min_share of the domain and
    the other side does not; mirrored pairs give the mirrored side."""
    rng = np.random.default_rng(3)
    q = np.geomspace(0.01, 100, 41)
    for _ in range(200):
        d = rng.normal(0, 0.1, q.size) + rng.choice([0.0, 0.2]) * (q > rng.choice(q))
        sd, z, m = np.full(q.size, 0.04), 2.5, np.full(q.size, 0.01)
        side, parts = rule.finding_parts(q, d, sd, z, m, "log", False)
        ahead, behind = d - z * sd > m, d + z * sd < -m
        a_holds = ahead.any() and _share(q, ahead) >= rule.MIN_SHARE
        b_holds = behind.any() and _share(q, behind) >= rule.MIN_SHARE
        if a_holds == b_holds:
            assert np.isnan(side) and parts == []
            continue
        mask = ahead if a_holds else behind
        want, k = [], 0
        while k < q.size:  # runs, by walking the mask
            if mask[k]:
                first = k
                while k + 1 < q.size and mask[k + 1]:
                    k += 1
                want.append((q[first], q[k]))
            k += 1
        assert side == (1.0 if a_holds else -1.0) and parts == want
        mirrored = rule.finding_parts(q, -d, sd, z, m, "log", False)
        assert mirrored == (-side, want)


@pytest.fixture(scope="module")
def digits_compared():
    from diversity_profiles.demo import digit_sets

    sets = digit_sets(150)
    tree = dp.profiles(
        {k: sets[k] for k in ("1 class", "10 classes")}, representation="pixels",
        distance="euclidean", families=["vendi"],
    )  # fmt: skip
    return tree, dp.compare(tree)


def test_a_lead_hidden_by_converging_curves_is_a_finding_on_part_of_the_domain(digits_compared):
    """Digits of 10 classes against 1 class (150 each): every Gaussian-kernel Vendi score
    tends to n as q -> 0, so the curves meet there and the whole domain is not
    distinguishable; the band orders the pair for q >= ~0.05 (step 9). Narrowing compare to
    that part gives a dominance there: the part is a finding on its own."""
    tree, res = digits_compared
    node = res["pixels/euclidean"].sel(family="vendi", set_a="10 classes", set_b="1 class")
    assert str(node.finding.values) == "not distinguishable"
    assert float(node.part_side) == 1.0
    start, end = float(node.part_from.isel(part=0)), float(node.part_to.isel(part=0))
    q = tree["pixels/euclidean"].q.values
    assert start <= 0.1 and end == q.max()
    narrowed = dp.compare(tree, domains={"vendi": (start, end)})["pixels/euclidean"]
    at = dict(family="vendi", set_a="10 classes", set_b="1 class")
    assert str(narrowed.finding.sel(**at).values) == "dominates"
    text = res.dp.summary()
    assert (
        f"10 classes ≻ 1 class for q ≥ {wording.fmt_g(start)}; not distinguishable "
        "elsewhere" in text
    )
