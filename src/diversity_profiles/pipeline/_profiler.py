"""A :class:`Profiler` holds the prepared sets of one condition, explicitly.

:func:`diversity_profiles.profiles` prepares the sets (distances, kernels,
histograms), computes the profiles and lets the preparation go. Keep a
``Profiler`` instead when you want more from the same matrices later: profiles
with other families or domains, or a grid extended beyond its ends. Nothing is
cached behind your back; a tree is a value, and :meth:`Profiler.extend` returns a
new tree rather than writing into yours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import (
    Pairwise,
    Representation,
    available_memory_bytes,
    check_int,
    check_node_name,
    check_real,
    check_seed,
    one_of,
)
from ..engines import resolve_device
from . import _fingerprint as fingerprints
from ._between import with_interpolation_bounds
from ._condition import Condition, callable_attrs, prepare_sets, read_callables
from ._layout import PERMUTATION_NODE, with_children
from ._permutation import check_poolable, with_permutation_test
from ._plan import Plan
from ._planning import solver_memory
from ._profiles import (
    _check_request,
    _check_uncertainty,
    check_n_points,
    profile_condition,
)
from ._registry import FAMILIES

if TYPE_CHECKING:
    import xarray as xr

    from ._condition import Condition

FUNC = "Profiler.extend"
FUNC_PROFILES = "profiles"
#: Errors of the condition's arguments name the call most users make.
PREPARE = "profiles"
_CIRCLES_METHODS = ("auto", "exact", "greedy")


def _check_name(value, arg: str) -> str:
    return check_node_name(value, arg, PREPARE)  # before any work: it names the tree node


class Profiler:
    """Prepared sets of one condition, for profiles and grid extensions.

    Takes the arguments of :func:`diversity_profiles.profiles` that define the
    condition; :meth:`profiles` takes the ones that say what to compute.

    Parameters
    ----------
    sets, representation, distance, similarities, bandwidth, circles_method, richness_tol, seed,
    device
        As in :func:`diversity_profiles.profiles`.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> profiler = dp.Profiler({"A": [[0.0], [1.0], [3.0]], "B": [[0.0], [2.0]]},
    ...                        representation="line", distance="euclidean")
    >>> tree = profiler.profiles(families="magnitude", n_points=5)
    >>> longer = profiler.extend(tree, "magnitude", "high", points=2)
    >>> tree["line/euclidean"]["t"].size, longer["line/euclidean"]["t"].size
    (5, 7)
    """

    _cond: Condition
    _details: dict

    def __init__(
        self,
        sets: Mapping[str, object],
        *,
        representation: str | Representation,
        distance: str | Callable[[Any, Any], float] | Pairwise,
        similarities: Mapping[str, object] | Callable[[Any, Any], float] | Pairwise | None = None,
        bandwidth: float | None = None,
        circles_method: str = "auto",
        richness_tol: float = 0.0,
        seed: int = 0,
        device: object = None,
    ) -> None:
        # Validated once, here: the prepared condition and the representation's details.
        details = {}
        if isinstance(representation, Representation):
            details = representation.attrs()
            representation = representation.name
        representation = _check_name(representation, "representation")
        one_of(circles_method, "circles_method", PREPARE, _CIRCLES_METHODS)
        name, _, _ = read_callables(distance, similarities)  # checked before any work
        if bandwidth is not None:
            bandwidth = check_real(
                bandwidth, "bandwidth", PREPARE, low=0.0, high=np.inf, low_open=True, high_open=True
            )
        richness_tol = check_real(
            richness_tol, "richness_tol", PREPARE, low=0.0, high=np.inf, high_open=True
        )
        seed = check_seed(seed, PREPARE)
        device = resolve_device(device, PREPARE)
        prepared = prepare_sets(
            sets,
            distance,
            similarities=similarities,
            richness_tol=richness_tol,
            device=device,
            seed=seed,
        )
        details.update(callable_attrs(distance, similarities))  # how the matrices were made
        # Set once here and never again (see __setattr__): every call's decisions live in
        # the plan it builds, so concurrent calls share only these immutable sets.
        cond = Condition(representation, name, prepared, bandwidth, circles_method, seed)
        object.__setattr__(self, "_cond", cond)
        object.__setattr__(self, "_details", details)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"A Profiler is immutable after construction (setting {name!r}); make a new "
            f"dp.Profiler for other sets or condition options."
        )

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    @property
    def condition(self) -> str:
        """The tree path of this condition, ``"representation/distance"``."""
        return f"{self._cond.representation}/{self._cond.distance}"

    def profiles(
        self,
        *,
        families: Sequence[str] | str | None = None,
        domains: Mapping[str, object] | None = None,
        n_points: int | str = "auto",
        n_boot: int | str = "auto",
        ci: float = 0.95,
        common_n: int | str | None = None,
        n_subsamples: int = 10,
        max_seconds: float | None = 600.0,
        method: str = "auto",
        accuracy: float | None = None,
        time_budget: float | None = None,
        permutations: int = 0,
    ) -> xr.DataTree:
        """Profiles of the prepared sets: the remaining arguments of :func:`profiles`.

        Calling it again (other families, domains, uncertainty) reuses the prepared
        matrices; each call returns a new tree.
        """
        fams, domains, n_points = _check_request(families, domains, n_points)
        cond = self._cond
        unc = _check_uncertainty(
            cond.sets, n_boot, ci, common_n, n_subsamples, cond.seed, max_seconds
        )
        permutations = check_int(permutations, "permutations", FUNC_PROFILES, low=0)
        if permutations and len(cond.sets) < 2:
            raise ValueError(
                f"The 'permutations' argument of {FUNC_PROFILES} tests pairs of sets, but "
                f"there is one set ({cond.labels[0]!r}); pass permutations=0, or more sets."
            )
        if permutations:  # before any work: the test needs the pooled distances
            check_poolable(cond, FUNC_PROFILES, "pass permutations=0")
        # The sets' fingerprints join the node, so extend and merge can tell data apart.
        details = {**self._details, fingerprints.ATTR: fingerprints.fingerprints_attr(cond.sets)}
        tree = profile_condition(
            cond, details, fams, domains, n_points, unc, method, accuracy, time_budget
        )
        if permutations:
            tree = with_permutation_test(tree, self.condition, cond, permutations, unc.max_seconds)
        return tree

    @property
    def condition_state(self) -> Condition:
        """The prepared condition (sets, matrices) this profiler holds."""
        return self._cond

    def holds(self, tree: xr.DataTree, condition: str | None = None) -> bool:
        """Whether ``tree``'s condition node was profiled from this profiler's sets.

        The node must hold the same set labels, in order, with the same sizes and the
        same samples: its ``set_fingerprints`` attribute (hashes of the prepared sets,
        recorded by :meth:`profiles`) must match this profiler's. A node without
        fingerprints (written before version 0.2.0 recorded them) cannot be told apart from
        profiles of other data of the same sizes, so it is not held: recompute it with
        :meth:`profiles`.
        """
        return self._mismatch(tree, condition) is None

    def _mismatch(self, tree: xr.DataTree, condition: str | None = None) -> str | None:
        """Why ``tree`` does not hold this profiler's condition, or None when it does."""
        import xarray as xr

        path = condition or self.condition
        if not isinstance(tree, xr.DataTree):
            return f"it is a {type(tree).__name__}, not a DataTree"
        if path != self.condition:
            return f"this profiler's condition is {self.condition!r}, not {path!r}"
        try:
            ds = tree[path].to_dataset()
        except KeyError:
            return f"it has no node {path!r}"
        labels = [str(s) for s in ds["set"].values] if "set" in ds.coords else []
        if labels != self._cond.labels:
            return f"its node holds the sets {labels}, this profiler {self._cond.labels}"
        sizes = np.ravel(ds["n_samples"].values).tolist() if "n_samples" in ds else []
        if len(sizes) != len(labels):
            return f"its node {path!r} has no sample count per set ('n_samples')"
        for item, n in zip(self._cond.sets, sizes, strict=True):
            if n != item.n:
                return f"its set {item.label!r} has {n} samples, this profiler's {item.n}"
        try:
            recorded = fingerprints.read(ds.attrs, f"node {path!r}")
        except ValueError:
            return f"its {fingerprints.ATTR!r} attribute is not one written by diversity-profiles"
        if recorded is None:
            return (
                f"its node records no {fingerprints.ATTR!r} (a tree written before version "
                f"0.2.0 recorded them, or one whose attributes were dropped), so it cannot be "
                f"told apart from profiles of other samples of the same sizes"
            )
        for item in self._cond.sets:
            theirs, mine = recorded.get(item.label, {}), fingerprints.fingerprint(item)
            kind = fingerprints.differs(mine, theirs)
            if kind is None and not set(mine) & set(theirs):
                return f"its node records no fingerprint of set {item.label!r}"
            if kind is not None:
                return (
                    f"its set {item.label!r} was computed from other samples than this "
                    f"profiler's ({kind} fingerprint {fingerprints.short(theirs[kind])} in the "
                    f"tree, {fingerprints.short(mine[kind])} here)"
                )
        return None

    def extend(
        self, tree: xr.DataTree, family: str, side: str = "high", points: int = 10
    ) -> xr.DataTree:
        """A new tree with ``points`` more grid points beyond one end of a family's domain.

        Reuses the prepared matrices (no feature or distance is recomputed). The
        family gets its values at the new points; every other variable on that axis
        (bands, replicates) gets NaN there; a permutation test stored by
        ``profiles(permutations=R)`` is dropped (it tested the former grid: run it again).
        ``tree`` itself is left unchanged. Only
        families whose registry entry is ``extendable`` can grow (open log axes:
        magnitude's scale t, energy's exponent s).

        Parameters
        ----------
        tree : xarray.DataTree
            A tree holding this profiler's condition (from :meth:`profiles`).
        family : str
        side : {"high", "low"}
        points : int, default 10

        Raises
        ------
        ValueError
            When ``tree`` was not profiled from this profiler's sets (see :meth:`holds`):
            other labels, sizes or samples, or a node without fingerprints.
        """
        fam = FAMILIES.get(family)
        extendable = [name for name, f in FAMILIES.items() if f.extendable]
        if fam is None or not fam.extendable:
            raise ValueError(
                f"The 'family' argument of {FUNC} must be an extendable family "
                f"({', '.join(map(repr, extendable))}). Got {family!r}."
            )
        one_of(side, "side", FUNC, ("low", "high"))
        check_int(points, "points", FUNC, low=1)  # bounded by the grid's size below
        why = self._mismatch(tree)
        if why is not None:
            raise ValueError(
                f"The 'tree' argument of {FUNC} must hold the condition {self.condition!r} "
                f"profiled from this profiler's sets, but {why}. Profile them with "
                f"profiler.profiles()."
            )
        ds = tree[self.condition].to_dataset()
        if family not in ds:
            raise ValueError(
                f"The tree passed to {FUNC} has no {family!r} profiles; compute them with "
                f"profiler.profiles(families=[..., {family!r}])."
            )
        grid = ds[fam.parameter].values
        points = check_n_points(points, "points", FUNC, low=1, have=grid.size)
        if grid.size < 2 or not (grid > 0).all():
            raise ValueError(
                f"The {family!r} grid of the tree passed to {FUNC} is {grid.tolist()}; extending "
                f"needs at least two positive points to continue its log spacing. Profile a "
                f"range instead, e.g. domains={{{family!r}: (low, high)}}."
            )
        step = grid[-1] / grid[-2] if side == "high" else grid[1] / grid[0]
        if "adaptive" in str(ds[fam.parameter].attrs.get("domain", "")):
            # refined points sit close together: continue the grid's mean log spacing
            step = (grid[-1] / grid[0]) ** (1.0 / (grid.size - 1))
        k = np.arange(1, points + 1)
        new = grid[-1] * step**k if side == "high" else np.sort(grid[0] / step**k)
        cond = self._cond
        # The tree's own plan (methods, bandwidth, budgets), not that of a later call.
        plan = replace(
            Plan.from_attrs(ds.attrs, grids={family: new}),
            memory_limit=solver_memory(available_memory_bytes()),  # this machine's, today
        )
        results = [fam.evaluate(cond, plan, item, new) for item in cond.sets]
        # Every variable on this axis (bands, replicates) gets NaN at the new points; the
        # family itself and its large-n bounds get their values there, so the verdicts
        # never read an unbounded point as exact.
        grown = ds.reindex({fam.parameter: np.union1d(grid, new)})
        at = np.searchsorted(grown[fam.parameter].values, new)
        for var in results[0]:
            if var not in ds or ds[var].dims != ds[family].dims:
                continue
            filled = grown[var].values.copy()
            filled[:, at] = np.stack([np.asarray(r[var][0]) for r in results])
            grown[var] = (ds[var].dims, filled, ds[var].attrs)
        grown[fam.parameter].attrs = ds[fam.parameter].attrs | {
            "domain": ds[fam.parameter].attrs.get("domain", "") + f"; extended {side}"
        }
        grown = with_interpolation_bounds(grown)  # the new intervals get their bounds
        out = tree.copy(deep=False)
        # dp.explain's and convergence's nodes stay, their grids reindexed like the
        # profile's; a stored permutation test does not: it tested the grid before.
        out[self.condition] = with_children(
            tree[self.condition], grown, str(fam.parameter), drop=(PERMUTATION_NODE,)
        )
        return out
