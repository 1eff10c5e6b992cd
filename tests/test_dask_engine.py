"""The dask engine: the streamed passes as dask graphs, on a real LocalCluster of two worker
processes and on dask's local scheduler, against the in-memory engine (bit for bit) and
against brute-force references."""

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr
from scipy.spatial.distance import cdist, pdist

import diversity_profiles as dp
from diversity_profiles import dask_engine, streaming

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

FAMILIES = ["vendi", "energy", "average_distance", "circles", "magnitude", "richness"]


def _data(n=2000, d=12, seed=0, duplicates=True):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(5, d)) * 3
    X = centres[rng.integers(0, 5, n)] + rng.normal(size=(n, d))
    if duplicates:
        X[1] = X[0]  # a duplicate pair: distance exactly 0
        X[3] = X[2] + 1e-9  # a near-duplicate: recomputed in float64 by both engines
    return X


def _assert_same_histogram(a, b):
    for name in ("counts", "sum_u", "sum_u2"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.n_pairs, a.n_zero, a.sum_d) == (b.n_pairs, b.n_zero, b.sum_d)


def _assert_same_tree(a, b, close=()):
    """Equal bit for bit, except ``close`` variables (float sums in another order)."""
    assert sorted(a.data_vars) == sorted(b.data_vars)
    for var in a.data_vars:
        if var in close:
            np.testing.assert_allclose(a[var].values, b[var].values, rtol=1e-12, err_msg=var)
        else:
            assert np.array_equal(a[var].values, b[var].values, equal_nan=True), var
        assert a[var].attrs.get("method") == b[var].attrs.get("method"), var


def _gaussian(d):
    K = d * d
    K *= np.float32(-1 / 50)
    return np.exp(K, out=K)


def test_tree_reduce_is_the_level_by_level_tree():
    # Reference: combine adjacent groups of `fanin`, level by level, until one item is left.
    def levelwise(xs, fanin):
        while len(xs) > 1:
            groups = [xs[k : k + fanin] for k in range(0, len(xs), fanin)]
            xs = [g[0] if len(g) == 1 else show(*g) for g in groups]
        return xs[0]

    def show(*xs):
        return "(" + "+".join(map(str, xs)) + ")"

    for fanin in (2, 3, 4):
        for rows in range(1, 70):
            assert streaming.tree_reduce(range(rows), show, fanin) == levelwise(
                list(range(rows)), fanin
            )


# --- without a client: dask's local scheduler (these run before the cluster starts) -------


def test_no_client_is_active():
    assert dask_engine.active_client() is None


def test_local_scheduler_passes_equal_in_memory_bitwise_and_brute_force():
    X = _data(1500)
    h_mem = streaming.distance_pass(X, "euclidean", block=256)
    h_dask = dask_engine.distance_pass(X, "euclidean", block=256)
    _assert_same_histogram(h_mem, h_dask)
    D = pdist(X)
    assert h_dask.n_pairs == D.size and h_dask.n_zero == 1
    assert h_dask.mean_distance() == pytest.approx(D.mean(), rel=1e-12)


