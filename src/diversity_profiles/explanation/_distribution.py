"""The distance panel's data: where the pairwise distances are, per set and pooled,
with each family's domain mapped onto the same axis (τ directly, 1/t for magnitude,
the Gaussian kernel's bandwidth for Vendi)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pipeline import Condition
from . import _concentration as _conc

if TYPE_CHECKING:
    import xarray as xr


def distances_node(cond: Condition, ds, bins: int) -> xr.Dataset:
    """The ``C/distances`` node (layout in :mod:`explain`)."""
    import xarray as xr

    pooled = np.concatenate([s.D[np.triu_indices(s.n, k=1)] for s in cond.sets])
    edges = _conc.histogram_edges(pooled, bins)
    per = [s.D[np.triu_indices(s.n, k=1)] for s in cond.sets]
    data: dict = {
        "count": (("set", "bin"), np.stack([np.histogram(d, edges)[0] for d in per])),
        "pooled_count": ("bin", np.histogram(pooled, edges)[0]),
    }
    stats = [_conc.concentration(d) for d in per]
    for key, value in _conc.concentration(pooled).items():
        data[key] = ("set", np.array([s[key] for s in stats]))
        data[f"pooled_{key}"] = ((), value)
    fams, lo, hi, how = [], [], [], []
    if "tau" in ds.coords:
        fams.append("circles")
        lo.append(float(ds["tau"].min()))
        hi.append(float(ds["tau"].max()))
        how.append("tau directly")
    if "t" in ds.coords:
        fams.append("magnitude")
        lo.append(float(1.0 / ds["t"].max()))
        hi.append(float(1.0 / ds["t"].min()))
        how.append("1/t")
    if "bandwidth" in ds.attrs:
        fams.append("vendi")
        lo.append(float(ds.attrs["bandwidth"]))
        hi.append(float(ds.attrs["bandwidth"]))
        how.append("Gaussian kernel bandwidth")
    data.update(
        domain_lower=("family", lo),
        domain_upper=("family", hi),
        domain_mapping=("family", np.array(how, dtype=str)),
    )
    coords = {
        "bin_lower": ("bin", edges[:-1]),
        "bin_upper": ("bin", edges[1:]),
        "family": np.array(fams, dtype=str),
    }
    return xr.Dataset(data, coords=coords, attrs={"bins": "equal width from 0 to the largest"})
