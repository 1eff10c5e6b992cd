"""Issue 22: Profiler.extend and dp.merge tell data apart, keep what trees hold, and one
Profiler serves concurrent calls.

References are independent of the package: magnitudes from a dense solve, set fingerprints
compared between copies of the data (same hash) and data one ulp apart (another hash).
"""

import json
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp

R = "r/euclidean"


def _magnitude_direct(X: np.ndarray, t: float) -> float:
    """Σ Z_t⁻¹ 1 by a dense solve: the reference, independent of the package."""
    from scipy.spatial.distance import cdist

    return float(np.linalg.solve(np.exp(-t * cdist(X, X)), np.ones(len(X))).sum())


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(22)
    return {"A": rng.normal(size=(30, 3)), "B": 0.5 * rng.normal(size=(24, 3))}


@pytest.fixture(scope="module")
def profiler(data):
    return dp.Profiler(data, representation="r", distance="euclidean")


@pytest.fixture(scope="module")
def tree(profiler):
    return profiler.profiles(families=["magnitude", "richness"], n_points=6)


# --- item 1: fingerprints ------------------------------------------------------------------


def test_extend_refuses_a_tree_of_other_samples_with_the_same_labels_and_sizes(data, tree):
    """The issue's reproduction: same labels and sizes, other data in 'B'. Before, holds()
    said yes and extend appended this profiler's values to the other data's curve."""
    other = dp.Profiler(
        {"A": data["A"], "B": data["B"] + 1.0}, representation="r", distance="euclidean"
    )
    assert not other.holds(tree)
    with pytest.raises(ValueError, match=r"set 'B' was computed from other samples") as err:
        other.extend(tree, "magnitude", "high", points=2)
    assert "'A'" not in str(err.value)  # only the set that differs is named


def test_a_copy_of_the_data_holds_the_tree_and_one_ulp_does_not(data, tree):
    """Same numbers in another layout, dtype or sign of zero: the same fingerprint; one
    value one ulp away: another."""
    A = np.asfortranarray(data["A"]).copy()
    A[0, 0] = 0.0
    B32 = data["B"].astype(np.float32)
    base = dp.Profiler({"A": A, "B": B32}, representation="r", distance="euclidean")
    t = base.profiles(families="richness")
    A_neg = A.copy()
    A_neg[0, 0] = -0.0
    same = dp.Profiler(
        {"A": A_neg, "B": B32.astype(np.float64)}, representation="r", distance="euclidean"
    )
    assert same.holds(t)
    A_ulp = A.copy()
    A_ulp[5, 1] = np.nextafter(A_ulp[5, 1], np.inf)
    off = dp.Profiler({"A": A_ulp, "B": B32}, representation="r", distance="euclidean")
    assert not off.holds(t)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_fingerprints_survive_a_file_round_trip_and_extend_from_it(
    data, profiler, tree, tmp_path, suffix
):
    pytest.importorskip("zarr" if suffix == ".zarr" else "h5netcdf")
    path = tmp_path / f"p{suffix}"
    tree.to_zarr(path) if suffix == ".zarr" else tree.to_netcdf(path)
    back = dp.open_profiles(path)
    assert back[R].attrs["set_fingerprints"] == tree[R].attrs["set_fingerprints"]
    ds = profiler.extend(back, "magnitude", "high", points=2)[R].to_dataset()
    for t in ds["t"].values[-2:]:
        for label in ("A", "B"):
            got = ds["magnitude"].sel(set=label, t=t).item()
            assert got == pytest.approx(_magnitude_direct(data[label], float(t)), rel=1e-9)
    # The extended tree keeps its fingerprints: it extends again.
    assert profiler.holds(profiler.extend(back, "magnitude", "low", points=1))


def test_a_tree_without_fingerprints_is_refused_with_the_reason(profiler, tree):
    """Written before fingerprints were recorded: it cannot be told apart from profiles of
    other samples, so extend refuses (and says to recompute) rather than guess."""
    old = tree.copy(deep=True)
    del old[R].attrs["set_fingerprints"]
    assert not profiler.holds(old)
    with pytest.raises(ValueError, match=r"records no 'set_fingerprints'.*profiler\.profiles"):
        profiler.extend(old, "magnitude")
    bad = tree.copy(deep=True)
    bad[R].attrs["set_fingerprints"] = "{not json"
    with pytest.raises(ValueError, match=r"not one written by diversity-profiles"):
        profiler.extend(bad, "magnitude")


def test_holds_names_labels_and_sizes_that_differ(data, profiler, tree):
    smaller = dp.Profiler(
        {"A": data["A"], "B": data["B"][:-1]}, representation="r", distance="euclidean"
    )
    with pytest.raises(ValueError, match=r"set 'B' has 24 samples, this profiler's 23"):
        smaller.extend(tree, "magnitude")
    with pytest.raises(ValueError, match=r"not a DataTree"):
        profiler.extend(tree[R].to_dataset(), "magnitude")


# --- item 2: one Profiler, many threads ----------------------------------------------------

