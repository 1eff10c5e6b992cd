"""What the view reads, packed from a profile tree: the widget's traits and the payload
of the explorer without a kernel.

``pack_condition`` gives the ``spec`` and ``curves`` traits of one condition (every grid
and curve as one float64 buffer); ``standalone_payload`` carries them, base64-encoded,
for every condition, for the JupyterLab extension and the HTML report
(``js/standalone.ts``). Both the live widget and the static displays pack through here,
so the two views read the same bytes.

The view words findings (verdict rule step 8) as :func:`compare` does, for any domain
the user narrows to; the one thing it cannot recompute is the family-wise ``z`` (drawn
from random recombinations of the replicates), so each family carries compare's ``z``
for the full grid, valid (conservatively) on every narrower domain.

Given a :func:`permutation_test` of the condition, each family with a parameter also
carries its chance envelope for every unordered pair (``envelope_<family>``: the
difference that relabelling the pooled samples alone produces, per grid point) and the
pair's Holm-adjusted p-value; the view draws them beside the observed difference when two
sets are highlighted. :func:`permutation_nodes` checks the test against the profiles.
"""

from __future__ import annotations

import base64
import math
import re
from typing import TYPE_CHECKING

import numpy as np

from ..comparison import MIN_SHARE, bounds_of, compare
from ..pipeline import curves, replicate_sizes
from ._explain_view import explanation_payload

if TYPE_CHECKING:
    import xarray as xr


def condition_comparison(ds: xr.Dataset) -> xr.Dataset | None:
    """:func:`compare` of one condition's Dataset (None with fewer than two sets: no pairs,
    so no findings)."""
    import xarray as xr

    if ds.sizes.get("set", 0) < 2:
        return None
    return compare(xr.DataTree.from_dict({"condition": ds}))["condition"].to_dataset()


def _finite_or_none(x) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


_RERUN = "rerun dp.permutation_test(tree, profiler) on the profiles you show"


def tested_conditions(permutation) -> dict:
    """Condition path -> Dataset of each permutation test in ``permutation`` (its nodes
    holding ``p_holm``; empty for None). No checks: see :func:`permutation_nodes`."""
    if permutation is None:
        return {}
    return {
        str(node.attrs.get("condition", node.path.strip("/"))): node.to_dataset()
        for node in permutation.subtree
        if "p_holm" in node.data_vars
    }


def permutation_nodes(permutation, tree, conditions: list[str], func: str) -> dict:
    """The ``permutation`` argument of ``func`` checked against the profiles it is shown
    with; returns :func:`tested_conditions`. None: the tests that ``profiles(permutations=R)``
    stored in ``tree`` for ``conditions``, those that pass the same checks.

    It must be a DataTree made by :func:`permutation_test`, of conditions among
    ``conditions`` (those the display shows), with the profiles' set labels, families
    and grids, and at least one chance envelope. Each failure names the argument and
    the fix.
    """
    import xarray as xr

    from ..pipeline import stored_permutation_tests

    if permutation is None:
        stored = stored_permutation_tests(tree, conditions)
        return {
            p: t for p, t in stored.items() if _test_problem(t, tree[p].to_dataset(), p) is None
        }
    if not isinstance(permutation, xr.DataTree):
        raise TypeError(
            f"The 'permutation' argument of {func} takes the DataTree returned by "
            f"dp.permutation_test(tree, profiler). Got {type(permutation).__name__}."
        )
    tested = tested_conditions(permutation)
    if not tested:
        raise ValueError(
            f"The 'permutation' tree passed to {func} holds no permutation test (no node with "
            f"p_holm); pass the result of dp.permutation_test(tree, profiler)."
        )
    for path, test in tested.items():
        if path not in conditions:
            raise ValueError(
                f"The 'permutation' argument of {func} is a test of condition {path!r}, which "
                f"this display does not show ({', '.join(map(repr, conditions))}); pass the "
                f"test of the condition shown, or choose condition={path!r}."
            )
        problem = _test_problem(test, tree[path].to_dataset(), path)
        if problem is not None:
            raise ValueError(f"The 'permutation' argument of {func} {problem}")
    return tested


