"""``dp.permutation_test``: the exact two-sample permutation tests of a profiled tree,
from the :class:`Profiler` that made it (the test itself: :mod:`._permutation`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core import check_int, check_real, check_seed
from ._permutation import permutation_dataset
from ._profiler import Profiler
from ._registry import FAMILIES

if TYPE_CHECKING:
    import xarray as xr

FUNC = "permutation_test"


def _check_call(tree, profiler, condition, families, n_permutations, seed, max_seconds, show):
    import xarray as xr

    if not isinstance(profiler, Profiler):
        raise TypeError(
            f"The 'profiler' argument of {FUNC} must be the dp.Profiler whose .profiles() made "
            f"the tree. Got {type(profiler).__name__}."
        )
    if condition is not None and condition != profiler.condition:
        raise ValueError(
            f"The 'condition' argument of {FUNC} must be the profiler's condition "
            f"{profiler.condition!r} (or None). Got {condition!r}."
        )
    if not isinstance(tree, xr.DataTree) or not profiler.holds(tree):
        raise ValueError(
            f"The 'tree' argument of {FUNC} must hold the condition {profiler.condition!r} "
            f"profiled from this profiler's sets (profiler.holds(tree) is False); pass the "
            f"tree made by profiler.profiles(), or the Profiler that made it."
        )
    n_permutations = check_int(n_permutations, "n_permutations", FUNC, low=1)
    seed = check_seed(seed, FUNC)
    if max_seconds is not None:
        max_seconds = check_real(max_seconds, "max_seconds", FUNC, low=0.0, low_open=True)
    if show is not None and not isinstance(show, bool):
        raise TypeError(
            f"The 'show_progress' argument of {FUNC} must be None (when estimated long), "
            f"True or False. Got {show!r}."
        )
    ds = tree[profiler.condition].to_dataset()
    present = [name for name in FAMILIES if name in ds.data_vars]
    if families is None:
        names = present
    else:
        listed = isinstance(families, (list, tuple))
        names = [families] if isinstance(families, str) else list(families) if listed else []
        unknown = [name for name in names if name not in FAMILIES]
        if unknown or not names:
            raise ValueError(
                f"The 'families' argument of {FUNC} must be None (every family of the tree) or "
                f"a non-empty list of registered families ({', '.join(map(repr, FAMILIES))}). "
                f"Got {families!r}" + (f"; unknown: {unknown}." if unknown else ".")
            )
        missing = [name for name in names if name not in present]
        if missing:
            raise ValueError(
                f"The tree passed to {FUNC} has no profiles of {missing} (it holds {present}); "
                f"compute them with profiler.profiles(families=[...]) or leave them out."
            )
        names = list(dict.fromkeys(names))
    return ds, [FAMILIES[name] for name in names], n_permutations, seed, max_seconds


def permutation_test(
    tree: xr.DataTree,
    profiler: Profiler,
    *,
    condition: str | None = None,
    families: Sequence[str] | str | None = None,
    n_permutations: int = 199,
    seed: int = 0,
    max_seconds: float | None = 600.0,
    show_progress: bool | None = None,
) -> xr.DataTree:
    """Exact two-sample permutation tests for every pair of sets and family.

    For each unordered pair (A, B), the two sets' samples are pooled once (one distance
    matrix), relabelled at random into halves of the original sizes, and every family
    is recomputed on both halves, on the tree's own grids with the tree's own plan. The
    statistic of a family is the studentised sup of the difference curve ``d = A - B``,
    ``T = max_k |d_k - mu_k| / sigma_k``, with ``mu_k``, ``sigma_k`` the mean and standard
    deviation of ``d_k`` over the observed and the ``R`` permuted labellings (over ``±d``
    when the sets have equal size: swapping the halves is a relabelling too). Grid points
    where ``sigma_k`` is 0 (up to round-off) or some value is not finite are left out;
    a family with none left (richness of distinct samples) gets ``T = 0``, p = 1: the
    samples cannot speak to it. The p-value ``(1 + #{r : T_r >= T_obs}) / (R + 1)`` is
    exact under exchangeability for any statistic computed alike for every labelling
    (:mod:`~diversity_profiles.pipeline._permutation`), so Circles uses its greedy lower
    bound throughout. ``profiles(..., permutations=R)`` runs the same test in the call and
    stores it in the tree, where :func:`compare`, the summary and the explorer find it.

    Parameters
    ----------
    tree : xarray.DataTree
        Profiles made by ``profiler.profiles()``; its grids and plan are reused, its
        values are not (the observed curves are recomputed from the pooled set too).
    profiler : diversity_profiles.Profiler
        The profiler that made ``tree``: its prepared sets are pooled.
    condition : str, optional
        The condition path; only the profiler's own (the default) is accepted.
    families : str or sequence of str, optional
        Families to test; default every family in the tree's condition node. Families
        whose recorded route is "large" are refused (profile them with method="exact").
    n_permutations : int, default 199
        R random relabellings per pair; the smallest p-value is ``1 / (R + 1)``.
    seed : int, default 0
        Seeds one generator per pair (``[seed, i, j]``), so results are reproducible and
        symmetric in (a, b).
    max_seconds : float or None, default 600
        Refuse work estimated (by timing the observed labelling) to take longer.
    show_progress : bool, optional
        Default: a progress bar when the work is estimated to take over a few seconds.

    Returns
    -------
    xarray.DataTree
        One node at the condition path, on ``(set_a, set_b, family)`` like
        :func:`compare`, symmetric in (a, b) and NaN on the diagonal: ``p_value``,
        ``p_holm`` (Holm over every pair and family), ``statistic`` (T of the observed),
        ``points_used`` (grid points that entered T); on ``(set_a, set_b)``:
        ``p_any_family`` (max-T over the families, each studentised on its own, from the
        same relabellings: "some family differs") and ``statistic_any_family``.
        Attributes ``method``, ``n_permutations``, ``seed``, ``statistic``, ``p_value``.

    References
    ----------
    Hemerik & Goeman (2018), Theorem 2 (random permutations with the identity); Holm
    (1979); Westfall & Young (1993), the max-T method.

    Examples
    --------
    Two identical sets: the observed difference is 0 everywhere, so p = 1.

    >>> import diversity_profiles as dp
    >>> X = [[0.0], [1.0], [3.0], [4.0], [7.0]]
    >>> profiler = dp.Profiler({"A": X, "B": X}, representation="line", distance="euclidean")
    >>> tree = profiler.profiles(families=["vendi", "average_distance"], n_points=5)
    >>> res = dp.permutation_test(tree, profiler, n_permutations=19)["line/euclidean"]
    >>> res.p_value.sel(set_a="A", set_b="B").values.tolist()
    [1.0, 1.0]
    >>> float(res.statistic.sel(set_a="B", set_b="A", family="vendi"))
    0.0
    """
    import xarray as xr

    ds, fams, R, seed, max_seconds = _check_call(
        tree, profiler, condition, families, n_permutations, seed, max_seconds, show_progress
    )
    state = profiler.condition_state
    out = permutation_dataset(
        state, ds, fams, R, seed, max_seconds, show_progress,
        func=FUNC, arg="n_permutations", drop="leave those families out with families=[...]",
    )  # fmt: skip
    return xr.DataTree.from_dict({profiler.condition: out})