CALLS = [
    dict(families=["magnitude", "energy"], n_points=6, method="exact"),
    dict(families=["magnitude", "energy"], n_points=8, method="large"),
    dict(families=["vendi", "circles"], domains={"vendi": [0.5, 1.0, 2.0]}, n_points=5),
    dict(families=["vendi", "circles"], n_points=7, method="large"),
    dict(families="magnitude", domains={"magnitude": (0.1, 10.0)}, n_points=9, n_boot=4),
    dict(families=["energy", "richness"], n_points=5, common_n=20, n_subsamples=3),
]


def _node(tree: xr.DataTree, path: str = R) -> xr.Dataset:
    ds = tree[path].to_dataset()
    ds.attrs.pop("created")
    return ds


def test_concurrent_calls_on_one_profiler_give_what_each_call_gives_alone():
    """Six calls (other families, domains, methods, uncertainty) twice each on six threads:
    every tree equals the same call run alone, values, grids and attributes."""
    rng = np.random.default_rng(23)
    sets = {"A": rng.normal(size=(60, 4)), "B": 0.5 * rng.normal(size=(50, 4))}
    # Greedy Circles: the exact solver stops at a time limit, which a loaded machine may hit.
    profiler = dp.Profiler(
        sets, representation="r", distance="euclidean", seed=3, circles_method="greedy"
    )
    alone = [_node(profiler.profiles(**kw)) for kw in CALLS]
    barrier = threading.Barrier(6)

    def call(kw):
        barrier.wait()  # start together
        return _node(profiler.profiles(**kw))

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(call, CALLS * 2))
    for k, ds in enumerate(results):
        ref = alone[k % len(CALLS)]
        xr.testing.assert_allclose(ds, ref, rtol=1e-10)  # BLAS threads may reorder sums
        assert ds.attrs == ref.attrs
        for name in ds.variables:
            assert ds[name].attrs == ref[name].attrs, name
        routes = json.loads(ds.attrs["plan"])["routes"]
        assert set(routes.values()) <= {CALLS[k % len(CALLS)].get("method", "exact"), "exact"}


def test_concurrent_extends_each_get_their_own_grid(data, profiler, tree):
    sides = [("magnitude", "high", 1), ("magnitude", "low", 2), ("magnitude", "high", 3)] * 2
    with ThreadPoolExecutor(3) as pool:
        grown = list(pool.map(lambda a: profiler.extend(tree, *a), sides))
    for (_, side, points), out in zip(sides, grown, strict=True):
        t = out[R]["t"].values
        assert t.size == 6 + points
        new = t[-points:] if side == "high" else t[:points]
        for value in new:
            got = out[R]["magnitude"].sel(set="A", t=value).item()
            assert got == pytest.approx(_magnitude_direct(data["A"], float(value)), rel=1e-9)


def test_a_profiler_cannot_be_changed_after_construction(profiler):
    with pytest.raises(AttributeError, match=r"immutable"):
        profiler._cond = None
    with pytest.raises(AttributeError, match=r"immutable"):
        del profiler._details


def test_concurrent_calls_form_each_sets_distances_once(monkeypatch):
    """Two threads needing one set's n × n distances form them once, not once each (twice
    the memory the planner counted)."""
    from diversity_profiles.pipeline import _condition

    formed = []
    real = _condition.distance_matrix

    def counting(X, distance):
        formed.append(X.shape[0])
        barrier_free.wait(timeout=0.5)  # give the other thread time to ask too
        return real(X, distance)

    barrier_free = threading.Event()
    monkeypatch.setattr(_condition, "distance_matrix", counting)
    rng = np.random.default_rng(24)
    profiler = dp.Profiler(
        {"A": rng.normal(size=(40, 2)), "B": rng.normal(size=(30, 2))},
        representation="r",
        distance="euclidean",
    )
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda q: profiler.profiles(families="vendi", n_points=5), [0, 1]))
    assert sorted(formed) == [30, 40]


def test_bands_leave_the_process_warning_filters_alone(monkeypatch):
    """warnings.catch_warnings rewrites the process's filters (and concurrent calls restore
    them out of order): the bands leave all-NaN points out instead. Reference: the
    quantiles of the finite column by numpy, NaN for the all-NaN one."""
    from diversity_profiles.pipeline import _resampling

    def refuse(*args, **kwargs):
        raise AssertionError("a call changed the process-wide warning filters")

    monkeypatch.setattr(warnings, "catch_warnings", refuse)
    monkeypatch.setattr(warnings, "simplefilter", refuse)
    reps = np.array([[[1.0, np.nan], [2.0, np.nan], [4.0, np.nan]]])  # (set, repeat, grid)
    est = np.array([[2.0, 1.0]])
    lower, upper = _resampling.bands(est, reps, 0.5, np.array([1.0]), np.array([2.0]))
    c = _resampling.centred_replicates(reps[0], est[0], 1.0, 2.0)[:, 0]
    q_lo, q_hi = np.quantile(c, [0.25, 0.75])
    assert lower[0, 0] == pytest.approx(2.0 - q_hi) and upper[0, 0] == pytest.approx(2.0 - q_lo)
    assert np.isnan(lower[0, 1]) and np.isnan(upper[0, 1])


