"""Every threshold graph G_τk of a sweep in one adjacency structure.

Samples are joined in G_τk when their distance is at most τ_k, so the graphs are nested:
each row of one CSR adjacency lists a sample's neighbours in order of the first threshold
that joins them, and G_τk's neighbours of v are a prefix of that row (``ends[v, k + 1]``
marks its end). The sweep then costs no graph rebuilds: a threshold is a column of
``ends``. When every pair is stored, the rest of the row is v's neighbours in the
complement graph, which is the sparser one above the median distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def ragged_positions(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``starts[v] .. stops[v] - 1`` for every v, concatenated, and their counts.

    >>> ragged_positions(np.array([0, 10]), np.array([2, 13]))[0].tolist()
    [0, 1, 10, 11, 12]
    """
    lengths = np.asarray(stops, dtype=np.int64) - starts
    total = int(lengths.sum())
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    shift += np.arange(total, dtype=np.int64)
    return shift, lengths


@dataclass
class TauGraphs:
    """Nested threshold graphs: ``neighbours(v, k)`` is v's adjacency in G_τk.

    ``ind[ptr[v]:ptr[v + 1]]`` are v's neighbours in order of their threshold bin and
    ``ends[v, k + 1]`` ends those joined at τ_k (``ends[:, 0] == ptr[:-1]``);
    ``complete`` says every pair of samples is stored, so the rest of the row after
    ``ends[v, k + 1]`` is v's neighbourhood in the complement of G_τk.
    """

    n: int
    ptr: np.ndarray
    ind: np.ndarray
    ends: np.ndarray
    edges: np.ndarray  # edges[k]: pairs joined in G_τk
    complete: bool

    @classmethod
    def from_tiles(cls, n: int, tiles: dict, m: int, tile: int) -> TauGraphs:
        """Build from ``tiles[(a, b)] = (r, c, bin)``: pairs ``(a + r, b + c)`` (r < c when
        ``a == b``) joined from threshold ``bin`` on, for row blocks ``a`` of ``tile`` rows;
        ``m`` thresholds. Tiles are freed as
        soon as both of their row blocks are built (peak: the tiles plus 8 bytes a pair)."""
        from scipy.sparse import _sparsetools  # counting sort by row, stable, in C

        starts = list(range(0, n, tile))
        total = sum(len(t[2]) for t in tiles.values())
        edges = np.zeros(m, dtype=np.int64)
        for _, _, bins in tiles.values():
            edges += np.bincount(bins, minlength=m)[:m]
        ind = np.empty(2 * total, dtype=np.int32)
        ends = np.empty((n, m + 1), dtype=np.int64)
        offset = 0
        for pos, a in enumerate(starts):
            stop = starts[pos + 1] if pos + 1 < len(starts) else n
            rows, cols, bins = [], [], []
            for (ta, tb), (r, c, bn) in tiles.items():
                # this block's rows as the first of a pair, and as the second
                sides = ([(r, c, tb)] if ta == a else []) + ([(c, r, ta)] if tb == a else [])
                for mine, other, base in sides:
                    rows.append(mine.astype(np.int64))
                    cols.append(base + other.astype(np.int32))
                    bins.append(bn)
            row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
            key = (row * m + np.concatenate(bins) if bins else row).astype(np.int32)  # local rows
            col = np.concatenate(cols) if cols else np.zeros(0, np.int32)
            size = stop - a
            bp = np.zeros(size * m + 1, dtype=np.int32)
            out = ind[offset : offset + len(col)]
            _sparsetools.coo_tocsr(size * m, n, len(col), key, col, np.zeros(len(col), np.int8),
                                   bp, out, np.empty(len(col), np.int8))  # fmt: skip
            ends[a:stop, 0] = offset + bp[:-1:m]
            ends[a:stop, 1:] = offset + bp[1:].reshape(size, m)
            offset += len(col)
            for t in [t for t in tiles if max(t) == a]:  # both row blocks built
                del tiles[t]
        ptr = np.r_[ends[:, 0], offset]
        return cls(n, ptr, ind, ends, np.cumsum(edges), total == n * (n - 1) // 2)

    @classmethod
    def from_dense_tiles(cls, n: int, tiles: dict, m: int, tile: int) -> TauGraphs:
        """Build with every pair stored from ``tiles[(a, b)]`` (b >= a): the bins of row
        block a against column block b as a dense matrix (``m - 1``: beyond every
        threshold; a diagonal tile symmetric, with ``m`` on its diagonal). Row v lists all
        n - 1 others in order of bin, by column within a bin: one stable (radix) argsort
        of each row block, no per-pair index arrays. Tiles are freed as soon as both of
        their row blocks are built."""
        starts = list(range(0, n, tile))
        ptr = np.arange(n + 1, dtype=np.int64) * (n - 1)
        ind = np.empty(n * (n - 1), dtype=np.int32)
        ends = np.empty((n, m + 1), dtype=np.int64)
        edges = np.zeros(m, dtype=np.int64)
        for a in starts:
            stop = min(a + tile, n)
            size = stop - a
            block = np.concatenate(
                [tiles[a, b] if b >= a else tiles[b, a].T for b in starts], axis=1
            )
            order = np.argsort(block, axis=1, kind="stable")[:, : n - 1]  # itself last
            ind[ptr[a] : ptr[stop]].reshape(size, n - 1)[...] = order
            # where each bin ends in a row: the sorted bins, offset by row, are sorted
            first = np.arange(size, dtype=np.int32)[:, None] * np.int32(m + 1)
            key = np.take_along_axis(block, order, axis=1).astype(np.int32)
            key += first
            wanted = first + np.arange(m, dtype=np.int32)
            within = np.searchsorted(key.ravel(), wanted.ravel(), side="right").reshape(size, m)
            within -= (np.arange(size) * (n - 1))[:, None]
            ends[a:stop, 0] = ptr[a:stop]
            ends[a:stop, 1:] = ptr[a:stop, None] + within
            edges += np.diff(within, axis=1, prepend=0).sum(axis=0)
            for t in [t for t in tiles if max(t) == a]:  # both row blocks built
                del tiles[t]
        return cls(n, ptr, ind, ends, np.cumsum(edges // 2), True)

    def degrees(self, k: int) -> np.ndarray:
        return self.ends[:, k + 1] - self.ptr[:-1]

    def neighbours(self, v: int, k: int) -> np.ndarray:
        return self.ind[self.ptr[v] : self.ends[v, k + 1]]

    def neighbours_far(self, v: int, k: int) -> np.ndarray:
        """v's neighbours in the complement of G_τk (only when ``complete``)."""
        return self.ind[self.ends[v, k + 1] : self.ptr[v + 1]]

    def gather(self, vs: np.ndarray, k: int, far: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Neighbours of every v in ``vs`` concatenated (in the complement when ``far``;
        only for a ``complete`` structure), and how many each has."""
        lo, hi = self.ptr[vs], self.ends[vs, k + 1]
        if far:
            lo, hi = hi, self.ptr[vs + 1]
        counts = hi - lo
        if len(counts) and int(counts.sum()) >= 32 * len(counts):
            # long rows: copy the slices, with no index array (5 rows of 15,000: 8 µs
            # against 206 µs; Circles' merge gathers each clique's rows at every threshold,
            # 50 of its 270 s at 30,000 × 64)
            rows = zip(lo.tolist(), hi.tolist(), strict=True)
            return np.concatenate([self.ind[a:b] for a, b in rows]), counts
        pos, counts = ragged_positions(lo, hi)
        return self.ind[pos], counts

    def prefer_complement(self, k: int) -> bool:
        """Whether G_τk's complement is stored and has fewer edges."""
        return self.complete and 2 * int(self.edges[k]) > self.n * (self.n - 1) // 2

    def components(self, k: int, below: tuple[np.ndarray, int] | None) -> tuple[np.ndarray, int]:
        """Connected components of G_τk (labels, count), from those of G_τk−1 when given:
        only the edges joined at τ_k are looked at."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        every = np.arange(self.n)
        if below is None:
            lab, count = every, self.n
            pos, lengths = ragged_positions(self.ptr[:-1], self.ends[:, k + 1])
        else:
            lab, count = below
            pos, lengths = ragged_positions(self.ends[:, k], self.ends[:, k + 1])
        src, dst = lab[np.repeat(every, lengths)], lab[self.ind[pos]]
        joined = coo_matrix((np.ones(len(src), np.int8), (src, dst)), (count, count))
        ncomp, merged = connected_components(joined.tocsr(), directed=False)
        return merged[lab], int(ncomp)

    def dense(self, members: np.ndarray, k: int) -> np.ndarray:
        """G_τk's adjacency among ``members`` (sorted sample indices) as a boolean matrix."""
        where = np.full(self.n, -1, dtype=np.int64)
        where[members] = np.arange(len(members))
        nb, counts = self.gather(members, k)
        row, col = np.repeat(np.arange(len(members)), counts), where[nb]
        keep = col >= 0
        A = np.zeros((len(members), len(members)), dtype=bool)
        A[row[keep], col[keep]] = True
        return A
