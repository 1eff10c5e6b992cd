"""Witnesses behind a profile (issue 14): hand-worked cases and independent references."""

import base64
import io
import math

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.explanation import _witnesses as w
from diversity_profiles.explanation._partition import partition_diversity
from diversity_profiles.explanation._samples import MAX_TEXT, THUMBNAIL, display_payload


def _dist(X):
    X = np.asarray(X, dtype=float)
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


@pytest.fixture(scope="module")
def clusters():
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(4, 5)) * 4
    return {
        "A": centres[rng.integers(0, 4, 30)] + rng.normal(size=(30, 5)) * 0.5,
        "B": centres[rng.integers(0, 2, 24)] + rng.normal(size=(24, 5)) * 0.5,
    }


# --- Circles -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["auto", "greedy"])
def test_packing_is_tau_separated_and_of_the_stored_size(clusters, method):
    tree = dp.profiles(
        clusters,
        representation="x",
        distance="euclidean",
        families=["circles"],
        circles_method=method,
        n_points=12,
    )
    ds = tree["x/euclidean"].to_dataset()
    for tau in ds["tau"].values[1:-1:3]:
        out = dp.explain(tree, clusters, tau=float(tau))
        for k, label in enumerate(ds["set"].values):
            member = out[f"x/euclidean/samples/set_{k}"]["circles_member"]
            idx = np.flatnonzero(member.values)
            D = _dist(clusters[label])[np.ix_(idx, idx)]
            assert (D[~np.eye(len(idx), dtype=bool)] > tau).all()  # valid packing
            assert member.attrs["size"] == len(idx) == member.attrs["stored_lower"]
            proved = ds["circles"].attrs["exact"] == 1  # greedy can meet its upper bound
            if proved:
                assert member.attrs["method"] == "exact"
            if member.attrs["method"] == "exact":  # certified: no larger set exists
                assert member.attrs["stored_upper"] == len(idx)


def test_packing_by_hand():
    # Points 0, 1, 2, 3 on a line: at tau = 1.5 the largest separated set has 2 points.
    idx, how = w.circles_packing(_dist([[0], [1], [2], [3]]), 1.5)
    assert how == "exact" and len(idx) == 2 and abs(idx[0] - idx[1]) >= 2


# --- Magnitude -----------------------------------------------------------------------


@pytest.mark.parametrize("d,t", [(1.0, 1.0), (2.0, 0.01), (0.5, 7.0)])
def test_two_point_weights_closed_form(d, t):
    wts = w.magnitude_weights([[0, d], [d, 0]], t)
    np.testing.assert_allclose(wts, 1 / (1 + math.exp(-t * d)), rtol=1e-13)


@pytest.mark.parametrize("t", [1e-4, 0.05, 0.3, 1.0, 5.0])
def test_weights_sum_to_magnitude_and_solve_z(clusters, t):
    D = _dist(clusters["A"])
    wts = w.magnitude_weights(D, t)
    assert wts.sum() == pytest.approx(dp.magnitude(D, t), rel=1e-9)
    # Independent check of the weighting itself: Z_t w = 1 (well conditioned for t >= 0.05).
    if t >= 0.05:
        np.testing.assert_allclose(np.exp(-t * D) @ wts, 1.0, atol=1e-8)


def test_copies_share_their_point_weight():
    D = _dist([[0.0], [0.0], [0.0], [1.0]])
    wts = w.magnitude_weights(D, 1.0)
    single = 1 / (1 + math.exp(-1))
    np.testing.assert_allclose(wts, [single / 3] * 3 + [single], rtol=1e-12)


# --- Vendi ---------------------------------------------------------------------------


def test_modes_are_unit_eigenvectors(clusters):
    X = clusters["A"]
    K = np.exp(-(_dist(X) ** 2) / 8)
    m = w.vendi_modes(K, n_modes=4)
    A = K / len(K)
    for lam, u in zip(m.share, m.loadings, strict=True):
        assert np.linalg.norm(u) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(A @ u, lam * u, atol=1e-12)
    np.testing.assert_allclose(m.share, np.sort(np.linalg.eigvalsh(A))[::-1][:4], atol=1e-12)


