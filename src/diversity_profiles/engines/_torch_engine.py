"""The heavy kernels of the large-n methods on a torch device (``device="cuda"``).

The same interfaces as the numpy engine: :func:`distance_pass` and
:func:`threshold_pass` (as :mod:`.streaming`), :func:`dual_spectrum` (as
:mod:`.dask_engine`), :class:`DevicePairOperator` (a :class:`._blockwise.PairOperator`
for ``magnitude_large`` and ``vendi_large``) and :func:`pair_candidates` (the tiles of
``circles_large``). :func:`.large._engine` routes a set here when :func:`profiles` was
given ``device=`` (or torch tensors), and the large-n modules take ``device=``. Only the
device kernels live here: the block walk's per-row partials and their tree reduction
(:func:`.streaming.tree_reduce`), the solvers, and everything computed from the passes
(histogram queries, degrees, bounds) are the numpy engine's own.

Which precision each kernel runs in, and why (the numpy engine's safeguards, kept):

========================  =========  ===================================================
kernel                    GEMM       safeguard / reason
========================  =========  ===================================================
threshold counts          float32    pairs within 1e-5 (relative) of a threshold are
                                     recounted from the float64 row difference: counts
                                     and degrees stay exact (float32 distances were off
                                     by at most 6e-7 at d = 768 on CPU torch; the GPU
                                     benchmark checks its own against a float64 pass)
distance histogram        float64    its mean distance is reported as exact and its bins
                                     certify the energy bounds: float32 distances would
                                     carry ~1e-7 round-off into both
Σ K² (Vendi of order 2)   float64    reported as exact
near-duplicate pairs      float64    recomputed from the row difference (every pass)
d × d covariance          float64    eigenvalues on the CPU (LAPACK), as in memory
Circles' candidate pairs  float32    candidates within the float32 error bound of a
                                     threshold are recomputed in float64 numpy (host)
solver products (K v)     float32    the iterations of magnitude_large / vendi_large;
                                     their certifying products are float64 tiles
========================  =========  ===================================================

Every float32 product runs with TF32 off (:class:`full_float32`): the error bounds above
assume full float32 products.

torch is imported only here, and only when a device is asked for:
``pip install "diversity-profiles[torch]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._blockwise import PairOperator
from ._histogram import BINS_PER_OCTAVE, OCTAVES, LogDistanceHistogram
from ._streaming import (
    _CLOSE32,
    _CLOSE64,
    _NEAR,
    BLOCK,
    ThresholdCounts,
    _add,
    _merge_histograms,
    _per_row,
    _set_scale,
    finish_counts,
    range_error,
    tree_reduce,
)

#: Devices a torch engine runs on: float64 (the safeguards) must be supported there.
DEVICE_TYPES = ("cpu", "cuda")
#: Rows per block on a GPU: 8192² float64 = 512 MiB per block buffer, enough work per
#: launch to keep a GPU busy (2048, the CPU block, leaves it mostly waiting for Python).
GPU_BLOCK = 8192
#: Pairs recomputed from their rows at a time (bounds the gathered float64 rows' memory).
_CHUNK = 65536


def _import_torch(func: str, device: object) -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"The 'device' argument of {func} needs torch (got device={device!r}), which is not "
            f'installed. Install it with: pip install "diversity-profiles[torch]", or leave '
            f"device=None to compute with numpy."
        ) from None
    return torch


def is_torch(x: object) -> bool:
    """Whether ``x`` is a torch tensor (without importing torch).

    Examples
    --------
    >>> is_torch(np.zeros(2))
    False
    """
    return (type(x).__module__ or "").startswith("torch") and hasattr(x, "detach")


def resolve_device(device: object, func: str = "profiles") -> str | None:
    """The torch device a call runs on, as a string (``"cuda:0"``, ``"cpu"``), or None.

    Raises a clear error when torch is missing, the name is not a device, or CUDA is
    asked for where torch has none.

    Examples
    --------
    >>> resolve_device(None) is None
    True
    """
    if device is None:
        return None
    if not isinstance(device, str) and type(device).__name__ != "device":
        raise TypeError(
            f"The 'device' argument of {func} must be None (numpy), a device name such as "
            f"'cuda', 'cuda:1' or 'cpu', or a torch.device. Got {type(device).__name__} "
            f"{device!r}."
        )
    torch = _import_torch(func, device)
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError(
            f"The 'device' argument of {func} must be one of 'cuda', 'cuda:<index>' or 'cpu' "
            f"(or None for numpy). Got {device!r}."
        ) from None
    if dev.type not in DEVICE_TYPES:
        raise ValueError(
            f"The 'device' argument of {func} must be a CUDA device or 'cpu': the accuracy "
            f"safeguards need float64, which {dev.type!r} lacks. Got {device!r}."
        )
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            build = (
                "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
            )
            raise RuntimeError(
                f"The 'device' argument of {func} asks for {device!r}, but torch "
                f"{torch.__version__} ({build}) sees no CUDA device here. Run on a machine "
                f'with a GPU and a CUDA build of torch (pip install "diversity-profiles[torch]" '
                f"there), or pass device='cpu' (torch on the CPU) or device=None (numpy)."
            )
        index = 0 if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise ValueError(
                f"The 'device' argument of {func} asks for {device!r}, but only "
                f"{torch.cuda.device_count()} CUDA device(s) exist (cuda:0 ...)."
            )
        return f"cuda:{index}"
    return "cpu"


def tensor_to_numpy(x: Any) -> np.ndarray:
    """A torch tensor's values on the host (validated like any array afterwards); floating
    tensors come as float64 (numpy has no bfloat16)."""
    x = x.detach().to("cpu")
    if x.is_floating_point():
        import torch

        x = x.to(torch.float64)
    return x.numpy()


def tensor_device(x: Any) -> str:
    """The device a tensor lives on, e.g. ``"cuda:0"``."""
    dev = x.device
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{0 if dev.index is None else dev.index}"


def namespace(a: Any) -> Any:
    """``numpy`` or ``torch``, whichever ``a`` belongs to: kernel functions written as
    ``xp.exp(K, out=K)`` then run on the host and on a device alike."""
    if is_torch(a):
        import torch

        return torch
    return np


#: How each kernel's precision was chosen, recorded with the results (see the table above).
PRECISION = (
    "threshold counts and Circles candidates: float32 GEMM (no TF32), near-threshold pairs "
    "recomputed in float64; distance histogram, sum of K^2, d x d covariance: float64; "
    "solver iterations: float32 products, certifying products float64; near-duplicates "
    "from float64 differences"
)


def provenance(device: str) -> dict[str, str]:
    """The attributes a profile node records about the torch engine that computed it."""
    torch = _import_torch("profiles", device)
    where = device
    if device.startswith("cuda"):
        where = f"{device} ({torch.cuda.get_device_name(device)})"
    return {"engine": f"torch {torch.__version__}", "device": where, "device_precision": PRECISION}


class full_float32:
    """Full float32 products (no TF32) inside: the float32 error bounds assume them."""

    def __init__(self, torch: Any):
        self.backend = torch.backends.cuda.matmul

    def __enter__(self) -> None:
        self.saved = self.backend.allow_tf32
        self.backend.allow_tf32 = False

    def __exit__(self, *exc: object) -> None:
        self.backend.allow_tf32 = self.saved


# --- the device copy of a set ---------------------------------------------------------------


class DeviceSet:
    """One set's prepared rows on a device: float64 (the reference) and float32 copies."""

    def __init__(self, X: np.ndarray, distance: str, device: str):
        torch = _import_torch("profiles", device)
        self.torch, self.device, self.distance = torch, device, distance
        self.X = np.asarray(X)
        self.n = int(self.X.shape[0])
        self.X64 = torch.as_tensor(np.ascontiguousarray(self.X, dtype=np.float64), device=device)
        self._X32 = None
        #: :meth:`block` squares the rows divided by this power of two (1 for most sets),
        #: so that coordinates near 1e160 or 1e-170 neither overflow nor underflow.
        self.scale = _set_scale(self.X, distance, np.float64)
        if distance == "euclidean":  # float64 norms: exact enough for the GEMM identity
            Y = self.X64 / self.scale if self.scale != 1.0 else self.X64
            self.sq = (Y * Y).sum(dim=1)
        elif distance in ("tanimoto", "jaccard"):  # bit counts, exact
            self.sq = self.X64.sum(dim=1)
        else:
            self.sq = None

    def rows(self, dtype: str) -> Any:
        if dtype == "float64":
            return self.X64
        if self._X32 is None:
            self._X32 = self.X64.to(self.torch.float32)
        return self._X32

    def pair_distances(self, r: Any, c: Any) -> Any:
        """float64 distances of the row pairs (r, c) from the rows (as
        :func:`.streaming._pair_distances` and :func:`.distances.refine_close_pairs`)."""
        torch = self.torch
        A, B = self.X64[r], self.X64[c]
        if self.distance in ("tanimoto", "jaccard"):
            both = (A * B).sum(dim=1)
            union = A.sum(dim=1) + B.sum(dim=1) - both
            safe = torch.where(union > 0, union, torch.ones_like(union))
            return torch.where(union > 0, 1.0 - both / safe, torch.zeros_like(union))
        diff = A - B
        if self.distance == "cosine":  # |u - v|² / 2 for unit rows
            return (diff * diff).sum(dim=1) / 2.0
        # Scaled by the largest entry (a power of two, exact), as distances.row_norms does:
        # a difference of 1e-170 must not square to 0.
        top = diff.abs().amax(dim=1)
        scale = torch.where(top > 0, torch.exp2(torch.floor(torch.log2(top))), torch.ones_like(top))
        Y = diff / scale[:, None]
        return scale * torch.sqrt((Y * Y).sum(dim=1))

    def block(self, i: int, j: int, size: int, dtype: str) -> Any:
        """Distances of rows ``i:i+size`` to rows ``j:j+size`` on the device, in ``dtype``,
        near-duplicate pairs recomputed in float64 from the row difference."""
        torch = self.torch
        X = self.rows(dtype)
        A, B = X[i : i + size], X[j : j + size]
        if self.scale != 1.0:  # float64 rows divided exactly, then cast (see _set_scale)
            tdt = A.dtype
            A = (self.X64[i : i + size] / self.scale).to(tdt)
            B = (self.X64[j : j + size] / self.scale).to(tdt)
        with full_float32(torch):
            G = A @ B.T
        limit = _CLOSE32 if dtype == "float32" else _CLOSE64
        if self.distance == "cosine":
            G = torch.clamp_min(1.0 - G, 0.0)
            close = G < limit
        elif self.distance == "euclidean":
            norms = (self.sq[i : i + size, None] + self.sq[None, j : j + size]).to(G.dtype)
            G = norms - 2.0 * G
            close = G < limit * norms
            G = torch.sqrt(torch.clamp_min(G, 0.0))
            if self.scale != 1.0:
                G = G * self.scale
                if not bool(torch.isfinite(G).all()):
                    raise range_error(str(G.dtype).removeprefix("torch."), self.scale)
        else:  # tanimoto / jaccard: integer counts, exact in float32
            W = (self.sq[i : i + size, None] + self.sq[None, j : j + size]).to(G.dtype) - G
            ratio = torch.where(W > 0, G / torch.where(W > 0, W, torch.ones_like(W)), 1.0)
            G = torch.clamp_min(1.0 - ratio, 0.0)
            close = None
        if close is not None:
            r, c = torch.nonzero(close, as_tuple=True)
            for s in range(0, r.numel(), _CHUNK):
                rr, cc = r[s : s + _CHUNK], c[s : s + _CHUNK]
                G[rr, cc] = self.pair_distances(i + rr, j + cc).to(G.dtype)
        return G


