"""The dask engine: the streamed passes as dask graphs, on a real LocalCluster of two worker
processes and on dask's local scheduler, against the in-memory engine (bit for bit) and
against brute-force references."""

import subprocess
import sys
from functools import partial

import numpy as np
import pytest
import xarray as xr
from scipy.spatial.distance import cdist, pdist

import diversity_profiles as dp
from diversity_profiles.engines import _dask_engine as dask_engine
from diversity_profiles.engines import _streaming as streaming
from diversity_profiles.engines._dask_operator import DaskPairOperator
from diversity_profiles.large._magnitude_large import _exp_entry, magnitude_large
from diversity_profiles.large._vendi_large import vendi_large

from .engine_checks import same_interpolation_bound

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
threadpool_limits = pytest.importorskip("threadpoolctl").threadpool_limits

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


#: Families whose iterative solvers sum their products in another order on dask (a tree
#: of row-block partials): equal within their stated bounds, not bit for bit. Magnitude's
#: bracket is tight (relative width ~ its accuracy), so its values must agree to 1e-6;
#: Vendi's (wide at low q) must hold the other engine's value.
SOLVED = {"magnitude": 1e-6, "vendi": None}


def _assert_same_tree(a, b, close=(), bracketed=SOLVED):
    """Equal bit for bit, except ``close`` variables (float sums in another order) and the
    ``bracketed`` families (see :func:`_assert_within_bounds`)."""
    assert sorted(a.data_vars) == sorted(b.data_vars)
    for var in a.data_vars:
        family = var.removesuffix("_lower").removesuffix("_upper")
        if family in bracketed and f"{family}_upper" in a.data_vars:
            _assert_within_bounds(
                *(a[family + s].values for s in ("", "_lower", "_upper")),
                *(b[family + s].values for s in ("", "_lower", "_upper")),
                rtol=bracketed[family],
            )
        elif var in close:
            np.testing.assert_allclose(a[var].values, b[var].values, rtol=1e-12, err_msg=var)
        elif var.removesuffix("_ci_lower").removesuffix("_ci_upper") in bracketed:
            # A sampling band is the estimate minus replicate quantiles (replicates of the
            # exact method on subsets: the same on both engines); the estimates differ
            # within their brackets, so the bands' offsets from them agree to about the
            # estimates' own difference (the growth factor g reads the estimate too).
            family = var.removesuffix("_ci_lower").removesuffix("_ci_upper")
            np.testing.assert_allclose(
                (a[var] - a[family]).values, (b[var] - b[family]).values,
                rtol=1e-4, atol=1e-9, err_msg=var,
            )  # fmt: skip
        elif var.removesuffix("_boot") in bracketed and a[var].attrs.get("kind") == "multiplier":
            # Multiplier draws are the estimate plus each draw's offset (magnitude's exact
            # jackknife, interpolated in proportion to the estimates' variance shape): the
            # offsets agree to about the estimates' own difference.
            family = var.removesuffix("_boot")
            np.testing.assert_allclose(
                (a[var] - a[family]).values, (b[var] - b[family]).values,
                rtol=1e-6, atol=1e-9, err_msg=var,
            )  # fmt: skip
        elif "multiplier draws" in str(a[var].attrs.get("method", "")):
            # Multiplier draws are BLAS products of influences (from distance GEMMs): their
            # last bits follow the library's thread partition, which can differ between a
            # CLI process and this one (1 ulp seen on a 2-core machine).
            np.testing.assert_allclose(a[var].values, b[var].values, rtol=1e-12, err_msg=var)
        elif var.endswith("_interpolation_error"):
            same_interpolation_bound(a, b, var)
        elif var.removesuffix("_error") in bracketed:  # an estimate's error bar, summed
            # in another order too: the same bar to well within its own accuracy (at high
            # orders it is float64 rounding of the value, ~1e-11 relative)
            e1, e2 = a[var].values, b[var].values
            slack = 1e-2 * np.abs(e2) + 1e-10 * np.abs(a[var.removesuffix("_error")].values)
            assert np.all(np.abs(e1 - e2) <= slack), (var, e1, e2)
        else:
            assert np.array_equal(a[var].values, b[var].values, equal_nan=True), var
        assert a[var].attrs.get("method") == b[var].attrs.get("method"), var