def test_block_diagonal_kernel_modes_pick_the_blocks():
    sizes = [5, 3, 2]
    K = np.zeros((10, 10))
    start = 0
    for s in sizes:
        K[start : start + s, start : start + s] = 1.0
        start += s
    m = w.vendi_modes(K, n_modes=3)
    np.testing.assert_allclose(m.share, [0.5, 0.3, 0.2], atol=1e-12)
    start = 0
    for s, u in zip(sizes, m.loadings, strict=True):
        expect = np.zeros(10)
        expect[start : start + s] = 1 / math.sqrt(s)
        np.testing.assert_allclose(u, expect, atol=1e-12)
        start += s


def test_dual_form_modes_match_the_kernel(clusters):
    X = clusters["A"] / np.linalg.norm(clusters["A"], axis=1, keepdims=True)
    primal, c1 = w._modes(X @ X.T, None, 3)
    dual, c2 = w._modes(None, X, 3)  # d = 5 < n = 30: the d × d form
    np.testing.assert_allclose(primal.share, dual.share, atol=1e-12)
    np.testing.assert_allclose(primal.loadings, dual.loadings, atol=1e-9)
    np.testing.assert_allclose(c1, c2, atol=1e-10)


def test_entropy_contributions_sum_to_the_entropy(clusters):
    K = np.exp(-(_dist(clusters["B"]) ** 2) / 8)
    c = w.entropy_contributions(K)
    assert c.sum() == pytest.approx(math.log(dp.vendi_score(K, 1.0)), rel=1e-10)
    assert (c >= -1e-15).all()


# --- Neighbours and duplicates -------------------------------------------------------


def test_nearest_neighbours_against_brute_force(clusters):
    D = _dist(clusters["A"])
    d, j = w.nearest_neighbours(D)
    for i in range(len(D)):
        others = [(D[i, k], k) for k in range(len(D)) if k != i]
        assert d[i] == min(others)[0]
        assert D[i, j[i]] == d[i] and j[i] != i


def test_duplicate_groups_are_richness_classes():
    X = np.array([[1.0, 0], [0, 1], [1, 0], [0, 1], [2, 2]])
    assert w.duplicate_groups(X, None).tolist() == [0, 1, 0, 1, 2]
    assert w.duplicate_groups(None, _dist(X)).tolist() == [0, 1, 0, 1, 2]
    near = X + np.array([[0, 0], [0, 0], [1e-9, 0], [0, 0], [0, 0]])
    assert w.duplicate_groups(near, None, 1e-6).tolist() == [0, 1, 0, 1, 2]


# --- Partition -----------------------------------------------------------------------


def _species_z(species):
    s = np.asarray(species)
    return (s[:, None] == s[None, :]).astype(float)


def _hill(p, q):
    p = p[p > 0]
    if q == 1:
        return math.exp(-(p * np.log(p)).sum())
    if np.isinf(q):
        return 1 / p.max()
    return (p**q).sum() ** (1 / (1 - q))


@pytest.mark.parametrize("q", [0.0, 0.5, 1.0, 2.0, 3.0, np.inf])
def test_partition_with_species_similarity_matches_jost(q):
    # Samples of the same species are identical (Z = 1 between them): the similarity-
    # sensitive measures become Hill numbers of species abundances (Jost 2007).
    species = [0, 0, 1, 2, 2, 2, 0, 3, 1, 1, 3, 3]
    groups = ["a"] * 6 + ["b"] * 6  # equal weights
    out = partition_diversity(_species_z(species), groups, q=[q])
    counts = np.zeros((4, 2))
    for s, g in zip(species, groups, strict=True):
        counts[s, int(g == "b")] += 1
    p = counts.sum(axis=1) / counts.sum()
    pj = counts / counts.sum(axis=0)
    gamma = _hill(p, q)
    assert out["meta_gamma"][0] == pytest.approx(gamma, rel=1e-12)
    if np.isinf(q):
        jost_alpha = 1 / max(pj[:, 0].max(), pj[:, 1].max())  # limit of the equal-weight mean
    elif q == 1:
        jost_alpha = math.exp(np.mean([math.log(_hill(pj[:, j], 1)) for j in range(2)]))
    else:
        jost_alpha = (np.mean([(pj[:, j][pj[:, j] > 0] ** q).sum() for j in range(2)])) ** (
            1 / (1 - q)
        )
    assert out["meta_alpha"][0] == pytest.approx(jost_alpha, rel=1e-12)
    np.testing.assert_allclose(out["alpha"][0], [_hill(pj[:, 0], q), _hill(pj[:, 1], q)])
    if q == 1:  # at q = 1 the normalised beta is Jost's beta gamma / alpha
        assert out["meta_beta"][0] == pytest.approx(gamma / jost_alpha, rel=1e-12)


