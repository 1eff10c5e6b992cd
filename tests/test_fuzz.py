"""Property-based fuzzing of every public function and the console script.

For generated shapes, dtypes, values (NaN, inf, extremes, complex, objects),
labels, representation names, DataArrays with named dims (numpy-backed or chunked)
and parameters, the outcome is either a result that satisfies the
family's invariants or one of the documented exceptions (ValueError, TypeError,
MemoryError) raised by this library's own code with a message that names what
was wrong: never an exception from numpy/scipy/xarray internals, never a numpy
floating-point warning (the mark of a silently wrong number), never a hang.
"""

import math
import os
import shutil
import subprocess
import sys
import time
import traceback
import warnings
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import diversity_profiles as dp

#: Seconds one call may take on these tiny inputs (a hang shows up as a deadline failure).
BUDGET_S = 10.0
SETTINGS = settings(
    max_examples=40,
    deadline=timedelta(seconds=BUDGET_S),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)
DOCUMENTED = (ValueError, TypeError, MemoryError)
PACKAGE = str(Path(dp.__file__).parent)

EXTREMES = [0.0, -0.0, 1.0, -1.0, 1e-310, 1e-170, 1e160, 1e300, -1e300, np.nan, np.inf, -np.inf]
floats = st.one_of(st.sampled_from(EXTREMES), st.floats(-10, 10), st.integers(-3, 3).map(float))


@st.composite
def raw_arrays(draw, max_rows=6):
    """Arrays of any rank, dtype and value, including the ones that must be refused."""
    shape = draw(
        st.one_of(
            st.tuples(st.integers(0, max_rows), st.integers(0, 4)),
            st.tuples(st.integers(0, 4)),
            st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)),
        )
    )
    kind = draw(st.sampled_from(["f8", "f4", "i8", "bool", "c16", "obj", "str"]))
    values = draw(arrays(np.float64, shape, elements=floats))
    if kind == "f4":
        with np.errstate(over="ignore"):
            return values.astype(np.float32)
    if kind == "i8":
        return np.nan_to_num(values, posinf=7, neginf=-7).clip(-1e6, 1e6).astype(np.int64)
    if kind == "bool":
        return values > 0
    if kind == "c16":
        return values + 1j
    if kind == "obj":
        out = values.astype(object)
        if out.size:
            out.flat[0] = draw(st.sampled_from([None, "x", 1j, [1, 2], 3]))
        return out
    if kind == "str":
        return values.astype(str)
    return values


@st.composite
def point_sets(draw, min_n=2, max_n=7, d=None):
    """Valid finite embeddings at any scale, with duplicates likely."""
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, 3)) if d is None else d
    X = draw(arrays(np.float64, (n, d), elements=st.integers(-3, 3).map(float)))
    return X * draw(st.sampled_from([1.0, 1e-170, 1e-30, 1e30, 1e160, 0.37]))


def distance_matrices():
    return st.one_of(point_sets().map(dp.pairwise_distances), raw_arrays())


parameters = st.one_of(
    floats,
    st.lists(floats, min_size=0, max_size=3),
    st.sampled_from(["1", None, True, 1j, [[1.0]], (0.5, 2.0)]),
)

labels = st.one_of(
    st.sampled_from(["<b>x<b>", "[a](javascript:x)", "a\x1b[31mb", "\u202e", "x" * 500, "a/b", ""]),
    st.text(min_size=0, max_size=20),
)


