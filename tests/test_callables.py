"""Sets of any objects under a callable distance or similarity (issue 25): ``dp.pairwise``,
the blockwise matrix of :func:`diversity_profiles.engines.callable_matrix`, its checks, and
what a tree records of the callable.

References are independent of the code under test: closed-form matrices built with numpy,
plain double loops, eigenvalues from numpy.

Run alone: ``python -m pytest tests/test_callables.py``.
"""

import hashlib
import inspect
import re

import numpy as np
import pytest

import diversity_profiles as dp
from diversity_profiles.engines import callable_matrix

NUMBERS = [0, 0, 10, 10, 20, 20]  # vendi-score's README example


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions), one row at a time."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def exp_similarity(a, b):
    return np.exp(-abs(a - b))


def other_exp_similarity(a, b):
    return np.exp(-2 * abs(a - b))


def words(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list("abcde"), size=rng.integers(2, 9))) for _ in range(n)]


def double_loop(objects, f) -> np.ndarray:
    return np.array([[f(a, b) for b in objects] for a in objects], dtype=np.float64)


def vendi_q1(K: np.ndarray) -> float:
    lam = np.linalg.eigvalsh(K / K.shape[0])
    lam = lam[lam > 1e-12]
    return float(np.exp(-np.sum(lam * np.log(lam))))


def test_levenshtein_reference_is_right():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("flaw", "lawn") == 2


def test_vendi_readme_example_through_profiles():
    k = lambda a, b: np.exp(-np.abs(a - b))  # noqa: E731 - as vendi-score's README writes it
    tree = dp.profiles(
        {"x": NUMBERS},
        representation="numbers",
        distance="precomputed",
        similarities=k,
        families="vendi",
        domains={"vendi": [1.0]},
        n_boot=0,
    )
    value = float(tree["numbers/precomputed"]["vendi"][0, 0])
    x = np.asarray(NUMBERS, dtype=float)
    closed = np.exp(-np.abs(x[:, None] - x[None, :]))
    assert value == pytest.approx(vendi_q1(closed), rel=1e-10)
    assert 2.9999 < value < 3.0


def test_edit_distance_matches_a_double_loop_and_every_family_runs():
    sets = {"a": words(40, 1), "b": words(30, 2)}
    profiler = dp.Profiler(sets, representation="words", distance=dp.pairwise(levenshtein))
    for item in profiler.condition_state.sets:
        ref = double_loop(sets[item.label], levenshtein)
        np.testing.assert_array_equal(item.D, ref)
    # every family but Vendi, whose Gaussian kernel of an edit distance is not PSD
    families = ["magnitude", "circles", "energy", "average_distance", "richness"]
    with pytest.raises(ValueError, match=r"not positive semidefinite.*or a similarity callable"):
        profiler.profiles(families="vendi", n_boot=0, n_points=5)
    tree = profiler.profiles(families=families, n_boot=0, n_points=5)
    ds = tree["words/precomputed"].to_dataset()
    for family in families:
        assert family in ds
    ref = double_loop(sets["a"], levenshtein)
    assert float(ds["average_distance"][0]) == pytest.approx(ref[np.triu_indices(40, 1)].mean())
    assert int(ds["richness"][0]) == len(set(sets["a"]))


def test_processes_give_the_same_matrix():
    objects = words(120, 3)
    one = callable_matrix(
        objects,
        dp.pairwise(levenshtein),
        kind="distance",
        arg="distance",
        func="profiles",
        where="set 'a'",
    )
    two = callable_matrix(
        objects,
        dp.pairwise(levenshtein, n_jobs=2),
        kind="distance",
        arg="distance",
        func="profiles",
        where="set 'a'",
    )
    lam = callable_matrix(  # a lambda works too: forked workers inherit it
        objects,
        dp.pairwise(lambda a, b: levenshtein(a, b), n_jobs=2),
        kind="distance",
        arg="distance",
        func="profiles",
        where="set 'a'",
    )
    ref = double_loop(objects, levenshtein)
    np.testing.assert_array_equal(one, ref)
    np.testing.assert_array_equal(two, ref)
    np.testing.assert_array_equal(lam, ref)


