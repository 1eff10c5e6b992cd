"""Synthetic data sets shared by the benchmarks (seeded, so every run sees the same data)."""

from __future__ import annotations

import numpy as np


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Isotropic standard Gaussian embeddings."""
    return rng(seed).standard_normal((n, d))


def clustered(n: int, d: int, k: int = 10, spread: float = 0.7, seed: int = 0) -> np.ndarray:
    """A mixture of ``k`` Gaussian clusters: centres N(0, I), members centre + spread·N(0, I).

    In d = 768 this puts within-cluster distances near sqrt(2 d) · spread and
    between-cluster ones near sqrt(2 d (1 + spread²)): a mode-collapsed-looking set.
    """
    g = rng(seed)
    centres = g.standard_normal((k, d))
    labels = g.integers(0, k, n)
    return centres[labels] + spread * g.standard_normal((n, d))


def uniform_square(n: int, seed: int = 0) -> np.ndarray:
    """Uniform points in the unit square."""
    return rng(seed).random((n, 2))


def unit_rows(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def cosine_kernel(X: np.ndarray) -> np.ndarray:
    """Exactly symmetric cosine-similarity matrix with a unit diagonal."""
    U = unit_rows(X)
    K = U @ U.T
    K = (K + K.T) / 2
    np.fill_diagonal(K, 1.0)
    return K


def upper(D: np.ndarray) -> np.ndarray:
    """The strictly upper triangle of a square matrix, flattened (each pair once)."""
    return D[np.triu_indices(D.shape[0], k=1)]
