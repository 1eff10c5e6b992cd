"""The torch engine (``device=``) on CPU torch: the passes against the numpy engine and
brute-force references, profiles against the numpy engine's and the dense exact values,
torch tensors as sets, and the errors for devices that do not exist here."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import diversity_profiles as dp
from diversity_profiles.engines import _streaming as streaming
from diversity_profiles.engines._distances import prepare_embeddings

from .engine_checks import same_interpolation_bound

torch = pytest.importorskip("torch", reason="torch is optional: pip install '.[torch]'")
from diversity_profiles.engines import _torch_engine as torch_engine  # noqa: E402  (after the skip)

FAMILIES = ["vendi", "energy", "average_distance", "circles", "magnitude", "richness"]


def _data(n=600, d=10, seed=0, duplicates=True):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, d)) * 3
    X = centres[rng.integers(0, 4, n)] + rng.normal(size=(n, d))
    if duplicates:
        X[1] = X[0]  # a duplicate: distance exactly 0
        X[3] = X[2] + 1e-9  # a near-duplicate: float32 GEMM noise, float64 difference 1e-9·√d
    return X


def _prepared(X, distance):
    return prepare_embeddings(X, distance, "test")


def _brute(X, distance):
    """Pairwise distances by scipy, from the row differences (``1 - cos`` as ``|u - v|²/2``
    for unit rows: scipy's ``1 - u·v`` rounds the near-duplicate's 1e-18 to 0)."""
    if distance == "cosine":
        return pdist(X, "sqeuclidean") / 2.0
    return pdist(X, {"euclidean": "euclidean", "tanimoto": "jaccard"}[distance])


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "tanimoto"])
def test_distance_pass_equals_numpy_engine_and_pdist(distance):
    X = _data()
    if distance == "tanimoto":
        X = (X > 0.5).astype(np.float64)
    X = _prepared(X, distance)
    ref = streaming.distance_pass(X, distance, block=256)
    got = torch_engine.distance_pass(X, distance, device="cpu", block=256)
    assert np.array_equal(got.counts, ref.counts)  # every pair in the same bin
    assert (got.n_pairs, got.n_zero, got.n_clipped, got.anchor) == (
        ref.n_pairs, ref.n_zero, ref.n_clipped, ref.anchor
    )  # fmt: skip
    # u: offsets inside bins 6.8e-4 wide; float64 GEMMs summed in another order differ by ~1e-14
    np.testing.assert_allclose(got.sum_u, ref.sum_u, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.sum_d, ref.sum_d, rtol=1e-13)
    brute = _brute(X, distance)
    np.testing.assert_allclose(got.mean_distance(), brute.mean(), rtol=1e-12)
    _, mult = np.unique(X, axis=0, return_counts=True)
    assert got.n_zero == np.sum(mult * (mult - 1) // 2)  # identical rows, and only they
    if distance == "euclidean":  # the near-duplicate: from the difference, not the GEMM
        assert got.counts.sum() == brute.size - 1
        assert np.isclose(np.linalg.norm(X[3] - X[2]), 1e-9 * np.sqrt(X.shape[1]), rtol=1e-6)


def _tight_thresholds(brute, k=40):
    """Midpoints of the k closest pairs of consecutive distances: float32 distances (~1e-7
    relative error) put pairs on the wrong side of these unless they are recounted."""
    s = np.unique(brute)
    gaps = np.diff(s) / s[1:]
    pick = np.argsort(gaps)[:k]
    return np.sort((s[pick] + s[pick + 1]) / 2)


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_threshold_counts_are_exact_in_float32(distance):
    X = _prepared(_data(n=500), distance)
    brute = squareform(_brute(X, distance))
    taus = _tight_thresholds(brute[np.triu_indices(len(X), 1)])
    assert np.min(np.diff(np.unique(brute))[np.diff(np.unique(brute)) > 0]) < 1e-6 * taus.max()
    got = torch_engine.threshold_pass(X, distance, taus, device="cpu", block=128)
    within = brute[:, :, None] <= taus[None, None, :]
    degrees = within.sum(axis=1) - 1  # the point itself excluded
    assert np.array_equal(got.degrees, degrees)
    assert np.array_equal(got.pairs, (within.sum(axis=(0, 1)) - len(X)) // 2)
    ref = streaming.threshold_pass(X, distance, taus, block=128)
    assert np.array_equal(got.degrees, ref.degrees)


def test_sum_of_squared_kernel_matches_brute_force():
    X = _prepared(_data(n=400), "euclidean")
    h = 3.0

    def kernel(D):  # numpy or torch, as large.counts writes it
        K = D * D
        K *= -0.5 / h**2
        return torch_engine.namespace(D).exp(K, out=K)

    got = torch_engine.threshold_pass(X, "euclidean", None, kernel, device="cpu", block=128)
    d = pdist(X)
    np.testing.assert_allclose(got.sum_k2, np.sum(np.exp(-0.5 * (d / h) ** 2) ** 2), rtol=1e-12)


def test_dual_spectrum_matches_the_covariance():
    X = _prepared(_data(n=300), "cosine")
    lam = torch_engine.dual_spectrum(X, device="cpu")
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(X.T @ X / len(X)), atol=1e-13)


def _node(tree):
    return tree[tree.dp.conditions[0]].to_dataset()


def _sets(duplicates=False):
    """Two sets; with ``duplicates`` an identical pair each (magnitude's Z_t stays well
    conditioned without the near-duplicate, so its iterative estimate is reproducible)."""
    rng = np.random.default_rng(1)
    A = _data(n=400, seed=2, duplicates=False)
    B = _data(n=300, seed=3, duplicates=False) * 1.3 + rng.normal(size=10)
    if duplicates:
        A[1], B[1] = A[0], B[0]
    return {"A": A, "B": B}


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_profiles_on_cpu_torch_equal_the_numpy_engine(distance):
    sets = _sets()
    # No replicates: the engines' values are compared (device arrays get no influences yet).
    kw = dict(representation="r", distance=distance, families=FAMILIES, n_points=10, n_boot=0)
    ref = _node(dp.profiles(sets, method="large", **kw))
    got = _node(dp.profiles(sets, device="cpu", **kw))
    assert sorted(got.data_vars) == sorted(ref.data_vars)
    for var in ref.data_vars:
        assert got[var].attrs.get("method") == ref[var].attrs.get("method"), var
        if var.endswith("_interpolation_error"):
            same_interpolation_bound(got, ref, var)
        elif var.startswith(("circles", "richness", "n_samples")):
            assert np.array_equal(got[var].values, ref[var].values), var  # counts: exact
        elif var.startswith(("magnitude", "vendi")) and ref[var].attrs.get("method"):
            # iterative solvers (magnitude_large, vendi_large) stop at their rtol (1e-7);
            # Vendi's stochastic (SLQ) estimates agree within their stated error
            fam = var.split("_")[0]
            tol = 1e-6 * np.abs(ref[var].values)
            if var == f"{fam}_error":
                # An error bar is itself estimated (the probes' spread, and the float32
                # round-off of each engine where it joins the bar): the same size on both
                # engines, not the same digits.
                e_got, e_ref = got[var].values, ref[var].values
                floor = 1e-6 * np.abs(ref[fam].values)
                assert np.all(np.isfinite(e_got) & (e_got >= 0)), var
                assert np.all((e_got <= 10 * e_ref + floor) & (e_ref <= 10 * e_got + floor)), var
                continue
            if f"{fam}_error" in ref:  # two estimates, each within its error of the truth
                tol = np.maximum(tol, ref[f"{fam}_error"].values + got[f"{fam}_error"].values)
            elif var.startswith("vendi"):
                # Randomised Ritz bases: each engine's certified bracket holds the true value,
                # so the two brackets overlap and the SLQ point lies inside the other's.
                lo, hi = ref["vendi_lower"].values - tol, ref["vendi_upper"].values + tol
                if var == "vendi_lower":
                    assert np.all(got[var].values <= hi), var
                elif var == "vendi_upper":
                    assert np.all(got[var].values >= lo), var
                else:
                    assert np.all((lo <= got[var].values) & (got[var].values <= hi)), var
                continue
            assert np.all(np.abs(got[var].values - ref[var].values) <= tol), var
        else:  # float64 sums in another order (and grids derived from them)
            np.testing.assert_allclose(got[var].values, ref[var].values, rtol=1e-10, err_msg=var)
    assert got.attrs["engine"] == f"torch {torch.__version__}"
    assert got.attrs["device"] == "cpu"
    assert "float32" in got.attrs["device_precision"]
    assert "engine" not in ref.attrs


def test_bounds_bracket_the_dense_exact_values():
    sets = _sets(duplicates=True)
    kw = dict(representation="r", distance="euclidean", families=FAMILIES, n_points=12)
    got = _node(dp.profiles(sets, device="cpu", **kw))
    domains = {f: got[p].values for f, p in (("vendi", "q"), ("magnitude", "t"),
                                             ("circles", "tau"), ("energy", "s"))}  # fmt: skip
    exact = _node(dp.profiles(sets, method="exact", domains=domains, bandwidth=
                              float(got.attrs["bandwidth"]), **kw))  # fmt: skip
    slack = 1e-9
    for fam in ("vendi", "magnitude", "energy"):
        lo, hi, ex = got[f"{fam}_lower"].values, got[f"{fam}_upper"].values, exact[fam].values
        fin = np.isfinite(ex)
        assert np.all(lo[fin] <= ex[fin] * (1 + np.sign(ex[fin]) * slack) + slack), fam
        assert np.all(hi[fin] >= ex[fin] * (1 - np.sign(ex[fin]) * slack) - slack), fam
    assert np.all(got["circles"].values <= exact["circles_upper"].values)
    assert np.all(got["circles_upper"].values >= exact["circles"].values)
    np.testing.assert_allclose(
        got["average_distance"].values, exact["average_distance"].values, rtol=1e-12
    )
    assert np.array_equal(got["richness"].values, exact["richness"].values)


def test_torch_tensors_run_on_their_device_and_equal_numpy_input():
    sets = _sets()
    tensors = {k: torch.as_tensor(v, dtype=torch.float32) for k, v in sets.items()}
    as_numpy = {k: v.numpy().astype(np.float64) for k, v in tensors.items()}
    kw = dict(representation="r", distance="cosine", families=FAMILIES, n_points=10)
    got = _node(dp.profiles(tensors, **kw))  # no device: the tensors' own (cpu)
    ref = _node(dp.profiles(as_numpy, device="cpu", **kw))
    assert got.attrs["device"] == "cpu"
    for var in ref.data_vars:
        assert np.array_equal(got[var].values, ref[var].values, equal_nan=True), var
    # A bfloat16 tensor (numpy has none) is taken as float64 of its values.
    half = {k: v.to(torch.bfloat16) for k, v in tensors.items()}
    tree = dp.profiles(half, device="cpu", **{**kw, "families": ["average_distance"]})
    assert np.all(np.isfinite(_node(tree)["average_distance"].values))


@pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="checks the message for a machine without CUDA; this machine has a CUDA device",
)
def test_cuda_without_a_device_says_so_and_names_the_fix():
    with pytest.raises(RuntimeError) as err:
        dp.profiles(_sets(), representation="r", distance="euclidean", device="cuda")
    msg = str(err.value)
    assert "'device'" in msg and "'cuda'" in msg
    assert 'pip install "diversity-profiles[torch]"' in msg and "device='cpu'" in msg


@pytest.mark.parametrize(
    "device, error, words",
    [("tpu", ValueError, "'cuda', 'cuda:<index>' or 'cpu'"), ("meta", ValueError, "float64"),
     (3, TypeError, "Got int 3")],
)  # fmt: skip
def test_bad_devices_are_refused(device, error, words):
    with pytest.raises(error, match="'device' argument of profiles") as err:
        dp.profiles(_sets(), representation="r", distance="euclidean", device=device)
    assert words in str(err.value)


def test_without_torch_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # makes `import torch` fail, as if absent
        "import numpy as np, diversity_profiles as dp\n"
        "try:\n"
        "    dp.profiles({'A': np.eye(3)}, representation='r', distance='euclidean',"
        " device='cuda')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'device' argument of profiles needs torch" in out.stdout
    assert 'pip install "diversity-profiles[torch]"' in out.stdout


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_circles_large_on_the_device_equals_the_host(distance):
    from diversity_profiles.large._circles_large import circles_large

    X = _prepared(_data(n=500), distance)
    brute = _brute(X, distance)
    taus = np.concatenate([[0.0], _tight_thresholds(brute, 10), np.quantile(brute, [0.05, 0.3])])
    ref = circles_large(X, taus, distance=distance)
    got = circles_large(X, taus, distance=distance, device="cpu")
    assert got.n_pairs == ref.n_pairs
    assert np.array_equal(got.lower, ref.lower) and np.array_equal(got.upper, ref.upper)
    for k, tau in enumerate(taus):  # the witnesses are independent sets of G_tau
        w = got.witness[k]
        assert len(w) == got.lower[k]
        assert np.all(squareform(brute)[np.ix_(w, w)][np.triu_indices(len(w), 1)] > tau)


def test_iterative_solvers_on_the_device_bracket_dense_exact_values():
    from diversity_profiles.large._magnitude_large import magnitude_large
    from diversity_profiles.large._vendi_large import vendi_large

    X = _data(n=300, duplicates=False)
    D = squareform(pdist(X))
    ts = np.array([0.1, 1.0, 5.0])
    for memory_limit in (None, 1e3):  # K held on the device, or tiles recomputed per product
        got = magnitude_large(X, ts, device="cpu", memory_limit=memory_limit)
        host = magnitude_large(X, ts, memory_limit=memory_limit)
        exact = np.array([np.linalg.solve(np.exp(-t * D), np.ones(len(X))).sum() for t in ts])
        assert np.all(got.lower <= exact * (1 + 1e-12))
        certified = np.array(got.kind) == "certified"
        assert np.all(got.upper[certified] >= exact[certified] * (1 - 1e-12))
        np.testing.assert_allclose(got.value, exact, rtol=1e-6)
        np.testing.assert_allclose(got.value, host.value, rtol=1e-6)
    h = 2.0
    lam = np.linalg.eigvalsh(np.exp(-0.5 * (D / h) ** 2) / len(X))
    lam = lam[lam > 1e-15]
    qs = np.array([0.5, 1.0, 2.0, np.inf])
    exact = [np.sum(lam**0.5) ** 2, np.exp(-np.sum(lam * np.log(lam))), 1 / np.sum(lam**2),
             1 / lam.max()]  # fmt: skip
    got = vendi_large(X, qs, bandwidth=h, device="cpu")
    assert np.all(got.lower <= np.array(exact) * (1 + 1e-9))
    assert np.all(got.upper >= np.array(exact) * (1 - 1e-9))
    np.testing.assert_allclose(got.value[2], exact[2], rtol=1e-12)  # q = 2: exact


def test_cli_device(tmp_path):
    np.save(tmp_path / "a.npy", _data(60, duplicates=False))

    def cli(*extra):
        args = ["compute", tmp_path / "a.npy", "--families", "energy,average_distance"]
        return subprocess.run(
            [sys.executable, "-m", "diversity_profiles.cli", *map(str, args), *extra],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    run = cli("-o", tmp_path / "cpu.nc", "--device", "cpu", "--n-points", "8")
    assert run.returncode == 0, run.stderr
    assert _node(dp.open_profiles(tmp_path / "cpu.nc")).attrs["device"] == "cpu"
    if not torch.cuda.is_available():
        run = cli("-o", tmp_path / "cuda.nc", "--device", "cuda")
        assert run.returncode == 1 and "Traceback" not in run.stderr
        assert "'cuda'" in run.stderr and "device='cpu'" in run.stderr
        assert not (tmp_path / "cuda.nc").exists()

