"""``dp.profiles``: prepare the sets, compute their profiles, and explain them when asked.

One call is a :class:`~diversity_profiles.pipeline.Profiler` used once: its constructor
takes the arguments that define the condition, its ``profiles`` method those that say what
to compute, so the argument lists are written once, there. This module only adds what to
show for each sample (``samples``, ``categories``), which :func:`explain` stores beside
the profiles, reusing the condition the profiler already prepared.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..pipeline import Profiler
from ._explain import explain_condition

if TYPE_CHECKING:
    import xarray as xr

FUNC = "profiles"

_CONDITION = tuple(inspect.signature(Profiler.__init__).parameters)[2:]  # after self, sets
_REQUEST = tuple(inspect.signature(Profiler.profiles).parameters)[1:]  # after self
_DISPLAY = ("samples", "sample_kind", "categories")
_PER_SAMPLE = "Mapping[str, object] | None"


def profiles(sets: Mapping[str, object], **options: Any) -> xr.DataTree:
    """Diversity profiles of several sample sets under one condition.

    Parameters
    ----------
    sets : dict of str to array_like
        Labels mapped to embeddings (n_i × d arrays; binary fingerprints for
        ``"tanimoto"``), or to n_i × n_i distance matrices when
        ``distance="precomputed"``. Every set needs at least 2 samples. An xarray
        DataArray of embeddings, numpy-backed or chunked, is read over its sample
        dimension: the one named ``"sample"`` when there is one, else the first; without
        a ``"sample"`` dimension, one whose second dimension is named like the samples
        (``"samples"``, ``"Sample_id"``: any name holding "sample") is refused, as is
        anything not 2-D. Dask arrays and chunked DataArrays run the streamed passes as
        dask graphs, on the active ``dask.distributed`` client when there is one (see the
        user guide's "more than one machine"); ``method="auto"`` then means the large-n
        methods at any n. A torch tensor on the ``meta`` device (a shape without values) is refused.
    representation : str or Representation
        Name of the embedding (e.g. ``"minilm"``); recorded, and the first level
        of the tree path, so it must be a non-blank string without ``/`` or a
        backslash, not ``"."`` or ``".."``, of at most 255 bytes in UTF-8 (a zarr store
        makes it a directory); others are refused before any work. Here it is only a
        name: ``sets`` are already embedded.
        (In ``diversity_profiles.text.profiles`` and the other featurisers the same
        argument *selects* the model that embeds raw samples.) A
        :class:`Representation` (what the featurisers in ``diversity_profiles.text``,
        ``.molecules`` and ``.images`` return) also records its details as
        ``representation_<key>`` attributes.
    distance : {"euclidean", "cosine", "tanimoto", "jaccard", "precomputed"}
        Distance between samples. Vendi uses the matching similarity: cosine
        similarity, Tanimoto similarity, or a Gaussian kernel of the distance
        (euclidean, precomputed) whose bandwidth is recorded.
        Or a distance callable ``f(a, b) -> float`` (or :func:`pairwise` of one, e.g.
        vectorised or on several processes): each set is then a sequence of any objects
        (strings, graphs, molecules) and its n × n distances are formed from them on the
        upper triangle in row blocks, with a progress bar when slow, after a memory check,
        and checked (finite, non-negative, ``f(x, x) = 0``, symmetric on a spot check of
        pairs; the first bad pair is named with its objects). The node is
        ``"{representation}/precomputed"`` and records the callable as
        ``distance_callable`` (qualified name), ``distance_callable_kind`` and
        ``distance_callable_source_sha256`` (where ``inspect.getsource`` finds it).
    families : list of str, optional
        Names from the registry :data:`FAMILIES`: ``"vendi"``, ``"magnitude"``,
        ``"circles"``, ``"energy"``, ``"average_distance"``, ``"richness"`` (the
        default set) and ``"similarity_diversity"`` (only when named).
    domains : dict, optional
        Per family, a ``tuple`` ``(low, high)`` is a range filled with ``n_points``
        (log-spaced on log axes; with ``n_points="auto"`` a coarse pass refined like a
        default domain); a ``list`` or array is the grid itself, honoured exactly (never
        refined), so ``[low, high]`` is a two-point grid. A range of zero width, ``(3.0, 3.0)``,
        is the one point 3.0, like the grid ``[3.0]`` (``n_points`` copies of one
        value would compute one point ``n_points`` times and draw no curve either
        way). At most 10,000 points per family (``pipeline.MAX_N_POINTS``).
        (:func:`~diversity_profiles.compare` only narrows a computed grid, so there any
        ``(low, high)`` pair is a window.) Default domains follow the pooled data of the condition.
    n_points : "auto" or int, default "auto"
        ``"auto"``: adaptive grids. Each default domain and ``(low, high)`` range is
        evaluated on 25 points, then points are added, the same for every set, where
        the curves bend (linear interpolation off by more than half the family's
        margin) and where two sets' order changes (the crossing bracketed to 1e-5 on
        log θ, or of the range on a linear axis), at most 100 per family; the
        coordinate's ``domain`` attribute says how many of each (e.g. ``adaptive: 25
        coarse + 9 bend + 14 crossing points``). Families on their large-n method keep a
        fixed grid of 50 points. An int: a fixed grid of that many points per default
        domain and range, nothing added: 5 to 10,000
        (``pipeline.MAX_N_POINTS``).
    similarities : dict of str to array_like, optional
        Precomputed similarity matrices (unit diagonal, PSD) for Vendi, one per set.
        Or a similarity callable ``k(a, b) -> float`` (or :func:`pairwise` of one; with
        ``normalize=True`` it is divided by ``sqrt(k(a, a) k(b, b))``, else ``k(x, x)``
        must be 1) over sets of any objects, checked as a distance callable is and
        recorded as ``similarity_callable*``; Vendi refuses a kernel that is not PSD with
        its most negative eigenvalue. With ``distance="precomputed"`` the other families'
        distance is ``1 - K`` clipped at 0 (recorded as ``distance_from_kernel``).
    bandwidth : float, optional
        Gaussian kernel bandwidth; median of the pooled distances by default.
    circles_method : {"auto", "exact", "greedy"}
        Passed to :func:`circles`; both bounds are stored.
    richness_tol : float, default 0
        Rows closer than this (max-abs) are the same item for richness.
    seed : int, default 0
        Seed of the randomised parts (Circles tie-breaking, resampling).
    n_boot : "auto", 0 or int, default "auto"
        The sampling uncertainty behind every verdict. ``"auto"`` (the default):
        families with a per-sample influence (Vendi by the delta method, energy and
        average distance as U-statistics, magnitude by the jackknife) get
        200 Gaussian multiplier draws ``<family>_boot(set, draw, ...)``
        at the cost of one more pass over the matrices already formed; the others
        (Circles, richness) get 40 half-sample replicates for sets of at most 4,000
        samples (Circles on its large-n method: of its exact method's greedy bound, up to
        6,000), and none above (a rule on n, so a call gives the same tree on any
        machine). On their large-n methods Gaussian Vendi takes replicates of its exact
        method on subsets, magnitude its exact jackknife up to 10,000 samples, energy and
        average distance influences estimated on a subset. What each family
        got is the node's ``uncertainty_<family>`` attribute. An int ``>= 2``: that many
        half-sample replicates of every family ``<family>_boot(set, boot, ...)``
        (subsamples of half the set without replacement, ``subsample_size``, rescaled to
        n as :mod:`diversity_profiles.pipeline._resampling` explains; Circles uses its
        greedy lower bound there). ``0``: none, and then no verdict is supported.
        Either way ``<family>_ci_lower`` / ``<family>_ci_upper`` are pointwise bands at
        level ``ci``, and :func:`~diversity_profiles.compare` turns the replicates into
        simultaneous bands of each difference and the findings that hold with confidence.
        Families routed to their large-n method (``method``) have none: an int is then refused with
        what to do instead.
    ci : float, default 0.95
        Confidence level of the bands.
    common_n : int or "min", optional
        Compare sets of unequal size fairly: every family is the mean over
        ``n_subsamples`` subsets of ``common_n`` samples (``"min"``: the smallest
        set's size) drawn without replacement, with its spread in ``<family>_sd``.
    n_subsamples : int, default 10
        Repeats for ``common_n``.
    max_seconds : float or None, default 600
        Time budget for resampling (``n_boot``, ``n_subsamples``). One replicate is
        timed first; work estimated to exceed the budget is refused with the
        estimate (raise it, or pass ``None``, to run anyway). Resampling
        estimated to take more than a few seconds shows a progress bar.
    method : {"auto", "exact", "large"}, default "auto"
        Per family, the exact method or the large-n one (streamed passes without
        n × n matrices, iterative solvers, certified bounds). ``"auto"`` keeps the
        exact method up to a measured set size per family (the registry's
        ``auto_exact_max_n``, see :data:`FAMILIES`) while it fits in memory;
        ``"exact"`` forces it. The plan is checked against the available memory before any work and
        refused, with the plan, when it does not fit. Large-n results record how
        they were obtained (attribute ``method``: exact, certified bounds, or
        estimate ± error) and their bounds as ``<family>_lower``/``<family>_upper``.
    accuracy : float, optional
        Target relative accuracy of the large-n magnitude solver (its ``rtol``; default
        1e-7).
    time_budget : float, optional
        Seconds per set and family the large-n methods may spend. Magnitude solves scales
        in increasing order (the first only when about 25 of its products fit) and Circles
        bounds thresholds in increasing order; once the budget is spent, the remaining ones
        carry the certified bounds of the streamed passes instead (noted in
        ``method_note``). Gaussian Vendi always computes its
        certified bracket; past the budget it reports the bracket alone (value its
        midpoint, ``vendi_error`` its half-width) or shortens the Lanczos part, which
        only widens the error bar.
    permutations : int, default 0
        Also run the exact two-sample permutation test (:func:`permutation_test`) with
        this many relabellings per pair of sets (199 gives p-values down to 0.005), and
        store it as the condition's ``permutation`` child node: :func:`compare`, the
        summary (one paragraph of Holm-adjusted p-values), the explorer and the report
        (each difference against its chance envelope) read it from there. It reuses the
        pooled distance matrix of each pair, and is refused up front (with the estimate)
        when its time exceeds ``max_seconds``. Off by default because it reruns every
        family R times: at 2 × 200 samples, 99 relabellings take about 10 s, at 2 × 500
        about 26 s (2 cores). Families on their large-n method are not tested (named in
        the node's ``not_tested``).
    device : str or torch.device, optional
        Run the heavy kernels of embedding sets (streamed passes, Circles' candidate
        pairs, the solvers' kernel products) on a torch device (``"cuda"``,
        ``"cuda:1"``, or ``"cpu"`` for torch on the CPU); torch tensors among the
        sets run on their own device when none is given. ``method="auto"`` then
        means the large-n methods at any n. Accuracy safeguards and the precision of
        each kernel: the torch engine's module docstring. Needs ``pip install
        "diversity-profiles[torch]"``.
    samples : dict, optional
        Per set, what to show for each sample in the explorer and the report (image
        arrays, texts, SMILES with ``sample_kind="smiles"``, or any labels). With it, or
        with ``categories``, the result is ``explain(tree, sets, samples=...,
        categories=...)``: the witnesses, distance histogram and per-category measures
        are stored beside the profiles (see :func:`explain`; this computes the sets'
        matrices once more).
    sample_kind : {"auto", "text", "image", "smiles", "label"}
        How to show ``samples`` (as in :func:`explain`).
    categories : dict, optional
        Per set, one category label per sample (as in :func:`explain`).

    Returns
    -------
    xarray.DataTree
        One node ``"{representation}/{distance}"`` holding the profiles.

    Examples
    --------
    >>> import numpy as np
    >>> tree = profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
    ...                 representation="line", distance="euclidean",
    ...                 families=["richness", "average_distance"])
    >>> ds = tree["line/euclidean"].to_dataset()
    >>> ds["richness"].values.tolist(), ds["average_distance"].values.round(4).tolist()
    ([3, 2], [1.3333, 4.0])
    """
    unknown = sorted(set(options) - {*_CONDITION, *_REQUEST, *_DISPLAY})
    if unknown:
        raise TypeError(
            f"{FUNC}() got unexpected keyword argument(s) {unknown}; it takes "
            f"{', '.join((*_CONDITION, *_REQUEST, *_DISPLAY))}."
        )
    missing = [name for name in ("representation", "distance") if name not in options]
    if missing:
        raise TypeError(f"{FUNC}() missing required keyword argument(s): {missing}")
    profiler = Profiler(sets, **{k: v for k, v in options.items() if k in _CONDITION})
    samples, categories = options.get("samples"), options.get("categories")
    for name, given in (("samples", samples), ("categories", categories)):
        _check_display(given, name, profiler.condition_state.sets)  # before any work
    tree = profiler.profiles(**{k: v for k, v in options.items() if k in _REQUEST})
    if samples is None and categories is None:
        return tree
    return explain_condition(
        tree,
        profiler.condition_state,
        samples=samples,
        sample_kind=options.get("sample_kind", "auto"),
        categories=categories,
    )


def _signature() -> inspect.Signature:
    """The signature users and editors see: the profiler's two argument lists, then the
    display arguments (keyword-only, as in the profiler)."""
    init = inspect.signature(Profiler.__init__).parameters
    request = inspect.signature(Profiler.profiles).parameters
    params = [init["sets"].replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [init[name] for name in _CONDITION] + [request[name] for name in _REQUEST]
    keyword = inspect.Parameter.KEYWORD_ONLY
    params += [
        inspect.Parameter(
            "samples", keyword, default=None, annotation="Mapping[str, object] | None"
        ),
        inspect.Parameter("sample_kind", keyword, default="auto", annotation="str"),
        inspect.Parameter(
            "categories", keyword, default=None, annotation="Mapping[str, object] | None"
        ),
    ]
    return inspect.Signature(params, return_annotation="xr.DataTree")


profiles.__signature__ = _signature()  # type: ignore[attr-defined]


def _check_display(given, name: str, prepared) -> None:
    """``samples`` / ``categories`` of profiles: per known set, one item per sample."""
    if given is None:
        return
    if not isinstance(given, Mapping):
        raise TypeError(
            f"The {name!r} argument of {FUNC} must be a dict mapping set labels to one item "
            f"per sample. Got {type(given).__name__}."
        )
    sizes = {item.label: item.n for item in prepared}
    unknown = sorted((str(k) for k in given if k not in sizes), key=str)
    if unknown:
        raise ValueError(
            f"The {name!r} argument of {FUNC} names sets that are not profiled: {unknown}. "
            f"The sets are {list(sizes)}."
        )
    for label, values in given.items():
        n = len(values) if hasattr(values, "__len__") else None
        if n != sizes[label]:
            raise ValueError(
                f"{name}[{label!r}] passed to {FUNC} needs one item per sample of the set "
                f"({sizes[label]}). Got {n if n is not None else type(values).__name__}."
            )
