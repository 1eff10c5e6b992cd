"""Diversity profiles as labelled xarray trees: one node per condition.

``tree["minilm/cosine"]`` holds one variable per family on its own parameter
dimension (``vendi(set, q)``, ``magnitude(set, t)``, ``circles(set, tau)`` with
``circles_upper``, ``energy(set, s)``) plus the scale-free ``average_distance(set)``
and ``richness(set)``. Every set of a condition shares each grid. Attributes are
strings and numbers only, so the tree round-trips through netCDF and zarr.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core._validation import check_int, check_parameter, check_real, check_seed, one_of
from .._version import __version__
from ._condition import Condition, prepare_sets
from ._registry import FAMILIES, Family
from ._large import STRENGTH
from ..core._representation import Representation

if TYPE_CHECKING:
    import xarray as xr

FUNC = "profiles"

_CIRCLES_METHODS = ("auto", "exact", "greedy")


def _check_name(value, arg: str) -> str:
    if not isinstance(value, str) or not value or "/" in value:
        raise ValueError(
            f"The {arg!r} argument of {FUNC} must be a non-empty string without '/' (it names "
            f"the tree node). Got {value!r}."
        )
    from ..core._validation import check_text

    try:  # it must survive netCDF and zarr: no NUL, no lone surrogate
        check_text(value, f"The {arg!r} argument of {FUNC}")
    except ValueError as exc:
        raise ValueError(f"{exc}; remove that character.") from None
    return value


def resolve_families(families) -> list[Family]:
    if families is None:
        return [f for f in FAMILIES.values() if f.default]
    if isinstance(families, str):
        families = [families]
    listing = ", ".join(repr(f) for f in FAMILIES)
    if not isinstance(families, (list, tuple)) or not families:
        raise ValueError(
            f"The 'families' argument of {FUNC} must be None (all families), one family name or "
            f"a non-empty list of them ({listing}). Got {families!r}."
        )
    names = [one_of(f, "families", FUNC, tuple(FAMILIES)) for f in families]
    return [FAMILIES[name] for name in dict.fromkeys(names)]  # repeats once, in given order


def _user_domain(family: Family, value, n_points: int) -> tuple[np.ndarray, str]:
    """A user's domain: an explicit grid, or a (low, high) range filled with n_points."""
    where = f"domains[{family.name!r}]"
    grid, _ = check_parameter(
        value, where, FUNC, low=0.0, low_open=family.low_open, allow_inf=family.allow_inf
    )
    if isinstance(value, tuple) and len(value) == 2:
        lo, hi = sorted(grid)
        if family.axis == "log" and lo > 0 and np.isfinite(hi):
            return np.geomspace(lo, hi, n_points), f"user range [{lo:g}, {hi:g}], log-spaced"
        if np.isfinite(hi):
            return np.linspace(lo, hi, n_points), f"user range [{lo:g}, {hi:g}], evenly spaced"
    return np.unique(grid), "user grid"


@dataclass
class Uncertainty:
    """What :func:`profiles` adds about finite samples (all optional)."""

    n_boot: int = 0
    ci: float = 0.95
    common_n: int | None = None
    n_subsamples: int = 10
    seed: int = 0
    max_seconds: float | None = 600.0


def condition_grids(cond: Condition, fams: list[Family], domains: Mapping, n_points: int) -> dict:
    """family -> (grid, how it was chosen); every set of the condition shares it."""
    out = {}
    for fam in fams:
        if fam.parameter is None:
            out[fam.name] = (np.empty(0), "")
        elif fam.name in domains:
            out[fam.name] = _user_domain(fam, domains[fam.name], n_points)
        else:
            assert fam.domain is not None  # every family with a parameter has a domain
            out[fam.name] = fam.domain(cond, n_points)
    return out


