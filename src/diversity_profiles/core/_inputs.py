"""How a set's samples are read from the containers users pass (imports neither xarray
nor torch: both are recognised by their type's module).

One rule for every xarray DataArray of embeddings, numpy-backed or chunked, in every
function that takes samples × features: its sample dimension is the one named
``"sample"`` when there is one, else its first. Without a ``"sample"`` dimension the
rule refuses a DataArray whose *other* dimension is named like one (``"samples"``,
``"Sample"``, ``"sample_id"``: any name holding "sample", in any case), since there the
first dimension and the name disagree and no guess is safe.
"""

from __future__ import annotations

from typing import Any

#: The dimension of a DataArray that holds the samples, when it has one.
SAMPLE_DIM = "sample"


def _is_xarray(x: object) -> bool:
    return (type(x).__module__ or "").startswith("xarray.")


def samples_first(x: Any, name: str, func: str) -> Any:
    """``x`` with its samples along the first axis: an xarray DataArray's data (numpy or
    dask) transposed so; anything else unchanged.

    Parameters
    ----------
    x : object
        Embeddings of one set: an array, or a 2-D DataArray whose sample dimension is
        ``"sample"`` when it has one, else its first.
    name, func : str
        The argument and the function, named in errors.

    Raises
    ------
    ValueError
        A DataArray that is not 2-D, or one without a ``"sample"`` dimension whose second
        dimension is named like one (the rule cannot tell which holds the samples).
    TypeError
        An xarray Dataset (a collection of variables, not one set of embeddings).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> X = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("feature", "sample"))
    >>> samples_first(X, "X", "profiles").shape        # 3 samples of 2 features
    (3, 2)
    >>> samples_first(X.rename(sample="item"), "X", "profiles").shape   # the first: 2 samples
    (2, 3)
    >>> samples_first(X.rename(sample="samples"), "X", "profiles")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'X' argument of profiles is a DataArray with dims ('feature', 'samples'): ...
    """
    if not _is_xarray(x):
        return x
    dims = getattr(x, "dims", None)
    if not isinstance(dims, tuple):  # a Dataset: dims is a mapping of every variable's
        raise TypeError(
            f"The {name!r} argument of {func} must be one array of embeddings; got an xarray "
            f"{type(x).__name__}. Pass one of its variables, e.g. ds['embedding']."
        )
    if len(dims) != 2:
        others = tuple(d for d in dims if d != SAMPLE_DIM)
        if len(dims) < 2:  # one value per sample: a feature axis makes it n × 1
            fix = "give it a feature dimension, e.g. x.expand_dims('feature', axis=-1)"
        elif SAMPLE_DIM in dims:
            fix = f"stack the feature dimensions into one, e.g. x.stack(feature={others!r})"
        else:  # several candidates and no name to tell the samples: no guess is safe
            fix = (
                f"name the sample dimension {SAMPLE_DIM!r} and stack the others into one, "
                f"e.g. x.rename({{{dims[0]!r}: {SAMPLE_DIM!r}}}).stack(feature={dims[1:]!r})"
            )
        raise ValueError(
            f"The {name!r} argument of {func} must be a 2-D DataArray (samples × features). "
            f"Got dims {dims} instead; {fix}."
        )
    if SAMPLE_DIM in dims:
        sample = SAMPLE_DIM
    else:
        sample = dims[0]
        if "sample" in str(dims[1]).lower():
            raise ValueError(
                f"The {name!r} argument of {func} is a DataArray with dims {dims}: without a "
                f"dimension named {SAMPLE_DIM!r} its first one, {dims[0]!r}, would hold the "
                f"samples, but {dims[1]!r} is named like the samples. Name the sample "
                f"dimension {SAMPLE_DIM!r}, e.g. x.rename({{{dims[1]!r}: {SAMPLE_DIM!r}}})."
            )
    return x.transpose(sample, ...).data


def refuse_dataless_tensor(x: Any, name: str, func: str) -> None:
    """Refuse a torch tensor on the ``meta`` device: it has a shape but no values.

    Examples
    --------
    >>> refuse_dataless_tensor([[0.0]], "X", "profiles")    # anything else passes
    """
    if (type(x).__module__ or "").startswith("torch") and getattr(x, "is_meta", False) is True:
        raise ValueError(
            f"The {name!r} argument of {func} is a torch tensor on the 'meta' device, which "
            f"holds a shape {tuple(x.shape)} but no values. Compute or load the embeddings "
            f"on a real device ('cpu' or 'cuda') and pass that tensor."
        )