def _outcome(call, *args, **kwargs):
    """Run ``call``; return its value, or None after checking the exception it raised."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call(*args, **kwargs)
        except DOCUMENTED as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            where = frames[-1].filename
            assert where.startswith(PACKAGE), (
                f"{type(exc).__name__} from outside the library ({where}): {exc}"
            )
            assert len(str(exc)) > 20, f"an unhelpful message: {exc!r}"
            value = None
    numpy_warnings = [w for w in caught if "encountered in" in str(w.message)]
    assert not numpy_warnings, f"numpy floating-point warning: {numpy_warnings[0].message}"
    assert time.perf_counter() - start < BUDGET_S
    return value


def _n(D):
    return np.asarray(D).shape[0]


@SETTINGS
@given(
    K=st.one_of(point_sets().map(lambda X: np.exp(-dp.pairwise_distances(X))), raw_arrays()),
    q=parameters,
)
def test_vendi_score(K, q):
    v = _outcome(dp.vendi_score, K, q)
    if v is not None:
        assert np.all((np.asarray(v) >= 1 - 1e-9) & (np.asarray(v) <= _n(K) * (1 + 1e-9)))


@SETTINGS
@given(X=st.one_of(point_sets(min_n=1), raw_arrays()), q=parameters, normalize=st.booleans())
def test_vendi_score_dual(X, q, normalize):
    v = _outcome(dp.vendi_score_dual, X, q, normalize=normalize)
    if v is not None:
        assert np.all((np.asarray(v) >= 1 - 1e-6) & (np.asarray(v) <= _n(X) * (1 + 1e-6)))


@SETTINGS
@given(D=distance_matrices(), t=parameters)
def test_magnitude(D, t):
    v = _outcome(dp.magnitude, D, t)
    if v is not None:
        finite = np.asarray(v)[np.isfinite(v)]
        assert np.all(finite >= 1 - 1e-6) and np.all(finite <= _n(D) * (1 + 1e-6))


@SETTINGS
@given(D=distance_matrices(), tau=parameters)
def test_circles(D, tau):
    v = _outcome(dp.circles, D, tau)
    if v is not None:
        assert np.all((np.asarray(v) >= 1) & (np.asarray(v) <= _n(D)))


@SETTINGS
@given(D=distance_matrices(), s=parameters)
def test_energy(D, s):
    v = _outcome(dp.energy, D, s)
    if v is not None:
        assert np.all(np.asarray(v) < 0)


@SETTINGS
@given(D=distance_matrices())
def test_average_distance(D):
    v = _outcome(dp.average_distance, D)
    if v is not None:
        assert v >= 0 and np.isfinite(v)


@SETTINGS
@given(X=st.one_of(point_sets(min_n=1), raw_arrays()), tol=parameters)
def test_richness(X, tol):
    v = _outcome(dp.richness, X, tol=tol)
    if v is not None:
        assert 1 <= v <= max(len(X), 1)


@SETTINGS
@given(
    X=st.one_of(point_sets(), raw_arrays()),
    distance=st.sampled_from(["euclidean", "cosine", "tanimoto", "manhattan", 3]),
)
def test_pairwise_distances(X, distance):
    D = _outcome(dp.pairwise_distances, X, distance)
    if D is not None:
        assert np.all(np.isfinite(D)) and np.all(D >= 0) and np.all(np.diagonal(D) == 0)


#: Per argument of profiles: values that must work, and values that must be refused.
GOOD = {
    "families": [None, "vendi", ["energy", "richness"], ["circles", "magnitude"]],
    "bandwidth": [None, 1e-300, 0.5, 1e300],
    "richness_tol": [0.0, 0.5, 1e300],
    "seed": [0, 3, 2**40],
    "ci": [0.9, 0.5],
    "n_boot": [0, 2, 5],
    "common_n": [None, "min", 2],
    "n_points": [5, 7],
    "domains": [None, {"vendi": (0, 2)}],
}
BAD = {
    "families": [[], ["nope"], 3],
    "bandwidth": [[1, 2], "1", 0.0, np.nan, -1.0],
    "richness_tol": [-1.0, np.nan, "0", None],
    "seed": [1.5, -1, True, "1"],
    "ci": ["0.9", 1.0, np.nan],
    "n_boot": [1, -1, 2.0, True],
    "common_n": [1, 100, "max"],
    "n_points": [4, 5.0, True],
    "domains": [{"q": 1}, [1], {"energy": [-1]}, {"vendi": "a"}],
}


@st.composite
def profile_kwargs(draw):
    """Valid arguments, with at most one of them replaced by an invalid value."""
    kwargs = {name: draw(st.sampled_from(values)) for name, values in GOOD.items()}
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(BAD)))
        kwargs[name] = draw(st.sampled_from(BAD[name]))
    if kwargs["domains"] and kwargs["families"] not in (None, "vendi"):
        kwargs["domains"] = None
    if kwargs["families"] is None:  # keep the budget: all families are the slow case
        kwargs["n_boot"] = min(kwargs["n_boot"], 2) if isinstance(kwargs["n_boot"], int) else 0
    return kwargs


@settings(SETTINGS, max_examples=30)
@given(
    first=point_sets(d=2),
    second=st.one_of(point_sets(d=2), point_sets(d=2), raw_arrays()),
    label=labels,
    distance=st.sampled_from(["euclidean", "cosine", "precomputed", "tanimoto"]),
    kwargs=profile_kwargs(),
)
def test_profiles_compare_merge(first, second, label, distance, kwargs):
    if distance == "precomputed":
        first = dp.pairwise_distances(first)
        if isinstance(second, np.ndarray) and second.dtype == np.float64 and second.ndim == 2:
            second = dp.pairwise_distances(second) if np.isfinite(second).all() else second
    if distance == "tanimoto":
        first = (first > 0).astype(float)
    sets = {"ok": first, label: second}
    tree = _outcome(dp.profiles, sets, representation="r", distance=distance, **kwargs)
    if tree is None:
        return
    ds = tree[f"r/{distance}"].to_dataset()
    for var in ("richness", "vendi"):
        if var in ds:
            assert np.all(ds[var].values >= 1 - 1e-9)
    _outcome(dp.compare, tree, rtol=kwargs.get("richness_tol", 0.01))
    _outcome(dp.merge, [tree, tree])


@st.composite
def sets_with_duplicates(draw, max_distinct=5, max_n=14):
    """Rows drawn with repeats from a few distinct ones (all copies of one row included)."""
    k = draw(st.integers(1, max_distinct))
    d = draw(st.integers(1, 3))
    U = draw(arrays(np.float64, (k, d), elements=st.integers(-3, 3).map(float), unique=False))
    U = np.unique(U, axis=0)  # the distinct rows
    counts = draw(st.lists(st.integers(1, 4), min_size=len(U), max_size=len(U)))
    if sum(counts) < 2:
        counts[0] = 2
    X = np.repeat(U, counts, axis=0)[:max_n]
    perm = draw(st.permutations(list(range(X.shape[0]))))
    return X[perm] * draw(st.sampled_from([1.0, 1e-30, 1e30, 0.37]))


@settings(SETTINGS, max_examples=30)
@given(X=sets_with_duplicates(), distance=st.sampled_from(["euclidean", "cosine"]))
def test_duplicates_profile_like_their_distinct_rows(X, distance):
    """Richness and Circles of a set with copies are those of its distinct rows; its average
    distance is the weighted formula sum_{a != b} w_a w_b d_ab / (n (n - 1))."""
    tree = _outcome(
        dp.profiles, {"a": X}, representation="r", distance=distance, n_boot=0,
        families=["richness", "average_distance", "circles"],
    )  # fmt: skip
    if tree is None:  # a zero row under the cosine distance: refused, with a message
        return
    ds = tree[f"r/{distance}"].to_dataset()
    from diversity_profiles.engines import prepare_embeddings

    rows = prepare_embeddings(X, distance, "test", "X")  # duplicates: equal prepared rows
    _, first, w = np.unique(rows, axis=0, return_index=True, return_counts=True)
    distinct = X[first]
    n = X.shape[0]
    assert int(ds["richness"][0]) == len(distinct)
    Dd = dp.pairwise_distances(distinct, distance=distance)
    weighted = float(w @ Dd @ w) / (n * (n - 1))  # the diagonal of Dd is 0
    every_pair = dp.pairwise_distances(X, distance=distance)[np.triu_indices(n, 1)].mean()
    got = float(ds["average_distance"][0])
    assert got == pytest.approx(weighted, rel=1e-9, abs=1e-300)
    assert got == pytest.approx(every_pair, rel=1e-9, abs=1e-300)
    taus = ds["tau"].values
    if len(distinct) >= 2:
        again = dp.profiles(
            {"a": distinct}, representation="r", distance=distance, n_boot=0,
            families=["circles"], domains={"circles": list(taus)},
        )  # fmt: skip
        np.testing.assert_array_equal(
            ds["circles"].values, again[f"r/{distance}"]["circles"].values
        )
    else:  # all copies of one row: one circle at every threshold
        assert (ds["circles"].values == 1).all()


@settings(SETTINGS, max_examples=15)
@given(
    sizes=st.lists(st.integers(2, 3), min_size=1, max_size=60),
    family=st.sampled_from(["average_distance", "energy", "richness"]),
)
def test_many_tiny_sets(sizes, family):
    """Many sets of 2 or 3 samples: values of their own pairs, memory counted by the plan."""
    from diversity_profiles.pipeline import _planning as planning

    rng = np.random.default_rng(len(sizes))
    sets = {f"s{i}": rng.normal(size=(m, 4)) for i, m in enumerate(sizes)}
    assert planning.per_set_bytes(sizes) <= len(sizes) * (
        planning.PER_SET_BYTES + 3 * planning.HISTOGRAM_BIN_BYTES
    )
    tree = _outcome(
        dp.profiles, sets, representation="r", distance="euclidean", n_boot=0, families=[family]
    )
    if tree is None:
        return
    ds = tree["r/euclidean"].to_dataset()
    for k, X in enumerate(sets.values()):
        D = dp.pairwise_distances(X)
        d = D[np.triu_indices(len(X), 1)]
        if family == "average_distance":
            assert float(ds["average_distance"][k]) == pytest.approx(d.mean(), rel=1e-12)
        elif family == "richness":
            assert int(ds["richness"][k]) == len(X)
        else:  # energy: minus the mean of d^-s over the pairs, at every s of the grid
            ref = [-np.mean(d**-s) for s in ds["s"].values]
            np.testing.assert_allclose(ds["energy"].values[k], ref, rtol=1e-6)


@settings(SETTINGS, max_examples=15)
@given(images=raw_arrays(), size=st.sampled_from([1, (2, 3), 0, (10**6, 10**6), "4", (1.5, 2)]))
def test_pixel_vectors(images, size):
    pytest.importorskip("PIL")
    from diversity_profiles import images as featuriser

    out = _outcome(featuriser.pixel_vectors, images, size)
    if out is not None:
        assert out.dtype == np.float32 and np.all((out >= 0) & (out <= 1))


CLI_CASES = [
    (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 1.0]]) + 1j, "<img src=x onerror=alert(1)>"),
    (np.full((3, 2), np.nan), "a\x1b[2Jb"),
    (np.ones((3, 2)) * 1e160, "x" * 300),
    (np.array([[1.0], [2.0], [3.0]]), "a/b"),
]


@pytest.mark.parametrize("values, label", CLI_CASES)
def test_console_script_reports_bad_input_in_one_line(tmp_path, values, label):
    np.save(tmp_path / "a.npy", values)
    np.save(tmp_path / "b.npy", np.random.default_rng(0).normal(size=(4, values.shape[1])))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "diversity_profiles.cli",
            "compute",
            "a.npy",
            "b.npy",
            "--label",
            label,
            "--label",
            "b",
            "--families",
            "richness,average_distance",
            "-o",
            "out.nc",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    assert "Traceback" not in run.stderr, run.stderr
    if run.returncode == 0:
        assert (tmp_path / "out.nc").exists()
    else:
        assert run.returncode == 2 or run.returncode == 1
        assert "\x1b[2J" not in run.stderr


@SETTINGS
@given(trees=st.one_of(st.sampled_from([5, "ab", [], None, [1], (None,)]), raw_arrays()))
def test_merge_and_compare_of_non_trees(trees):
    assert _outcome(dp.merge, trees) is None
    assert _outcome(dp.compare, trees) is None


@st.composite
def named_dataarrays(draw):
    """One set as a plain array and as a DataArray with named dims, numpy-backed or chunked.

    The samples sit first or last under ``"sample"``, first under another name (the rule
    takes the first), or last under a name like the samples' (the rule cannot tell: refused).
    """
    X = draw(point_sets(min_n=2, max_n=9, d=draw(st.integers(1, 4))))
    # Not the 1e160 scale: the streamed passes of method="large" overflow there for plain
    # arrays too (NaN average distance; reported with issue 22, not a DataArray matter).
    assume(np.abs(X).max() < 1e100)
    layout = draw(st.sampled_from(["sample-first", "sample-last", "other-first", "ambiguous"]))
    feature = draw(st.sampled_from(["feature", "dim", "x", "embedding"]))
    if layout == "sample-first":
        arr = xr.DataArray(X, dims=("sample", feature))
    elif layout == "sample-last":
        arr = xr.DataArray(X.T, dims=(feature, "sample"))
    elif layout == "other-first":
        arr = xr.DataArray(X, dims=(draw(st.sampled_from(["item", "row", "obs"])), feature))
    else:
        samples = draw(st.sampled_from(["samples", "Sample", "sample_id", "n_samples"]))
        arr = xr.DataArray(X.T, dims=(feature, samples))
    chunked = draw(st.booleans())
    if chunked:
        arr = arr.chunk(draw(st.integers(1, 5)))
    return X, arr, layout


@settings(SETTINGS, max_examples=25)
@given(case=named_dataarrays())
def test_dataarrays_give_the_profiles_of_their_samples(case):
    pytest.importorskip("dask")
    X, arr, layout = case
    kw = dict(
        representation="r",
        distance="euclidean",
        families=["energy", "average_distance", "richness"],
        method="large",  # what chunked input runs; the same method for all three
        n_points=5,
    )
    plain = _outcome(dp.profiles, {"A": X}, **kw)
    got = _outcome(dp.profiles, {"A": arr}, **kw)
    if layout == "ambiguous":
        assert got is None  # refused, with the library's own message (see _outcome)
        return
    assert (plain is None) == (got is None)
    if plain is None:
        return
    want, have = plain["r/euclidean"].to_dataset(), got["r/euclidean"].to_dataset()
    assert int(have["n_samples"].values[0]) == X.shape[0]
    for var in ("energy", "average_distance", "richness", "s"):
        np.testing.assert_array_equal(have[var].values, want[var].values)


@settings(SETTINGS, max_examples=30)
@given(name=st.one_of(labels, st.sampled_from([".", "..", "a\\b", "\\", " ", "a/..", "./a"])))
def test_a_representation_is_refused_or_stays_one_node_through_zarr(name, tmp_path_factory):
    pytest.importorskip("zarr")
    X = np.array([[0.0], [1.0], [3.0]])
    kw = dict(representation=name, distance="euclidean", families="richness", n_boot=0)
    tree = _outcome(dp.profiles, {"A": X}, **kw)
    if tree is None:
        return
    path = tmp_path_factory.mktemp("rep") / "p.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr's notes on format 3 and its string dtypes
        tree.to_zarr(path)
        back = dp.open_profiles(path)
    assert back.dp.conditions == [f"{name}/euclidean"]
    assert back[f"{name}/euclidean"].attrs["representation"] == name


# --- crafted files that claim huge sizes (issue 22) ---------------------------------------

#: Declared element counts, per axis, far beyond what a small file holds.
#: Even at one byte an element, twice the most any small file may declare (256 MiB).
huge_axes = st.lists(st.integers(2, 3 * 10**9), min_size=1, max_size=3).filter(
    lambda shape: 2 * 256 * 1024**2 < math.prod(shape) < 10**15
)


@pytest.fixture(scope="module")
def honest_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz_files")
    sets = {"A": np.arange(12.0).reshape(6, 2), "B": np.arange(10.0).reshape(5, 2) ** 2}
    tree = dp.profiles(
        sets, representation="x", distance="euclidean", families=["vendi", "richness"], n_points=5
    )
    tree.to_netcdf(folder / "p.nc")
    tree.to_zarr(folder / "p.zarr")
    return folder


def _refused_lean(path, names):
    """open_profiles refuses in one line naming a crafted variable, allocating little."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            dp.open_profiles(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert message.startswith(f"{path}: not read: it declares") and "\n" not in message, message
    assert any(f"variable {name!r}" in message for name in names), message
    assert peak < 64 * 1024**2, f"{peak / 2**20:.0f} MiB read before refusing"