def _estimates(cond: Condition, fams: list[Family], grids: dict) -> dict:
    """var -> (values(set, ...), attrs, family) on the full sets."""
    out = {}
    for fam in fams:
        per_set = [fam.evaluate(cond, item, grids[fam.name][0]) for item in cond.sets]
        for var in per_set[0]:
            attrs = {"family": fam.name, "long_name": fam.long_name, "axis_scale": fam.axis}
            for extra in per_set:
                for key, val in extra[var][1].items():
                    if key == "method":  # the weakest: exact < certified bounds < estimate
                        attrs[key] = max(attrs.get(key, val), val, key=STRENGTH.__getitem__)
                        continue
                    attrs[key] = min(attrs.get(key, val), val)  # e.g. exact only if all sets were
            out[var] = (np.stack([np.asarray(r[var][0]) for r in per_set]), attrs, fam)
    return out


def _add_uncertainty(cond, fams, grids, estimates, unc: Uncertainty, data_vars) -> dict:
    """Subsample to a common size and/or bootstrap; returns attributes to record."""
    from . import _resampling as resampling
    from ..core._budget import plan_repeats

    grid_only = {name: g for name, (g, _) in grids.items()}
    # float64 values per replicate and set (all grids), held a few times while stacking
    per_rep = 8 * 3 * len(cond.sets) * sum(max(g.size, 1) for g in grid_only.values())
    notes: dict = {}
    if unc.common_n is not None:
        common_n = unc.common_n  # narrowed to int, also inside the lambda
        show = plan_repeats(
            lambda: resampling.subsamples(cond, fams, grid_only, common_n, 1, unc.seed),
            unc.n_subsamples,
            arg="n_subsamples",
            func=FUNC,
            max_seconds=unc.max_seconds,
            result_bytes=per_rep * unc.n_subsamples,
        )
        reps = resampling.subsamples(
            cond, fams, grid_only, unc.common_n, unc.n_subsamples, unc.seed, show
        )
        for var, values in reps.items():
            _, attrs, fam = estimates[var]
            how = f"mean over {unc.n_subsamples} subsamples of {unc.common_n}"
            estimates[var] = (values.mean(axis=1), {**attrs, "estimate": how}, fam)
            dims = ("set",) + (() if fam.parameter is None else (fam.parameter,))
            with np.errstate(invalid="ignore"):  # -inf energies (duplicates): the sd is NaN
                spread = values.std(axis=1, ddof=1) if unc.n_subsamples > 1 else values[:, 0] * 0
            data_vars[f"{var}_sd"] = (dims, spread, {"family": fam.name, "role": "spread"})
        notes.update(common_n=unc.common_n, n_subsamples=unc.n_subsamples)
    if unc.n_boot > 0:
        from ._resampling import subsample_scale

        show = plan_repeats(
            lambda: resampling.half_samples(cond, fams, grid_only, 1, unc.seed, unc.common_n),
            unc.n_boot,
            arg="n_boot",
            func=FUNC,
            max_seconds=unc.max_seconds,
            result_bytes=per_rep * unc.n_boot,
        )
        reps = resampling.half_samples(
            cond, fams, grid_only, unc.n_boot, unc.seed, unc.common_n, show=show
        )
        full = np.array([unc.common_n or item.n for item in cond.sets])
        half = np.array([resampling.half_size(int(n)) for n in full])
        scales = np.array(
            [subsample_scale(int(n), int(m)) for n, m in zip(full, half, strict=True)]
        )
        method = "subsampling without replacement, m = n/2, scaled by sqrt(m/(n-m))"
        data_vars["subsample_size"] = (
            ("set",),
            half,
            {"role": "replicate size m", "scale": "sqrt(m / (n - m)), n = n_samples or common_n"},
        )
        for var, values in reps.items():
            est, _, fam = estimates[var]
            with warnings.catch_warnings():  # replicates without a pair: NaN bands, no noise
                warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
                lower, upper = resampling.bands(est, values, unc.ci, scales, full / half)
            dims = ("set",) + (() if fam.parameter is None else (fam.parameter,))
            role = {"family": fam.name, "ci": unc.ci, "method": method}
            data_vars[f"{var}_ci_lower"] = (dims, lower, {**role, "role": "ci_lower"})
            data_vars[f"{var}_ci_upper"] = (dims, upper, {**role, "role": "ci_upper"})
            data_vars[f"{var}_boot"] = (
                ("set", "boot", *dims[1:]),
                values,
                {"family": fam.name, "role": "replicates", "method": method},
            )
        notes.update(n_boot=unc.n_boot, ci=unc.ci, ci_method=method, bootstrap_seed=unc.seed)
    return notes


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_uncertainty(
    prepared, n_boot, ci, common_n, n_subsamples, seed, max_seconds
) -> Uncertainty:
    if max_seconds is not None:
        max_seconds = check_real(max_seconds, "max_seconds", FUNC, low=0.0, low_open=True)
    if not _is_int(n_boot) or n_boot < 0 or n_boot == 1:
        raise ValueError(
            f"The 'n_boot' argument of {FUNC} must be 0 or an int >= 2. Got {n_boot!r}."
        )
    ci = check_real(ci, "ci", FUNC, low=0.0, high=1.0, low_open=True, high_open=True)
    smallest = min(item.n for item in prepared)
    if isinstance(common_n, str) and common_n == "min":
        common_n = smallest
    if common_n is not None:
        if not _is_int(common_n) or not 2 <= common_n <= smallest:
            raise ValueError(
                f"The 'common_n' argument of {FUNC} must be 'min' or an int in [2, {smallest}] "
                f"(the smallest set's size). Got {common_n!r}."
            )
        if not _is_int(n_subsamples) or n_subsamples < 1:
            raise ValueError(
                f"The 'n_subsamples' argument of {FUNC} must be an int >= 1. Got {n_subsamples!r}."
            )
    return Uncertainty(int(n_boot), float(ci), common_n, int(n_subsamples), int(seed), max_seconds)