def _test_problem(test, ds, path: str) -> str | None:
    """Why a permutation test cannot be drawn beside the condition ``ds`` at ``path`` (a
    sentence after "The 'permutation' argument of func"), or None."""
    sets = [str(s) for s in ds["set"].values]
    tested_sets = [str(s) for s in test["set_a"].values] if "set_a" in test.coords else []
    if sorted(tested_sets) != sorted(sets):
        return (
            f"tested the sets {tested_sets} of {path!r}, but these profiles hold {sets}; {_RERUN}."
        )
    envelopes = [v for v in test.data_vars if str(v).startswith("envelope_")]
    if not envelopes:
        return (
            f"holds no chance envelope (envelope_<family>) for {path!r}: it tested no family "
            f"with a parameter, or was made by an older diversity-profiles; {_RERUN}, with at "
            f"least one family with a parameter."
        )
    for var in envelopes:
        name = str(var).removeprefix("envelope_")
        if name not in ds.data_vars:
            return f"tested {name!r}, which the profiles of {path!r} do not hold; {_RERUN}."
        dim = test[var].dims[-1]
        grid, ours = test[dim].values, ds[dim].values if dim in ds.coords else None
        if ours is None or not np.array_equal(grid, ours):
            return (
                f"was run on another {dim} grid for {name!r} ({grid.size} points) than these "
                f"profiles of {path!r} have ({0 if ours is None else ours.size} points; e.g. "
                f"the grid was extended or profiled again with other n_points); {_RERUN}."
            )
    return None


def _envelope_level(test) -> float | None:
    """The envelope's quantile: its ``level`` attribute, else read from its note."""
    for var in test.data_vars:
        if str(var).startswith("envelope_"):
            attrs = test[var].attrs
            if "level" in attrs:
                return _finite_or_none(attrs["level"])
            found = re.search(r"\bthe ([0-9]*\.?[0-9]+) quantile", str(attrs.get("note", "")))
            return float(found.group(1)) if found else None
    return None


def _envelope(test, ds, fam, sets: list[str], put) -> dict | None:
    """One family's envelopes for every unordered pair that has one, on this grid only (a
    grid grown since the test, by extend, gets none)."""
    var = f"envelope_{fam.name}"
    if test is None or fam.parameter is None or var not in test.data_vars:
        return None
    if not np.array_equal(test[fam.parameter].values, ds[fam.parameter].values):
        return None
    env = test[var]
    pairs, rows, p = [], [], []
    for a in range(len(sets)):
        for b in range(a + 1, len(sets)):
            row = np.asarray(env.sel(set_a=sets[a], set_b=sets[b]).values, dtype=np.float64)
            if not np.isfinite(row).any():
                continue
            pairs.append([a, b])
            rows.append(row)
            held = "p_holm" in test and fam.name in test["family"].values
            p.append(
                _finite_or_none(test["p_holm"].sel(set_a=sets[a], set_b=sets[b], family=fam.name))
                if held
                else None
            )
    if not pairs:
        return None
    return {"offset": put(np.stack(rows)), "pairs": pairs, "p_holm": p}