@settings(SETTINGS, max_examples=15)
@given(
    shape=huge_axes,
    dtype=st.sampled_from(["f8", "f4", "i2", "u1", "c16"]),
    group=st.sampled_from(["/", "x/euclidean", "extra/deep"]),
    chunk=st.sampled_from([1, 64, 4096]),
)
def test_netcdf_declaring_a_huge_unwritten_dataset_is_refused(
    honest_store, tmp_path_factory, shape, dtype, group, chunk
):
    """h5py, not h5netcdf: a dataset that was never written, chunked, on dimensions of
    the netCDF kind (HDF5 dimension scales), anywhere in the tree."""
    import h5py

    path = tmp_path_factory.mktemp("nc") / "claims.nc"
    shutil.copy(honest_store / "p.nc", path)
    with h5py.File(path, "a") as f:
        g = f.require_group(group)
        scales = []
        for k, n in enumerate(shape):
            axis = g.create_dataset(f"huge{k}", shape=(n,), dtype="f4", chunks=(min(n, 1 << 16),))
            axis.make_scale(f"This is a netCDF dimension but not a netCDF variable. {n:>10}")
            scales.append(axis)
        # HDF5 chunks hold under 4 GiB: chunked along the last axis only.
        chunks = (*(1 for _ in shape[:-1]), min(shape[-1], chunk))
        junk = g.create_dataset("junk", shape=tuple(shape), dtype=dtype, chunks=chunks)
        for k, axis in enumerate(scales):
            junk.dims[k].attach_scale(axis)
    assert path.stat().st_size < 10**6
    _refused_lean(path, ["junk"])


