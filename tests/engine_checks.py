"""Checks that engine-equality tests share."""

import numpy as np


def same_interpolation_bound(a, b, var) -> None:
    """A derived bound (pipeline/_between.py) of two engines' profiles: equal up to what its
    inputs differ by between the engines (each interval's bound moves at most twice the
    largest change of a value or bracket), which the callers check with their own
    tolerances."""
    fam = var.removesuffix("_interpolation_error")
    names = (fam, f"{fam}_lower", f"{fam}_upper", f"{fam}_error")
    inputs = [v for v in a.data_vars if v in names]
    moved = max(float(np.nanmax(np.abs(a[v].values - b[v].values), initial=0.0)) for v in inputs)
    np.testing.assert_allclose(
        a[var].values, b[var].values, rtol=0, atol=4 * moved + 1e-9, err_msg=var
    )