def _build_dataset(
    cond: Condition, fams: list[Family], domains: Mapping, n_points: int, unc: Uncertainty
):
    import xarray as xr

    grids = condition_grids(cond, fams, domains, n_points)
    cond.grids = {name: grid for name, (grid, _) in grids.items()}
    estimates = _estimates(cond, fams, grids)
    data_vars: dict = {"n_samples": (("set",), np.array([s.n for s in cond.sets]))}
    notes = _add_uncertainty(cond, fams, grids, estimates, unc, data_vars)
    for var, (values, attrs, fam) in estimates.items():
        dims = ("set",) if fam.parameter is None else ("set", fam.parameter)
        data_vars[var] = (dims, values, attrs)
    coords: dict = {"set": ("set", np.array(cond.labels, dtype=str))}
    for fam in fams:
        if fam.parameter is not None:
            grid, how = grids[fam.name]
            coords[fam.parameter] = (
                fam.parameter,
                grid,
                {"domain": how, "family": fam.name, "axis_scale": fam.axis},
            )
    attrs = {
        "representation": cond.representation,
        "distance": cond.distance,
        "kernel": cond.kernel if any(f.uses_kernel for f in fams) else "none",
        "families": ", ".join(f.name for f in fams),
        "diversity_profiles_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        **notes,
    }
    if attrs["kernel"] == "gaussian":
        attrs["bandwidth"] = float(cond.gaussian_bandwidth())
        attrs["bandwidth_method"] = cond.bandwidth_method
    if any(cond.large(f.name) for f in fams):  # small n keeps today's layout exactly
        attrs["methods"] = "; ".join(f"{f}: {r}" for f, r in cond.routes.items())
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