def device_set(X: Any, distance: str, device: str) -> DeviceSet:
    return X if isinstance(X, DeviceSet) else DeviceSet(X, distance, device)


def _block_size(ds: DeviceSet, block: int | None) -> int:
    if block is not None:
        return block
    return GPU_BLOCK if ds.device.startswith("cuda") else BLOCK


def _walk(ds: DeviceSet, block: int, dtype: str) -> Iterator[tuple[int, int, Any, Any]]:
    """(i, j, D, keep) per upper-triangle block pair, as :func:`.streaming._walk`."""
    torch = ds.torch
    b = min(block, ds.n)
    upper = torch.triu(torch.ones((b, b), dtype=torch.bool, device=ds.device), diagonal=1)
    for i in range(0, ds.n, block):
        for j in range(i, ds.n, block):
            D = ds.block(i, j, block, dtype)
            yield i, j, D, (upper[: D.shape[0], : D.shape[1]] if i == j else None)


# --- the distance pass ------------------------------------------------------------------------


class _DeviceHistogram:
    """A row block's :class:`LogDistanceHistogram`, its bins filled on the device.

    The binning is :meth:`LogDistanceHistogram.add` (unweighted), written for tensors.
    """

    def __init__(self, torch: Any, device: str):
        self.torch = torch
        size = 2 * OCTAVES * BINS_PER_OCTAVE
        zeros = [torch.zeros(size, dtype=torch.float64, device=device) for _ in range(3)]
        self.counts, self.sum_u, self.sum_u2 = zeros
        self.n_pairs = self.n_zero = self.n_clipped = 0.0
        self.sum_d = torch.zeros((), dtype=torch.float64, device=device)
        self.anchor: float | None = None

    def add(self, d: Any) -> None:
        torch = self.torch
        d = d.reshape(-1).to(torch.float64)
        if d.numel() == 0:
            return
        self.n_pairs += d.numel()
        self.sum_d += d.sum()
        positive = d[d > 0]
        self.n_zero += d.numel() - positive.numel()
        if positive.numel() == 0:
            return
        size = self.counts.numel()
        if self.anchor is None:
            self.anchor = float(np.frexp(float(positive.max()))[1]) * np.log(2.0)
        scale = LogDistanceHistogram._scale()
        position = torch.log(positive)
        position -= self.anchor
        position *= scale
        position += OCTAVES * BINS_PER_OCTAVE
        outside = (position < 0.0) | (position > size - 1e-9)
        self.n_clipped += float(outside.sum())
        position.clamp_(0.0, size - 1e-9)
        index = position.to(torch.int64)
        u = position - index
        u /= scale
        self.counts += torch.bincount(index, minlength=size)
        self.sum_u += torch.bincount(index, weights=u, minlength=size)
        self.sum_u2 += torch.bincount(index, weights=u * u, minlength=size)

    def host(self) -> LogDistanceHistogram:
        h = LogDistanceHistogram()
        h.set_dense(*(a.cpu().numpy() for a in (self.counts, self.sum_u, self.sum_u2)))
        h.n_pairs, h.n_zero, h.n_clipped = float(self.n_pairs), float(self.n_zero), self.n_clipped
        h.sum_d, h.anchor = float(self.sum_d), self.anchor
        return h


