"""A user's distance or similarity as a Python callable, declared once: :func:`pairwise`.

A plain callable ``f(a, b) -> float`` is taken as it is; :func:`pairwise` says more about
it: that it is vectorised (``f(block_a, block_b) -> matrix``), how many processes may run
it, and (for similarities) whether to normalise it to a unit diagonal. The engines turn it
into an n × n matrix (:func:`diversity_profiles.engines.callable_matrix`); what a tree
records of it (qualified name, source hash) is :meth:`Pairwise.attrs`.
"""

from __future__ import annotations

import hashlib
import inspect
import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Characters of an object's repr named in an error.
REPR_WIDTH = 60

_REPR = reprlib.Repr()
_REPR.maxstring = REPR_WIDTH
_REPR.maxother = REPR_WIDTH
_REPR.maxlist = _REPR.maxtuple = 6


def short_repr(obj: object) -> str:
    """A short, one-line, terminal-safe repr of a user's object, for errors.

    Control characters (newlines, ANSI escapes) are written as escapes, never sent as
    they are, and the text is cut to about :data:`REPR_WIDTH` characters.

    Examples
    --------
    >>> short_repr("a" * 100)[:12], len(short_repr("a" * 100)) <= 64
    ("'aaaaaaaaaaa", True)
    >>> class Loud:
    ...     def __repr__(self): return "\\x1b[31mred\\nline"
    >>> short_repr(Loud())
    '\\\\x1b[31mred\\\\nline'
    """
    try:
        text = _REPR.repr(obj)
    except Exception as exc:  # a broken __repr__ must not hide the real error
        text = f"<{type(obj).__name__} whose repr failed: {type(exc).__name__}>"
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return text if len(text) <= REPR_WIDTH + 4 else text[: REPR_WIDTH + 3] + "…"


def _qualified_name(func: Callable) -> str:
    inner = getattr(func, "func", None)  # functools.partial: name what it wraps
    target = inner if callable(inner) and not hasattr(func, "__qualname__") else func
    module = getattr(target, "__module__", None) or type(target).__module__
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    prefix = "functools.partial of " if target is not func else ""
    return f"{prefix}{module}.{name}"


def _source_hash(func: Callable) -> str:
    target = getattr(func, "func", func) if not hasattr(func, "__qualname__") else func
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):  # built-ins, C extensions, code typed at a bare prompt
        return ""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Pairwise:
    """A distance or similarity between two objects, and how to evaluate it.

    Made by :func:`pairwise` (see there); a plain callable passed as ``distance`` or
    ``similarities`` becomes ``Pairwise(f)``.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> differs = dp.pairwise(lambda a, b: float(a != b), n_jobs=1)
    >>> isinstance(differs, dp.Pairwise), differs.vectorised
    (True, False)
    """

    func: Callable[[Any, Any], Any]
    vectorised: bool = False
    n_jobs: int = 1
    normalize: bool = False
    progress: bool | None = None

    @property
    def name(self) -> str:
        """The callable's qualified name, ``module.qualname``."""
        return _qualified_name(self.func)

    def attrs(self, prefix: str) -> dict[str, str]:
        """What a tree records of this callable: ``<prefix>_callable`` (its qualified
        name), ``<prefix>_callable_kind`` and, where ``inspect.getsource`` finds its
        source, ``<prefix>_callable_source_sha256``."""
        out = {
            f"{prefix}_callable": self.name,
            f"{prefix}_callable_kind": (
                "vectorised f(block_a, block_b) -> matrix" if self.vectorised else "pairwise"
            ),
        }
        digest = _source_hash(self.func)
        out[f"{prefix}_callable_source_sha256"] = digest or "unavailable (no source found)"
        if prefix == "similarity":
            out["similarity_normalized"] = (
                "K / sqrt(outer(diag(K), diag(K)))" if self.normalize else "no"
            )
        return out


def pairwise(
    func: Callable[[Any, Any], Any],
    *,
    vectorised: bool = False,
    n_jobs: int = 1,
    normalize: bool = False,
    progress: bool | None = None,
) -> Pairwise:
    """Declare how a distance or similarity callable is evaluated.

    Pass the result as ``distance=`` or ``similarities=`` of :func:`profiles`,
    :class:`Profiler` or :func:`explain`, with sets that are sequences of any objects
    (strings, graphs, numbers, molecules). The matrix of each set is formed on the upper
    triangle in row blocks, with a progress bar when it takes a while, and checked.

    Parameters
    ----------
    func : callable
        ``func(a, b) -> float`` on two objects; with ``vectorised=True``,
        ``func(block_a, block_b) -> matrix`` of ``len(block_a) × len(block_b)`` values on
        two blocks of objects (slices of a numpy array when the set is one, else lists).
    vectorised : bool, default False
        Whether ``func`` takes blocks.
    n_jobs : int, default 1
        Processes evaluating a pairwise ``func`` (``-1``: one per CPU). Processes are
        forked where the platform allows it (Linux), so lambdas and functions defined in
        a notebook work; elsewhere ``func`` must pickle. While a ``dask.distributed``
        client is active, ``func`` (pairwise or vectorised) runs as row-block tasks on
        its cluster instead (``n_jobs`` is then not used). Without one, a vectorised
        ``func`` runs in this process (numpy uses its own threads).
    normalize : bool, default False
        For a similarity: divide ``K`` by ``sqrt(outer(diag(K), diag(K)))`` so that each
        object is fully similar to itself (vendi-score's ``normalize=True``). Without it
        a self-similarity other than 1 is an error.
    progress : bool, optional
        Show a progress bar with an ETA; by default when the matrix is estimated, from
        its first block, to take more than a few seconds.

    Returns
    -------
    Pairwise

    Examples
    --------
    >>> import numpy as np, diversity_profiles as dp
    >>> k = lambda a, b: np.exp(-abs(a - b))
    >>> tree = dp.profiles({"x": [0, 0, 10, 10, 20, 20]}, representation="numbers",
    ...                    distance="precomputed", similarities=dp.pairwise(k),
    ...                    families="vendi", domains={"vendi": [1.0]})
    >>> round(float(tree["numbers/precomputed"]["vendi"][0, 0]), 4)
    3.0
    """
    if not callable(func):
        raise TypeError(
            f"The 'func' argument of pairwise must be a callable f(a, b) -> float (or, with "
            f"vectorised=True, f(block_a, block_b) -> matrix). Got {type(func).__name__}."
        )
    for arg, value in (("vectorised", vectorised), ("normalize", normalize)):
        if not isinstance(value, bool):
            raise TypeError(
                f"The {arg!r} argument of pairwise must be True or False. Got {value!r}."
            )
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(
            f"The 'progress' argument of pairwise must be None (automatic), True or False. "
            f"Got {progress!r}."
        )
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(
            f"The 'n_jobs' argument of pairwise must be an int >= 1, or -1 for one process "
            f"per CPU. Got {n_jobs!r}."
        )
    return Pairwise(func, vectorised, n_jobs, normalize, progress)


def as_pairwise(value: object) -> Pairwise | None:
    """``value`` as a :class:`Pairwise` when it is a callable or one already, else None."""
    if isinstance(value, Pairwise):
        return value
    if callable(value) and not isinstance(value, type):
        return Pairwise(value)
    return None