def _plan(cond: Condition, fams: list[Family], method, unc: Uncertainty, n_points: int) -> dict:
    """family -> "exact" or "large", checked against the memory available (see planning)."""
    from . import _planning as planning

    one_of(method, "method", FUNC, planning.METHODS)
    dask_input = method == "auto" and any(
        item.distributed or item.device is not None for item in cond.sets
    )
    if dask_input:
        method = "large"  # dask input or a device: the large-n methods there, at any n
    first = cond.sets[0]
    routes = planning.plan(
        [f.name for f in fams],
        [item.n for item in cond.sets],
        0 if first.embeddings is None else first.embeddings.shape[1],
        method=method,
        dual_vendi=cond.kernel == "cosine similarity",
        precomputed=first.embeddings is None or first.given_similarity is not None,
        n_grid=n_points,
        distance=cond.distance,
    )
    large = sorted(f for f, r in routes.items() if r.method == "large")
    if large and unc.n_boot:
        raise ValueError(
            f"The bootstrap (n_boot={unc.n_boot}) of {FUNC} needs the exact methods, but "
            f"{', '.join(large)} run their large-n method at n = {max(s.n for s in cond.sets)}. "
            f"Use common_n (subsampling) for the spread, or leave n_boot at 0"
            + (
                " (dask input or a torch device runs the large-n methods; method='exact' "
                "computes in memory)."
                if dask_input
                else "."
            )
        )
    from ..core._validation import available_memory_bytes

    cond.memory_limit = planning.solver_memory(available_memory_bytes())
    return {f: r.method for f, r in routes.items()}