def test_threshold_counts_against_brute_force_on_integer_points():
    # Integer coordinates: squared distances are exact integers in float32 too, and the
    # thresholds sqrt(k + 0.5) lie far from every distance, so the counts are exact.
    X = np.random.default_rng(1).integers(0, 6, size=(700, 3)).astype(float)
    taus = np.sqrt(np.array([2, 5, 9, 20]) + 0.5)
    c = dask_engine.threshold_pass(X, "euclidean", taus, block=128)
    mem = streaming.threshold_pass(X, "euclidean", taus, block=128)
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    expected = np.stack([(D <= t).sum(axis=1) for t in taus], axis=1)
    for counts in (c, mem):
        assert np.array_equal(counts.degrees, expected)
        assert np.array_equal(counts.pairs, expected.sum(axis=0) // 2)
        assert np.isnan(counts.sum_k2)


def test_dask_array_input_without_client_equals_numpy_large():
    X, Y = _data(900, seed=2, duplicates=False), _data(700, seed=3, duplicates=False) * 0.5
    kw = dict(representation="r", distance="euclidean", families=FAMILIES, n_points=12)
    ref = dp.profiles({"A": X, "B": Y}, method="large", **kw)["r/euclidean"].to_dataset()
    got = dp.profiles(
        {"A": da.from_array(X, chunks=(300, -1)), "B": da.from_array(Y, chunks=(200, 6))}, **kw
    )["r/euclidean"].to_dataset()
    _assert_same_tree(ref, got)
    assert got.attrs["engine"] == "dask (local scheduler)"
    assert "engine" not in ref.attrs
    refusal = r"dask input or a torch device runs the large-n methods; method='exact'"
    with pytest.raises(ValueError, match=refusal):
        dp.profiles({"A": da.from_array(X)}, n_boot=3, **kw)


# --- on a LocalCluster with two worker processes -------------------------------------------


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_cluster_passes_equal_in_memory_bitwise(client):
    assert len(client.scheduler_info()["workers"]) == 2
    X = _data(2000)
    shipped = dask_engine.ship(X)
    # Sent once to every worker: both hold the set before any task runs.
    assert len(client.who_has(shipped.handle)[shipped.handle.key]) == 2
    for precision in ("float64", "float32"):
        _assert_same_histogram(
            streaming.distance_pass(X, "euclidean", block=384, precision=precision),
            dask_engine.distance_pass(shipped, "euclidean", block=384, precision=precision),
        )
    taus = np.quantile(pdist(X[:500]), [0.01, 0.1, 0.5])
    mem = streaming.threshold_pass(X, "euclidean", taus, _gaussian, block=384)
    got = dask_engine.threshold_pass(shipped, "euclidean", taus, _gaussian, block=384)
    assert np.array_equal(mem.degrees, got.degrees) and np.array_equal(mem.pairs, got.pairs)
    assert mem.sum_k2 == got.sum_k2
    # Brute force in float64: Σ_{i<j} K_ij² within float32 distance round-off.
    assert got.sum_k2 == pytest.approx(np.sum(np.exp(-(pdist(X) ** 2) / 50) ** 2), rel=1e-5)


def test_cluster_matvec_and_covariance_against_dense(client):
    X = _data(2000, d=8)
    v = np.random.default_rng(4).normal(size=(2000, 2))
    K = np.exp(-(cdist(X, X) ** 2) / 50)
    y = dask_engine.kernel_matvec(X, v, "euclidean", _gaussian, block=384)
    assert np.abs(y - K @ v).max() <= 1e-5 * np.abs(K @ v).max()
    C = dask_engine.gram(X, 0.5, rows=256, per_task=700)  # 3 tasks, a tree sum
    np.testing.assert_allclose(C, 0.25 * X.T @ X, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_cluster_profiles_equal_in_memory_engine(client, distance):
    X, Y = _data(2000, seed=5, duplicates=False), _data(1200, seed=6, duplicates=False) * 0.7
    kw = dict(representation="r", distance=distance, families=FAMILIES, n_points=10)
    ref = dp.profiles({"A": X, "B": Y}, method="large", **kw)[f"r/{distance}"].to_dataset()
    got = dp.profiles(
        {"A": da.from_array(X, chunks=(1000, -1)), "B": da.from_array(Y, chunks=(1000, -1))},
        **kw,
    )[f"r/{distance}"].to_dataset()
    # Cosine Vendi's d × d covariance: BLAS syrk blocks in memory, a tree of GEMM partials on
    # dask; the eigenvalues agree to round-off, not bit for bit.
    _assert_same_tree(ref, got, close=("vendi",) if distance == "cosine" else ())
    assert got.attrs["engine"] == f"dask.distributed ({client.scheduler.address})"


def test_cluster_chunked_dataarray_with_sample_dimension(client):
    X = _data(1200, seed=7, duplicates=False)
    arr = xr.DataArray(X.T, dims=("feature", "sample")).chunk({"sample": 400})
    kw = dict(representation="r", distance="euclidean", families=["energy", "average_distance"])
    ref = dp.profiles({"A": X}, method="large", **kw)["r/euclidean"].to_dataset()
    got = dp.profiles({"A": arr}, **kw)["r/euclidean"].to_dataset()
    _assert_same_tree(ref, got)
    with pytest.raises(ValueError, match=r"must be a 2-D DataArray.*\('sample',\)"):
        dp.profiles({"A": xr.DataArray(X[:, 0], dims="sample").chunk(100)}, **kw)


def test_cli_scheduler_address_runs_on_the_cluster(client, tmp_path):
    X = _data(1000, seed=8, duplicates=False)
    np.save(tmp_path / "a.npy", X)
    out = tmp_path / "p.nc"
    families = "energy,average_distance,circles"
    args = ["compute", tmp_path / "a.npy", "-o", out, "--distance", "euclidean"]
    args += ["--families", families, "--n-points", "8", "--scheduler", client.scheduler.address]
    run = subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "on the dask cluster at" in run.stderr
    got = xr.open_datatree(out)["embedding/euclidean"].to_dataset().load()
    ref = dp.profiles(
        {"a": X},
        representation="embedding",
        distance="euclidean",
        families=families.split(","),
        n_points=8,
        method="large",
    )["embedding/euclidean"].to_dataset()
    _assert_same_tree(ref, got)
    assert got.attrs["engine"].startswith("dask.distributed (tcp://")


def test_cli_scheduler_bad_address_is_one_line(tmp_path):
    np.save(tmp_path / "a.npy", _data(50, duplicates=False))
    args = ["compute", tmp_path / "a.npy", "-o", tmp_path / "p.nc", "--scheduler", "no-port-here"]
    run = subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1
    assert "--scheduler 'no-port-here': cannot connect to a dask scheduler" in run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "p.nc").exists()
