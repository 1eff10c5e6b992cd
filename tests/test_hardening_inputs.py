"""Issue 22, the inputs: one sample-dimension rule for every DataArray, tree-node names
refused before any work, a zero-width domain as one point, a bounded grid, and a
dataless torch tensor refused in one line.

References are computed here directly from the plain numpy array (scipy's pdist, a
direct solve, row counting), never by the library on the same input.
"""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr
from scipy.spatial.distance import pdist, squareform

import diversity_profiles as dp
from diversity_profiles.pipeline import MAX_N_POINTS

RNG = np.random.default_rng(22)
#: 9 samples of 4 features: features-as-samples would give n = 4 and other values.
X = RNG.normal(size=(9, 4))
X[8] = X[0]  # one duplicate: richness 8, not 9
KW = dict(representation="r", distance="euclidean", families=["average_distance", "richness"])


def _values(sets, **kw):
    ds = dp.profiles(sets, **{**KW, **kw})["r/euclidean"].to_dataset()
    return (
        int(ds["n_samples"].values[0]),
        float(ds["average_distance"].values[0]),
        int(ds["richness"].values[0]),
    )


def _reference(A):
    """n, the mean pairwise distance and the number of distinct rows, computed directly."""
    return A.shape[0], float(pdist(A).mean()), len({tuple(row) for row in A})


# -- 1. One rule for DataArrays: "sample" when there is one, else the first --------------


@pytest.mark.parametrize("chunked", [False, True], ids=["numpy", "dask"])
@pytest.mark.parametrize(
    "data, dims",
    [(X.T, ("feature", "sample")), (X, ("sample", "feature")), (X, ("item", "feature"))],
    ids=["sample-last", "sample-first", "no-sample-takes-first"],
)
def test_dataarrays_are_read_over_their_sample_dimension(data, dims, chunked):
    pytest.importorskip("dask")
    arr = xr.DataArray(data, dims=dims)
    if chunked:
        arr = arr.chunk({dims[0]: 4})
    n, mean, distinct = _values({"A": arr}, method="large")
    ref_n, ref_mean, ref_distinct = _reference(X)
    assert n == ref_n == 9 and distinct == ref_distinct == 8
    assert mean == pytest.approx(ref_mean, rel=1e-12)


def test_profiler_and_explain_read_numpy_dataarrays_over_the_sample_dimension():
    arr = xr.DataArray(X.T, dims=("feature", "sample"))
    profiler = dp.Profiler({"A": arr}, representation="r", distance="euclidean")
    tree = profiler.profiles(families=["average_distance"], n_boot=0)
    assert int(tree["r/euclidean"]["n_samples"].values[0]) == 9
    # explain rebuilds the condition from the sets: the same DataArray is the same 9 samples.
    out = dp.explain(tree, {"A": arr})
    node = next(n for n in out.subtree if "nn_distance" in n.dataset)
    D = squareform(pdist(X))
    np.fill_diagonal(D, np.inf)
    np.testing.assert_allclose(node["nn_distance"].values, D.min(axis=1), rtol=1e-12, atol=0)


def test_every_function_taking_embeddings_applies_the_rule():
    arr = xr.DataArray(X.T, dims=("feature", "sample"))
    np.testing.assert_allclose(dp.pairwise_distances(arr), squareform(pdist(X)), atol=1e-12)
    assert dp.richness(arr) == 8
    # Vendi of the cosine kernel: exp of the Shannon entropy of K/n's eigenvalues.
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(U @ U.T / 9)
    lam = lam[lam > 1e-12]
    assert dp.vendi_score_dual(arr) == pytest.approx(np.exp(-(lam * np.log(lam)).sum()), 1e-9)


@pytest.mark.parametrize("chunked", [False, True], ids=["numpy", "dask"])
@pytest.mark.parametrize(
    "dims, says",
    [
        (("feature", "samples"), r"rename\(\{'samples': 'sample'\}\)"),
        (("obs", "Sample_id"), r"named like the samples"),
    ],
)
def test_a_dataarray_whose_sample_dimension_cannot_be_told_is_refused(dims, says, chunked):
    pytest.importorskip("dask")
    arr = xr.DataArray(X.T, dims=dims)
    if chunked:
        arr = arr.chunk(4)
    with pytest.raises(ValueError, match=r"sets\['A'\].*of profiles.*" + says):
        dp.profiles({"A": arr}, **KW)


@pytest.mark.parametrize(
    "dims, says",
    [
        (("sample", "h", "w"), r"x\.stack\(feature=\('h', 'w'\)\)"),
        (("a", "b", "c"), r"name the sample dimension 'sample'"),
        (("sample",), r"expand_dims"),
    ],
)
def test_a_dataarray_that_is_not_2d_is_refused_with_the_fix(dims, says):
    arr = xr.DataArray(np.zeros((3,) * len(dims)), dims=dims)
    with pytest.raises(ValueError, match=r"must be a 2-D DataArray.*" + says):
        dp.profiles({"A": arr}, **KW)


def test_a_dataset_is_refused_naming_the_variable_to_pass():
    ds = xr.Dataset({"emb": (("sample", "feature"), X)})
    with pytest.raises(TypeError, match=r"sets\['A'\].*Dataset.*ds\['embedding'\]"):
        dp.profiles({"A": ds}, **KW)


# -- 2. Names that become tree nodes ---------------------------------------------------


