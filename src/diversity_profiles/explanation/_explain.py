"""``dp.explain``: store why a profile says what it says, next to the profile.

Layout, under a condition node ``C = "{representation}/{distance}"`` (child nodes; set
labels are untrusted, so nodes are named by position and carry the label as an attribute):

``C/samples/set_{k}`` — the k-th set of ``C["set"]``; attrs ``set`` (label), ``set_index``.
    Dimension ``sample`` (0..n−1, the rows as passed), ``mode`` and ``rank``:
    ``nn_distance``, ``nn_index``, ``duplicate_group`` (sample);
    ``magnitude_weight`` (sample; attrs ``t``, ``magnitude`` (the sum),
    ``stored_magnitude`` when t is on the profile's grid);
    ``circles_member`` (sample, 0/1; attrs ``tau``, ``method`` exact|greedy, ``size``,
    ``stored_lower``, ``stored_upper``);
    ``vendi_share`` (mode), ``vendi_loading`` (mode, sample), ``vendi_top`` (mode, rank),
    ``vendi_contribution`` (sample; attrs ``entropy``);
    ``display_text``, ``display_image`` (sample; attrs ``kind``, ``image_format``),
    ``display_truncated`` (sample), and ``category`` (sample) when given.
``C/distances`` — dimension ``bin`` (coords ``bin_lower``, ``bin_upper``) and the
    inherited ``set``: ``count`` (set, bin), ``pooled_count`` (bin), per set and pooled
    concentration statistics, and ``domain_lower``/``domain_upper`` (family) on the
    distance axis with ``domain_mapping`` (family) saying how.
``C/categories/set_{k}`` — dimension ``category``: ``category_size``, each family on the
    condition's grids (``vendi`` (category, q), ...), and the partition measures
    ``alpha`` ... ``gamma`` (order, category) with ``meta_*`` (order).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import Pairwise, as_pairwise, check_int, check_parameter, one_of
from ..families import AUTO_TIME_LIMIT
from ..pipeline import Condition, node_bandwidth, prepare_sets
from . import _witnesses as _w
from ._categories import category_node, clean_labels
from ._distribution import distances_node

if TYPE_CHECKING:
    import xarray as xr

FUNC = "explain"


def _condition_node(tree, condition, func: str = FUNC):
    from ..pipeline import conditions_of

    paths = conditions_of(tree)
    if condition is None:
        if len(paths) != 1:
            raise ValueError(
                f"The tree passed to {func} holds {len(paths)} conditions {paths}; pass "
                f"condition='representation/distance' to choose one."
            )
        condition = paths[0]
    if condition not in paths:
        raise ValueError(
            f"The 'condition' argument of {func} must be one of {paths}. Got {condition!r}."
        )
    return condition, tree[condition].to_dataset()


def _check_callables(ds, distance, similarities, func: str) -> None:
    """The callables passed to rebuild a condition are those the node records."""
    given = {
        "distance": as_pairwise(distance),
        "similarity": None if isinstance(similarities, Mapping) else as_pairwise(similarities),
    }
    for kind, arg in (("distance", "distance"), ("similarity", "similarities")):
        recorded = ds.attrs.get(f"{kind}_callable")
        pw = given[kind]
        if recorded is not None and pw is None:
            raise ValueError(
                f"The profile's {kind} matrices were made by the callable {recorded!r}; pass "
                f"it again as {arg}= to {func} with the same sets of objects."
            )
        if recorded is None and pw is not None:
            raise ValueError(
                f"The {arg!r} argument of {func} is a callable, but the profile's {kind} "
                f"matrices were not made by one; pass the arguments the profile was made with."
            )
        if pw is None:
            continue
        mine = pw.attrs(kind)[f"{kind}_callable_source_sha256"]
        theirs = str(ds.attrs.get(f"{kind}_callable_source_sha256", ""))
        if (
            not mine.startswith("unavailable")
            and not theirs.startswith("unavailable")
            and (mine != theirs)
        ):
            raise ValueError(
                f"The {arg!r} callable passed to {func} ({pw.name}) has other source code than "
                f"the one the profile records ({recorded}, sha256 {theirs[:12]}…, here "
                f"{mine[:12]}…); pass the callable the profile was made with."
            )


def _rebuild(ds, sets: Mapping, similarities, func: str = FUNC, distance=None) -> Condition:
    """The condition behind ``ds`` from the same sets (checked to be the same); a
    condition made by callables is rebuilt from the same callables (``distance``,
    ``similarities``)."""
    _check_callables(ds, distance, similarities, func)
    if isinstance(distance, str) and distance != ds.attrs["distance"]:
        raise ValueError(
            f"The 'distance' argument of {func} is {distance!r} but the profile was computed "
            f"with {ds.attrs['distance']!r}; leave it out, or pass the distance callable the "
            f"profile was made with."
        )
    labels = [str(v) for v in ds["set"].values]
    if not isinstance(sets, Mapping) or sorted(sets) != sorted(labels):
        got = sorted(sets) if isinstance(sets, Mapping) else type(sets).__name__
        raise ValueError(
            f"The 'sets' argument of {func} must hold the same sets as the profile: {labels}. "
            f"Got {got}."
        )
    tol = float(ds["richness"].attrs.get("tolerance", 0.0)) if "richness" in ds else 0.0
    prepared = prepare_sets(
        {k: sets[k] for k in labels},
        ds.attrs["distance"] if distance is None else distance,
        similarities=similarities,
        richness_tol=tol,
    )
    for item, n in zip(prepared, ds["n_samples"].values.tolist(), strict=True):
        if item.n != n:
            raise ValueError(
                f"The set {item.label!r} passed to {func} has {item.n} samples but the profile "
                f"was computed on {n}; pass the same samples."
            )
    bandwidth = ds.attrs.get("bandwidth")
    return Condition(
        ds.attrs["representation"],
        ds.attrs["distance"],
        prepared,
        None if bandwidth is None else float(bandwidth),
    )


def _pooled(cond: Condition) -> np.ndarray:
    return np.concatenate([s.D[np.triu_indices(s.n, k=1)] for s in cond.sets])


def _snap(grid, value: float) -> float:
    return float(grid[np.argmin(np.abs(grid - value))]) if grid is not None else value


def _set_witnesses(cond, item, ds, t, tau, method, n_modes, n_top):
    import xarray as xr

    n = item.n
    nn_d, nn_j = _w._nearest(item.D)
    groups = _w.duplicate_groups(item.embeddings, item.D, item.richness_tol)
    data = {
        "nn_distance": ("sample", nn_d, {"long_name": "distance to the nearest other sample"}),
        "nn_index": ("sample", nn_j, {"long_name": "index of the nearest other sample"}),
        "duplicate_group": (
            "sample",
            groups,
            {
                "long_name": "near-duplicate group (richness's classes)",
                "richness": int(groups.max()) + 1,
                "tolerance": item.richness_tol,
            },
        ),
    }
    if t is not None:
        w = _w.weights_on_checked(item.D, t)
        data["magnitude_weight"] = (
            "sample",
            w,
            {
                "long_name": "magnitude weighting w = Z_t^-1 1 (sums to the magnitude)",
                "t": t,
                "magnitude": float(w.sum()),
                "duplicates": "a point's weight split among its copies",
            },
        )
        if "magnitude" in ds and t in ds["t"].values:
            k = cond.labels.index(item.label)
            data["magnitude_weight"][2]["stored_magnitude"] = float(
                ds["magnitude"].sel(t=t).values[k]
            )
    if tau is not None:
        k = cond.labels.index(item.label)
        above = ds["tau"].values[ds["tau"].values >= tau] if "tau" in ds.coords else []
        limit = 60.0 if method == "exact" else AUTO_TIME_LIMIT
        mask, how = _w.packing_on_checked(item.D, tau, above, method, cond.seed, limit)
        attrs = {
            "long_name": "a maximum set of samples pairwise farther apart than tau",
            "tau": tau,
            "method": how,
            "size": int(mask.sum()),
        }
        if "circles" in ds and "tau" in ds.coords:
            at = ds.sel(tau=tau)
            attrs.update(
                stored_lower=int(at["circles"].values[k]),
                stored_upper=int(at["circles_upper"].values[k]),
            )
        data["circles_member"] = ("sample", mask.astype(np.int8), attrs)
    if "vendi" in ds:
        if cond.kernel == "cosine similarity":
            modes, contrib = _w._modes(None, item.embeddings, n_modes)
        else:
            modes, contrib = _w._modes(
                cond.similarity(item, node_bandwidth(cond, ds.attrs)), None, n_modes
            )
        top = np.argsort(-np.abs(modes.loadings), axis=1, kind="stable")[:, :n_top]
        data.update(
            vendi_share=("mode", modes.share, {"long_name": "eigenvalue of K/n (share of 1)"}),
            vendi_loading=(("mode", "sample"), modes.loadings, {"long_name": "unit eigenvector"}),
            vendi_top=(("mode", "rank"), top, {"long_name": "samples with the largest |loading|"}),
            vendi_contribution=(
                "sample",
                contrib,
                {
                    "long_name": "share of the Shannon entropy of the spectrum (q = 1)",
                    "entropy": float(contrib.sum()),
                    "definition": "c_i = sum_k lambda_k (-log lambda_k) u_ik^2",
                },
            ),
        )
    return xr.Dataset(data, coords={"sample": np.arange(n)}, attrs={"set": item.label, "n": n})


def _check_options(t, tau, bandwidth, n_modes, n_top, bins, circles_method) -> None:
    if t is not None:
        check_parameter(t, "t", FUNC, low=0.0, low_open=True)
    if tau is not None:
        check_parameter(tau, "tau", FUNC, low=0.0)
    if bandwidth is not None:
        check_parameter(bandwidth, "partition_bandwidth", FUNC, low=0.0, low_open=True)
    for name, value in (("n_modes", n_modes), ("n_top", n_top), ("bins", bins)):
        check_int(value, name, FUNC)
    one_of(circles_method, "circles_method", FUNC, ("auto", "exact", "greedy"))


def _check_per_set(given, name: str, labels: list[str]) -> None:
    if given is None:
        return
    if not isinstance(given, Mapping):
        raise TypeError(
            f"The {name!r} argument of {FUNC} must be a dict mapping set labels to one item per "
            f"sample. Got {type(given).__name__}."
        )
    unknown = sorted(set(given) - set(labels), key=str)
    if unknown:
        raise ValueError(
            f"The {name!r} argument of {FUNC} names sets the profile does not hold: {unknown}. "
            f"The sets are {labels}."
        )


def explain(
    tree,
    sets: Mapping[str, object],
    *,
    similarities: Mapping[str, object] | Callable[[Any, Any], float] | Pairwise | None = None,
    distance: str | Callable[[Any, Any], float] | Pairwise | None = None,
    **options: Any,
) -> xr.DataTree:
    """A copy of ``tree`` with the samples behind one condition's profiles stored in it.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`profiles`.
    sets : dict
        The same sets (same labels, samples, order) the profiles were computed from.
    condition : str, optional
        ``"representation/distance"``; needed when the tree holds several.
    t : float, optional
        Scale of the magnitude weighting (default: the grid point nearest 1 / median
        pooled distance).
    tau : float, optional
        Threshold of the Circles packing (default: the grid point nearest the median
        pooled distance), snapped to the stored τ grid so its size can be checked.
    n_modes, n_top : int
        Vendi modes kept, and top-loading samples listed per mode.
    samples : dict, optional
        Per set, what to show for each sample (see ``display_payload``).
    sample_kind : {"auto", "text", "image", "smiles", "label"}
    categories : dict, optional
        Per set, a category label per sample: profiles per category and the
        alpha/beta/gamma partition (``explanation.partition``) at ``orders``.
    orders : sequence of float
        Orders q of the partition (dimension ``order``).
    partition_bandwidth : float, optional
        Similarity of the partition: by default the condition's Vendi kernel (cosine
        similarity clipped at 0, Tanimoto, or the Gaussian at the recorded bandwidth);
        a bandwidth here uses exp(−D²/2h²) instead (a smaller h separates more).
    bins : int, default 64
        Bins of the distance histograms.
    circles_method : {"auto", "exact", "greedy"}
        How to find the packing where the profile's value was not proved optimal:
        ``"greedy"`` repeats the profile's greedy sweep (the witness has the stored lower
        bound's size); ``"auto"``/``"exact"`` search with CP-SAT as :func:`circles` does.
        Where the stored value is exact the witness is always a proved maximum set.
        Circles per category is the greedy sweep's certified bounds unless
        ``circles_method="exact"`` (CP-SAT on every category can take minutes).
    similarities : dict or callable, optional
        The precomputed similarity matrices, or the similarity callable, if the profiles
        used them.
    distance : callable, optional
        The distance callable, if the profiles used one (:func:`pairwise`); its source
        hash is checked against the one the tree records.

    Returns
    -------
    xarray.DataTree
        A new tree; the layout is in this module's docstring.

    Notes
    -----
    Cost per set of n samples: the n × n distances, one eigendecomposition of the n × n
    kernel (d × d for cosine), one n × n solve for the weights and a greedy pass per
    stored τ ≥ ``tau``; measured 6.8 s for two sets of 1,000 and 800 samples
    (Gaussian kernel, 2 cores). Categories add every family per category.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> sets = {"A": [[0.], [1.], [2.5]], "B": [[0.], [2.], [5.]]}
    >>> tree = dp.profiles(sets, representation="x", distance="euclidean",
    ...                    domains={"circles": [0.5, 1.5, 2.5]})
    >>> out = dp.explain(tree, sets, tau=1.5, t=1.0)
    >>> node = out["x/euclidean/samples/set_0"]
    >>> node.attrs["set"], node["circles_member"].values.tolist()
    ('A', [1, 0, 1])
    >>> round(float(node["magnitude_weight"].sum()), 6) == round(dp.magnitude(
    ...     [[0, 1, 2.5], [1, 0, 1.5], [2.5, 1.5, 0]], 1.0), 6)
    True
    """
    unknown = sorted(set(options) - set(_EXPLAIN_OPTIONS))
    if unknown:
        raise TypeError(
            f"{FUNC}() got unexpected keyword argument(s) {unknown}; it takes similarities, "
            f"distance, {', '.join(_EXPLAIN_OPTIONS)}."
        )
    _, ds = _condition_node(tree, options.get("condition"))
    cond = _rebuild(ds, sets, similarities, FUNC, distance)  # before any option costs time
    return explain_condition(tree, cond, **options)


def explain_condition(
    tree,
    cond: Condition,
    *,
    condition: str | None = None,
    t: float | None = None,
    tau: float | None = None,
    n_modes: int = 5,
    n_top: int = 5,
    samples: Mapping[str, object] | None = None,
    sample_kind: str = "auto",
    categories: Mapping[str, object] | None = None,
    orders=(0.0, 0.5, 1.0, 2.0, np.inf),
    partition_bandwidth: float | None = None,
    bins: int = 64,
    circles_method: str = "auto",
) -> xr.DataTree:
    """:func:`explain` on a condition already prepared from the tree's sets (as a
    :class:`~diversity_profiles.pipeline.Profiler` holds it): nothing is prepared again.
    Options as in :func:`explain`, checked there or here."""
    import xarray as xr

    from ._samples import display_payload

    _check_options(t, tau, partition_bandwidth, n_modes, n_top, bins, circles_method)
    path, ds = _condition_node(tree, condition)
    for name, given in (("samples", samples), ("categories", categories)):
        _check_per_set(given, name, cond.labels)
    pooled = _pooled(cond)
    median = float(np.median(pooled[pooled > 0])) if (pooled > 0).any() else 1.0
    if t is None and "magnitude" in ds:
        t = _snap(ds["t"].values, 1.0 / median)
    if tau is None and "circles" in ds:
        tau = _snap(ds["tau"].values, median)
    elif tau is not None and "tau" in ds.coords:
        tau = _snap(ds["tau"].values, float(tau))
    proved = "circles" in ds and int(ds["circles"].attrs.get("exact", 0)) == 1
    method = "exact" if proved else circles_method  # a proved value is found again exactly
    nodes = {}
    for k, item in enumerate(cond.sets):
        node = _set_witnesses(cond, item, ds, t, tau, method, int(n_modes), int(n_top))
        node.attrs["set_index"] = k
        if samples is not None and item.label in samples:
            pay = display_payload(
                samples[item.label], item.n, sample_kind, f"samples[{item.label!r}]"
            )
            meta = {"kind": pay["kind"], "image_format": pay["image_format"]}
            node["display_text"] = ("sample", np.array(pay["text"], dtype=str), meta)
            node["display_image"] = ("sample", np.array(pay["image"], dtype=str), meta)
            node["display_truncated"] = ("sample", np.array(pay["truncated"], dtype=np.int8))
        if categories is not None and item.label in categories:
            labels = np.asarray(categories[item.label])
            if labels.shape != (item.n,):
                raise ValueError(
                    f"categories[{item.label!r}] passed to {FUNC} needs one label per sample "
                    f"({item.n}). Got shape {labels.shape}."
                )
            node["category"] = ("sample", clean_labels(labels))
            per_category = replace(
                cond, circles_method="exact" if circles_method == "exact" else "greedy"
            )
            nodes[f"{path}/categories/set_{k}"] = category_node(
                per_category, ds, item, labels, np.asarray(orders, dtype=float), partition_bandwidth
            )
        nodes[f"{path}/samples/set_{k}"] = node
    nodes[f"{path}/distances"] = distances_node(cond, ds, int(bins))
    out = tree.copy(deep=False)
    for key, value in nodes.items():
        out[key] = xr.DataTree(value)
    return out


#: The options :func:`explain` passes on: those of :func:`explain_condition`, written once.
_EXPLAIN_OPTIONS = tuple(inspect.signature(explain_condition).parameters)[2:]


def _explain_signature() -> inspect.Signature:
    own = inspect.signature(explain).parameters
    rest = inspect.signature(explain_condition).parameters
    params = [own["tree"], own["sets"], *(rest[k] for k in _EXPLAIN_OPTIONS)]
    params += [own["similarities"], own["distance"]]
    return inspect.Signature(params, return_annotation="xr.DataTree")


explain.__signature__ = _explain_signature()  # type: ignore[attr-defined]