# --- item 3: merge -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def explained(data):
    labels = {"A": np.repeat(["x", "y", "z"], 10), "B": np.repeat(["x", "y"], 12)}
    a = dp.profiles(data, representation="r", distance="euclidean", n_points=6, n_boot=0)
    a = dp.explain(a, data, categories=labels, bins=8)
    b = dp.profiles(data, representation="r", distance="cosine", n_points=6, n_boot=0)
    conv = dp.convergence(
        data, sizes=[10, 20], like=b, repeats=2, families="richness", show_progress=False
    )
    b["r/cosine/convergence"] = xr.DataTree(conv)
    return a, b


def _nodes(tree: xr.DataTree) -> dict[str, xr.Dataset]:
    return {node.path: node.to_dataset(inherit=False) for node in tree.subtree}


def test_merge_keeps_explain_category_distance_and_convergence_nodes(explained):
    a, b = explained
    merged = dp.merge([a, b])
    got = _nodes(merged)
    for source in (a, b):
        for path, ds in _nodes(source).items():
            if path != "/":
                xr.testing.assert_identical(got[path], ds)
    kinds = {p.split("/")[3] for p in got if p.count("/") >= 3}
    assert kinds == {"samples", "categories", "distances", "convergence"}


def test_merge_refuses_the_same_labels_with_other_sizes(data):
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    fewer = {"A": data["A"], "B": data["B"][:20]}
    b = dp.profiles(fewer, representation="s", distance="euclidean", families="richness")
    with pytest.raises(ValueError, match=r"set 'B' has 20 samples in 's/euclidean'.*24 in"):
        dp.merge([a, b])


@pytest.mark.parametrize(
    "other",
    [xr.DataTree(), xr.DataTree.from_dict({"x/y": xr.Dataset({"v": ("set", [1.0, 2.0])})})],
    ids=["empty", "no representation"],
)
def test_merge_refuses_a_tree_without_profiles(data, other):
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    with pytest.raises(ValueError, match=r"trees\[1\] passed to merge holds no profiles"):
        dp.merge([a, other])


def test_merge_refuses_a_comparison_tree(data):
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    with pytest.raises(ValueError, match=r"trees\[1\] passed to merge holds no profiles"):
        dp.merge([a, dp.compare(a)])


def test_merge_refuses_one_representation_of_other_samples(data):
    """'r/euclidean' of the data and 'r/cosine' of other data in 'B' (same labels, same
    sizes): the unit rows the two distances share differ."""
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    other = {"A": data["A"], "B": data["B"][::-1]}
    b = dp.profiles(other, representation="r", distance="cosine", families="richness")
    with pytest.raises(ValueError, match=r"set 'B' of 'r/cosine'.*unit rows fingerprints"):
        dp.merge([a, b])
    same = dp.profiles(data, representation="r", distance="cosine", families="richness")
    assert sorted(dp.merge([a, same]).dp.conditions) == ["r/cosine", R]
    # Other representations hold other embeddings of the samples: not compared.
    c = dp.profiles(other, representation="s", distance="euclidean", families="richness")
    assert sorted(dp.merge([a, c]).dp.conditions) == [R, "s/euclidean"]


def test_merge_warns_when_it_cannot_check_the_samples(data):
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    b = dp.profiles(data, representation="r", distance="cosine", families="richness")
    del b["r/cosine"].attrs["set_fingerprints"]
    with pytest.warns(UserWarning, match=r"could not check.*'r/cosine'"):
        dp.merge([a, b])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp.merge([a, dp.profiles(data, representation="s", distance="cosine", families="richness")])


def test_merge_of_a_condition_node_and_a_round_trip_keeps_it_extendable(
    data, profiler, tree, tmp_path
):
    """A condition node (``tree["r/euclidean"]``) merges at its path; the merged tree
    round-trips through netCDF and the profiler still extends it."""
    pytest.importorskip("h5netcdf")
    b = dp.profiles(data, representation="r", distance="cosine", families="richness")
    merged = dp.merge([tree[R], b])
    assert sorted(merged.dp.conditions) == ["r/cosine", R]
    merged.to_netcdf(tmp_path / "m.nc")
    back = dp.open_profiles(tmp_path / "m.nc")
    out = profiler.extend(back, "magnitude", "high", points=1)
    t = float(out[R]["t"].values[-1])
    got = out[R]["magnitude"].sel(set="B", t=t).item()
    assert got == pytest.approx(_magnitude_direct(data["B"], t), rel=1e-9)
    assert "r/cosine" in out.dp.conditions


def test_merge_refuses_a_node_two_trees_hold_differently(data):
    a = dp.profiles(data, representation="r", distance="euclidean", families="richness")
    b = dp.profiles(data, representation="r", distance="cosine", families="richness")
    a["notes"] = xr.DataTree(xr.Dataset(attrs={"by": "me"}))
    b["notes"] = xr.DataTree(xr.Dataset(attrs={"by": "you"}))
    with pytest.raises(ValueError, match=r"node 'notes' appears in trees\[0\] and trees\[1\]"):
        dp.merge([a, b])