@settings(SETTINGS, max_examples=15)
@given(
    name=st.sampled_from(["richness", "vendi", "n_samples", "set", "q"]),
    shape=huge_axes,
    chunk_shape=st.sampled_from(["keep", "whole", "huge"]),
    consolidated=st.booleans(),
)
def test_zarr_with_an_edited_zarr_json_is_refused(
    honest_store, tmp_path_factory, name, shape, chunk_shape, consolidated
):
    """Only the metadata is edited: one array's shape (and its dimension names, and maybe
    its chunks) in its own zarr.json and in the consolidated copy the root holds."""
    import json

    path = tmp_path_factory.mktemp("zarr") / "claims.zarr"
    shutil.copytree(honest_store / "p.zarr", path)

    def edit(meta):  # every consolidated copy: keys "richness" or "x/euclidean/richness"
        for key, value in meta.items() if isinstance(meta, dict) else ():
            named = key == name or key.endswith(f"/{name}")
            if named and isinstance(value, dict) and value.get("node_type") == "array":
                change(value)
            edit(value)

    def change(array):
        grid = array["chunk_grid"]["configuration"]
        old = grid["chunk_shape"]
        grid["chunk_shape"] = {
            "keep": [old[0]] * len(shape) if old else [1] * len(shape),
            "whole": [min(n, 1 << 20) for n in shape],
            "huge": [10**12] * len(shape),
        }[chunk_shape]
        array.update(shape=list(shape), dimension_names=[f"huge{k}" for k in range(len(shape))])

    root = json.loads((path / "zarr.json").read_text())
    if consolidated:
        edit(root)
    else:  # xarray then reads each array's own zarr.json
        for meta_path in path.rglob("zarr.json"):
            meta = json.loads(meta_path.read_text())
            meta.pop("consolidated_metadata", None)
            meta_path.write_text(json.dumps(meta))
        root.pop("consolidated_metadata", None)
    (path / "zarr.json").write_text(json.dumps(root))
    own = path / "x" / "euclidean" / name / "zarr.json"
    array = json.loads(own.read_text())
    change(array)
    own.write_text(json.dumps(array))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr's and xarray's notes on consolidated metadata
        _refused_lean(path, [name])