def _assert_within_bounds(value, lower, upper, value2, lower2, upper2, rtol=None):
    """Two certified brackets of one quantity must overlap (both hold the truth); the two
    values agree to ``rtol`` or, without one, each lies in the other's bracket."""
    slack = 1e-12 * np.abs(value)  # float64 rounding of the bounds themselves
    assert np.all(lower <= upper2 + slack) and np.all(lower2 <= upper + slack)
    if rtol is not None:
        np.testing.assert_allclose(value2, value, rtol=rtol)
    else:
        assert np.all((lower2 - slack <= value) & (value <= upper2 + slack)), (value, lower2)
        assert np.all((lower - slack <= value2) & (value2 <= upper + slack)), (value2, lower)


def _contains(result, exact, rtol=1e-12):
    """``result``'s certified bracket holds the exact value (up to float64 rounding)."""
    slack = rtol * np.abs(exact)
    assert np.all(result.lower <= exact + slack), (result.lower, exact)
    assert np.all(exact <= result.upper + slack), (exact, result.upper)


def _exact_magnitude(X, t):
    D = cdist(X, X)
    return np.array([np.linalg.solve(np.exp(-s * D), np.ones(len(X))).sum() for s in t])


def _exact_vendi(X, q, bandwidth):
    lam = np.clip(np.linalg.eigvalsh(np.exp(-(cdist(X, X) ** 2) / (2 * bandwidth**2))), 0, None)
    lam /= lam.sum()
    out = []
    for order in q:
        if order == 1:
            nz = lam[lam > 0]
            out.append(np.exp(-(nz * np.log(nz)).sum()))
        elif np.isinf(order):
            out.append(1 / lam.max())
        else:
            out.append((lam**order).sum() ** (1 / (1 - order)))
    return np.array(out)


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


def test_pair_operator_on_local_scheduler_against_dense():
    X = _data(700, d=6, seed=9)
    s = np.random.default_rng(9).uniform(0.5, 1.5, 700)
    V = np.random.default_rng(10).normal(size=(700, 3))
    K = s[:, None] * np.exp(-cdist(X, X) / 4) * s[None, :]
    op = DaskPairOperator(dask_engine.ship(X), "euclidean", partial(_exp_entry, 0.25), scale=s,
                          block=256)  # fmt: skip
    y, total = op.matmat(V, double=True, sum_squares=True)  # 3 row-block tasks, a tree
    np.testing.assert_allclose(y, K @ V, rtol=1e-12, atol=1e-12)
    assert total == pytest.approx((K**2).sum(), rel=1e-12)
    for held in (False, True):  # float32 tiles: ~1e-7 relative per entry
        if held:
            op.hold()
        assert np.abs(op.matmat(V) - K @ V).max() <= 1e-5 * np.abs(K @ V).max()
        assert np.abs(op.matmat(V[:, 0]) - K @ V[:, 0]).max() <= 1e-5 * np.abs(K @ V).max()


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
    # dask's workers run BLAS on one thread (OPENBLAS_NUM_THREADS=1), and OpenBLAS's float32
    # products round differently on one thread than on two: the in-memory reference is
    # computed on one thread too, so "bit for bit" compares like with like.
    for precision in ("float64", "float32"):
        with threadpool_limits(1):
            mem = streaming.distance_pass(X, "euclidean", block=384, precision=precision)
        _assert_same_histogram(
            mem, dask_engine.distance_pass(shipped, "euclidean", block=384, precision=precision)
        )
    taus = np.quantile(pdist(X[:500]), [0.01, 0.1, 0.5])
    mem = streaming.threshold_pass(X, "euclidean", taus, _gaussian, block=384)
    got = dask_engine.threshold_pass(shipped, "euclidean", taus, _gaussian, block=384)
    assert np.array_equal(mem.degrees, got.degrees) and np.array_equal(mem.pairs, got.pairs)
    assert mem.sum_k2 == got.sum_k2
    # Brute force in float64: Σ_{i<j} K_ij² within float32 distance round-off.
    assert got.sum_k2 == pytest.approx(np.sum(np.exp(-(pdist(X) ** 2) / 50) ** 2), rel=1e-5)