def distance_pass(
    X: Any,
    distance: str,
    *,
    device: str = "cpu",
    block: int | None = None,
    precision: str = "float64",
    **_ignored: object,
) -> LogDistanceHistogram:
    """:func:`.streaming.distance_pass` on a torch device: one partial histogram per row
    block (binned on the device), reduced by the same tree on the host.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> h = distance_pass(X, "euclidean", device="cpu")   # doctest: +SKIP
    >>> h.n_pairs, round(h.mean_distance(), 6)             # doctest: +SKIP
    (3.0, 6.666667)
    """
    ds = device_set(X, distance, device)

    def add(part, i, j, D, keep):
        part.add(D[keep] if keep is not None else D)
        return part

    def new():
        return _DeviceHistogram(ds.torch, ds.device)

    walk = _walk(ds, _block_size(ds, block), precision)
    rows = (p.host() for p in _per_row(walk, new, add))
    return tree_reduce(rows, _merge_histograms)


# --- the threshold pass -----------------------------------------------------------------------


class _DeviceCounter:
    """:class:`.streaming._BlockCounter` on the device: bins (n × (m + 1), on the device)
    and Σ K² per row block; near-threshold pairs recounted from float64 rows."""

    def __init__(self, ds: DeviceSet, taus: np.ndarray, dtype: str, kernel, bins):
        torch = ds.torch
        self.ds, self.kernel, self.bins, self.m = ds, kernel, bins, taus.size
        tdt = torch.float32 if dtype == "float32" else torch.float64
        self.taus = torch.as_tensor(taus, dtype=torch.float64, device=ds.device)
        self.tausD = self.taus.to(tdt)
        inf = torch.tensor([np.inf], dtype=tdt, device=ds.device)
        self.above = torch.cat([self.tausD, inf])
        self.below = torch.cat([-inf, self.tausD])
        self.tol = _NEAR[np.float32 if dtype == "float32" else np.float64]

    def __call__(self, sum_k2: float, i: int, j: int, D: Any, keep: Any) -> float:
        torch, ds, m = self.ds.torch, self.ds, self.m
        if self.kernel is not None:
            K = self.kernel(D.to(torch.float64))
            K = K * K
            sum_k2 += float((K if keep is None else K[keep]).sum(dtype=torch.float64))
        if self.bins is None:
            return sum_k2
        k = torch.searchsorted(self.tausD, D.contiguous(), right=False)
        # Recount, from the row difference, the pairs whose distance sits next to a threshold.
        above, below = self.above[k], self.below[k]
        near = (above - D <= self.tol * above) | (D - below <= self.tol * below.abs())
        if keep is not None:
            near &= keep
        r, c = torch.nonzero(near, as_tuple=True)
        for s in range(0, r.numel(), _CHUNK):
            rr, cc = r[s : s + _CHUNK], c[s : s + _CHUNK]
            exact = ds.pair_distances(i + rr, j + cc)
            k[rr, cc] = torch.searchsorted(self.taus, exact, right=False)
        rows, cols = D.shape
        if keep is not None:  # symmetric block: row counts cover both directions
            k = torch.where(keep, k, k.T)
            k.fill_diagonal_(m + 1)  # the point itself: a bin past the end, dropped
            flat = (torch.arange(rows, device=ds.device)[:, None] * (m + 2) + k).reshape(-1)
            add = torch.bincount(flat, minlength=rows * (m + 2)).reshape(rows, m + 2)
            self.bins[i : i + rows] += add[:, : m + 1]
        else:
            flat = (torch.arange(rows, device=ds.device)[:, None] * (m + 1) + k).reshape(-1)
            self.bins[i : i + rows] += torch.bincount(flat, minlength=rows * (m + 1)).reshape(
                rows, m + 1
            )
            flat = (torch.arange(cols, device=ds.device)[None, :] * (m + 1) + k).reshape(-1)
            self.bins[j : j + cols] += torch.bincount(flat, minlength=cols * (m + 1)).reshape(
                cols, m + 1
            )
        return sum_k2