def test_vectorised_callable_gets_array_blocks(monkeypatch):
    from diversity_profiles.engines import _callable_pairs

    monkeypatch.setattr(_callable_pairs, "VECTOR_BLOCK_ENTRIES", 1000)  # several row blocks
    X = np.random.default_rng(0).normal(size=(97, 3))
    seen = []

    def rbf(A, B):
        seen.append(type(A))
        return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / 2)

    K = callable_matrix(
        X,
        dp.pairwise(rbf, vectorised=True),
        kind="similarity",
        arg="similarities",
        func="profiles",
        where="set 'a'",
    )
    ref = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 2)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-15)
    assert set(seen) == {np.ndarray} and len(seen) > 3


def test_vectorised_wrong_shape_is_refused():
    with pytest.raises(ValueError, match=r"must return a 3 × 3 matrix.*got shape \(3,\)"):
        dp.profiles(
            {"a": np.arange(3.0)},
            representation="r",
            distance=dp.pairwise(lambda A, B: np.abs(A - B), vectorised=True),
        )


def test_nan_result_names_the_pair_and_escapes_the_objects():
    evil = "\x1b[31mred\nline"
    objects = ["a", "b", evil, "d"]

    def f(a, b):
        return float("nan") if evil in (a, b) and a != b else float(a != b)

    with pytest.raises(ValueError) as info:
        dp.profiles({"s": objects}, representation="r", distance=f)
    msg = str(info.value)
    assert "'distance' distance callable of profiles returned NaN for set 's', pair (0, 2)" in msg
    assert "\x1b" not in msg and "\n" not in msg and "\\x1b[31mred\\nline" in msg


def test_inf_and_negative_distances_are_named():
    def inf(a, b):
        return np.inf if {a, b} == {1, 3} else float(abs(a - b))

    with pytest.raises(ValueError, match=r"returned inf for set 'x', pair \(1, 3\)"):
        dp.profiles({"x": [0, 1, 2, 3]}, representation="r", distance=inf)
    with pytest.raises(ValueError, match=r"negative distance -1\.0 for set 'x', pair \(0, 1\)"):
        dp.profiles({"x": [0, 1, 2]}, representation="r", distance=lambda a, b: float(a - b))


def test_asymmetric_pair_is_named():
    # distance a - b for a > b, 2 (a - b) the other way: every pair asymmetric
    def f(a, b):
        return float(a - b) if a >= b else 2.0 * (b - a)

    with pytest.raises(ValueError) as info:
        dp.profiles({"x": list(range(10))}, representation="r", distance=f)
    msg = str(info.value)
    found = re.search(r"f\(x_(\d+), x_(\d+)\) = ([\d.]+) but f\(x_\d+, x_\d+\) = ([\d.]+)", msg)
    assert "must be symmetric" in msg and found, msg
    i, j, forward, backward = int(found[1]), int(found[2]), float(found[3]), float(found[4])
    assert forward == f(i, j) and backward == f(j, i) and forward != backward


def test_vectorised_asymmetry_inside_a_diagonal_block():
    with pytest.raises(ValueError, match="must be symmetric"):
        dp.profiles(
            {"x": np.arange(5.0)},
            representation="r",
            distance=dp.pairwise(
                lambda A, B: np.abs(A[:, None] - 2 * B[None, :]) * (A[:, None] != B[None, :]),
                vectorised=True,
            ),
        )


def test_self_similarity_must_be_one_or_normalised():
    k = lambda a, b: 2.0 * np.exp(-abs(a - b))  # noqa: E731 - k(x, x) = 2
    with pytest.raises(ValueError, match=r"must give 1 for an object and itself.*2\.0.*normalize"):
        dp.profiles({"x": NUMBERS}, representation="r", distance="precomputed", similarities=k)
    tree = dp.profiles(
        {"x": NUMBERS},
        representation="r",
        distance="precomputed",
        similarities=dp.pairwise(k, normalize=True),
        families="vendi",
        domains={"vendi": [1.0]},
        n_boot=0,
    )
    x = np.asarray(NUMBERS, dtype=float)
    raw = 2.0 * np.exp(-np.abs(x[:, None] - x[None, :]))
    d = np.sqrt(np.diag(raw))
    expected = vendi_q1(raw / np.outer(d, d))
    assert float(tree["r/precomputed"]["vendi"][0, 0]) == pytest.approx(expected, rel=1e-10)
    assert tree["r/precomputed"].attrs["similarity_normalized"].startswith("K / sqrt")