def test_gamma_is_leinster_cobbold_of_the_pooled_set(clusters):
    Z = np.exp(-_dist(clusters["A"]))
    n = len(Z)
    groups = np.arange(n) % 3
    qs = [0.0, 0.5, 1.0, 2.0]
    out = partition_diversity(Z, groups, q=qs)
    p = np.full(n, 1 / n)
    Zp = Z @ p
    for k, q in enumerate(qs):
        ref = math.exp(-(p * np.log(Zp)).sum()) if q == 1 else (p @ Zp ** (q - 1)) ** (1 / (1 - q))
        assert out["meta_gamma"][k] == pytest.approx(ref, rel=1e-12)


def test_beta_counts_distinct_categories():
    disjoint = partition_diversity(np.eye(6), [0, 0, 1, 1, 2, 2], q=[0, 1, 2])
    np.testing.assert_allclose(disjoint["meta_beta"], 3.0)
    same = partition_diversity(_species_z([0, 1, 0, 1]), ["x", "x", "y", "y"], q=[0, 1, 2])
    np.testing.assert_allclose(same["meta_beta"], 1.0)
    with pytest.raises(ValueError, match="'Z' argument of partition_diversity"):
        partition_diversity(-np.eye(2), [0, 1])


# --- The tree ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def explained(clusters):
    tree = dp.profiles(clusters, representation="x", distance="euclidean", n_points=10)
    cats = {"A": np.where(np.arange(30) < 15, "left", "right"), "B": ["one"] * 23 + ["solo"]}
    show = {"A": [f"text {i} " + "x" * (i * 20) for i in range(30)], "B": list(range(24))}
    return tree, dp.explain(tree, clusters, categories=cats, samples=show, n_modes=3)


def test_layout_and_round_trip(explained, tmp_path):
    tree, out = explained
    assert not tree["x/euclidean"].children  # the input tree is untouched
    assert set(out["x/euclidean"].children) == {"samples", "distances", "categories"}
    node = out["x/euclidean/samples/set_0"]
    assert node.attrs["set"] == "A" and node.sizes["sample"] == 30
    weights = node["magnitude_weight"]  # at the default t, a point of the stored grid
    assert weights.sum().item() == pytest.approx(weights.attrs["stored_magnitude"], rel=1e-9)
    assert node["vendi_loading"].dims == ("mode", "sample")
    assert node["display_text"].values[29].endswith("…")
    assert len(node["display_text"].values[29]) == MAX_TEXT
    dist = out["x/euclidean/distances"]
    assert dist["count"].sum("bin").values.tolist() == [30 * 29 // 2, 24 * 23 // 2]
    assert list(dist["domain_mapping"].values) == [
        "tau directly",
        "1/t",
        "Gaussian kernel bandwidth",
    ]
    for path in (tmp_path / "t.nc", tmp_path / "t.zarr"):
        out.to_netcdf(path) if path.suffix == ".nc" else out.to_zarr(path)
        back = dp.open_profiles(path)
        for sub in ("samples/set_0", "samples/set_1", "distances", "categories/set_0"):
            xr.testing.assert_identical(
                back[f"x/euclidean/{sub}"].to_dataset(), out[f"x/euclidean/{sub}"].to_dataset()
            )
        assert dp.open_profiles(path).dp.conditions == ["x/euclidean"]


def test_categories_profile_each_category(explained, clusters):
    _, out = explained
    cat = out["x/euclidean/categories/set_0"]
    left = clusters["A"][:15]
    direct = dp.profiles(
        {"A": clusters["A"], "L": left},
        representation="x",
        distance="euclidean",
        families=["average_distance", "richness"],
    )
    d = direct["x/euclidean"].to_dataset()
    assert cat["average_distance"].sel(category="left").item() == pytest.approx(
        d["average_distance"].sel(set="L").item()
    )
    assert cat["category_size"].values.tolist() == [15, 15]
    solo = out["x/euclidean/categories/set_1"]
    assert np.isnan(solo["vendi"].sel(category="solo").values).all()
    assert (cat["meta_gamma"] >= cat["meta_alpha"] - 1e-12).all()


def test_distance_statistics_by_hand():
    sets = {"A": [[0.0], [1.0], [3.0]], "B": [[0.0], [2.0]]}
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=["richness"])
    dist = dp.explain(tree, sets)["x/euclidean/distances"]
    # A: distances 1, 2, 3 -> contrast (3 - 1) / 1, cv = sd / mean = sqrt(2/3) / 2.
    assert dist["relative_contrast"].values.tolist() == [2.0, 0.0]
    assert dist["coefficient_of_variation"].values[0] == pytest.approx(math.sqrt(2 / 3) / 2)
    assert dist["pooled_relative_contrast"].item() == 2.0