def threshold_pass(
    X: Any,
    distance: str,
    taus: np.ndarray | None = None,
    kernel: Callable[[Any], Any] | None = None,
    *,
    device: str = "cpu",
    block: int | None = None,
    precision: str | None = None,
    **_ignored: object,
) -> ThresholdCounts:
    """:func:`.streaming.threshold_pass` on a torch device.

    Counts are exact in either precision (near-threshold pairs are recounted from the
    float64 row difference). ``precision`` defaults to float32 for counts alone and to
    float64 when ``kernel`` is given (Σ K² is reported as exact). ``kernel`` receives a
    float64 tensor of distances and must use :func:`namespace` (``xp.exp``) for its math.
    """
    ds = device_set(X, distance, device)
    torch = ds.torch
    taus = np.empty(0) if taus is None else np.asarray(taus, dtype=np.float64)
    if np.any(np.diff(taus) < 0):
        raise ValueError("threshold_pass needs the thresholds sorted ascending.")
    dtype = precision or ("float64" if kernel is not None else "float32")
    m = taus.size
    bins = torch.zeros((ds.n, m + 1), dtype=torch.int64, device=ds.device) if m else None
    count = _DeviceCounter(ds, taus, dtype, kernel, bins)
    sums = _per_row(_walk(ds, _block_size(ds, block), dtype), float, count)
    sum_k2 = tree_reduce(sums, _add)  # consumes the walk: the bins fill on the way
    host = None if bins is None else bins.cpu().numpy()
    return finish_counts(taus, host, ds.n, sum_k2 if kernel is not None else None)