@pytest.mark.parametrize("name", ["a\\b", "a/b", ".", "..", "", "  ", "x" * 256, "é" * 128])
def test_representation_names_that_are_not_one_node_are_refused_before_any_work(name):
    bad_set = np.full((3, 2), np.nan)  # would be refused too, had the sets been read first
    with pytest.raises(ValueError, match=r"'representation' argument of profiles names a tree"):
        dp.profiles({"A": bad_set}, representation=name, distance="euclidean")
    with pytest.raises(ValueError, match=r"'representation' argument of profiles names a tree"):
        dp.Profiler({"A": bad_set}, representation=name, distance="euclidean")


def test_a_plain_representation_name_survives_a_zarr_round_trip(tmp_path):
    pytest.importorskip("zarr")
    tree = dp.profiles({"A": X}, representation="a-b.c", distance="euclidean", families="richness")
    tree.to_zarr(tmp_path / "p.zarr")
    assert dp.open_profiles(tmp_path / "p.zarr").dp.conditions == ["a-b.c/euclidean"]


def test_featuriser_names_are_checked_before_the_samples_are_read():
    from diversity_profiles import images, text

    with pytest.raises(ValueError, match=r"'name' argument of images.profiles names a tree"):
        images.profiles({"A": ["not an image"]}, size=2, name="..")
    with pytest.raises(ValueError, match=r"'name' argument of text.profiles names a tree"):
        text.profiles({"A": ["a b", "c d"]}, representation="ngram", name="a\\b")


# -- 3. A zero-width domain is one point -----------------------------------------------


def test_a_zero_width_range_is_one_point_with_the_value_of_that_point():
    D = squareform(pdist(X[:8]))
    tree = dp.profiles(
        {"A": X[:8]},
        representation="r",
        distance="euclidean",
        families=["magnitude", "vendi", "energy", "circles"],
        domains={
            "magnitude": (3.0, 3.0),
            "vendi": (2.0, 2.0),
            "energy": (1.0, 1.0),
            "circles": (0.5, 0.5),
        },
        n_boot=0,
    )
    ds = tree["r/euclidean"].to_dataset()
    for axis, point in (("t", 3.0), ("q", 2.0), ("s", 1.0), ("tau", 0.5)):
        assert ds[axis].values.tolist() == [point]
    # Magnitude at t = 3: the sum of the weights w solving exp(-t D) w = 1.
    w = np.linalg.solve(np.exp(-3.0 * D), np.ones(8))
    assert float(ds["magnitude"].values[0, 0]) == pytest.approx(w.sum(), rel=1e-9)


def test_a_range_narrower_than_its_points_keeps_each_float_once():
    hi = np.nextafter(3.0, 4.0)
    tree = dp.profiles(
        {"A": X},
        representation="r",
        distance="euclidean",
        families="magnitude",
        domains={"magnitude": (3.0, hi)},
        n_boot=0,
    )
    assert tree["r/euclidean"]["t"].values.tolist() == [3.0, hi]


# -- 4. The grid is bounded ------------------------------------------------------------


@pytest.mark.parametrize("n_points", [10**8, MAX_N_POINTS + 1])
def test_n_points_beyond_the_maximum_is_refused_at_once(n_points):
    start = time.perf_counter()
    with pytest.raises(
        ValueError,
        match=rf"'n_points' argument of profiles must be at most "
        rf"{MAX_N_POINTS}.*Got {n_points}",
    ):
        dp.profiles({"A": X}, **KW, n_points=n_points)
    assert time.perf_counter() - start < 2.0


def test_an_explicit_grid_and_an_extension_are_bounded_too():
    with pytest.raises(ValueError, match=rf"domains\['energy'\].*{MAX_N_POINTS + 1} points"):
        dp.profiles(
            {"A": X},
            representation="r",
            distance="euclidean",
            families="energy",
            domains={"energy": np.linspace(0.1, 2, MAX_N_POINTS + 1)},
        )
    profiler = dp.Profiler({"A": X}, representation="r", distance="euclidean")
    tree = profiler.profiles(families="magnitude", n_points=10, n_boot=0)
    with pytest.raises(ValueError, match=rf"'points'.*at most {MAX_N_POINTS - 10} beyond"):
        profiler.extend(tree, "magnitude", points=MAX_N_POINTS)
    one = profiler.profiles(families="magnitude", domains={"magnitude": (2.0, 2.0)}, n_boot=0)
    with pytest.raises(ValueError, match=r"needs at least two positive points"):
        profiler.extend(one, "magnitude")


def test_the_cli_refuses_a_huge_n_points_in_one_line(tmp_path):
    np.save(tmp_path / "a.npy", X)
    start = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "diversity_profiles.cli",
            "compute",
            "a.npy",
            "--n-points",
            str(10**8),
            "--families",
            "energy",
            "-o",
            "out.nc",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    assert time.perf_counter() - start < 60
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "n_points" in run.stderr and str(MAX_N_POINTS) in run.stderr
    assert not (tmp_path / "out.nc").exists()
    help_text = subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", "compute", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    ).stdout
    assert str(MAX_N_POINTS) in help_text  # the documented bound is the enforced one


# -- 5. A torch tensor without values --------------------------------------------------


def test_a_meta_tensor_is_refused_in_one_clear_line():
    torch = pytest.importorskip("torch")
    meta = torch.zeros(5, 3, device="meta")
    with pytest.raises(ValueError, match=r"sets\['A'\].*'meta' device.*no values"):
        dp.profiles({"A": meta}, **KW)
    with pytest.raises(ValueError, match=r"'X' argument of pairwise_distances.*'meta' device"):
        dp.pairwise_distances(meta)
