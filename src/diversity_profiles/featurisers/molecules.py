"""Molecules as Morgan fingerprints: from SMILES to Tanimoto diversity profiles.

RDKit parses the SMILES (with sanitisation; empty strings are invalid, as in
MOSES's validity) and its ``rdFingerprintGenerator`` hashes each atom's circular environment up to
``radius`` bonds into ``n_bits`` bits (ECFP-like; Rogers & Hahn, 2010). The
Tanimoto distance between the bit vectors, ``1 - |a & b| / |a | b|``, is the
usual distance between molecules; its average over pairs is MOSES's IntDiv.

RDKit is imported inside the functions (``pip install "diversity-profiles[molecules]"``),
so importing this module costs numpy only. SMILES that RDKit cannot parse are never
skipped silently: they raise, or with ``on_invalid="drop"`` are dropped with an
:class:`InvalidSmilesWarning` naming them, and ``return_kept=True`` says which
inputs each row came from.

References
----------
Rogers, D. & Hahn, M. (2010). Extended-connectivity fingerprints. J. Chem. Inf.
Model. 50(5), 742-754.
Bemis, G. W. & Murcko, M. A. (1996). The properties of known drugs. 1. Molecular
frameworks. J. Med. Chem. 39(15), 2887-2893.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..core import Representation, check_int, check_sets, one_of, require
from ..core import progress as _progress_bar

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["InvalidSmilesWarning", "fingerprints", "profiles", "scaffolds"]

_ON_INVALID = ("raise", "drop")
#: SMILES per batch: the unit of the progress bar and of the work sent to a process.
_BATCH = 1000
#: Invalid entries quoted in an error or a warning; the rest are counted.
_SHOWN = 10


class InvalidSmilesWarning(UserWarning):
    """SMILES that RDKit could not parse were dropped (``on_invalid="drop"``).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # doctest: +SKIP
    ...     warnings.simplefilter("always")
    ...     fps = fingerprints(["CCO", "not a molecule"], on_invalid="drop")
    >>> fps.shape[0], caught[0].category.__name__  # doctest: +SKIP
    (1, 'InvalidSmilesWarning')
    """


# ---------------------------------------------------------------------------
# Per-batch work. Module-level functions so that worker processes can run them.
# ---------------------------------------------------------------------------


@contextmanager
def _rdkit_logs_blocked() -> Iterator[None]:
    """Silence RDKit's own stderr complaints about bad SMILES: we report them instead."""
    from rdkit import rdBase

    blocker = rdBase.BlockLogs()  # logging comes back when the blocker is deleted
    try:
        yield
    finally:
        del blocker


def _mol(smiles: object, chem) -> Any:
    """The RDKit molecule, or None unless ``smiles`` is a non-blank string RDKit parses."""
    # An empty string parses to an empty molecule (an all-zero fingerprint): invalid here.
    return chem.MolFromSmiles(smiles) if isinstance(smiles, str) and smiles.strip() else None


@lru_cache(maxsize=8)
def _generator(radius: int, n_bits: int):
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)


def _fingerprint_batch(
    smiles: list[object], radius: int, n_bits: int
) -> tuple[np.ndarray, list[int]]:
    """Bits of the parsable SMILES of one batch, and the positions that failed.

    Each molecule is fingerprinted right after it is parsed, while it is still in
    cache. Measured on MOSES, this beat parsing the batch first and calling the
    batched ``GetFingerprints`` (even with ``numThreads=2``: parsing, 60-70 % of the
    time, holds the GIL, so threads cannot share it).
    """
    from rdkit import Chem

    gen = _generator(radius, n_bits)
    bits = np.empty((len(smiles), n_bits), dtype=np.uint8)
    bad = []
    with _rdkit_logs_blocked():
        for k, s in enumerate(smiles):
            mol = _mol(s, Chem)
            if mol is None:
                bad.append(k)
            else:
                bits[k] = gen.GetFingerprintAsNumPy(mol)
    return (np.delete(bits, bad, axis=0) if bad else bits), bad


def _scaffold_batch(smiles: list[object]) -> tuple[list[str], list[int]]:
    from rdkit import Chem
    from rdkit.Chem.Scaffolds import MurckoScaffold

    with _rdkit_logs_blocked():
        mols = [_mol(s, Chem) for s in smiles]
        cores = [MurckoScaffold.GetScaffoldForMol(m) for m in mols if m is not None]
        out = [Chem.MolToSmiles(core) for core in cores]
    return out, [i for i, m in enumerate(mols) if m is None]


# ---------------------------------------------------------------------------
# Validation and the batch driver shared by every public function.
# ---------------------------------------------------------------------------


