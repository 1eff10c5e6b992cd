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
"""

from __future__ import annotations

import base64
import math

import numpy as np

from ..comparison import MIN_SHARE, bounds_of, compare
from ..pipeline import curves
from ._explain_view import explanation_payload


def condition_comparison(ds):
    """:func:`compare` of one condition's Dataset (None with fewer than two sets: no pairs,
    so no findings)."""
    import xarray as xr

    if ds.sizes.get("set", 0) < 2:
        return None
    return compare(xr.DataTree.from_dict({"condition": ds}))["condition"].to_dataset()


def _finite_or_none(x) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def pack_condition(ds, can_extend: bool = False, comparison=None) -> tuple[dict, bytes]:
    """The ``spec`` and ``curves`` traits for one condition's Dataset.

    Each family carries the registry's display facts (symbol, axis title, band
    kind, ...), so the JavaScript names no family. ``can_extend``: a profiler
    stands behind the view, so extendable families may grow their grid.
    ``comparison``: this condition's node of :func:`compare` (its ``finding_*`` and
    ``uncertainty_*`` attributes), computed here when not given.
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
        kind = None
        if got.boot is not None:  # compare reads every kind but "multiplier" as half-sample
            multiplier = ds[f"{fam.name}_boot"].attrs.get("kind") == "multiplier"
            kind = "multiplier" if multiplier else "half-sample"
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
                "finding_z": _finite_or_none(told.get(f"finding_z_{fam.name}")),
                "uncertainty": str(
                    told.get(
                        f"uncertainty_{fam.name}",
                        ds.attrs.get(f"uncertainty_{fam.name}", default_uncertainty),
                    )
                ),
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
    }
    return spec, np.concatenate(chunks).tobytes() if chunks else b""


def standalone_payload(
    tree, conditions: list[str], condition: str | None = None, comparison=None
) -> dict:
    """What the explorer needs to run without a kernel, as JSON.

    The JupyterLab extension (``MIME_TYPE`` outputs) and the HTML report read it with
    ``js/standalone.ts``. Each condition carries its ``spec`` and its ``curves``
    (base64 of little-endian float64), so the condition selector works offline too.
    ``comparison``: :func:`compare` of ``tree``, when the caller has it (else each
    condition is compared here).
    """
    packed = {}
    for path in conditions:
        node = None if comparison is None else comparison[path].to_dataset()
        spec, curves = pack_condition(tree[path].to_dataset(), comparison=node)
        packed[path] = {
            "spec": spec,
            "curves": base64.b64encode(curves).decode("ascii"),
            "explanation": explanation_payload(tree, path),
        }
    return {"version": 1, "condition": condition or conditions[0], "conditions": packed}
