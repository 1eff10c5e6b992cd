"""What a profile file claims, weighed before any of its data is read.

A netCDF or zarr file declares the shape of every variable in its metadata; reading it
allocates that much whatever the file really stores. A chunked variable that was never
written, or a zarr array whose ``zarr.json`` says ``"shape": [3000000000]``, reads as
fill values: a 28 KB file then asks for gigabytes. So :func:`check_declared` sums the
declared sizes of every variable (and its chunks, which a reader decodes whole) over all
groups of the lazily opened tree, and refuses a file that claims far more than it stores
or than memory allows. :func:`stored_bytes` measures what is on disk, refusing links and
special files inside a zarr directory (a chunk linked to ``/dev/zero`` never ends).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import NamedTuple

from ..core import available_memory_bytes, human_bytes

#: Data any file may declare: a profile tree of about 500 sets with every family at 100
#: points and its uncertainty replicates (about 0.5 MiB per set).
BASE_BYTES = 256 * 1024**2
#: Beyond that, data may exceed what the file stores by this factor: written by xarray,
#: netCDF is uncompressed (about 1×) and zarr's zstd gains about 1–3× on curves, so 100×
#: is honest data compressed far better than ours ever is, or data that is not there.
RATIO = 100
#: Share of the available memory the data of one file may take.
MEMORY_SHARE = 0.5
#: Chunks any file may declare. Each one costs a lookup even when never written
#: (measured: 0.2 ms per zarr chunk, 40 µs per HDF5 chunk), so 10,000 read in under 2 s.
BASE_CHUNKS = 10_000
#: Beyond that, one chunk per this many bytes stored.
BYTES_PER_CHUNK = 4096


class TooLarge(Exception):
    """A file that claims more than may be read; becomes the ValueError's message."""


class Stored(NamedTuple):
    """What a file or zarr directory occupies: ``allocated`` bytes (the blocks on disk,
    so the holes of a sparse file count for nothing), ``apparent`` bytes (its length,
    holes included: what a reader reading it whole reads) and the number of files."""

    allocated: int
    apparent: int
    files: int


def stored_bytes(path: Path) -> Stored:
    """What ``path`` (a file, or a zarr directory) occupies on disk.

    Raises TooLarge for a link, FIFO or device inside a directory, or a path that is
    neither a file nor a directory.
    """
    if path.is_file():
        info = path.stat()
        return Stored(_allocated(info), info.st_size, 1)
    if not path.is_dir():
        raise TooLarge("is neither a regular file nor a directory")
    allocated, apparent, files = 0, 0, 0
    for root, dirs, names in os.walk(path):
        for name in (*dirs, *names):
            entry = Path(root) / name
            info = entry.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise TooLarge(f"holds a link, {str(entry)!r}; a store's parts must lie inside it")
            if stat.S_ISREG(info.st_mode):
                allocated += _allocated(info)
                apparent += info.st_size
                files += 1
            elif not stat.S_ISDIR(info.st_mode):
                raise TooLarge(f"holds {str(entry)!r}, which is not a regular file")
    return Stored(allocated, apparent, files)


def _allocated(info: os.stat_result) -> int:
    blocks = getattr(info, "st_blocks", None)
    return info.st_size if blocks is None else min(info.st_size, 512 * blocks)


def check_stored(stored: Stored) -> None:
    """Raise TooLarge if the file itself is longer than memory allows: a zarr reader
    reads each file whole, and netCDF attributes are read when the file is opened."""
    memory = MEMORY_SHARE * available_memory_bytes()
    if stored.apparent > memory:
        raise TooLarge(
            f"is {human_bytes(stored.apparent)} long, more than half the "
            f"{human_bytes(2 * memory)} of memory available"
        )


def _weigh(var) -> tuple[int, int]:
    """``(bytes, chunks)`` reading ``var`` costs: its declared shape, or its largest chunk
    if that is larger (a zarr chunk may exceed the array), times the element size."""
    shape = var.shape
    chunks = var.encoding.get("chunks") or var.encoding.get("chunksizes") or shape
    chunks = tuple(max(int(c), 1) for c in chunks)
    # Decoded char arrays lose their last axis; their chunks then count a byte a character.
    itemsize = var.dtype.itemsize if len(chunks) == len(shape) else 1
    elements = max(math.prod(shape), math.prod(chunks) if any(shape) else 0)
    n_chunks = math.prod(-(-s // c) for s, c in zip(shape, chunks, strict=False))
    return elements * itemsize, n_chunks


def check_declared(tree, stored: Stored) -> None:
    """Raise TooLarge unless the data ``tree`` (opened lazily) declares may be read.

    The limit is ``max(BASE_BYTES, RATIO × allocated)``, never more than ``MEMORY_SHARE``
    of the available memory; chunks at most ``max(BASE_CHUNKS, allocated /
    BYTES_PER_CHUNK)``. The message names the variable that weighs most, with its node,
    shape, type and size (or number of chunks).
    """
    weights = [  # (bytes, chunks, which variable, the variable)
        (*_weigh(var), f"variable {name!r} of node {node.path!r}", var)
        for node in tree.subtree
        for name, var in node.to_dataset(inherit=False).variables.items()
    ]
    total = sum(w[0] for w in weights)
    n_chunks = sum(w[1] for w in weights)
    memory = MEMORY_SHARE * available_memory_bytes()
    limit = min(max(BASE_BYTES, RATIO * stored.allocated), memory)
    have = f"but stores {human_bytes(stored.allocated)}"
    if total > limit:
        nbytes, _, where, var = max(weights, key=lambda w: w[0])
        why = (
            f"half the {human_bytes(2 * memory)} of memory available"
            if limit == memory
            else f"or {RATIO} times what it stores if more, within half the memory available"
        )
        raise TooLarge(
            f"declares {human_bytes(total)} of data {have}; the largest is {where}: shape "
            f"{var.shape} of {var.dtype}, {human_bytes(nbytes)}. A profile file may declare "
            f"at most {human_bytes(limit)} ({why}): a crafted or damaged file?"
        )
    max_chunks = max(BASE_CHUNKS, stored.allocated // BYTES_PER_CHUNK)
    if n_chunks > max_chunks:
        _, chunks, where, var = max(weights, key=lambda w: w[1])
        raise TooLarge(
            f"declares {n_chunks:,} chunks of data {have}; {where} alone has {chunks:,} "
            f"(shape {var.shape}). A profile file may declare at most {max_chunks:,}: "
            f"a crafted or damaged file?"
        )