def _as_smiles_list(smiles: object, where: str, func: str) -> list[object]:
    if isinstance(smiles, (str, bytes)):
        raise TypeError(
            f"{where} of {func} must be a sequence of SMILES strings, not a single string. "
            f"Wrap it in a list: [{smiles!r}]."
        )
    if not isinstance(smiles, Iterable):
        raise TypeError(
            f"{where} of {func} must be a sequence of SMILES strings (list, tuple, numpy "
            f"array, pandas Series). Got {type(smiles).__name__}."
        )
    return list(smiles)


def _check_n_jobs(n_jobs: object, func: str) -> int:
    if (
        isinstance(n_jobs, bool)
        or not isinstance(n_jobs, (int, np.integer))
        or n_jobs == 0
        or n_jobs < -1
    ):
        raise ValueError(
            f"The 'n_jobs' argument of {func} must be a positive int or -1 (every CPU). "
            f"Got {n_jobs!r} instead."
        )
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


def _listing(smiles: list[object], bad: list[int]) -> str:
    shown = ", ".join(f"[{i}] {smiles[i]!r}" for i in bad[:_SHOWN])
    more = f" and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
    return shown + more


def _run_batches(
    smiles: list[object],
    work: Callable[[list[object]], tuple[Any, list[int]]],
    *,
    n_jobs: int,
    show: bool,
    desc: str,
) -> tuple[list[Any], list[int]]:
    """Apply ``work`` to consecutive batches; returns its outputs and every bad index."""
    batches = [smiles[i : i + _BATCH] for i in range(0, len(smiles), _BATCH)]
    enabled = show and len(batches) > 1
    if n_jobs > 1 and len(batches) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn, not fork: forking a threaded process (a Jupyter kernel) can deadlock.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(n_jobs, len(batches)), mp_context=context) as pool:
            results = list(
                _progress_bar(
                    pool.map(work, batches), total=len(batches), desc=desc, enabled=enabled
                )
            )
    else:
        results = [
            work(b) for b in _progress_bar(batches, total=len(batches), desc=desc, enabled=enabled)
        ]
    bad = [k * _BATCH + i for k, (_, positions) in enumerate(results) for i in positions]
    return [out for out, _ in results], bad


def _handle_invalid(
    smiles: list[object], bad: list[int], on_invalid: str, where: str, func: str, stacklevel: int
) -> np.ndarray:
    """Raise or warn about unparsable SMILES; returns the kept indices."""
    kept = np.setdiff1d(np.arange(len(smiles)), bad)
    if not bad:
        return kept
    if on_invalid == "raise":
        raise ValueError(
            f"{where} of {func} holds {len(bad)} of {len(smiles)} SMILES that RDKit "
            f"cannot parse (index and value): {_listing(smiles, bad)}. Fix or remove "
            f"them, or pass on_invalid='drop' to drop them (return_kept=True then gives the "
            f"indices kept, to align labels)."
        )
    if kept.size == 0:
        raise ValueError(
            f"{where} of {func} holds no SMILES that RDKit can parse ({len(smiles)} "
            f"given): {_listing(smiles, bad)}."
        )
    warnings.warn(
        f"{where} of {func}: dropped {len(bad)} of {len(smiles)} SMILES that RDKit "
        f"cannot parse (index and value): {_listing(smiles, bad)}.",
        InvalidSmilesWarning,
        stacklevel=stacklevel,
    )
    return kept


