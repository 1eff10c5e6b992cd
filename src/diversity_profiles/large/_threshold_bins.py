"""Threshold bins of distances by table lookup: ``searchsorted(grid, d)`` where it is sure.

A pair's bin (the thresholds below its distance) decides the graphs :mod:`._circles_large`
builds, and a distance within its rounding bound of a threshold must be recomputed
exactly. Both by binary search cost ~40 ns a pair, plus the bound's own matrix; a table
over narrow buckets of the distance axis answers both for all but the pairs in buckets
near a threshold, in a few elementwise passes.
"""

from __future__ import annotations

import numpy as np

from ._geometric_cover import _U64

__all__ = ["ThresholdBins"]

#: Buckets of the axis up to the largest threshold: with 100 thresholds about 0.5% of
#: them (and of the pairs, where the thresholds follow the distances' quantiles) are unsure.
BUCKETS = 1 << 16


class ThresholdBins:
    """``searchsorted(grid, d, side="left")`` for distances ``d`` known to within ``slack``.

    The axis ``[0, grid[-1]]`` is cut into :data:`BUCKETS` buckets of width ``w`` (the last
    takes everything beyond). A distance is put in bucket ``floor(d / w)``, exact up to
    one bucket either way; a bucket is *sure* when no threshold lies within ``slack`` (and
    rounding) of it and its two neighbours, and then every distance put in it has the
    bucket's bin and is farther than ``slack`` from every threshold. The others are
    reported unsure: their bin needs the search, and the exact distance where it is
    within its bound of a threshold.

    Examples
    --------
    >>> bins = ThresholdBins(np.array([1.0, 2.0]), slack=1e-9)
    >>> found, unsure = bins.lookup(np.array([0.5, 1.5, 3.0, 1.0]))
    >>> found[~unsure].tolist(), unsure.tolist()
    ([0, 1, 2], [False, False, False, True])
    """

    def __init__(self, grid: np.ndarray, slack: float) -> None:
        grid = np.asarray(grid, dtype=np.float64)
        top = float(grid[-1])
        self.slack = float(slack)
        self.unsure = len(grid) + 2  # beyond every bin (and the diagonal's len(grid) + 1)
        self.width = top / (BUCKETS - 4)
        self.scale = 1.0 / self.width
        b = np.arange(BUCKETS, dtype=np.float64)
        margin = self.slack + 8.0 * _U64 * top  # and the rounding of the bucket edges
        lo = (b - 1.0) * self.width - margin
        hi = (b + 2.0) * self.width + margin
        hi[-1] = np.inf  # the last bucket holds every distance beyond
        first = np.searchsorted(grid, lo, side="left")  # thresholds below the window
        last = np.searchsorted(grid, hi, side="right")  # thresholds up to its end
        dtype = np.min_scalar_type(self.unsure)
        self.table = np.where(first == last, first, self.unsure).astype(dtype)

    def lookup(self, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bins of ``D`` (``D >= 0``) where sure, and the mask of the unsure ones
        (their entries in the bins are meaningless)."""
        where = np.multiply(D, self.scale)
        np.minimum(where, BUCKETS - 1, out=where)
        found = self.table.take(where.astype(np.int32))
        return found, found == self.unsure