# --- Circles' candidate pairs (circles_large) -----------------------------------------------


def _gemm_distances(torch: Any, A: Any, B: Any, distance: str) -> tuple[Any, Any]:
    """Euclidean or cosine distances of the rows of ``A`` and ``B`` from their GEMM (as
    ``distances.distance_block``), and the pairs too close to trust, which the caller recomputes
    from row differences in float64."""
    with full_float32(torch):
        G = A @ B.T
    if distance == "cosine":  # close below 1e-4
        D = torch.clamp_min(1.0 - G, 0.0)
        return D, D < _CLOSE64
    norms = (A * A).sum(dim=1)[:, None] + (B * B).sum(dim=1)[None, :]
    sq = norms - 2.0 * G
    return torch.sqrt(torch.clamp_min(sq, 0.0)), sq < _CLOSE64 * norms


def pair_candidates(
    X: np.ndarray, distance: str, device: str, tile: int, err: float
) -> Callable[[int, int, float], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`.circles_large._host_candidates` with the tiles on the device: float32 GEMM
    (TF32 off: ``err`` is the float32 error bound), close pairs refined in float64 there;
    the candidates come back to the host, where near-threshold pairs are recomputed."""
    ds = DeviceSet(X, distance, device)
    torch = ds.torch
    X32 = ds.rows("float32")
    sq64 = (ds.X64 * ds.X64).sum(dim=1)

    def candidates(a: int, b: int, cap: float):
        with full_float32(torch):
            D, close = _gemm_distances(torch, X32[a : a + tile], X32[b : b + tile], distance)
            D = D.to(torch.float64)
            r, c = torch.nonzero(close, as_tuple=True)
            for s in range(0, r.numel(), _CHUNK):
                rr, cc = r[s : s + _CHUNK], c[s : s + _CHUNK]
                D[rr, cc] = ds.pair_distances(a + rr, b + cc)
            bound = err * (sq64[a : a + tile, None] + sq64[None, b : b + tile])
            if distance == "euclidean":  # the bound is on D², move it to D near τ
                root = torch.sqrt(torch.clamp_min(D * D - bound, 0.0))
                bound = bound / torch.clamp_min(D + root, 1e-300)
            bound[close] = 0.0  # already recomputed in float64
            r, c = torch.nonzero(D <= cap + bound, as_tuple=True)
            if a == b:
                keep = r < c
                r, c = r[keep], c[keep]
            dv, bv = D[r, c], bound[r, c]
            return tuple(t.cpu().numpy() for t in (r, c, dv, bv))

    return candidates


# --- kernel matrices for the iterative solvers (magnitude_large, vendi_large) ----------------


def _index(torch: Any, idx: Any, device: str) -> Any:
    """A slice stays a slice; an index array becomes a device tensor."""
    if isinstance(idx, slice):
        return idx
    return torch.as_tensor(np.asarray(idx), dtype=torch.int64, device=device)


def _global(idx: Any, local: Any, torch: Any, n: int, device: str) -> Any:
    """Set rows of the tile rows ``local`` (a tile taken with ``idx``)."""
    if isinstance(idx, slice):
        return local + (idx.indices(n)[0])
    return idx[local]


class DevicePairOperator(PairOperator):
    """:class:`._blockwise.PairOperator` with its tiles, the held float32 K and the
    products on a torch device. ``tile`` and ``columns`` still return host float64 arrays
    (the preconditioner is built on the host); ``matmat`` returns host float64.

    Tiles follow :func:`.distances.distance_block` (close pairs below 1e-4 of the norms recomputed
    in float64 from the row difference, also in float32 tiles), float32 products without
    TF32; ``double=True`` tiles and products are float64 throughout, as on the host.
    """

    engine = "torch"

    def __init__(self, X, distance, entry, *, scale=None, device: str = "cpu"):
        super().__init__(X, distance, entry, scale=scale)
        self.ds = DeviceSet(self.X64, distance, device)
        self.torch = self.ds.torch
        self.device = device
        self.scale_d = (
            None if self.scale is None else self.torch.as_tensor(self.scale, device=device)
        )

    def _tile(self, rows: Any, cols: Any, double: bool) -> Any:
        torch, dev = self.torch, self.device
        rows, cols = _index(torch, rows, dev), _index(torch, cols, dev)
        X = self.ds.rows("float64" if double else "float32")
        D, close = _gemm_distances(torch, X[rows], X[cols], self.distance)
        r, c = torch.nonzero(close, as_tuple=True)
        for s in range(0, r.numel(), _CHUNK):
            rr, cc = r[s : s + _CHUNK], c[s : s + _CHUNK]
            gr = _global(rows, rr, torch, self.n, dev)
            gc = _global(cols, cc, torch, self.n, dev)
            D[rr, cc] = self.ds.pair_distances(gr, gc).to(D.dtype)
        self.entry(D, D)
        if self.scale_d is not None:
            s = self.scale_d.to(D.dtype)
            D *= s[rows][:, None]
            D *= s[cols][None, :]
        return D

    def tile(
        self, rows: slice | np.ndarray, cols: slice | np.ndarray, double: bool = True
    ) -> np.ndarray:
        return self._tile(rows, cols, double).cpu().numpy()

    def hold(self) -> None:
        """Form K in float32 on the device (4 n² bytes), when the device has room for it."""
        if self.held is not None:
            return
        torch = self.torch
        if self.device.startswith("cuda"):
            free, _ = torch.cuda.mem_get_info(self.device)
            if 4.0 * self.n * self.n > 0.8 * free:
                return  # products recompute the tiles instead
        K = torch.empty((self.n, self.n), dtype=torch.float32, device=self.device)
        for r, c, _ in self._tiles():
            T = self._tile(r, c, double=False)
            K[r, c] = T
            K[c, r] = T.T
        self.held = K  # a device tensor here

    def hold_double(self) -> bool:
        """Holds nothing: float64 tiles are formed on the device, where that is cheap next
        to the host (see :meth:`PairOperator.hold_double`)."""
        return False

    def matmat(
        self, V: np.ndarray, *, double: bool = False, sum_squares: bool = False
    ) -> np.ndarray | tuple[np.ndarray, float]:
        """``K @ V`` in float64 on the host, the products on the device (see the parent)."""
        torch = self.torch
        vec = V.ndim == 1
        V2 = V[:, None] if vec else V
        dtype = torch.float64 if double else torch.float32
        Vd = torch.as_tensor(np.ascontiguousarray(V2), device=self.device).to(dtype)
        if not double and self.held is not None and not sum_squares:
            with full_float32(torch):
                out = (self.held @ Vd).to(torch.float64).cpu().numpy()
            return out[:, 0] if vec else out
        out_d = torch.zeros(V2.shape, dtype=torch.float64, device=self.device)
        total = 0.0
        for r, c, diag in self._tiles():
            T = self._tile(r, c, double)
            with full_float32(torch):
                out_d[r] += (T @ Vd[c]).to(torch.float64)
                if not diag:
                    out_d[c] += (T.T @ Vd[r]).to(torch.float64)
            if sum_squares:
                sq = float((T.to(torch.float64) ** 2).sum())
                total += sq if diag else 2.0 * sq
        out = out_d.cpu().numpy()
        out = out[:, 0] if vec else out
        return (out, total) if sum_squares else out


# --- the d × d covariance (cosine Vendi, dual form) ---------------------------------------------


def gram(X: Any, scale: float = 1.0, *, device: str = "cpu", rows: int = 16384) -> np.ndarray:
    """``Σ_i (scale · x_i)(scale · x_i)ᵀ`` (d × d) in float64 on the device, on the host.

    Examples
    --------
    >>> gram(np.array([[1.0, 0.0], [1.0, 2.0]]), device="cpu").tolist()  # doctest: +SKIP
    [[2.0, 2.0], [2.0, 4.0]]
    """
    torch = _import_torch("profiles", device)
    X64 = (
        X.X64
        if isinstance(X, DeviceSet)
        else torch.as_tensor(np.asarray(X, np.float64), device=device)
    )
    d = X64.shape[1]
    C = torch.zeros((d, d), dtype=torch.float64, device=X64.device)
    for s in range(0, X64.shape[0], rows):
        B = X64[s : s + rows] * scale
        C += B.T @ B
    return C.cpu().numpy()


def dual_spectrum(X: Any, *, device: str = "cpu") -> np.ndarray:
    """Eigenvalues of ``XᵀX / n`` (cosine Vendi's dual form; rows already unit): the
    covariance on the device, its eigenvalues by LAPACK on the host (d × d is small)."""
    from ._blockwise import dual_eigenvalues

    n = X.n if isinstance(X, DeviceSet) else np.asarray(X).shape[0]
    C = gram(X, float(np.sqrt(1.0 / n)), device=device)
    return dual_eigenvalues(C)
