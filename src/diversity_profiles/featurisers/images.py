"""Images as profiles: resized pixels, or the features of your own extractor.

Pixels are the representation that needs nothing: every image resized to one
size with a stated Pillow filter, scaled to [0, 1] and flattened (pair them with
the cosine distance, which ignores overall brightness). :func:`features` is the
hook for a learned representation: any callable on float batches, or a
``torch.nn.Module`` whose weights you already have on disk.

Only numpy loads with this module; Pillow and torch load inside the functions
that use them (``pip install "diversity-profiles[images]"``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core import Pairwise, Representation, check_int, check_node_name, check_sets, require
from ..core import progress as _progress_bar

if TYPE_CHECKING:
    import xarray as xr

#: Pillow's resampling filters by name. "box" (the default) shrinks by an integer factor f
#: to the mean of each f × f block; every filter is antialiased when shrinking.
RESAMPLING = ("box", "bilinear", "bicubic", "lanczos", "nearest", "hamming")
#: ITU-R 601-2 luma, the weights of Pillow's convert("L").
_LUMA = np.array([0.299, 0.587, 0.114])


def _scaled(arr: np.ndarray, func: str, where: str) -> np.ndarray:
    """One image as float (H, W, C) in [0, 1]: uint8 / 255, uint16 / 65535, floats as given."""
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in (1, 2, 3, 4) or 0 in arr.shape:
        raise ValueError(
            f"{func}: {where} must be H × W or H × W × C with C in 1..4 channels. "
            f"Got shape {arr.shape}."
        )
    out: np.ndarray
    if arr.dtype == bool:
        out = arr.astype(np.float32)
    elif np.issubdtype(arr.dtype, np.integer):
        top = 65535 if arr.dtype == np.uint16 else 255
        if arr.min() < 0 or arr.max() > top:
            raise ValueError(
                f"{func}: {where} holds integers outside [0, {top}] (min {arr.min()}, max "
                f"{arr.max()}). Pass 8-bit values (0..255) or floats in [0, 1]."
            )
        out = arr.astype(np.float32) / top
    elif np.issubdtype(arr.dtype, np.floating):
        if np.isnan(arr).any():
            raise ValueError(
                f"{func}: {where} contains NaN. Fill or drop those images before featurising."
            )
        if arr.min() < 0 or arr.max() > 1:
            raise ValueError(
                f"{func}: {where} holds floats outside [0, 1] (min {float(arr.min())!r}, max "
                f"{float(arr.max())!r}). Scale it, e.g. x / 255 for 8-bit data."
            )
        out = arr.astype(np.float32)
    else:
        raise TypeError(f"{func}: {where} has dtype {arr.dtype}; give numbers.")
    return out[:, :, :3] if out.shape[2] == 4 else out[:, :, :1] if out.shape[2] == 2 else out


def _from_pil(img, func: str, where: str) -> np.ndarray:
    if img.mode == "F":
        return _scaled(np.asarray(img, dtype=np.float32), func, where)
    if img.mode.startswith("I"):  # 16-bit greyscale (PNG) arrives as I or I;16
        return _scaled(np.asarray(img).astype(np.uint16), func, where)
    if img.mode in ("1", "L", "LA"):
        return _scaled(np.asarray(img.convert("L")), func, where)
    return _scaled(np.asarray(img.convert("RGB")), func, where)  # alpha dropped, palette expanded


def _load(images, func: str) -> list[np.ndarray]:
    """Every image as float32 (H, W, C) in [0, 1], C = 1 or 3, alpha dropped."""
    if isinstance(images, np.ndarray):
        if images.ndim not in (3, 4):
            raise ValueError(
                f"The 'images' argument of {func} must be an (n, H, W) or (n, H, W, C) array, "
                f"or a list of images or paths. Got an array of shape {images.shape}."
            )
        items = list(images)
    elif isinstance(images, (str, bytes, os.PathLike)) or not isinstance(images, Sequence):
        raise TypeError(
            f"The 'images' argument of {func} must be an array or a list of images or file "
            f"paths. Got {type(images).__name__}; wrap a single image in a list."
        )
    else:
        items = list(images)
    if not items:
        raise ValueError(f"The 'images' argument of {func} is empty; give at least one image.")
    out = []
    for i, item in enumerate(items):
        where = f"images[{i}]"
        if isinstance(item, (str, os.PathLike)):
            Image = require("PIL.Image", func, "Pillow", "images")
            try:
                with Image.open(item) as img:
                    out.append(_from_pil(img, func, where))
            except (OSError, ValueError) as exc:
                raise ValueError(
                    f"{func} could not read {where} = {os.fspath(item)!r} as an image: {exc}"
                ) from None
        elif hasattr(item, "mode") and hasattr(item, "convert"):  # a PIL image
            out.append(_from_pil(item, func, where))
        else:
            out.append(_scaled(np.asarray(item), func, where))
    return out


def _check_size(size, func: str) -> tuple[int, int]:
    pair = (size, size) if isinstance(size, (int, np.integer)) else size
    ok = isinstance(pair, Sequence) and len(pair) == 2
    if not ok or not all(isinstance(s, (int, np.integer)) and s >= 1 for s in pair):
        raise ValueError(
            f"The 'size' argument of {func} must be (height, width) in pixels or one int, e.g. "
            f"(32, 32). Got {size!r}."
        )
    return int(pair[0]), int(pair[1])


def _check_output_memory(n: int, size: tuple[int, int], channels: int, func: str) -> None:
    """Refuse a size whose resized float32 images (kept, then stacked) cannot fit in memory."""
    from ..core import available_memory_bytes, human_bytes

    need = 2.0 * n * size[0] * size[1] * channels * 4
    have = available_memory_bytes()
    if need > 0.5 * have:
        raise MemoryError(
            f"The 'size' argument of {func} is {size}: {n} image(s) at that size need about "
            f"{human_bytes(need)} but only {human_bytes(have)} is available. Pass a smaller "
            f"size, e.g. (32, 32)."
        )


def _resize(img: np.ndarray, size: tuple[int, int], resample: str, func: str) -> np.ndarray:
    if img.shape[:2] == size:
        return img
    Image = require("PIL.Image", func, "Pillow", "images")
    flt = getattr(Image.Resampling, resample.upper())
    # channel by channel in 32-bit float mode "F": no rounding to 8 bits on the way
    chans = [
        np.asarray(Image.fromarray(np.ascontiguousarray(img[:, :, c])).resize(size[::-1], flt))
        for c in range(img.shape[2])
    ]
    return np.clip(np.stack(chans, axis=2), 0.0, 1.0)  # bicubic and lanczos overshoot


def _prepare(images, size, grayscale: bool, resample: str, func: str) -> list[np.ndarray]:
    from ..core import one_of

    one_of(resample, "resample", func, RESAMPLING)
    loaded = _load(images, func)
    if grayscale:
        loaded = [im if im.shape[2] == 1 else (im @ _LUMA)[:, :, None] for im in loaded]
    channels = {im.shape[2] for im in loaded}
    if len(channels) > 1:
        first = {c: next(i for i, im in enumerate(loaded) if im.shape[2] == c) for c in channels}
        raise ValueError(
            f"{func}: the images mix channel counts: images[{first[1]}] is greyscale but "
            f"images[{first[3]}] has 3 channels. Pass grayscale=True, or convert all to RGB."
        )
    if size is not None:
        size = _check_size(size, func)
        _check_output_memory(len(loaded), size, max(channels, default=1), func)
        loaded = [_resize(im.astype(np.float32), size, resample, func) for im in loaded]
    return loaded


def pixel_vectors(
    images,
    size: int | tuple[int, int] = (32, 32),
    *,
    grayscale: bool = False,
    resample: str = "box",
) -> np.ndarray:
    """Images as flattened pixel vectors in [0, 1], all resized to one size.

    Parameters
    ----------
    images : array, list of PIL images, or list of file paths
        An ``(n, H, W)`` or ``(n, H, W, C)`` array (uint8 0..255, uint16, bool,
        or floats in [0, 1]), a list of such ``(H, W[, C])`` arrays or PIL
        images (sizes may differ), or paths Pillow can open. An alpha channel is
        dropped; palette images become RGB.
    size : (height, width) or int, default (32, 32)
        The common size.
    grayscale : bool, default False
        Convert RGB to luma (ITU-R 601-2, as Pillow's ``convert("L")``) first;
        needed when greyscale and colour images are mixed.
    resample : {"box", "bilinear", "bicubic", "lanczos", "nearest", "hamming"}
        Pillow's filter. With ``"box"`` (default), shrinking by an integer
        factor f makes each output pixel the mean of an f × f block.

    Returns
    -------
    numpy.ndarray
        ``n × (height · width · C)`` float32, rows flattened in (row, column,
        channel) order. Profile them with ``distance="cosine"``.

    Examples
    --------
    A 2 × 2 checkerboard shrunk to one pixel is its mean:

    >>> pixel_vectors(np.array([[[0, 255], [255, 0]]], dtype=np.uint8), size=1).tolist()
    [[0.5]]
    """
    func = "pixel_vectors"
    loaded = _prepare(images, size, bool(grayscale), resample, func)
    return np.stack([im.reshape(-1) for im in loaded]).astype(np.float32)


def _run_module(module, batch: np.ndarray) -> np.ndarray:
    import torch

    param = next(module.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    dtype = param.dtype if param is not None and param.is_floating_point() else torch.float32
    nchw = torch.from_numpy(np.ascontiguousarray(batch.transpose(0, 3, 1, 2)))
    with torch.no_grad():
        out = module(nchw.to(device=device, dtype=dtype))
    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"features: the module returned {type(out).__name__}, not a tensor. Wrap it so that "
            f"forward returns one (n, d) tensor."
        )
    return out.detach().float().cpu().numpy()


def _check_output(out, n: int, dim: int | None, func: str) -> np.ndarray:
    if hasattr(out, "detach"):  # a torch tensor from a plain callable
        out = out.detach().float().cpu().numpy()
    out = np.asarray(out, dtype=np.float64)
    if out.ndim != 2 or out.shape[0] != n:
        raise ValueError(
            f"{func}: the extractor must return an (n, d) array, one row per image; for a batch "
            f"of {n} it returned shape {out.shape}. Flatten or pool its output (e.g. end a torch "
            f"model with torch.nn.Flatten())."
        )
    if dim is not None and out.shape[1] != dim:
        raise ValueError(
            f"{func}: the extractor returned {out.shape[1]} features for one batch and {dim} for "
            f"an earlier one; it must return the same dimension for every batch."
        )
    if not np.isfinite(out).all():
        raise ValueError(f"{func}: the extractor returned NaN or inf features.")
    return out


def _is_module(extractor) -> bool:
    torch = sys.modules.get("torch")  # an nn.Module exists only if torch was imported
    return torch is not None and isinstance(extractor, torch.nn.Module)


def _extract(loaded: list[np.ndarray], extractor, batch_size: int, show: bool, desc: str):
    func = "features"
    if len({im.shape for im in loaded}) > 1:
        raise ValueError(
            f"{func}: the images differ in size ({sorted({im.shape for im in loaded})[:3]}...); "
            f"pass size=(height, width) to resize them to one."
        )
    is_module = _is_module(extractor)
    if not is_module and not callable(extractor):
        raise TypeError(
            f"The 'extractor' argument of {func} must be a callable on (n, H, W, C) float "
            f"batches or a torch.nn.Module. Got {type(extractor).__name__}."
        )
    was_training = is_module and extractor.training
    if is_module:
        extractor.eval()
    rows, dim = [], None
    starts = range(0, len(loaded), batch_size)
    try:
        for start in _progress_bar(starts, total=len(starts), desc=desc, enabled=show):
            batch = np.stack(loaded[start : start + batch_size]).astype(np.float32)
            out = _run_module(extractor, batch) if is_module else extractor(batch)
            rows.append(_check_output(out, len(batch), dim, func))
            dim = rows[-1].shape[1]
    finally:
        if was_training:
            extractor.train()
    return np.concatenate(rows)


def features(
    images,
    extractor: Callable[[np.ndarray], object] | object,
    *,
    size: int | tuple[int, int] | None = None,
    grayscale: bool = False,
    resample: str = "box",
    batch_size: int = 64,
    progress: bool = True,
) -> np.ndarray:
    """Features of images from your own extractor, in batches.

    Parameters
    ----------
    images : array, list of PIL images, or list of file paths
        As for :func:`pixel_vectors`; all of one size unless ``size`` is given.
    extractor : callable or torch.nn.Module
        A callable takes a float32 batch ``(b, H, W, C)`` in [0, 1] and returns
        ``(b, d)`` (an array or tensor). A ``torch.nn.Module`` gets the batch as
        an NCHW float tensor on the module's device, and runs in eval mode under
        ``torch.no_grad()`` (its training mode is restored afterwards). Load its
        weights from disk yourself; nothing is downloaded here.
    size : (height, width) or int, optional
        Resize first (see :func:`pixel_vectors`); by default images are used as given.
    grayscale, resample
        As for :func:`pixel_vectors`.
    batch_size : int, default 64
    progress : bool, default True
        Show a progress bar over batches.

    Returns
    -------
    numpy.ndarray
        ``n × d`` float64.

    Examples
    --------
    Mean brightness per channel as a (tiny) feature extractor:

    >>> imgs = np.zeros((2, 4, 4, 3)); imgs[1] = 1.0
    >>> features(imgs, lambda b: b.mean(axis=(1, 2)), progress=False).tolist()
    [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    """
    func = "features"
    batch_size = check_int(batch_size, "batch_size", func)
    loaded = _prepare(images, size, bool(grayscale), resample, func)
    return _extract(loaded, extractor, int(batch_size), bool(progress), "features")


def _extractor_name(extractor) -> tuple[str, str]:
    """(short name, qualified name) of a function, callable object or module."""
    kind = extractor if hasattr(extractor, "__qualname__") else type(extractor)
    qualified = f"{kind.__module__}.{kind.__qualname__}"
    return kind.__name__.strip("<>").replace("/", "-") or "extractor", qualified


def profiles(
    sets: Mapping[str, object],
    *,
    extractor=None,
    size: int | tuple[int, int] | None = (32, 32),
    grayscale: bool = False,
    resample: str = "box",
    distance: str | Callable | Pairwise = "cosine",
    batch_size: int = 64,
    progress: bool = True,
    name: str | None = None,
    **kwargs,
) -> xr.DataTree:
    """Diversity profiles of sets of images, from the images in one call.

    Parameters
    ----------
    sets : dict of str to images
        Labels mapped to anything :func:`pixel_vectors` accepts.
    extractor : callable or torch.nn.Module, optional
        Features from :func:`features`; resized pixels (:func:`pixel_vectors`) by default.
    size : (height, width) or int, default (32, 32)
        Common size; ``None`` keeps the images' own (with an extractor only).
    grayscale, resample
        As for :func:`pixel_vectors`.
    distance : str or callable, default "cosine"
        Passed to :func:`diversity_profiles.profiles`, like every other keyword: a named
        distance, or a callable ``f(a, b)`` of two feature vectors (or
        :func:`diversity_profiles.pairwise` of one; the node is then
        ``"<representation>/precomputed"``).
    batch_size, progress
        As for :func:`features`.
    name : str, optional
        The representation's name, instead of e.g. ``"pixels-32x32"`` or the
        extractor's name.

    Returns
    -------
    xarray.DataTree
        One condition, e.g. ``"pixels-32x32/cosine"``, with ``representation_*``
        attributes: the size, greyscale, resampling filter, or the extractor's
        qualified name and output dimension.

    Examples
    --------
    >>> left = np.zeros((8, 8)); left[:, :4] = 1.0
    >>> sets = {"mirrored": [left, left[:, ::-1]], "same": [left, left]}
    >>> tree = profiles(sets, size=4, families="richness")
    >>> tree["pixels-4x4/cosine"]["richness"].values.tolist()
    [2, 1]
    """
    from ..explanation import profiles as _profiles

    func = "images.profiles"
    batch_size = check_int(batch_size, "batch_size", func)
    check_sets(sets, func, "images", '{"model": generated, "data": references}')
    if name is not None:  # before the images are read: it names the tree node
        check_node_name(name, "name", func)
    if size is None and extractor is None:
        raise ValueError(f"{func}: pixel vectors need one size; pass size=(height, width).")
    details: dict = {
        "size": "native" if size is None else "x".join(map(str, _check_size(size, func)))
    }
    details.update(grayscale=bool(grayscale), resampling=f"Pillow {resample.upper()}")
    vectors = {}
    for label, images in sets.items():
        loaded = _prepare(images, size, bool(grayscale), resample, func)
        if extractor is None:
            vectors[label] = np.stack([im.reshape(-1) for im in loaded]).astype(np.float32)
        else:
            desc = f"features {label}"
            vectors[label] = _extract(loaded, extractor, batch_size, bool(progress), desc)
    if extractor is None:
        default = f"pixels-{details['size']}" + ("-gray" if grayscale else "")
        details = {"kind": "pixels scaled to [0, 1]", **details}
    else:
        default, qualified = _extractor_name(extractor)
        dim = next(iter(vectors.values())).shape[1]
        details = {
            "kind": "extracted features",
            "extractor": qualified,
            "dimension": dim,
            **details,
        }
    rep = Representation(name or default, details)
    return _profiles(vectors, representation=rep, distance=distance, **kwargs)


__all__ = ["features", "pixel_vectors", "profiles"]
