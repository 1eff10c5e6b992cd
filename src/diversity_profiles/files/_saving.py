"""Saving profile trees: atomically, replacing only what this package wrote, and in
one plain write for netCDF so that a full disk is one clear error."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ._io import check_output, store_kind, write_atomic

if TYPE_CHECKING:
    import xarray as xr


def write_profiles(
    tree: xr.DataTree, path, *, overwrite: bool = False, flag: str = "overwrite=True"
) -> Path:
    """Save a profile tree to ``path`` (``.nc`` netCDF or ``.zarr``), atomically.

    The checks of :func:`check_output` come first (``overwrite`` replaces only a profile
    file this package wrote), then :func:`write_atomic` writes beside the target. A netCDF
    file is built in memory and written with one plain write and ``fsync``: a disk that
    fills up is then one ``OSError`` (no space left on device) and nothing is left behind,
    where HDF5 writing to disk fails inside its own flushes and close and leaves h5py
    objects that print dozens of "Exception ignored" tracebacks, or crash the interpreter,
    when collected. A tree is small, so holding the file in memory once costs little.

    Parameters
    ----------
    tree : xarray.DataTree
        Profiles, e.g. from :func:`diversity_profiles.profiles`.
    path : str or pathlib.Path
        The file to write: ``.nc`` or ``.zarr`` (any case).
    overwrite : bool, default False
        Replace an existing profile file (never anything else).
    flag : str
        How the caller spells ``overwrite`` in messages (``"--overwrite"`` on the CLI).

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import diversity_profiles as dp
    >>> from diversity_profiles.files import write_profiles
    >>> tree = dp.profiles({"A": [[0.], [1.]], "B": [[0.], [2.]]}, representation="x",
    ...                    distance="euclidean", families="richness")
    >>> target = write_profiles(tree, pathlib.Path(tempfile.mkdtemp()) / "p.nc")
    >>> dp.open_profiles(target).dp.sets
    ['A', 'B']
    """
    path = check_output(path, kind="store", overwrite=overwrite, flag=flag)
    if store_kind(path) == "zarr":

        def write(temp: Path) -> None:
            # Into memory first, then file by file here: zarr writes a store from tasks on
            # its own event loop, and on a full disk the tasks still in flight after the
            # first failure printed "Task exception was never retrieved" tracebacks after
            # our one-line error (a profile tree is small; as the netCDF path, below).
            import zarr

            chunks: dict = {}
            tree.to_zarr(zarr.storage.MemoryStore(store_dict=chunks), mode="w-")
            temp.mkdir()
            for key, buffer in chunks.items():
                parts = key.split("/")
                if any(part in ("", ".", "..") for part in parts):  # never outside temp
                    raise ValueError(f"write_profiles: a node or variable path {key!r} of "
                                     "the tree cannot be a file path; rename it")  # fmt: skip
                target = temp.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "xb") as fh:
                    fh.write(buffer.to_bytes())
                    fh.flush()
                    os.fsync(fh.fileno())

    else:

        def write(temp: Path) -> None:
            data = tree.to_netcdf(engine="h5netcdf")  # in memory: HDF5 never sees the disk
            with open(temp, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())  # a disk that is full shows here, not after the rename

    return write_atomic(path, write, kind="store", overwrite=overwrite, flag=flag)