def test_self_distance_must_be_zero():
    with pytest.raises(ValueError, match=r"must give 0 for an object and itself.*object 0"):
        dp.profiles({"x": [0, 1, 2]}, representation="r", distance=lambda a, b: 1.0)


def test_not_psd_names_the_smallest_eigenvalue():
    k = lambda a, b: 1.0 if abs(a - b) <= 1 else 0.0  # noqa: E731 - [[1,1,0],[1,1,1],[0,1,1]]
    K = np.array([[1.0, 1, 0], [1, 1, 1], [0, 1, 1]])
    smallest = float(np.linalg.eigvalsh(K / 3).min())  # (1 - sqrt 2) / 3
    with pytest.raises(ValueError, match="not positive semidefinite") as info:
        dp.profiles(
            {"x": [0, 1, 2]},
            representation="r",
            distance="precomputed",
            similarities=k,
            families="vendi",
            n_boot=0,
        )
    assert f"{smallest:.3g}" in str(info.value)


def test_memory_plan_refuses_naming_the_argument(monkeypatch):
    from diversity_profiles.engines import _callable_pairs

    monkeypatch.setattr(_callable_pairs, "available_memory_bytes", lambda: 10_000)
    calls = []
    with pytest.raises(MemoryError, match=r"The 'distance' callable of profiles would fill"):
        dp.profiles(
            {"x": list(range(100))},
            representation="r",
            distance=lambda a, b: calls.append(1) or float(abs(a - b)),
        )
    assert not calls  # refused before any evaluation


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="wrap one string in a list"):
        dp.profiles({"x": "abc"}, representation="r", distance=levenshtein)
    with pytest.raises(ValueError, match="must be 'precomputed'"):
        dp.profiles(
            {"x": [1, 2]}, representation="r", distance="euclidean", similarities=exp_similarity
        )
    with pytest.raises(ValueError, match="n_jobs"):
        dp.pairwise(levenshtein, n_jobs=0)
    with pytest.raises(TypeError, match="must be a callable"):
        dp.pairwise("levenshtein")
    with pytest.raises(ValueError, match="at least 2"):
        dp.profiles({"x": ["a"]}, representation="r", distance=levenshtein)


def test_tree_records_the_callables():
    tree = dp.profiles(
        {"x": NUMBERS},
        representation="r",
        distance=lambda a, b: float(abs(a - b)),
        similarities=dp.pairwise(exp_similarity),
        families="vendi",
        n_boot=0,
        n_points=5,
    )
    attrs = tree["r/precomputed"].attrs
    assert attrs["similarity_callable"] == f"{__name__}.exp_similarity"
    expected = hashlib.sha256(inspect.getsource(exp_similarity).encode()).hexdigest()
    assert attrs["similarity_callable_source_sha256"] == expected
    assert attrs["similarity_callable_kind"] == "pairwise"
    assert attrs["distance_callable"].endswith("test_tree_records_the_callables.<locals>.<lambda>")
    assert attrs["kernel"] == "precomputed similarity"
    # a similarity alone: the distance is 1 - K, and says so
    alone = dp.profiles(
        {"x": NUMBERS},
        representation="r",
        distance="precomputed",
        similarities=dp.pairwise(exp_similarity, vectorised=False),
        families="richness",
    )
    assert alone["r/precomputed"].attrs["distance_from_kernel"].startswith("1 - K")


def test_explain_takes_the_callables_and_checks_them():
    sets = {"x": [0.0, 0.5, 3.0, 3.5, 9.0]}
    options = dict(representation="r", distance="precomputed", n_boot=0, n_points=5)
    tree = dp.profiles(sets, similarities=exp_similarity, **options)
    out = dp.explain(tree, sets, similarities=exp_similarity)
    assert "samples" in out["r/precomputed"].children
    with pytest.raises(ValueError, match=r"made by the callable .*exp_similarity"):
        dp.explain(tree, sets)
    with pytest.raises(ValueError, match="other source code"):
        dp.explain(tree, sets, similarities=other_exp_similarity)


def test_progress_bar_when_asked(capsys):
    callable_matrix(
        words(60),
        dp.pairwise(levenshtein, progress=True),
        kind="distance",
        arg="distance",
        func="profiles",
        where="set 'a'",
    )
    assert "distance pairs of set 'a'" in capsys.readouterr().err