def _featurise(
    smiles: object,
    radius: int,
    n_bits: int,
    *,
    on_invalid: str,
    progress: bool,
    n_jobs: int,
    where: str,
    func: str,
    desc: str = "Morgan fingerprints",
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """(bits, kept indices, bad indices) of checked arguments; called by the public API."""
    items = _as_smiles_list(smiles, where, func)
    work = partial(_fingerprint_batch, radius=radius, n_bits=n_bits)
    parts, bad = _run_batches(items, work, n_jobs=n_jobs, show=progress, desc=desc)
    kept = _handle_invalid(items, bad, on_invalid, where, func, stacklevel=4)
    bits = np.concatenate(parts) if parts else np.empty((0, n_bits), dtype=np.uint8)
    return bits, kept, bad


def _check_common(radius, n_bits, on_invalid, n_jobs, func: str) -> tuple[int, int, int]:
    one_of(on_invalid, "on_invalid", func, _ON_INVALID)
    return (
        check_int(radius, "radius", func, 0),
        check_int(n_bits, "n_bits", func, 1),
        _check_n_jobs(n_jobs, func),
    )


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def fingerprints(
    smiles: Iterable[str],
    radius: int = 2,
    n_bits: int = 2048,
    *,
    on_invalid: Literal["raise", "drop"] = "raise",
    return_kept: bool = False,
    progress: bool = True,
    n_jobs: int = 1,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Morgan fingerprints of SMILES as a 0/1 array, for the Tanimoto distance.

    Parameters
    ----------
    smiles : sequence of str
        One SMILES per molecule (list, tuple, numpy array or pandas Series).
        Validity is RDKit's: ``Chem.MolFromSmiles`` with sanitisation, as in
        MOSES; blank strings and non-strings (e.g. NaN) are invalid.
    radius : int, default 2
        Bonds around each atom (2 is ECFP4-like); >= 0.
    n_bits : int, default 2048
        Length of the folded bit vector; >= 1.
    on_invalid : {"raise", "drop"}, default "raise"
        ``"raise"``: a ValueError naming the unparsable entries (index and value,
        the first 10 and the count). ``"drop"``: leave them out with an
        :class:`InvalidSmilesWarning` that names them.
    return_kept : bool, default False
        Also return the indices of the input kept, in order, so that labels or
        properties of the molecules can be aligned with the rows:
        ``labels[kept]``.
    progress : bool, default True
        Show a progress bar (per batch of 1,000 SMILES) for inputs over one batch.
    n_jobs : int, default 1
        Worker processes (``-1``: every CPU). Parsing holds the GIL, so only
        processes help; they are spawned (about a second to start), which pays
        off from about 10,000 molecules on idle cores (20,000 MOSES SMILES: 1.4-1.7×
        faster with 2 processes). In a script, call it under
        ``if __name__ == "__main__":``, as multiprocessing requires.

    Returns
    -------
    bits : numpy.ndarray of uint8, shape (n_kept, n_bits)
        Row ``i`` holds the bits of ``smiles[kept[i]]``.
    kept : numpy.ndarray of int, shape (n_kept,)
        Only with ``return_kept=True``.

    Examples
    --------
    >>> X = fingerprints(["CCO", "OCC", "c1ccccc1"])
    >>> X.shape, X.dtype
    ((3, 2048), dtype('uint8'))
    >>> import diversity_profiles as dp
    >>> dp.pairwise_distances(X, "tanimoto")[0].tolist()  # same molecule, nothing shared
    [0.0, 0.0, 1.0]
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     X, kept = fingerprints(["CCO", "C1CC", "c1ccccc1"], on_invalid="drop",
    ...                            return_kept=True)
    >>> kept.tolist(), X.shape
    ([0, 2], (2, 2048))
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    The 'smiles' argument of fingerprints: dropped 1 of 3 SMILES ...: [1] 'C1CC'.
    """
    func = "fingerprints"
    require("rdkit", func, "RDKit", "molecules")
    radius, n_bits, jobs = _check_common(radius, n_bits, on_invalid, n_jobs, func)
    bits, kept, _ = _featurise(
        smiles,
        radius,
        n_bits,
        on_invalid=on_invalid,
        progress=progress,
        n_jobs=jobs,
        where="The 'smiles' argument",
        func=func,
    )
    return (bits, kept) if return_kept else bits


def scaffolds(
    smiles: Iterable[str],
    *,
    on_invalid: Literal["raise", "drop"] = "raise",
    return_kept: bool = False,
    progress: bool = True,
    n_jobs: int = 1,
) -> list[str] | tuple[list[str], np.ndarray]:
    """Bemis–Murcko scaffolds (ring systems and their linkers) as canonical SMILES.

    Molecules sharing a scaffold share a core; sets drawn from few scaffolds are
    "concentrated" even when their side chains differ. Acyclic molecules have the
    empty scaffold ``""``.

    Parameters
    ----------
    smiles : sequence of str
        As in :func:`fingerprints`.
    on_invalid, return_kept, progress, n_jobs
        As in :func:`fingerprints`.

    Returns
    -------
    list of str
        One scaffold per kept molecule (and the kept indices with ``return_kept``).

    Examples
    --------
    >>> scaffolds(["Cc1ccccc1", "CCO", "O=C(O)c1ccc(CC2CCNCC2)cc1"])
    ['c1ccccc1', '', 'c1ccc(CC2CCNCC2)cc1']
    """
    func = "scaffolds"
    require("rdkit", func, "RDKit", "molecules")
    one_of(on_invalid, "on_invalid", func, _ON_INVALID)
    jobs = _check_n_jobs(n_jobs, func)
    where = "The 'smiles' argument"
    items = _as_smiles_list(smiles, where, func)
    parts, bad = _run_batches(
        items, _scaffold_batch, n_jobs=jobs, show=progress, desc="Murcko scaffolds"
    )
    kept = _handle_invalid(items, bad, on_invalid, where, func, stacklevel=3)
    out = [s for part in parts for s in part]
    return (out, kept) if return_kept else out


def profiles(
    sets: Mapping[str, Iterable[str]],
    *,
    radius: int = 2,
    n_bits: int = 2048,
    on_invalid: Literal["raise", "drop"] = "raise",
    progress: bool = True,
    n_jobs: int = 1,
    **kwargs: Any,
) -> xr.DataTree:
    """Diversity profiles of sets of molecules: SMILES to a Morgan/Tanimoto tree.

    Featurises every set with :func:`fingerprints` and calls
    :func:`diversity_profiles.profiles` with ``distance="tanimoto"`` (Vendi uses
    the Tanimoto similarity, which is positive semidefinite on bit vectors).

    Parameters
    ----------
    sets : dict of str to sequence of str
        Labels mapped to SMILES lists.
    radius, n_bits, on_invalid, progress, n_jobs
        As in :func:`fingerprints`.
    **kwargs
        Passed to :func:`diversity_profiles.profiles` (``families``, ``n_points``,
        ``n_boot``, ``common_n``, ``circles_method``...), except ``representation``,
        which this function sets. ``distance`` is ``"tanimoto"`` unless it is a callable
        ``f(a, b)`` of two fingerprints (or :func:`diversity_profiles.pairwise` of one);
        ``similarities`` may be such a callable too (then ``1 - K`` is the distance).

    Returns
    -------
    xarray.DataTree
        One node ``"morgan-r{radius}-{n_bits}/tanimoto"``. Its attributes record
        the representation: ``representation_kind`` ("Morgan fingerprint"),
        ``representation_radius``, ``representation_n_bits``,
        ``representation_rdkit_version`` and, with ``on_invalid="drop"``,
        ``representation_invalid_smiles_dropped`` (count per set) and
        ``representation_n_invalid_smiles_dropped``.

    Examples
    --------
    >>> tree = profiles({"alcohols": ["CCO", "CCCO", "CCCCO"],
    ...                  "aromatics": ["c1ccccc1", "Cc1ccccc1", "c1ccncc1"]},
    ...                 families=["average_distance", "richness"])
    >>> node = tree["morgan-r2-2048/tanimoto"]
    >>> node["richness"].values.tolist()
    [3, 3]
    >>> node.attrs["representation_kind"], node.attrs["representation_radius"]
    ('Morgan fingerprint', 2)
    """
    func = "molecules.profiles"
    if "representation" in kwargs:
        raise TypeError(
            f"{func} sets representation itself (Morgan fingerprints); pass radius and n_bits."
        )
    if callable(kwargs.get("similarities")) and "distance" not in kwargs:
        kwargs["distance"] = "precomputed"  # every family then uses 1 - K
    distance = kwargs.pop("distance", "tanimoto")
    if isinstance(distance, str) and distance not in ("tanimoto", "precomputed"):
        raise TypeError(
            f"{func} profiles fingerprints under the Tanimoto distance, or under a callable "
            f"f(a, b) of two fingerprints (rows of 0/1 values) passed as distance=. Got "
            f"distance={distance!r}; for another named distance call "
            f"diversity_profiles.profiles on fingerprints(...) arrays."
        )
    version = str(require("rdkit", func, "RDKit", "molecules").__version__)
    radius, n_bits, jobs = _check_common(radius, n_bits, on_invalid, n_jobs, func)
    check_sets(sets, func, "lists of SMILES", "{'generated': [...], 'reference': [...]}")
    bits: dict[str, np.ndarray] = {}
    dropped: dict[str, int] = {}
    for label, smiles in sets.items():
        bits[label], _, bad = _featurise(
            smiles,
            radius,
            n_bits,
            on_invalid=on_invalid,
            progress=progress,
            n_jobs=jobs,
            where=f"Set {label!r} in the 'sets' argument",
            func=func,
            desc=f"Morgan fingerprints of {label!r}",
        )
        dropped[label] = len(bad)
    details: dict[str, object] = {
        "kind": "Morgan fingerprint",
        "radius": radius,
        "n_bits": n_bits,
        "rdkit_version": version,
    }
    if on_invalid == "drop":
        details["invalid_smiles_dropped"] = ", ".join(f"{k}: {v}" for k, v in dropped.items())
        details["n_invalid_smiles_dropped"] = sum(dropped.values())
    from ..explanation import profiles as _profiles

    rep = Representation(f"morgan-r{radius}-{n_bits}", details)
    return _profiles(bits, representation=rep, distance=distance, **kwargs)