def _levenshtein(a: str, b: str) -> int:
    """Edit distance by the textbook dynamic programme (the reference and the callable)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def test_callable_runs_on_the_cluster_and_equals_a_double_loop(client):
    rng = np.random.default_rng(5)
    words = ["".join(rng.choice(list("abcd"), rng.integers(1, 7))) for _ in range(150)]
    pairs = [(a, b) for i, a in enumerate(words) for b in words[i + 1 :]]
    for func, ref in (
        (_levenshtein, np.mean([_levenshtein(a, b) for a, b in pairs])),
        (lambda a, b: abs(len(a) - len(b)), np.mean([abs(len(a) - len(b)) for a, b in pairs])),
    ):
        with distributed.get_task_stream(client) as stream:
            tree = dp.profiles(
                {"w": words},
                representation="words",
                distance=func,
                families=["average_distance"],
            )
        assert any("_cluster_rows" in str(task["key"]) for task in stream.data)
        node = tree["words/precomputed"]
        on = node.attrs["distance_callable_evaluated_on"]
        assert on.startswith(f"dask.distributed cluster ({client.scheduler.address})"), on
        got = float(node["average_distance"].sel(set="w"))
        assert got == pytest.approx(ref, rel=1e-12)


def test_cluster_matvec_and_covariance_against_dense(client):
    X = _data(2000, d=8)
    v = np.random.default_rng(4).normal(size=(2000, 2))
    K = np.exp(-(cdist(X, X) ** 2) / 50)
    y = dask_engine.kernel_matvec(X, v, "euclidean", _gaussian, block=384)
    assert np.abs(y - K @ v).max() <= 1e-5 * np.abs(K @ v).max()
    C = dask_engine.gram(X, 0.5, rows=256, per_task=700)  # 3 tasks, a tree sum
    np.testing.assert_allclose(C, 0.25 * X.T @ X, rtol=1e-12, atol=1e-9)


def test_cluster_pair_operator_holds_strips_on_the_workers(client):
    X = _data(900, d=8, seed=11)
    V = np.random.default_rng(11).normal(size=(900, 2))
    K = np.exp(-cdist(X, X) / 2)
    op = DaskPairOperator(
        dask_engine.ship(X), "euclidean", partial(_exp_entry, 0.5), block=128, held_groups=2
    )
    # 8 row blocks (8, 7, ..., 1 tiles) dealt to the two worker threads, 18 tiles each.
    assert op.groups == op.held_groups == [[0, 384, 512, 896], [128, 256, 640, 768]]
    op.hold()
    # The float32 row strips of the upper triangle, one future per group on the workers:
    # the client holds none of K.
    assert len(op.held) == 2 and all(isinstance(f, distributed.Future) for f in op.held)
    y = op.matmat(V)
    holders = client.who_has(op.held)
    assert all(len(holders[f.key]) >= 1 for f in op.held)
    assert np.abs(y - K @ V).max() <= 1e-5 * np.abs(K @ V).max()
    y64, total = op.matmat(V, double=True, sum_squares=True)  # float64 tiles, not the strips
    np.testing.assert_allclose(y64, K @ V, rtol=1e-12, atol=1e-12)
    assert total == pytest.approx((K**2).sum(), rel=1e-12)


def test_cluster_magnitude_large_equals_in_memory_and_brackets_dense(client):
    X = _data(500, d=6, seed=12)  # a duplicate row: the distinct rows are shipped anew
    t = np.array([0.05, 0.5, 2.0, 10.0])
    exact = _exact_magnitude(np.delete(X, 1, axis=0), t)
    for memory_limit in (None, 1.0):  # Z_t's float32 strips held on the workers; recomputed
        kw = dict(memory_limit=memory_limit, rtol=1e-8)
        mem = magnitude_large(X, t, **kw)
        got = magnitude_large(da.from_array(X, chunks=(200, -1)), t, **kw)
        # The client never holds the n × n distances for a dask set: "held" there means
        # Z_t's strips on the workers.
        dask_mode = "held" if mem.mode == "distances" else mem.mode
        assert (got.engine, mem.engine, got.mode, got.n_distinct) == (
            "dask", "numpy", dask_mode, 499)  # fmt: skip
        assert got.kind == mem.kind
        for r in (mem, got):
            _contains(r, exact)
            np.testing.assert_allclose(r.value, exact, rtol=1e-6)
        _assert_within_bounds(
            mem.value, mem.lower, mem.upper, got.value, got.lower, got.upper, rtol=1e-7
        )


def test_cluster_vendi_large_equals_in_memory_and_brackets_dense(client):
    X = _data(600, d=5, seed=13, duplicates=False)
    q = np.array([0.5, 1.0, 2.0, 4.0, np.inf])
    h = float(np.median(pdist(X)))
    exact = _exact_vendi(X, q, h)
    mem = vendi_large(X, q, bandwidth=h, rank=60)
    got = vendi_large(X, q, bandwidth=h, rank=60, shipped=dask_engine.ship(X))
    assert (got.engine, mem.engine, got.details["held"]) == ("dask", "numpy", True)
    for r in (mem, got):
        _contains(r, exact)
    _assert_within_bounds(mem.value, mem.lower, mem.upper, got.value, got.lower, got.upper)
    assert got.value[2] == pytest.approx(exact[2], rel=1e-12)  # q = 2: exact, float64 tiles


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
    assert "vendi_large" in got.attrs["engine_tasks"]
    # The iterative solvers ran (cosine Vendi is the d × d covariance's spectrum instead),
    # their products as dask tasks; in memory, in this process.
    for family in ("magnitude", "vendi") if distance == "euclidean" else ("magnitude",):
        assert f"{family}_large" in got[family].attrs["method_note"]
        assert "ran as dask tasks" in got[family].attrs["method_note"]
        assert "dask" not in ref[family].attrs["method_note"]


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


def _gaussian_block(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.exp(-(cdist(A, B) ** 2) / 8)


def test_vectorised_callable_runs_on_the_cluster_and_equals_numpy(client):
    X = _data(700, d=4, seed=3)
    with distributed.get_task_stream(client) as stream:
        tree = dp.profiles(
            {"x": X},
            representation="rbf",
            distance="precomputed",
            similarities=dp.pairwise(_gaussian_block, vectorised=True),
            families=["vendi"],
            domains={"vendi": [1.0]},
        )
    assert any("_vectorised_rows" in str(task["key"]) for task in stream.data)
    node = tree["rbf/precomputed"]
    on = node.attrs["similarity_callable_evaluated_on"]
    assert on.startswith(f"dask.distributed cluster ({client.scheduler.address})"), on
    # Reference: exp(Shannon entropy) of the eigenvalues of K / n, K built by scipy directly.
    lam = np.clip(np.linalg.eigvalsh(np.exp(-(cdist(X, X) ** 2) / 8) / len(X)), 0, None)
    lam = lam[lam > 0]
    ref = np.exp(-np.sum(lam * np.log(lam)))
    assert float(node["vendi"].sel(set="x", q=1.0)) == pytest.approx(ref, rel=1e-9)