def profiles(
    sets: Mapping[str, object],
    *,
    representation: str | Representation,
    distance: str,
    families: Sequence[str] | str | None = None,
    domains: Mapping[str, object] | None = None,
    n_points: int = 100,
    similarities: Mapping[str, object] | None = None,
    bandwidth: float | None = None,
    circles_method: str = "auto",
    richness_tol: float = 0.0,
    seed: int = 0,
    n_boot: int = 0,
    ci: float = 0.95,
    common_n: int | str | None = None,
    n_subsamples: int = 10,
    max_seconds: float | None = 600.0,
    method: str = "auto",
    accuracy: float | None = None,
    time_budget: float | None = None,
    device: str | None = None,
    samples: Mapping[str, object] | None = None,
    sample_kind: str = "auto",
    categories: Mapping[str, object] | None = None,
) -> xr.DataTree:
    """Diversity profiles of several sample sets under one condition.

    Parameters
    ----------
    sets : dict of str to array_like
        Labels mapped to embeddings (n_i × d arrays; binary fingerprints for
        ``"tanimoto"``), or to n_i × n_i distance matrices when
        ``distance="precomputed"``. Every set needs at least 2 samples. Dask arrays
        and chunked xarray DataArrays (sample dimension ``"sample"``, else the first)
        run the streamed passes as dask graphs, on the active ``dask.distributed``
        client when there is one (see :mod:`.dask_engine`); ``method="auto"`` then
        means the large-n methods at any n.
    representation : str or Representation
        Name of the embedding (e.g. ``"minilm"``); recorded, and the first level
        of the tree path. Here it is only a name: ``sets`` are already embedded.
        (In ``diversity_profiles.text.profiles`` and the other featurisers the same
        argument *selects* the model that embeds raw samples.) A
        :class:`Representation` (what the featurisers in ``diversity_profiles.text``,
        ``.molecules`` and ``.images`` return) also records its details as
        ``representation_<key>`` attributes.
    distance : {"euclidean", "cosine", "tanimoto", "jaccard", "precomputed"}
        Distance between samples. Vendi uses the matching similarity: cosine
        similarity, Tanimoto similarity, or a Gaussian kernel of the distance
        (euclidean, precomputed) whose bandwidth is recorded.
    families : list of str, optional
        Names from the registry :data:`FAMILIES`: ``"vendi"``, ``"magnitude"``,
        ``"circles"``, ``"energy"``, ``"average_distance"``, ``"richness"`` (the
        default set) and ``"similarity_diversity"`` (only when named).
    domains : dict, optional
        Per family, a ``tuple`` ``(low, high)`` is a range filled with ``n_points``
        (log-spaced on log axes); a ``list`` or array is the grid itself, so
        ``[low, high]`` is a two-point grid. (:func:`compare` only narrows a
        computed grid, so there any ``(low, high)`` pair is a window.) Default
        domains follow the pooled data of the condition.
    n_points : int, default 100
        Grid size of each default domain.
    similarities : dict of str to array_like, optional
        Precomputed similarity matrices (unit diagonal, PSD) for Vendi, one per set.
    bandwidth : float, optional
        Gaussian kernel bandwidth; median of the pooled distances by default.
    circles_method : {"auto", "exact", "greedy"}
        Passed to :func:`circles`; both bounds are stored.
    richness_tol : float, default 0
        Rows closer than this (max-abs) are the same item for richness.
    seed : int, default 0
        Seed of the randomised parts (Circles tie-breaking, resampling).
    n_boot : int, default 0
        Replicates per set for confidence bands. With ``n_boot > 0`` every family
        whose registry entry is ``bootstrapped`` (all of today's) gets
        ``<family>_ci_lower`` / ``<family>_ci_upper`` (pointwise, level ``ci``)
        and its replicates ``<family>_boot(set, boot, ...)``: subsamples of half the
        set drawn without replacement (``subsample_size``), rescaled to n as
        :mod:`diversity_profiles.pipeline._resampling` explains. :func:`compare` turns them
        into simultaneous bands of each difference and verdicts that hold with
        confidence. Replicates reuse the computed matrices; Circles uses its greedy
        lower bound there. Families routed to their large-n method (``method``)
        have no replicates: the bootstrap is then refused with what to do instead.
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
    device : str or torch.device, optional
        Run the heavy kernels of embedding sets (streamed passes, Circles' candidate
        pairs, the solvers' kernel products) on a torch device (``"cuda"``,
        ``"cuda:1"``, or ``"cpu"`` for torch on the CPU); torch tensors among the
        sets run on their own device when none is given. ``method="auto"`` then
        means the large-n methods at any n. Accuracy safeguards and the precision of
        each kernel: :mod:`.torch_engine`. Needs ``pip install
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
    fams, domains, n_points = _check_request(families, domains, n_points)
    cond, details = _prepare(
        sets,
        representation,
        distance,
        similarities,
        bandwidth,
        circles_method,
        richness_tol,
        seed,
        device,
    )
    for name, given in (("samples", samples), ("categories", categories)):
        _check_display(given, name, cond.sets)  # before any work: refused early
    unc = _check_uncertainty(cond.sets, n_boot, ci, common_n, n_subsamples, seed, max_seconds)
    tree = _profile(cond, details, fams, domains, n_points, unc, method, accuracy, time_budget)
    if samples is None and categories is None:
        return tree
    from ..explanation._explain import explain

    return explain(
        tree,
        sets,
        samples=samples,
        sample_kind=sample_kind,
        categories=categories,
        similarities=similarities,
    )


def _check_request(families, domains, n_points) -> tuple[list[Family], dict, int]:
    """What to compute: the families, their domains and the default grid size."""
    n_points = check_int(n_points, "n_points", FUNC, low=5)
    fams = resolve_families(families)
    if domains is not None and not isinstance(domains, Mapping):
        raise TypeError(
            f"The 'domains' argument of {FUNC} must be None or a dict keyed by family. "
            f"Got {type(domains).__name__}."
        )
    domains = dict(domains or {})
    for name in domains:
        one_of(name, "domains key", FUNC, tuple(f.name for f in fams if f.parameter))
    return fams, domains, int(n_points)


def _prepare(
    sets,
    representation,
    distance,
    similarities,
    bandwidth,
    circles_method,
    richness_tol,
    seed,
    device=None,
) -> tuple[Condition, dict]:
    """The validated, prepared condition and the representation's recorded details."""
    details = {}
    if isinstance(representation, Representation):
        details = representation.attrs()
        representation = representation.name
    representation = _check_name(representation, "representation")
    one_of(circles_method, "circles_method", FUNC, _CIRCLES_METHODS)
    if similarities is not None and not isinstance(similarities, Mapping):
        raise TypeError(
            f"The 'similarities' argument of {FUNC} must be None or a dict keyed by set label. "
            f"Got {type(similarities).__name__}."
        )
    if bandwidth is not None:
        bandwidth = check_real(
            bandwidth, "bandwidth", FUNC, low=0.0, high=np.inf, low_open=True, high_open=True
        )
    richness_tol = check_real(
        richness_tol, "richness_tol", FUNC, low=0.0, high=np.inf, high_open=True
    )
    seed = check_seed(seed, FUNC)
    from ..engines._torch_engine import resolve_device

    device = resolve_device(device, FUNC)
    prepared = prepare_sets(
        sets, distance, similarities=similarities, richness_tol=richness_tol, device=device
    )
    cond = Condition(representation, distance, prepared, bandwidth, circles_method, seed)
    if bandwidth is not None:
        cond.bandwidth_method = "given by the user"
    return cond, details