def test_explain_rejects_other_sets(clusters):
    tree = dp.profiles(clusters, representation="x", distance="euclidean", families="richness")
    with pytest.raises(ValueError, match="has 29 samples but the profile was computed on 30"):
        dp.explain(tree, {"A": clusters["A"][:29], "B": clusters["B"]})
    with pytest.raises(ValueError, match="must hold the same sets"):
        dp.explain(tree, {"A": clusters["A"]})
    with pytest.raises(ValueError, match=r"'categories' argument of explain names sets .*\['C'\]"):
        dp.explain(tree, clusters, categories={"C": [0] * 30})
    with pytest.raises(ValueError, match=r"categories\['A'\] passed to explain needs one label"):
        dp.explain(tree, clusters, categories={"A": [0] * 29})
    with pytest.raises(ValueError, match="'t' parameter of explain"):
        dp.explain(tree, clusters, t=-1.0)
    with pytest.raises(ValueError, match="'n_modes' argument of explain must be an int >= 1"):
        dp.explain(tree, clusters, n_modes=0)


# --- Display payloads ----------------------------------------------------------------


def test_image_thumbnails_are_small_pngs():
    from PIL import Image

    images = np.random.default_rng(0).integers(0, 16, size=(3, 8, 8))
    out = display_payload(images, 3)
    assert out["kind"] == "image" and out["image_format"] == "png"
    img = Image.open(io.BytesIO(base64.b64decode(out["image"][0])))
    assert img.format == "PNG" and max(img.size) <= THUMBNAIL


def test_smiles_are_drawn():
    pytest.importorskip("rdkit")
    out = display_payload(["CCO", "not a molecule"], 2, kind="smiles")
    assert "<svg" in out["image"][0] and out["image"][1] == ""
    assert out["text"] == ["CCO", "not a molecule"]


def test_payload_needs_one_item_per_sample():
    with pytest.raises(ValueError, match=r"samples\['A'\] must hold one item per sample"):
        display_payload(["a"], 2, where="samples['A']")


# --- Convergence ---------------------------------------------------------------------


def test_convergence_richness_reaches_the_number_of_items():
    X = np.repeat(np.eye(4), 6, axis=0)
    ds = dp.convergence(
        {"A": X, "B": X[:12]},
        sizes=[2, 12, 24],
        distance="cosine",
        families=["richness", "vendi"],
        repeats=4,
        show_progress=False,
    )
    rich = ds["richness_mean"]
    assert rich.sel(set="A", size=24).item() == 4.0
    assert ds["richness_sd"].sel(set="A", size=24).item() == 0.0
    assert np.isnan(rich.sel(set="B", size=24).item())  # larger than the set
    assert (ds["richness"].sel(size=2) <= 2).all()
    # Nested: a larger subsample never has fewer distinct items.
    r = ds["richness"].sel(set="A").values
    assert (np.diff(r, axis=0) >= 0).all()
    # Vendi of 4 equal groups of identical orthogonal points is 4 at every order.
    np.testing.assert_allclose(ds["vendi_mean"].sel(set="A", size=24).values, 4.0, rtol=1e-9)


