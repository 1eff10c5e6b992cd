"""A condition: sample sets seen through one representation and one distance.

Everything a family needs is prepared here once per set (distances, the
log-distance histogram, the kernel spectrum) so that families never repeat work
and every set of a condition is measured with the same kernel and bandwidth.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

from ..core import (
    Pairwise,
    as_pairwise,
    check_distance_matrix,
    check_pairwise_memory,
    check_similarity_matrix,
    one_of,
    refuse_dataless_tensor,
)
from ..engines import (
    DISTANCES,
    LogDistanceHistogram,
    callable_matrix,
    check_callable_memory,
    distance_matrix,
    evaluated_on,
    gaussian_kernel,
    iter_distance_blocks,
    prepare_embeddings,
)
from ..families import group_duplicate_rows

FUNC = "profiles"

T = TypeVar("T")
#: Held only while a set's per-key lock is looked up or made (never while deriving).
_LOCKS_GUARD = threading.Lock()

#: Exact duplicate rows are collapsed to the distinct rows and their counts for the passes
#: over the pairs (histogram, average distance, Circles) when at most this share of the rows
#: is distinct: the pairs then drop at least fourfold (an all-duplicate set: to none).
COLLAPSE_SHARE = 0.5
#: Rows per block of the streamed passes (that of :func:`..engines.iter_distance_blocks`).
BLOCK = 2048


@dataclass(frozen=True)
class PreparedSet:
    """One labelled sample set, validated; derived data computed once, on first use.

    Immutable: what the set *is* never changes after :func:`prepare_sets`. The matrices
    and passes derived from it (distances, histograms, the large-n passes) are kept in
    :meth:`derived`, keyed by everything they depend on, so a later call with other
    options can never read a value computed for different ones.
    """

    label: str
    distance: str
    embeddings: np.ndarray | None = None
    given_distances: np.ndarray | None = None
    given_similarity: np.ndarray | None = None
    richness_tol: float = 0.0
    #: Multiplicity of each sample (a bootstrap resample); None means once each.
    weights: np.ndarray | None = None
    #: Given as a dask collection: the streamed passes run as dask graphs (see engines).
    distributed: bool = False
    #: A torch device ("cuda:0", "cpu"): the streamed passes run there (see engines).
    device: str | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)
    #: One lock per key being derived, so that threads sharing a set form each matrix once.
    _locks: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_locks", None)  # locks do not pickle; a loaded set makes its own
        return state

    def __setstate__(self, state: dict) -> None:
        # Pickles of version 0.1 held the distance matrix as ``_D`` and the large-n passes
        # in ``_large_cache``; the passes are recomputed on demand.
        state = dict(state)
        state["_locks"] = {}
        cache = state.setdefault("_cache", {})
        D = state.pop("_D", None)
        if D is not None:
            cache["D"] = D
        state.pop("_large_cache", None)
        for key in ("histogram", "richness"):  # cached properties of 0.1
            state.pop(key, None)
        self.__dict__.update(state)

    def derived(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, computed once per ``key`` for this set and kept with it (once also
        when several threads ask at the same time: the others wait for the first)."""
        try:
            return self._cache[key]
        except KeyError:
            pass
        with _LOCKS_GUARD:
            lock = self._locks.setdefault(key, threading.RLock())
        with lock:
            try:
                return self._cache[key]
            except KeyError:
                value = self._cache[key] = make()
                return value

    @property
    def n(self) -> int:
        src = self.embeddings if self.embeddings is not None else self.given_distances
        assert src is not None  # prepare() gives every set embeddings or distances
        return int(src.shape[0])

    @property
    def has_distance_matrix(self) -> bool:
        """Whether the n × n distances exist already (given, or formed by a family)."""
        return self.given_distances is not None or "D" in self._cache

    @property
    def D(self) -> np.ndarray:
        """The full distance matrix (formed on first use, after a memory check)."""
        if self.given_distances is not None:
            return self.given_distances

        def form() -> np.ndarray:
            check_pairwise_memory(self.n, FUNC, what=f"distances of set {self.label!r}")
            assert self.embeddings is not None  # no given distances: embeddings are
            return distance_matrix(self.embeddings, self.distance)

        return self.derived("D", form)

    def subset(self, indices: np.ndarray, counts: np.ndarray | None = None) -> PreparedSet:
        """The samples at ``indices`` (distinct), each counted ``counts[i]`` times.

        Reuses the matrices already computed: resampling never recomputes features.
        """
        ix = np.ix_(indices, indices)
        cache = {"D": self._cache["D"][ix]} if "D" in self._cache else {}
        return PreparedSet(
            label=self.label,
            distance=self.distance,
            embeddings=None if self.embeddings is None else self.embeddings[indices],
            given_distances=None if self.given_distances is None else self.given_distances[ix],
            given_similarity=None if self.given_similarity is None else self.given_similarity[ix],
            richness_tol=self.richness_tol,
            weights=None if counts is None else np.asarray(counts, dtype=np.float64),
            device=self.device,
            _cache=cache,
        )

    def pair_weights(self) -> np.ndarray | None:
        """Weight of each unordered pair i < j (``m_i m_j``), in triu order."""
        if self.weights is None:
            return None
        iu = np.triu_indices(self.n, k=1)
        return self.weights[iu[0]] * self.weights[iu[1]]

    def _distinct_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(index of the first of each distinct embedding row, its count, each row's
        distinct row), in row order."""

        def find() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            assert self.embeddings is not None  # only embeddings have rows to compare
            _, first, inverse, counts = np.unique(
                self.embeddings, axis=0, return_index=True, return_inverse=True, return_counts=True
            )
            order = np.argsort(first)
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            return first[order], counts[order], rank[inverse.ravel()]

        return self.derived("distinct rows", find)

    @property
    def collapsed(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The distinct rows (indices) and their multiplicities when collapsing pays.

        Exact duplicates (equal prepared rows) are at distance 0: a pass over the pairs of
        the distinct rows, each pair weighted by the product of the counts, plus the
        ``Σ m (m - 1) / 2`` pairs of copies at distance 0, is the pass over all pairs. None
        for distances given as a matrix, a bootstrap resample (already weighted), or a set
        with more than ``COLLAPSE_SHARE`` of its rows distinct.

        >>> X = np.array([[0.0], [3.0], [0.0], [0.0]])
        >>> s = PreparedSet("a", "euclidean", embeddings=X)
        >>> [a.tolist() for a in s.collapsed]
        [[0, 1], [3, 1]]
        >>> s.histogram.mean_distance()  # 3 of the 6 pairs are at distance 3
        1.5
        """
        if self.embeddings is None or self.weights is not None:
            return None
        first, counts, _ = self._distinct_rows()
        return (first, counts) if first.size <= COLLAPSE_SHARE * self.n else None

    @property
    def pass_size(self) -> int:
        """Rows the passes over the pairs of a collapsing family work on (see collapsed)."""
        return self.n if self.collapsed is None else int(self.collapsed[0].size)

    def distinct_of_rows(self) -> np.ndarray:
        """For each row, its distinct row (an index into ``collapsed[0]``)."""
        return self._distinct_rows()[2]

    @property
    def distinct_D(self) -> np.ndarray:
        """The distances of the distinct rows (:attr:`collapsed`), or :attr:`D` without it."""
        if self.collapsed is None:
            return self.D
        first = self.collapsed[0]
        if "D" in self._cache:
            return self._cache["D"][np.ix_(first, first)]

        def form() -> np.ndarray:
            check_pairwise_memory(first.size, FUNC, what=f"distinct rows of set {self.label!r}")
            assert self.embeddings is not None  # collapsed sets are embeddings
            return distance_matrix(self.embeddings[first], self.distance)

        return self.derived("distinct D", form)

    def pair_distances(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Every unordered pair's distance (triu order) and its weight (None: once each),
        from the distinct rows when the set is :attr:`collapsed` (the pairs of copies
        come first, at distance 0, weighted by their number)."""
        if self.collapsed is None:
            return self.D[np.triu_indices(self.n, k=1)], self.pair_weights()
        counts = self.collapsed[1].astype(np.float64)
        iu = np.triu_indices(counts.size, k=1)
        copies = float(np.sum(counts * (counts - 1) / 2))
        return (
            np.concatenate([[0.0], self.distinct_D[iu]]),
            np.concatenate([[copies], counts[iu[0]] * counts[iu[1]]]),
        )

    @property
    def histogram(self) -> LogDistanceHistogram:
        def fill() -> LogDistanceHistogram:
            hist = LogDistanceHistogram()
            if self.has_distance_matrix or self.embeddings is None or self.weights is not None:
                hist.add(self.D[np.triu_indices(self.n, k=1)], self.pair_weights())
            elif self.collapsed is not None:  # the distinct rows' pairs, weighted
                first, counts = self.collapsed
                _add_weighted_pairs(hist, self.embeddings[first], counts, self.distance)
            else:  # stream blocks: energy alone never needs the n × n matrix
                for block in iter_distance_blocks(self.embeddings, self.distance, BLOCK):
                    hist.add(block)
            return hist

        return self.derived("histogram", fill)

    @property
    def richness(self) -> int:
        def count() -> int:
            if self.embeddings is not None and self.richness_tol == 0:
                return int(self._distinct_rows()[0].size)  # shared with the collapsed passes
            if self.embeddings is not None:
                rows = group_duplicate_rows(self.embeddings, self.richness_tol)
                return int(np.unique(rows).size)
            from scipy.sparse.csgraph import connected_components

            return int(connected_components(self.D <= self.richness_tol, directed=False)[0])

        return self.derived("richness", count)


def _add_weighted_pairs(
    hist: LogDistanceHistogram, U: np.ndarray, counts: np.ndarray, distance: str
) -> None:
    """Add to ``hist`` every pair of the multiset of distinct rows ``U`` taken ``counts``
    times: each pair of distinct rows weighted ``m_a m_b`` (streamed in blocks), and the
    ``Σ m (m - 1) / 2`` pairs of copies at distance 0."""
    m = np.asarray(counts, dtype=np.float64)
    blocks = iter_distance_blocks(U, distance, BLOCK)
    for i in range(0, U.shape[0], BLOCK):  # the blocks' own order (row block i, j >= i)
        for j in range(i, U.shape[0], BLOCK):
            w = np.outer(m[i : i + BLOCK], m[j : j + BLOCK])
            hist.add(next(blocks), w[np.triu_indices(w.shape[0], k=1)] if i == j else w)
    copies = float(np.sum(m * (m - 1) / 2))
    hist.add(np.zeros(1), np.array([copies]))


def check_path_name(value, what: str, *, must: str, remedy: str) -> str:
    """A name that becomes part of a tree path (a set label, a representation): a
    non-empty string without '/' that survives netCDF and zarr (no NUL, no lone surrogate).

    ``what`` names it in errors, ``must`` says what it must be, ``remedy`` ends the error
    about a character the files cannot hold.
    """
    from ..core import check_text

    if not isinstance(value, str) or not value or "/" in value:
        raise ValueError(f"{must} Got {value!r}.")
    try:
        check_text(value, what)
    except ValueError as exc:
        raise ValueError(f"{exc}; {remedy}") from None
    return value


def _check_label(label) -> str:
    return check_path_name(
        label,
        f"The set label passed to {FUNC}",
        must=f"Set labels passed to {FUNC} must be non-empty strings without '/'.",
        remedy="remove that character from the label.",
    )


#: What a tree records when the distance is derived from a similarity callable.
DISTANCE_FROM_KERNEL = "1 - K, clipped at 0 (K from the similarity callable)"


def read_callables(distance, similarities) -> tuple[str, Pairwise | None, Pairwise | None]:
    """(the condition's distance name, the distance callable, the similarity callable).

    A callable distance or similarity makes the condition ``"precomputed"``: its matrices
    are formed from the objects of each set. With a similarity callable alone the distance
    must be ``"precomputed"``, read as ``1 - K`` (as the n-gram kernel of the text
    featuriser does).

    >>> read_callables("cosine", None)
    ('cosine', None, None)
    >>> read_callables(len, None)[0]
    'precomputed'
    """
    dist = as_pairwise(distance)
    sim = None if isinstance(similarities, Mapping) else as_pairwise(similarities)
    if dist is not None and dist.normalize:
        raise ValueError(
            f"The 'distance' callable of {FUNC} was declared with normalize=True, which "
            f"applies to similarities only (a unit self-similarity). Drop normalize=True."
        )
    if similarities is not None and sim is None and not isinstance(similarities, Mapping):
        raise TypeError(
            f"The 'similarities' argument of {FUNC} must be None, a dict of n × n matrices "
            f"keyed by set label, or a similarity callable f(a, b) (or dp.pairwise(f, ...)). "
            f"Got {type(similarities).__name__}."
        )
    if dist is None and not isinstance(distance, str):
        raise TypeError(
            f"The 'distance' argument of {FUNC} must be one of "
            f"{', '.join(repr(d) for d in DISTANCES)}, or a distance callable f(a, b) (or "
            f"dp.pairwise(f, ...)). Got {type(distance).__name__}."
        )
    if sim is not None and dist is None and distance != "precomputed":
        raise ValueError(
            f"With a similarity callable the sets passed to {FUNC} are objects, so the "
            f"'distance' argument must be 'precomputed' (1 - K, clipped at 0) or a distance "
            f"callable f(a, b). Got {distance!r}."
        )
    if dist is None and sim is None:
        one_of(distance, "distance", FUNC, DISTANCES)
        return distance, None, None
    return "precomputed", dist, sim


def callable_attrs(distance, similarities) -> dict[str, str]:
    """The attributes a tree records of the callables that made its matrices."""
    _, dist, sim = read_callables(distance, similarities)
    out: dict[str, str] = {}
    if dist is not None:
        out.update(dist.attrs("distance"))
        out["distance_callable_evaluated_on"] = evaluated_on(dist)
    elif sim is not None:
        out["distance_from_kernel"] = DISTANCE_FROM_KERNEL
    if sim is not None:
        out.update(sim.attrs("similarity"))
        out["similarity_callable_evaluated_on"] = evaluated_on(sim)
    return out


def _objects(values, name: str):
    """A set of any objects: a numpy array as it is (its slices are a vectorised
    callable's blocks), any other iterable as a list."""
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"The {name} argument of {FUNC} must be a sequence of objects (a list, tuple or "
            f"array) for a distance or similarity callable. Got {type(values).__name__}"
            + (": wrap one string in a list." if isinstance(values, str) else ".")
        )
    return list(values)


def _prepare_objects(
    sets: Mapping, dist: Pairwise | None, sim: Pairwise | None, richness_tol: float, seed: int
) -> tuple[list[PreparedSet], dict]:
    """Sets of objects under callables: each set's matrices formed blockwise, checked."""
    prepared, kernels = [], {}
    for label, values in sets.items():
        label = _check_label(label)
        name = f"sets[{label!r}]"
        objects = _objects(values, name)
        if len(objects) < 2:
            raise ValueError(
                f"The set {label!r} passed to {FUNC} has {len(objects)} object(s); diversity "
                f"needs at least 2. Drop the set or add objects."
            )
        where = f"set {label!r}"
        held = 3 + (dist is not None and sim is not None) + (sim is not None)
        arg = "distance" if dist is not None else "similarities"
        check_callable_memory(len(objects), arg=arg, where=where, func=FUNC, copies=held)
        K = None
        if sim is not None:
            K = callable_matrix(
                objects,
                sim,
                kind="similarity",
                arg="similarities",
                func=FUNC,
                where=where,
                seed=seed,
            )
            kernels[label] = check_similarity_matrix(K, FUNC, f"similarities[{label!r}]")
        if dist is not None:
            D = callable_matrix(
                objects, dist, kind="distance", arg="distance", func=FUNC, where=where, seed=seed
            )
        else:
            assert K is not None  # read_callables: one callable at least
            D = np.clip(1.0 - K, 0.0, None)
            np.fill_diagonal(D, 0.0)
        D = check_distance_matrix(D, FUNC, name, min_size=2)
        prepared.append(
            PreparedSet(label, "precomputed", given_distances=D, richness_tol=richness_tol)
        )
    return prepared, kernels


def prepare_sets(
    sets: Mapping,
    distance,
    *,
    similarities=None,
    richness_tol: float = 0.0,
    device: str | None = None,
    seed: int = 0,
) -> list[PreparedSet]:
    """Validate every set of a condition and check they are comparable.

    ``distance`` is a name of :data:`DISTANCES` or a distance callable, ``similarities``
    a dict of matrices or a similarity callable (see :func:`read_callables`): with a
    callable, every set is a sequence of objects whose matrices are formed here
    (:func:`~diversity_profiles.engines.callable_matrix`). ``device`` (a resolved torch
    device, see :func:`.torch_engine.resolve_device`) puts the embedding sets on that
    device; without one, torch tensors among the sets put them on the tensors' device.
    """
    distance, dist_callable, sim_callable = read_callables(distance, similarities)
    if not isinstance(sets, Mapping) or len(sets) == 0:
        raise ValueError(
            f"The 'sets' argument of {FUNC} must be a non-empty dict mapping labels to arrays, "
            f'e.g. {{"beam": X1, "human": X2}}. Got {type(sets).__name__} with '
            f"{len(sets) if hasattr(sets, '__len__') else '?'} entries."
        )
    if dist_callable is not None or sim_callable is not None:
        prepared, made = _prepare_objects(sets, dist_callable, sim_callable, richness_tol, seed)
        if isinstance(similarities, Mapping):  # a distance callable and given kernels
            prepared = _with_kernels(prepared, sets, similarities)
        return (
            [replace(item, given_similarity=made[item.label]) for item in prepared]
            if made
            else prepared
        )
    from ..engines import gather_set, is_dask, is_torch, tensor_device, tensor_to_numpy

    prepared = []
    tensor_devices = {}
    for label, values in sets.items():
        label = _check_label(label)
        name = f"sets[{label!r}]"
        if is_torch(values):  # validated on the host; the passes copy it to the device
            refuse_dataless_tensor(values, name, FUNC)
            tensor_devices[label] = tensor_device(values)
            values = tensor_to_numpy(values)
        distributed = is_dask(values)
        if distributed:  # gathered once here, validated, then shipped once to every worker
            values = gather_set(values, FUNC, name)
        if distance == "precomputed":
            D = check_distance_matrix(values, FUNC, name, min_size=2)
            item = PreparedSet(label, distance, given_distances=D, richness_tol=richness_tol)
        else:
            X = prepare_embeddings(values, distance, FUNC, name)
            if X.shape[0] < 2:
                raise ValueError(
                    f"The set {label!r} passed to {FUNC} has {X.shape[0]} sample(s); diversity "
                    f"needs at least 2. Drop the set or add samples."
                )
            item = PreparedSet(
                label, distance, embeddings=X, richness_tol=richness_tol, distributed=distributed
            )
        prepared.append(item)
    if device is None and tensor_devices:
        if len(set(tensor_devices.values())) > 1:
            raise ValueError(
                f"The torch tensors passed to {FUNC} live on different devices: "
                f"{tensor_devices}. Move them to one device, or pass device='cuda' (or 'cpu')."
            )
        from ..engines import resolve_device

        device = resolve_device(next(iter(tensor_devices.values())), FUNC)
    dims = {p.label: p.embeddings.shape[1] for p in prepared if p.embeddings is not None}
    if len(set(dims.values())) > 1:
        raise ValueError(
            f"All sets of one condition must share one representation, but their embedding "
            f"dimensions differ: {dims}. Embed every set with the same model, or profile them "
            f"as separate conditions and combine with dp.merge."
        )
    prepared = _with_kernels(prepared, sets, similarities)
    # Sets are immutable: the device joins them as they are built.
    return [
        replace(item, device=device if item.embeddings is not None else None) for item in prepared
    ]


def _with_kernels(
    prepared: list[PreparedSet], sets: Mapping, similarities: Mapping | None
) -> list[PreparedSet]:
    """The sets with their given similarity matrices (checked) joined."""
    kernels: dict = {}
    if similarities is not None:
        missing = sorted(set(sets) - set(similarities))
        if missing:
            raise ValueError(
                f"The 'similarities' argument of {FUNC} needs a matrix for every set; missing "
                f"{missing}."
            )
        for item in prepared:
            K = check_similarity_matrix(
                similarities[item.label], FUNC, f"similarities[{item.label!r}]"
            )
            if K.shape[0] != item.n:
                raise ValueError(
                    f"similarities[{item.label!r}] is {K.shape[0]} × {K.shape[0]} but the set has "
                    f"{item.n} samples; they must describe the same samples."
                )
            kernels[item.label] = K
    return [replace(item, given_similarity=kernels.get(item.label)) for item in prepared]


@dataclass(frozen=True)
class Condition:
    """The prepared sets of one (representation, distance) condition; immutable.

    What a call decides (methods, grids, bandwidth, budgets) is not stored here but in
    the :class:`~._plan.Plan` each call builds and passes down.
    """

    representation: str
    distance: str
    sets: Sequence[PreparedSet]  # stored as a tuple
    #: The Gaussian bandwidth the user gave; None: the median heuristic, per plan.
    bandwidth: float | None = None
    circles_method: str = "auto"
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sets", tuple(self.sets))

    def __setstate__(self, state: dict) -> None:
        # Conditions pickled by version 0.1 carried each call's decisions (routes, grids,
        # budgets): those now live in the plan of each call, so they are dropped here.
        keep = {"representation", "distance", "sets", "bandwidth", "circles_method", "seed"}
        if state.get("bandwidth_method") not in (None, "given by the user"):
            state = {**state, "bandwidth": None}  # a cached median, not the user's choice
        self.__dict__.update({k: v for k, v in state.items() if k in keep})
        object.__setattr__(self, "sets", tuple(self.sets))

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.sets]

    @property
    def kernel(self) -> str:
        """Which similarity the Vendi family uses in this condition."""
        if self.sets[0].given_similarity is not None:
            return "precomputed similarity"
        return {
            "cosine": "cosine similarity",
            "tanimoto": "Tanimoto similarity",
            "jaccard": "Tanimoto similarity",
        }.get(self.distance, "gaussian")

    def similarity(self, item: PreparedSet, bandwidth: float | None) -> np.ndarray:
        """The n × n similarity matrix for Vendi (not used for cosine: see the dual form).

        ``bandwidth`` is the plan's (needed only for the Gaussian kernel).
        """
        if item.given_similarity is not None:
            return item.given_similarity
        if self.kernel == "Tanimoto similarity":
            return 1.0 - item.D
        if bandwidth is None:
            raise ValueError(
                "The Gaussian kernel needs the plan's bandwidth; build the plan with "
                "pipeline.plan_bandwidth first."
            )
        return gaussian_kernel(item.D, bandwidth)