def _profile(
    cond: Condition,
    details: dict,
    fams: list[Family],
    domains: dict,
    n_points: int,
    unc: Uncertainty,
    method: str = "auto",
    accuracy: float | None = None,
    time_budget: float | None = None,
) -> xr.DataTree:
    """The one-node tree of ``cond``'s profiles (``cond`` holds the prepared sets)."""
    import xarray as xr

    cond.routes = _plan(cond, fams, method, unc, n_points)
    if accuracy is not None:
        accuracy = check_real(accuracy, "accuracy", FUNC, low=0.0, high=1.0, low_open=True)
    if time_budget is not None:
        time_budget = check_real(time_budget, "time_budget", FUNC, low=0.0, low_open=True)
    cond.accuracy, cond.time_budget = accuracy, time_budget
    ds = _build_dataset(cond, fams, domains, n_points, unc)
    ds.attrs.update(details)
    if any(item.distributed for item in cond.sets):
        from ..engines._dask_engine import provenance as dask_provenance

        ds.attrs.update(dask_provenance())
    on_device = next((item.device for item in cond.sets if item.device is not None), None)
    if on_device is not None:
        from ..engines._torch_engine import provenance

        ds.attrs.update(provenance(on_device))
    return xr.DataTree.from_dict({f"{cond.representation}/{cond.distance}": ds})


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


def merge(trees: Sequence) -> object:
    """Merge profile trees of the same sets under other conditions into one tree.

    Parameters
    ----------
    trees : sequence of xarray.DataTree
        Results of :func:`profiles`. Condition paths must not repeat, and every
        condition must hold the same set labels.

    Returns
    -------
    xarray.DataTree

    Examples
    --------
    >>> sets = {"A": [[1., 0.], [0., 1.]], "B": [[1., 1.], [2., 0.]]}
    >>> a = profiles(sets, representation="x", distance="euclidean", families="richness")
    >>> b = profiles(sets, representation="x", distance="cosine", families="richness")
    >>> sorted(merge([a, b]).dp.conditions)
    ['x/cosine', 'x/euclidean']
    """
    import xarray as xr

    from ._layout import conditions_of

    if isinstance(trees, (xr.DataTree, str)) or not isinstance(trees, Sequence) or not trees:
        raise ValueError("The 'trees' argument of merge must be a non-empty list of DataTrees.")
    nodes: dict = {}
    reference_sets = None
    for k, tree in enumerate(trees):
        if not isinstance(tree, xr.DataTree):
            raise TypeError(
                f"trees[{k}] passed to merge is a {type(tree).__name__}, not a DataTree."
            )
        for path in conditions_of(tree):
            if path in nodes:
                raise ValueError(
                    f"The condition {path!r} appears in more than one tree passed to merge; "
                    f"drop one of them or give a distinct representation name."
                )
            ds = tree[path].to_dataset()
            labels = list(ds["set"].values)
            if reference_sets is None:
                reference_sets = labels
            elif sorted(labels) != sorted(reference_sets):
                raise ValueError(
                    f"merge combines conditions of the same sets, but {path!r} holds sets "
                    f"{labels} while earlier conditions hold {reference_sets}."
                )
            nodes[path] = ds
    return xr.DataTree.from_dict(nodes)
