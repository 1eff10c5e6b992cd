"""Input checks shared by every public function.

Public functions validate once, here, and hand clean float64 arrays to private
``_functions`` that assume checked input. Every message names the argument, says
what is allowed, shows what was given and, where there is one, the fix.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from types import ModuleType

import numpy as np

#: Relative tolerance for symmetry and unit-diagonal checks of user matrices.
MATRIX_RTOL = 1e-6


def _first_bad_index(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _densify(x, name: str, func: str):
    """A scipy.sparse matrix as a dense array, if the dense copy fits in memory."""
    shape = tuple(int(k) for k in x.shape)
    need = float(np.prod(shape)) * 8
    have = available_memory_bytes()
    if need > 0.5 * have:
        raise MemoryError(
            f"The {name!r} argument of {func} is a sparse {shape[0]} × {shape[1]} matrix; its "
            f"dense float64 copy needs {human_bytes(need)} but only {human_bytes(have)} is "
            f"available. Reduce the dimension first (e.g. TruncatedSVD) or pass fewer samples."
        )
    return x.toarray()


def as_finite_array(x, name: str, func: str, *, ndim: int | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array, rejecting NaN/inf, strings, complex and wrong ranks.

    Booleans become 0/1; a scipy.sparse matrix is densified when the copy fits in memory.
    """
    from ._inputs import refuse_dataless_tensor

    refuse_dataless_tensor(x, name, func)
    if type(x).__module__.startswith("scipy.sparse"):
        x = _densify(x, name, func)
    raw = x if isinstance(x, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(x)
        except (TypeError, ValueError) as exc:  # ragged nested lists
            raise TypeError(
                f"The {name!r} argument of {func} must be numeric (an array of numbers). "
                f"Got {type(x).__name__} that cannot be converted: {exc}"
            ) from None
    if raw.dtype.kind in "cUSMmV" or (
        raw.dtype.kind == "O" and any(isinstance(v, (complex, str, bytes)) for v in raw.flat)
    ):
        what = "complex numbers" if raw.dtype.kind == "c" else f"dtype {raw.dtype}"
        if raw.dtype.kind == "O":
            what = "complex numbers or strings"
        raise TypeError(
            f"The {name!r} argument of {func} must hold real numbers. Got {what}. Pass "
            f"np.real(x) or np.abs(x) explicitly if that is what is meant, or convert strings "
            f"with a featuriser."
        )
    try:
        with np.errstate(all="ignore"):
            arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(
            f"The {name!r} argument of {func} must be numeric (an array of numbers). "
            f"Got {type(x).__name__} that cannot be converted: {exc}"
        ) from None
    if ndim is not None and arr.ndim != ndim:
        shape = "a 2-D array (n × n)" if ndim == 2 else f"a {ndim}-D array"
        raise ValueError(
            f"The {name!r} argument of {func} must be {shape}. Got shape {arr.shape} instead."
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = _first_bad_index(bad) if arr.ndim else ()
        kind = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(
            f"The {name!r} argument of {func} contains {int(bad.sum())} non-finite value(s) "
            f"({kind}), first at index {idx}. Remove or impute those samples before "
            f"computing diversity."
        )
    return arr


def check_square(arr: np.ndarray, name: str, func: str, *, min_size: int = 1) -> int:
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(
            f"The {name!r} argument of {func} must be a square n × n matrix. "
            f"Got shape {arr.shape} instead."
        )
    n = arr.shape[0]
    if n < min_size:
        what = "empty" if n == 0 else f"of size {n}"
        raise ValueError(
            f"The {name!r} argument of {func} must describe at least {min_size} sample(s); "
            f"it is {what}. Diversity of an empty set is undefined."
        )
    return n


def check_symmetric(arr: np.ndarray, name: str, func: str) -> None:
    scale = max(float(np.max(np.abs(arr))), 1.0)
    asym = np.abs(arr - arr.T)
    worst = float(asym.max())
    if worst > MATRIX_RTOL * scale:
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        raise ValueError(
            f"The {name!r} argument of {func} must be symmetric. Entry ({i}, {j}) is "
            f"{float(arr[i, j])!r} but ({j}, {i}) is {float(arr[j, i])!r}. "
            f"Symmetrise it, e.g. (M + M.T) / 2, "
            f"if the difference is round-off."
        )


def check_distance_matrix(D, func: str, name: str = "D", *, min_size: int = 1) -> np.ndarray:
    """Validate a pairwise distance matrix and return it as float64."""
    D = as_finite_array(D, name, func, ndim=2)
    check_square(D, name, func, min_size=min_size)
    if (D < 0).any():
        idx = _first_bad_index(D < 0)
        raise ValueError(
            f"The {name!r} argument of {func} must hold non-negative distances. "
            f"Got {float(D[idx])!r} at index {idx}."
        )
    check_symmetric(D, name, func)
    diag = np.abs(np.diagonal(D))
    if (diag > MATRIX_RTOL * max(float(D.max()), 1.0)).any():
        i = int(np.argmax(diag))
        raise ValueError(
            f"The {name!r} argument of {func} must have a zero diagonal (a point is at "
            f"distance 0 from itself). Got D[{i}, {i}] = {float(D[i, i])!r}."
        )
    return D


def check_similarity_matrix(K, func: str, name: str = "K") -> np.ndarray:
    """Validate a similarity matrix (square, symmetric, unit diagonal)."""
    K = as_finite_array(K, name, func, ndim=2)
    check_square(K, name, func)
    check_symmetric(K, name, func)
    diag = np.diagonal(K)
    off = np.abs(diag - 1.0)
    if (off > MATRIX_RTOL).any():
        i = int(np.argmax(off))
        raise ValueError(
            f"The {name!r} argument of {func} must have a unit diagonal (each sample is "
            f"fully similar to itself). Got {name}[{i}, {i}] = {float(diag[i])!r}. "
            f"Normalise it with "
            f"K / sqrt(outer(diag(K), diag(K)))."
        )
    return K


def check_parameter(
    value,
    name: str,
    func: str,
    *,
    low: float,
    high: float = np.inf,
    low_open: bool = False,
    allow_inf: bool = False,
) -> tuple[np.ndarray, bool]:
    """Validate a scalar-or-array parameter; return (1-D float array, was_scalar)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"The {name!r} parameter of {func} must be a float or an array of floats. "
            f"Got {value!r} instead."
        ) from None
    scalar = arr.ndim == 0
    flat = np.atleast_1d(arr).ravel()
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{']' if allow_inf else ')'}"
    if flat.size == 0:
        raise ValueError(f"The {name!r} parameter of {func} is empty; give at least one value.")
    bad = np.isnan(flat) | (flat < low) | (flat > high)
    if low_open:
        bad |= flat == low
    if not allow_inf:
        bad |= np.isinf(flat)
    if bad.any():
        got = float(flat[bad][0])
        raise ValueError(
            f"The {name!r} parameter of {func} must be in {interval}. Got {got!r} instead."
        )
    return flat, scalar


def check_weights(weights, n: int, func: str) -> np.ndarray | None:
    """Validate probability weights over n samples and normalise them to sum 1."""
    if weights is None:
        return None
    w = as_finite_array(weights, "weights", func, ndim=1)
    if w.shape[0] != n:
        raise ValueError(
            f"The 'weights' argument of {func} must have one entry per sample ({n}). "
            f"Got {w.shape[0]} entries."
        )
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"The 'weights' argument of {func} must be non-negative with a positive sum. "
            f"Got min {float(w.min())!r} and sum {float(w.sum())!r}."
        )
    return w / w.sum()


def available_memory_bytes() -> int:
    """Best estimate of memory this process can still allocate."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 1024**3


def human_bytes(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if nbytes < 1024 or unit == "TiB":
            return f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError  # pragma: no cover


def check_pairwise_memory(n: int, func: str, *, what: str, copies: int = 3) -> None:
    """Refuse before allocating n × n float64 matrices that would not fit in memory.

    ``copies`` counts the n × n buffers the computation holds at once.
    """
    need = float(n) * n * 8 * copies
    have = available_memory_bytes()
    if need > 0.8 * have:
        raise MemoryError(
            f"{func} would need about {human_bytes(need)} for {copies} {n} × {n} float64 "
            f"matrices ({what}), but only {human_bytes(have)} is available. Subsample the set "
            f"(e.g. X[rng.choice(len(X), 5000, replace=False)]), or for the Vendi score of a "
            f"cosine/linear kernel use vendi_score_dual(X), which never forms the n × n matrix."
        )


def one_of(value: str, name: str, func: str, allowed: Sequence[str]) -> str:
    """Check that ``value`` is one of ``allowed`` and list the choices otherwise."""
    if value not in allowed:
        listing = ", ".join(repr(a) for a in allowed)
        raise ValueError(
            f"The {name!r} argument of {func} must be one of {listing}. Got {value!r} instead."
        )
    return value


def require(module: str, func: str, what: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise ImportError naming the extra that brings it."""
    try:
        importlib.import_module(module.partition(".")[0])  # a blocked parent is not installed
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{func} needs {what}, which is not installed ({exc}). Install it with: "
            f'pip install "diversity-profiles[{extra}]"'
        ) from None


def check_int(value, name: str, func: str, low: int = 1) -> int:
    """An integer argument (not a bool) of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(
            f"The {name!r} argument of {func} must be an int >= {low}. Got {value!r} instead."
        )
    return int(value)


def check_sets(sets, func: str, holds: str, example: str) -> Mapping:
    """The ``sets`` argument of a featuriser: a non-empty mapping of labels to raw samples."""
    from collections.abc import Mapping

    if not isinstance(sets, Mapping):
        raise TypeError(
            f"The 'sets' argument of {func} must be a non-empty dict mapping labels to {holds}, "
            f"e.g. {example}. Got {type(sets).__name__}."
        )
    if not sets:
        raise ValueError(
            f"The 'sets' argument of {func} must be a non-empty dict mapping labels to {holds}, "
            f"e.g. {example}. Got an empty dict."
        )
    return sets


def check_real(
    value,
    name: str,
    func: str,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """One real number (not a bool, string or array) in the stated interval."""
    ok_type = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    x = float(value) if ok_type else np.nan
    inside = (
        ok_type
        and not np.isnan(x)
        and (x > low if low_open else x >= low)
        and (x < high if high_open else x <= high)
    )
    if not inside:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise (ValueError if ok_type else TypeError)(
            f"The {name!r} argument of {func} must be a number in {interval}. Got {value!r} "
            f"instead."
        )
    return x


def check_seed(value, func: str, name: str = "seed") -> int:
    """A seed for numpy's generators: a non-negative int (not a bool or a float)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"The {name!r} argument of {func} must be a non-negative int, e.g. 0. Got "
            f"{value!r} instead."
        )
    if value < 0:
        raise ValueError(
            f"The {name!r} argument of {func} must be a non-negative int, e.g. 0. Got "
            f"{value!r} instead."
        )
    return int(value)


def estimate_seconds(seconds: float, name: str, func: str, *, budget: float | None) -> None:
    """Refuse work estimated to take longer than ``budget`` seconds (None: no limit)."""
    if budget is not None and seconds > budget:
        raise ValueError(
            f"{func} would take about {seconds:.0f} s (estimated from one timed run), more "
            f"than the time budget of {budget:g} s. Lower {name!r}, or pass "
            f"max_seconds=None (or a larger budget) to run it anyway."
        )


def check_text(value, what: str) -> str:
    """A label or name: a string, storable in netCDF and zarr (no NUL, valid Unicode).

    Examples
    --------
    >>> check_text("beam", "set label")
    'beam'
    >>> check_text("a\\x00b", "set label")
    Traceback (most recent call last):
    ...
    ValueError: set label 'a\\x00b' contains a NUL character
    """
    if not isinstance(value, str):
        raise ValueError(f"{what} {value!r} is a {type(value).__name__}, not a string")
    if "\x00" in value:
        raise ValueError(f"{what} {value!r} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {value!r} is not valid Unicode (a lone surrogate)") from None
    return value


#: Names that cannot be one node of a tree path: xarray reads "/" as its separator and
#: "." and ".." as steps of the path ("." dropped the representation level, ".." failed
#: inside xarray after the whole computation), and a zarr round trip reads a backslash as
#: one more separator ("a\\b" came back as the two levels "a" and "b").
NODE_SEPARATORS = ("/", "\\")
NODE_DOT_NAMES = (".", "..")
#: A zarr store makes each node a directory, and file systems refuse a longer name
#: (NAME_MAX on Linux and macOS; a 500-character name failed only when the tree was saved).
NODE_NAME_MAX_BYTES = 255


def check_node_name(value, arg: str, func: str) -> str:
    """A name that becomes one node of a tree path (a representation): a non-empty,
    non-blank string without ``/`` or a backslash, not ``.`` or ``..``, storable in
    netCDF and zarr (no NUL, valid Unicode, at most 255 bytes in UTF-8).

    Examples
    --------
    >>> check_node_name("minilm", "representation", "profiles")
    'minilm'
    >>> check_node_name("..", "representation", "profiles")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'representation' argument of profiles names a tree node, so it must be ...
    """
    bad = (
        not isinstance(value, str)
        or value.strip() in ("", *NODE_DOT_NAMES)
        or any(sep in value for sep in NODE_SEPARATORS)
    )
    if bad:
        raise ValueError(
            f"The {arg!r} argument of {func} names a tree node, so it must be a non-empty "
            f"string without '/' or a backslash, and not '.' or '..'. Got {value!r}. Pick a "
            f"plain name such as 'minilm' (replace path characters with '-')."
        )
    try:
        check_text(value, f"The {arg!r} argument of {func}")
    except ValueError as exc:
        raise ValueError(f"{exc}; remove that character.") from None
    size = len(value.encode("utf-8"))
    if size > NODE_NAME_MAX_BYTES:
        raise ValueError(
            f"The {arg!r} argument of {func} names a tree node, which a zarr store makes a "
            f"directory: at most {NODE_NAME_MAX_BYTES} bytes in UTF-8. Got {size} bytes "
            f"({value[:20]!r}...). Use a shorter name; details belong in a Representation's "
            f"details."
        )
    return value
