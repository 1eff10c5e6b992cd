"""Fingerprints of prepared sets: which samples a condition node was computed from.

Labels and sizes do not tell two data sets apart. Each set's prepared arrays are hashed
(BLAKE2b, 16 bytes, over their float64 values in C order, with their kind and shape) and
the hashes are stored in the condition node's ``set_fingerprints`` attribute, a JSON
string (attributes are strings, so it survives netCDF and zarr). A set records:

``"samples"``
    its embeddings as given (every embedding distance but cosine, which keeps only the
    unit rows);
``"unit rows"``
    its embeddings divided by their norms (what the cosine distance prepares; absent when
    a row is all zeros), so conditions of one representation under other distances can be
    compared;
``"distances"``, ``"similarities"``
    the given distance matrix (``distance="precomputed"``) or similarity matrix.

>>> from diversity_profiles.pipeline import prepare_sets
>>> item = prepare_sets({"A": [[1.0, 0.0], [0.0, 2.0]]}, "euclidean")[0]
>>> sorted(fingerprint(item))
['samples', 'unit rows']
>>> other = prepare_sets({"A": [[1.0, 0.0], [0.0, 3.0]]}, "cosine")[0]
>>> fingerprint(item)["unit rows"] == fingerprint(other)["unit rows"]  # same directions
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

import numpy as np

from ..engines import prepare_embeddings
from ._condition import PreparedSet

#: The node attribute holding the fingerprints.
ATTR = "set_fingerprints"
SCHEME = "blake2b-128 of float64 C-order values, with kind and shape"
#: Bytes hashed per block (a cast or normalised copy of at most this much is held).
_BLOCK_BYTES = 1 << 24


def _digest(kind: str, arr: np.ndarray, unit_rows: bool = False) -> str | None:
    """The hash of ``arr`` (its rows divided by their norms when ``unit_rows``), or None
    when a row has no direction."""
    h = hashlib.blake2b(digest_size=16, person=b"dp-fingerprint")
    h.update(f"{kind} {arr.shape}".encode())
    step = max(1, _BLOCK_BYTES // max(8 * int(np.prod(arr.shape[1:])), 1))
    for start in range(0, arr.shape[0], step):
        block = arr[start : start + step]
        if unit_rows:
            try:  # the cosine distance's own normalisation: the same bits, block by block
                block = prepare_embeddings(block, "cosine", "fingerprint")
            except ValueError:  # an all-zero row
                return None
        # + 0.0 makes -0.0 read as 0.0: the same numbers, the same hash.
        h.update((np.ascontiguousarray(block, dtype="<f8") + 0.0).data)
    return h.hexdigest()


def _compute(item: PreparedSet) -> dict[str, str]:
    out: dict[str, str | None] = {}
    if item.embeddings is not None:
        if item.distance == "cosine":  # its prepared rows are the unit rows
            out["unit rows"] = _digest("unit rows", item.embeddings)
        else:
            out["samples"] = _digest("samples", item.embeddings)
            out["unit rows"] = _digest("unit rows", item.embeddings, unit_rows=True)
    if item.given_distances is not None:
        out["distances"] = _digest("distances", item.given_distances)
    if item.given_similarity is not None:
        out["similarities"] = _digest("similarities", item.given_similarity)
    if item.weights is not None:  # a resample: its multiplicities are part of it
        out["weights"] = _digest("weights", item.weights[:, None])
    return {k: v for k, v in out.items() if v is not None}


def fingerprint(item: PreparedSet) -> dict[str, str]:
    """kind -> hash of one prepared set (computed once per set, kept with it)."""
    return dict(item.derived(("fingerprint",), lambda: _compute(item)))


def fingerprints_attr(sets: Iterable[PreparedSet]) -> str:
    """The ``set_fingerprints`` attribute of a node holding ``sets``."""
    return json.dumps(
        {"scheme": SCHEME, "sets": {item.label: fingerprint(item) for item in sets}},
        sort_keys=True,
    )


def read(attrs: Mapping, where: str) -> dict[str, dict[str, str]] | None:
    """label -> fingerprint from a node's attributes (untrusted input); None when the node
    has none (written before version 0.2.0 recorded them)."""
    raw = attrs.get(ATTR)
    if raw is None:
        return None
    try:
        data = json.loads(str(raw))
        if not isinstance(data, dict) or data.get("scheme") != SCHEME:
            raise ValueError(f"an unknown scheme {data.get('scheme')!r}")
        sets = data["sets"]
        return {
            str(label): {str(k): str(v) for k, v in dict(kinds).items()}
            for label, kinds in dict(sets).items()
        }
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ValueError(
            f"The {ATTR!r} attribute of {where} is not one written by diversity-profiles "
            f"({exc}); recompute the profiles."
        ) from None


def differs(mine: Mapping[str, str], theirs: Mapping[str, str], kinds=None) -> str | None:
    """The first kind of hash both record (of ``kinds``, default all) that differs."""
    shared = [k for k in mine if k in theirs and (kinds is None or k in kinds)]
    return next((k for k in shared if mine[k] != theirs[k]), None)


def short(value: str) -> str:
    return value[:12] + "…"
