"""Reading profile trees from disk as untrusted input.

A file from someone else, or one cut short by an interrupted copy, must not reach
the summary, the plots or a report half-valid: duplicate set labels break every
per-set table, a missing variable reads as a tie. :func:`open_profiles` reads the
whole tree and checks what :func:`profiles` guarantees for its results.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core import check_text as check_text  # still importable from here
from ..pipeline import FAMILIES
from ._declared import TooLarge, check_declared, check_stored, stored_bytes

if TYPE_CHECKING:
    import xarray as xr

_ATTR_TYPES = (str, int, float, np.integer, np.floating, np.bool_, bool)


class _Bad(Exception):
    """One problem found in a tree; becomes the ValueError's message."""


def _check_name(value, what: str) -> None:
    check_text(value, what)
    if not value or "/" in value:
        raise _Bad(f"{what} {value!r} must be a non-empty string without '/'")


def _check_labels(values, what: str) -> list[str]:
    labels = [v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v for v in values]
    for label in labels:
        _check_name(label, what)
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise _Bad(f"{what} {label!r} appears twice; set labels must be unique")
        seen.add(label)
    return labels


def _check_attrs(attrs, where: str) -> None:
    for key, value in attrs.items():
        check_text(key, f"attribute name in {where}")
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            continue
        if not isinstance(value, _ATTR_TYPES):
            raise _Bad(f"attribute {key!r} of {where} is a {type(value).__name__}")
        if isinstance(value, str):
            check_text(value, f"attribute {key!r} of {where}")


def _check_condition(path: str, node) -> None:
    ds = node.to_dataset()
    where = f"node {path!r}"
    _check_attrs(ds.attrs, where)
    for key in ("representation", "distance"):
        _check_name(ds.attrs.get(key), f"the {key} of {where}")
    if "diversity_profiles_version" not in ds.attrs:
        raise _Bad(f"{where} was not written by diversity-profiles (no version attribute)")
    if ds["set"].ndim != 1 or ds["set"].dtype.kind not in "OUST":
        raise _Bad(f"the 'set' coordinate of {where} must be a 1-D list of labels")
    _check_labels(ds["set"].values.tolist(), f"{where}: set label")
    n = ds.get("n_samples")
    if n is None or n.dims != ("set",) or n.dtype.kind not in "iu" or (n.values < 1).any():
        raise _Bad(f"{where} lacks valid sample counts 'n_samples' (incomplete file?)")
    names = str(ds.attrs.get("families", "")).split(", ")
    for name in names:
        family = FAMILIES.get(name)
        if family is None:
            raise _Bad(f"{where} lists an unknown family {name!r}")
        dims = ("set",) if family.parameter is None else ("set", family.parameter)
        var = ds.get(name)
        if var is None or var.dims != dims:
            raise _Bad(f"{where} lacks the {name!r} curves over {dims} (incomplete file?)")
        if var.dtype.kind not in "biuf" or (var.size and np.isnan(var.values).all()):
            raise _Bad(f"the {name!r} curves of {where} hold no numbers (incomplete file?)")
        if family.parameter is not None:
            grid = ds[family.parameter]
            if grid.ndim != 1 or grid.size == 0 or grid.dtype.kind != "f":
                raise _Bad(f"the {family.parameter!r} grid of {where} is not a list of numbers")


def _check_comparison(path: str, node) -> None:
    where = f"node {path!r}"
    _check_attrs(node.attrs, where)
    for dim in ("set_a", "set_b"):
        if dim in node.coords:
            _check_labels(node[dim].values.tolist(), f"{where}: set label")


def check_tree(tree) -> None:
    """Raise ValueError (one line) unless ``tree`` holds valid profiles.

    The checks mirror what :func:`profiles` guarantees: condition nodes with a ``set``
    dimension of unique, storable labels, the variables of every family they list, and
    attributes that are strings or numbers.
    """
    from ..pipeline import comparison_paths, conditions_of

    try:
        paths = conditions_of(tree)
        if not paths:
            raise _Bad("holds no profiles (no node with a 'set' dimension and a representation)")
        for node in tree.subtree:
            _check_attrs(node.attrs, f"node {node.path!r}")
        for path in paths:
            _check_condition(path, tree[path])
        for path in comparison_paths(tree):
            _check_comparison(path, tree[path])
    except _Bad as exc:
        raise ValueError(str(exc)) from None


@functools.cache
def _no_indexes() -> dict:
    """``create_default_indexes=False`` where xarray has it (2025.07 on); older versions
    read the dimension coordinates at opening, before the declared sizes are weighed."""
    import inspect

    import xarray as xr

    if "create_default_indexes" in inspect.signature(xr.open_datatree).parameters:
        return {"create_default_indexes": False}
    return {}  # pragma: no cover - old xarray


def _with_indexes(tree: xr.DataTree) -> xr.DataTree:
    """``tree`` with the default index of every dimension coordinate, as xarray opens it."""
    import xarray as xr

    nodes = {}
    for node in tree.subtree:
        ds = node.to_dataset(inherit=False)
        nodes[node.path] = ds.assign_coords({k: ds[k].variable for k in ds.coords if k in ds.dims})
    return xr.DataTree.from_dict(nodes)


def open_profiles(path) -> xr.DataTree:
    """Open a profile tree saved to netCDF (``.nc``) or zarr (a directory), and check it.

    Everything is read into memory (so a file cut short fails here, not later) and the
    file is closed. Use this rather than ``xarray.open_datatree`` for files from others:
    before any data is read, the sizes the file declares (every variable of every group,
    and its chunks) are summed, and a file that claims far more than it stores or than
    memory allows is refused (see ``files._declared``).

    Parameters
    ----------
    path : str or pathlib.Path
        A netCDF file or zarr directory written with ``tree.to_netcdf`` / ``tree.to_zarr``.

    Returns
    -------
    xarray.DataTree

    Raises
    ------
    ValueError
        One line naming the file and the problem: unreadable, incomplete, not a profile
        tree, duplicate or invalid set labels, attributes that are not strings or numbers,
        or data declared far beyond what the file stores (naming the largest variable).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import diversity_profiles as dp
    >>> tree = dp.profiles({"A": [[0.], [1.]], "B": [[0.], [2.]]}, representation="x",
    ...                    distance="euclidean", families="richness")
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "p.nc"
    >>> tree.to_netcdf(target)
    >>> dp.open_profiles(target).dp.sets
    ['A', 'B']
    """
    import xarray as xr

    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    try:
        stored = stored_bytes(path)
        check_stored(stored)
        # Without default indexes nothing is read at opening (an index loads its
        # coordinate), so what the file declares is weighed before any data is read.
        lazy = xr.open_datatree(path, engine="zarr" if path.is_dir() else None, **_no_indexes())
        try:
            check_declared(lazy, stored)
            lazy.load()
        finally:
            lazy.close()
        tree = _with_indexes(lazy)
    except TooLarge as exc:
        raise ValueError(f"{path}: not read: it {exc}") from None
    except Exception as exc:  # any reader failure: truncated, foreign, corrupt
        text = str(exc).strip().splitlines()
        reason = text[0] if text else type(exc).__name__
        raise ValueError(f"{path}: not a readable profile file ({reason})") from None
    try:
        check_tree(tree)
    except ValueError as exc:
        raise ValueError(f"{path}: not a valid profile tree: {exc}") from None
    return tree