def pack_condition(
    ds, can_extend: bool = False, comparison=None, permutation=None
) -> tuple[dict, bytes]:
    """The ``spec`` and ``curves`` traits for one condition's Dataset.

    Each family carries the registry's display facts (symbol, axis title, band
    kind, ...), so the JavaScript names no family. ``can_extend``: a profiler
    stands behind the view, so extendable families may grow their grid.
    ``comparison``: this condition's node of :func:`compare` (its ``finding_*`` and
    ``uncertainty_*`` attributes), computed here when not given. ``permutation``: this
    condition's node of :func:`permutation_test` (checked by :func:`permutation_nodes`):
    each family with a parameter then carries its chance envelopes and Holm p-values.
    """
    if comparison is None:
        comparison = condition_comparison(ds)
    told = {} if comparison is None else comparison.attrs
    sets = [str(s) for s in ds["set"].values]
    chunks: list[np.ndarray] = []
    offset = 0

    def put(array) -> int:
        nonlocal offset
        flat = np.ascontiguousarray(array, dtype="<f8").ravel()
        chunks.append(flat)
        start, offset = offset, offset + flat.size
        return start

    families = []
    # The n the estimates stand for: common_n when the sets were subsampled to it.
    sizes = (
        np.full(len(sets), float(ds.attrs["common_n"]))
        if "common_n" in ds.attrs
        else np.asarray(ds["n_samples"].values, float)
        if "n_samples" in ds
        else np.full(len(sets), np.nan)
    )
    for got in curves(ds).values():
        fam = got.family
        at = [None if x is None else put(x) for x in (got.lower, got.upper)]
        bound_at: list[int | None] = [None, None]
        for k, edge in enumerate(bounds_of(ds, fam.name) or ()):  # verdict.py, step 7
            drawn = (got.lower, got.upper)[k]  # often these very bounds: sent once
            same = drawn is not None and np.array_equal(drawn, edge)
            bound_at[k] = at[k] if same else put(edge)
        # Replicates (set, replicate, grid) let the view compute simultaneous bands and
        # findings for the domain the user narrows to, by the rule of compare (verdict.py,
        # steps 6 and 8). They are the payload's bulk (multiplier draws: 200 per set and
        # grid point); nothing derived from them (sds, z per point) is sent besides.
        kind, sizes_m = None, None
        if got.boot is not None:  # compare reads every kind but "multiplier" as half-sample
            multiplier = ds[f"{fam.name}_boot"].attrs.get("kind") == "multiplier"
            kind = "multiplier" if multiplier else "half-sample"
            m = replicate_sizes(ds, fam.name)
            sizes_m = None if m is None else [int(v) for v in m]
        default_uncertainty = "none" if got.boot is None else "replicates"
        families.append(
            {
                **fam.display(),
                "extendable": bool(can_extend and fam.extendable),
                "band": got.band,
                "n": int(got.grid.size),
                "grid": put(got.grid),
                "values": put(got.values),
                "lower": at[0],
                "upper": at[1],
                "method": str(ds[fam.name].attrs.get("method", "exact")),
                "bounds_lower": bound_at[0],
                "bounds_upper": bound_at[1],
                "boot": None if got.boot is None else put(got.boot),
                "n_boot": 0 if got.boot is None else int(got.boot.shape[1]),
                "replicate_kind": kind,
                "subsample_size": sizes_m,
                "finding_z": _finite_or_none(told.get(f"finding_z_{fam.name}")),
                "uncertainty": str(
                    told.get(
                        f"uncertainty_{fam.name}",
                        ds.attrs.get(f"uncertainty_{fam.name}", default_uncertainty),
                    )
                ),
                "envelope": _envelope(permutation, ds, fam, sets, put),
            }
        )
    spec = {
        "condition": f"{ds.attrs.get('representation')}/{ds.attrs.get('distance')}",
        "representation": str(ds.attrs.get("representation")),
        "distance": str(ds.attrs.get("distance")),
        "sets": sets,
        "families": families,
        "n_samples": [float(n) if np.isfinite(n) else None for n in sizes],
        "subsample_size": None
        if "subsample_size" not in ds
        else [int(m) for m in ds["subsample_size"].values],
        "ci": float(ds.attrs["ci"]) if "ci" in ds.attrs else None,
        "min_share": MIN_SHARE,
        "finding_level": _finite_or_none(told.get("finding_level")),
        "finding_families": int(
            told.get("finding_families", sum(f["replicate_kind"] is not None for f in families))
        ),
        "permutation": None
        if permutation is None or not any(f["envelope"] for f in families)
        else {
            "n_permutations": int(permutation.attrs.get("n_permutations", 0)),
            "level": _envelope_level(permutation),
            "holm": str(permutation.attrs.get("p_holm", "Holm-adjusted")),
        },
    }
    return spec, np.concatenate(chunks).tobytes() if chunks else b""


def standalone_payload(
    tree, conditions: list[str], condition: str | None = None, comparison=None, permutation=None
) -> dict:
    """What the explorer needs to run without a kernel, as JSON.

    The JupyterLab extension (``MIME_TYPE`` outputs) and the HTML report read it with
    ``js/standalone.ts``. Each condition carries its ``spec`` and its ``curves``
    (base64 of little-endian float64), so the condition selector works offline too.
    ``comparison``: :func:`compare` of ``tree``, when the caller has it (else each
    condition is compared here). ``permutation``: a :func:`permutation_test` tree, already
    checked by the caller (:func:`permutation_nodes`); its conditions carry envelopes.
    None: the tests stored in ``tree`` by ``profiles(permutations=R)``.
    """
    tested = (
        tested_conditions(permutation)
        if permutation is not None
        else permutation_nodes(None, tree, conditions, "standalone_payload")
    )
    packed = {}
    for path in conditions:
        node = None if comparison is None else comparison[path].to_dataset()
        spec, curves = pack_condition(
            tree[path].to_dataset(), comparison=node, permutation=tested.get(path)
        )
        packed[path] = {
            "spec": spec,
            "curves": base64.b64encode(curves).decode("ascii"),
            "explanation": explanation_payload(tree, path),
        }
    return {"version": 1, "condition": condition or conditions[0], "conditions": packed}
