"""Diversity per category: each family on every category of a set, and the partition.

``categories={set: labels}`` (class labels, prompts, scaffolds) splits a set; each
family is evaluated on each category's samples on the condition's own grids (so the
curves share axes with the set's), and :mod:`partition` splits the set's
similarity-sensitive diversity into alpha (within), beta (between) and gamma (whole).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pipeline import FAMILIES, Condition, Plan, node_bandwidth

if TYPE_CHECKING:
    import xarray as xr


def clean_labels(labels) -> np.ndarray:
    """Category labels as storable strings (NUL and lone surrogates replaced).

    >>> clean_labels(["a", 1, "b\\x00"]).tolist()
    ['a', '1', 'b\ufffd']
    """
    out = [
        str(v).replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")
        for v in np.asarray(labels, dtype=object).tolist()
    ]
    return np.array(out, dtype=str)


def _similarity_for_partition(
    cond: Condition, item, bandwidth, ds_bandwidth: float | None
) -> tuple[np.ndarray, str]:
    """Vendi's similarity (entries clipped to [0, 1]), or a Gaussian of a chosen bandwidth."""
    if bandwidth is not None:
        from ..engines import gaussian_kernel

        return gaussian_kernel(item.D, bandwidth), f"gaussian, bandwidth {bandwidth:g}"
    if cond.kernel == "cosine similarity":
        K = item.embeddings @ item.embeddings.T
        np.fill_diagonal(K, 1.0)
        return np.clip(K, 0.0, 1.0), "cosine similarity, negative values set to 0"
    return np.clip(cond.similarity(item, ds_bandwidth), 0.0, 1.0), cond.kernel


def category_node(
    cond: Condition, ds, item, labels, orders: np.ndarray, bandwidth=None
) -> xr.Dataset:
    """The ``C/categories/set_{k}`` node of one set (layout in :mod:`explain`)."""
    import xarray as xr

    from . import _partition as partition

    names, groups = np.unique(clean_labels(labels), return_inverse=True)
    groups = groups.ravel()
    data: dict = {"category_size": ("category", np.bincount(groups))}
    # Categories are small: every family exactly, with the profile's kernel bandwidth.
    kernel_bandwidth = node_bandwidth(cond, ds.attrs)
    for name in str(ds.attrs.get("families", "")).split(", "):
        fam = FAMILIES[name]
        grid = np.empty(0) if fam.parameter is None else ds[fam.parameter].values
        rows: dict = {}
        notes: dict = {"family": name, "note": "NaN for categories of fewer than 2 samples"}
        for g in range(len(names)):
            idx = np.flatnonzero(groups == g)
            if len(idx) < 2:
                continue
            plan = Plan(grids={name: grid}, bandwidth=kernel_bandwidth)
            for var, (vals, extra) in fam.evaluate(cond, plan, item.subset(idx), grid).items():
                rows.setdefault(var, {})[g] = np.asarray(vals, dtype=np.float64)
                for key, val in extra.items():  # e.g. Circles is exact only if every category is
                    notes[key] = min(notes.get(key, val), val)
        for var in rows or [name]:
            shape = (len(names),) + (() if fam.parameter is None else grid.shape)
            out = np.full(shape, np.nan)
            for g, v in rows.get(var, {}).items():
                out[g] = v
            dims = ("category",) if fam.parameter is None else ("category", fam.parameter)
            data[var] = (dims, out, notes)
    Z, how = _similarity_for_partition(cond, item, bandwidth, kernel_bandwidth)
    parts = partition._partition(Z, groups, orders)
    for key, value in parts.items():
        dims = ("order",) if key.startswith("meta_") else ("order", "category")
        data[key] = (dims, value, {"similarity": how})
    coords = {"category": np.array(names, dtype=str), "order": orders}
    return xr.Dataset(data, coords=coords, attrs={"set": item.label})