def test_convergence_like_a_tree_is_stored_beside_it(clusters, tmp_path):
    tree = dp.profiles(
        clusters,
        representation="x",
        distance="euclidean",
        families=["vendi", "richness"],
        n_points=8,
    )
    conv = dp.convergence(clusters, sizes=[5, 24], like=tree, repeats=2, show_progress=False)
    full = tree["x/euclidean"].to_dataset()
    # At the full size of B every repeat holds all of B: the profile's own value.
    np.testing.assert_allclose(conv["vendi_mean"].sel(set="B", size=24), full["vendi"].sel(set="B"))
    tree["x/euclidean/convergence"] = xr.DataTree(conv)
    tree.to_netcdf(tmp_path / "c.nc")
    back = dp.open_profiles(tmp_path / "c.nc")
    xr.testing.assert_identical(
        back["x/euclidean/convergence"].to_dataset(), tree["x/euclidean/convergence"].to_dataset()
    )
    with pytest.raises(ValueError, match="'families' argument of convergence asks for"):
        dp.convergence(clusters, sizes=[5], like=tree, families="magnitude")


@pytest.mark.parametrize("distance", ["cosine", "tanimoto"])
def test_contributions_match_the_stored_vendi_under_other_kernels(distance):
    rng = np.random.default_rng(5)
    if distance == "cosine":
        sets = {"A": rng.normal(size=(40, 6)), "B": rng.normal(size=(30, 6))}
    else:
        sets = {"A": rng.integers(0, 2, (40, 32)), "B": rng.integers(0, 2, (30, 32))}
    tree = dp.profiles(
        sets, representation="x", distance=distance, families=["vendi", "richness"], n_points=20
    )
    out = dp.explain(tree, sets, categories={"A": np.arange(40) % 2})
    stored = tree[f"x/{distance}"].to_dataset()["vendi"].sel(q=1.0).values
    for k in range(2):
        node = out[f"x/{distance}/samples/set_{k}"]
        assert node["vendi_contribution"].sum().item() == pytest.approx(math.log(stored[k]))
    # The partition's similarity is Vendi's (cosine clipped at 0): gamma at q = 0 is
    # mean_i 1 / (Z p)_i (Leinster–Cobbold), from the set's own similarity.
    X = np.asarray(sets["A"], dtype=float)
    if distance == "cosine":
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        Z = np.clip(U @ U.T, 0, 1)
    else:
        inter = X @ X.T
        Z = inter / (X.sum(1)[:, None] + X.sum(1)[None, :] - inter)
    cat = out[f"x/{distance}/categories/set_0"]
    gamma0 = np.mean(1 / Z.mean(axis=1))
    assert cat["meta_gamma"].sel(order=0.0).item() == pytest.approx(gamma0, rel=1e-9)


def test_untrusted_labels_and_texts_are_stored(tmp_path):
    sets = {"A": [[0.0], [1.0], [2.0], [4.0]], "B": [[0.0], [3.0]]}
    tree = dp.profiles(sets, representation="x", distance="euclidean", families=["richness"])
    odd = ["a/b", "x\x00y", "<script>alert(1)</script>", "a/b"]
    out = dp.explain(tree, sets, categories={"A": odd}, samples={"A": odd, "B": ["\ud800", "ok"]})
    out.to_netcdf(tmp_path / "odd.nc")
    back = dp.open_profiles(tmp_path / "odd.nc")
    cat = back["x/euclidean/categories/set_0"]
    assert sorted(cat["category"].values.tolist()) == sorted(["a/b", "x\ufffdy", odd[2]])
    assert back["x/euclidean/samples/set_0"]["display_text"].values[2] == odd[2]
    assert back["x/euclidean/samples/set_1"]["display_text"].values[0] == "?"
