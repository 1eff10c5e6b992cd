"""Where the pairwise distances are: histogram and distance-concentration statistics.

In high dimensions distances concentrate: every pair is about equally far apart, and a
scale parameter (τ, 1/t, the Gaussian bandwidth) either separates all samples or none.
Two standard statistics say how much room there is:

- relative contrast (max − min) / min over the nonzero distances (Beyer et al. 1999;
  Aggarwal et al. 2001): near 0 when every distance is about the same;
- coefficient of variation sd / mean of the distances.
"""

from __future__ import annotations

import numpy as np


def concentration(d: np.ndarray) -> dict[str, float]:
    """Summary of a vector of pairwise distances (each unordered pair once).

    Examples
    --------
    >>> out = concentration(np.array([1.0, 2.0, 3.0, 0.0]))
    >>> out["relative_contrast"], round(out["coefficient_of_variation"], 4)
    (2.0, 0.7454)
    """
    d = np.asarray(d, dtype=np.float64)
    positive = d[d > 0]
    mean = float(d.mean()) if d.size else np.nan
    sd = float(d.std()) if d.size else np.nan
    lo = float(positive.min()) if positive.size else np.nan
    hi = float(d.max()) if d.size else np.nan
    return {
        "min_distance": float(d.min()) if d.size else np.nan,
        "min_positive_distance": lo,
        "max_distance": hi,
        "mean_distance": mean,
        "relative_contrast": (hi - lo) / lo if positive.size else np.nan,
        "coefficient_of_variation": sd / mean if mean > 0 else np.nan,
    }


def histogram_edges(pooled: np.ndarray, bins: int) -> np.ndarray:
    """``bins`` equal-width bins from 0 to the largest distance (all of them if it is 0)."""
    hi = float(pooled.max()) if pooled.size else 1.0
    return np.linspace(0.0, hi if hi > 0 else 1.0, bins + 1)
