"""A condition: sample sets seen through one representation and one distance.

Everything a family needs is prepared here once per set (distances, the
log-distance histogram, the kernel spectrum) so that families never repeat work
and every set of a condition is measured with the same kernel and bandwidth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..core._validation import (
    check_distance_matrix,
    check_pairwise_memory,
    check_similarity_matrix,
    one_of,
)
from ..engines._distances import (
    DISTANCES,
    distance_matrix,
    gaussian_kernel,
    iter_distance_blocks,
    median_bandwidth,
    prepare_embeddings,
)
from ..engines._histogram import LogDistanceHistogram
from ..families._scalefree import group_duplicate_rows

FUNC = "profiles"


@dataclass
class PreparedSet:
    """One labelled sample set, validated, with lazily computed summaries."""

    label: str
    distance: str
    embeddings: np.ndarray | None = None
    given_distances: np.ndarray | None = None
    given_similarity: np.ndarray | None = None
    richness_tol: float = 0.0
    #: Multiplicity of each sample (a bootstrap resample); None means once each.
    weights: np.ndarray | None = None
    #: Given as a dask collection: the streamed passes run as dask graphs (see dask_engine).
    distributed: bool = False
    #: A torch device ("cuda:0", "cpu"): the streamed passes run there (see torch_engine).
    device: str | None = None
    _D: np.ndarray | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        src = self.embeddings if self.embeddings is not None else self.given_distances
        assert src is not None  # prepare() gives every set embeddings or distances
        return int(src.shape[0])

    @property
    def D(self) -> np.ndarray:
        """The full distance matrix (formed on first use, after a memory check)."""
        if self._D is None:
            if self.given_distances is not None:
                self._D = self.given_distances
            else:
                check_pairwise_memory(self.n, FUNC, what=f"distances of set {self.label!r}")
                assert self.embeddings is not None  # no given distances: embeddings are
                self._D = distance_matrix(self.embeddings, self.distance)
        return self._D

    def subset(self, indices: np.ndarray, counts: np.ndarray | None = None) -> PreparedSet:
        """The samples at ``indices`` (distinct), each counted ``counts[i]`` times.

        Reuses the matrices already computed: resampling never recomputes features.
        """
        ix = np.ix_(indices, indices)
        return PreparedSet(
            label=self.label,
            distance=self.distance,
            embeddings=None if self.embeddings is None else self.embeddings[indices],
            given_distances=None if self.given_distances is None else self.given_distances[ix],
            given_similarity=None if self.given_similarity is None else self.given_similarity[ix],
            richness_tol=self.richness_tol,
            weights=None if counts is None else np.asarray(counts, dtype=np.float64),
            device=self.device,
            _D=None if self._D is None else self._D[ix],
        )

    def pair_weights(self) -> np.ndarray | None:
        """Weight of each unordered pair i < j (``m_i m_j``), in triu order."""
        if self.weights is None:
            return None
        iu = np.triu_indices(self.n, k=1)
        return self.weights[iu[0]] * self.weights[iu[1]]

    @cached_property
    def histogram(self) -> LogDistanceHistogram:
        hist = LogDistanceHistogram()
        if self._D is not None or self.embeddings is None or self.weights is not None:
            hist.add(self.D[np.triu_indices(self.n, k=1)], self.pair_weights())
        else:  # stream blocks: energy alone never needs the n × n matrix
            for block in iter_distance_blocks(self.embeddings, self.distance):
                hist.add(block)
        return hist

    @cached_property
    def richness(self) -> int:
        if self.embeddings is not None:
            return int(np.unique(group_duplicate_rows(self.embeddings, self.richness_tol)).size)
        from scipy.sparse.csgraph import connected_components

        return int(connected_components(self.D <= self.richness_tol, directed=False)[0])


def _check_label(label) -> str:
    from ..core._validation import check_text

    if not isinstance(label, str) or not label or "/" in label:
        raise ValueError(
            f"Set labels passed to {FUNC} must be non-empty strings without '/'. Got {label!r}."
        )
    try:  # it must survive netCDF and zarr: no NUL, no lone surrogate
        check_text(label, f"The set label passed to {FUNC}")
    except ValueError as exc:
        raise ValueError(f"{exc}; remove that character from the label.") from None
    return label


def prepare_sets(
    sets: Mapping,
    distance: str,
    *,
    similarities: Mapping | None = None,
    richness_tol: float = 0.0,
    device: str | None = None,
) -> list[PreparedSet]:
    """Validate every set of a condition and check they are comparable.

    ``device`` (a resolved torch device, see :func:`.torch_engine.resolve_device`) puts
    the embedding sets on that device; without one, torch tensors among the sets put
    them on the tensors' device.
    """
    one_of(distance, "distance", FUNC, DISTANCES)
    if not isinstance(sets, Mapping) or len(sets) == 0:
        raise ValueError(
            f"The 'sets' argument of {FUNC} must be a non-empty dict mapping labels to arrays, "
            f'e.g. {{"beam": X1, "human": X2}}. Got {type(sets).__name__} with '
            f"{len(sets) if hasattr(sets, '__len__') else '?'} entries."
        )
    from ..engines._dask_engine import gather_set, is_dask
    from ..engines._torch_engine import is_torch, tensor_device, tensor_to_numpy

    prepared = []
    tensor_devices = {}
    for label, values in sets.items():
        label = _check_label(label)
        name = f"sets[{label!r}]"
        if is_torch(values):  # validated on the host; the passes copy it to the device
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
        from ..engines._torch_engine import resolve_device

        device = resolve_device(next(iter(tensor_devices.values())), FUNC)
    for item in prepared:
        if item.embeddings is not None:
            item.device = device
    dims = {p.label: p.embeddings.shape[1] for p in prepared if p.embeddings is not None}
    if len(set(dims.values())) > 1:
        raise ValueError(
            f"All sets of one condition must share one representation, but their embedding "
            f"dimensions differ: {dims}. Embed every set with the same model, or profile them "
            f"as separate conditions and combine with dp.merge."
        )
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
            item.given_similarity = K
    return prepared


@dataclass
class Condition:
    """The prepared sets of one (representation, distance) condition."""

    representation: str
    distance: str
    sets: list[PreparedSet]
    bandwidth: float | None = None
    circles_method: str = "auto"
    seed: int = 0
    bandwidth_method: str = "median of the pooled pairwise distances"
    #: family -> "exact" or "large" (see planning.plan); families not listed run exactly.
    routes: dict = field(default_factory=dict)
    #: Passed to the large-n methods: target relative accuracy and seconds per set.
    accuracy: float | None = None
    time_budget: float | None = None
    #: family -> the grid of this condition (set by profiles before the families run).
    grids: dict = field(default_factory=dict)
    #: Bytes a large-n method may hold (e.g. Z_t in float32), set by the planner.
    memory_limit: float | None = None

    def large(self, family: str) -> bool:
        """Whether ``family`` runs its large-n method in this condition."""
        return self.routes.get(family) == "large"

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

    def gaussian_bandwidth(self) -> float:
        """Bandwidth of the Gaussian kernel, shared by every set (median heuristic)."""
        if self.bandwidth is None and self.large("vendi"):
            from ._large import median_distance

            self.bandwidth = median_distance(self)  # from the streamed histograms
            self.bandwidth_method += " (from the log-distance histogram, within a factor 1.0007)"
        elif self.bandwidth is None:
            self.bandwidth = median_bandwidth([s.D for s in self.sets])
        return self.bandwidth

    def similarity(self, item: PreparedSet) -> np.ndarray:
        """The n × n similarity matrix for Vendi (not used for cosine: see the dual form)."""
        if item.given_similarity is not None:
            return item.given_similarity
        if self.kernel == "Tanimoto similarity":
            return 1.0 - item.D
        return gaussian_kernel(item.D, self.gaussian_bandwidth())
