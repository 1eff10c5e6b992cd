"""The notebook explorer: an anywidget over one condition of a profile tree.

Everything the view needs lives in synced traits (never in custom messages), so
a notebook saved with widget state redraws without a kernel: ``spec`` describes
the sets and families, ``curves`` carries every grid and curve as one float64
buffer, and ``domains`` / ``selected_sets`` are what the user chose.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import anywidget
import traitlets

from ..pipeline import FAMILIES, conditions_of
from ._constants import BUNDLE, MIME_TYPE
from ._explain_view import explanation_payload
from ._payload import pack_condition, permutation_nodes, standalone_payload
from ._static import static_view

# JSON has no infinities (the browser's JSON.stringify writes null, Python's json writes a
# token JSON.parse rejects), and Vendi's domain ends at q = ∞: infinite bounds travel as
# the strings "inf" / "-inf" both ways (js/domains.ts), and are floats in Python.
_INFINITE = {"inf": float("inf"), "-inf": float("-inf")}


def _bound_to_json(x: float) -> float | str:
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def domains_to_json(value: dict, widget=None) -> dict:
    """The ``domains`` trait as synced: infinite bounds as "inf" / "-inf".

    >>> domains_to_json({"vendi": [0.0, float("inf")]})
    {'vendi': [0.0, 'inf']}
    """
    return {name: [_bound_to_json(float(x)) for x in bounds] for name, bounds in value.items()}


def domains_from_json(value: dict, widget=None) -> dict:
    """The ``domains`` the view sent, as floats ("inf" read back; anything else is left for
    the trait's validation to name).

    >>> domains_from_json({"vendi": [0, "inf"]})
    {'vendi': [0, inf]}
    """
    return {
        name: [_INFINITE.get(x, x) if isinstance(x, str) else x for x in bounds]
        if isinstance(bounds, list)
        else bounds
        for name, bounds in (value or {}).items()
    }


if TYPE_CHECKING:
    import xarray as xr

    from ..pipeline import Profiler

# The old module path (diversity_profiles.explorer) still reaches these names here.
__all__ = [
    "MIME_TYPE",
    "ProfileExplorer",
    "pack_condition",
    "standalone_payload",
    "static_fallbacks",
]


class ProfileExplorer(anywidget.AnyWidget):
    """Interactive profiles of one condition: curves, domain sliders, verdicts.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`diversity_profiles.profiles`.
    condition : str, optional
        Which condition to show; the first one by default.
    profiler : Profiler, optional
        The :class:`~diversity_profiles.Profiler` that computed ``tree``. With it the
        view offers "more ▶" buttons that compute more grid points of extendable
        families from its prepared matrices; without it they are hidden.
    permutation : xarray.DataTree, optional
        The result of :func:`~diversity_profiles.permutation_test` on ``tree``. When two
        sets are highlighted, each family's panel then draws their difference against
        the chance envelope (the difference relabelling the pooled samples alone
        produces, per grid point) with the pair's Holm-adjusted p-value.
        Default: the test ``profiles(..., permutations=R)`` stored in ``tree``, if any.

    Attributes
    ----------
    domains : dict of str to [low, high]
        The parameter domain of each family, as set by the sliders (or by you:
        assigning it moves the sliders).
    selected_sets : list of str
        Sets the user picked.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
    ...                    representation="line", distance="euclidean",
    ...                    families=["richness", "average_distance"])
    >>> explorer = dp.ProfileExplorer(tree)   # the last line of a cell draws it
    >>> explorer.condition, sorted(explorer.domains)
    ('line/euclidean', [])
    """

    _esm = BUNDLE
    spec = traitlets.Dict().tag(sync=True)
    curves = traitlets.Bytes().tag(sync=True)
    domains = traitlets.Dict().tag(sync=True, to_json=domains_to_json, from_json=domains_from_json)
    selected_sets = traitlets.List(traitlets.Unicode()).tag(sync=True)
    condition = traitlets.Unicode().tag(sync=True)
    conditions = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: The view asks for more grid points beyond an end of a family's domain.
    extend_request = traitlets.Dict().tag(sync=True)
    #: What Python is computing right now (shown in the view); empty when idle.
    status = traitlets.Unicode().tag(sync=True)
    #: What :func:`explain` / :func:`convergence` stored for the condition (the panels).
    explanation = traitlets.Dict().tag(sync=True)
    #: The view asks for witnesses at another grid point (a click on a curve).
    explain_request = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        tree,
        condition: str | None = None,
        profiler: Profiler | None = None,
        permutation: xr.DataTree | None = None,
        **kwargs,
    ) -> None:
        if not BUNDLE.exists():
            raise FileNotFoundError(
                f"The explorer's JavaScript bundle is missing ({BUNDLE}). Reinstall the package "
                f"(pip install .), which builds it, or run `npm install && npm run build`."
            )
        paths = conditions_of(tree)
        if condition is None:
            condition = paths[0]
        elif condition not in paths:
            raise ValueError(
                f"The 'condition' argument of ProfileExplorer must be one of {paths}. "
                f"Got {condition!r}."
            )
        self._tested = permutation_nodes(permutation, tree, paths, "ProfileExplorer")
        self._permutation = permutation
        self._tree = tree
        self._profiler = profiler
        spec, curves = pack_condition(
            tree[condition].to_dataset(),
            self._can_extend(condition),
            permutation=self._tested.get(condition),
        )
        super().__init__(
            spec=spec,
            curves=curves,
            condition=condition,
            conditions=paths,
            explanation=explanation_payload(tree, condition),
            **kwargs,
        )

    @traitlets.validate("condition")
    def _check_condition(self, proposal):
        if self.conditions and proposal["value"] not in self.conditions:
            raise traitlets.TraitError(
                f"condition must be one of {self.conditions}. Got {proposal['value']!r}."
            )
        return proposal["value"]

    @traitlets.observe("condition")
    def _show_condition(self, change) -> None:
        """Another condition was chosen (in the view or here): send its curves."""
        if not hasattr(self, "_tree"):
            return
        spec, curves = pack_condition(
            self._tree[change["new"]].to_dataset(),
            self._can_extend(change["new"]),
            permutation=self._tested.get(change["new"]),
        )
        with self.hold_sync():
            self.domains = {}
            self.spec, self.curves = spec, curves
            self.explanation = explanation_payload(self._tree, change["new"])

    @traitlets.validate("domains")
    def _check_domains(self, proposal):
        value = proposal["value"]
        known = {f["name"] for f in self.spec.get("families", []) if f["parameter"]}
        for family, bounds in value.items():
            if family not in known:
                raise traitlets.TraitError(
                    f"domains has no family {family!r}; families with a parameter here: "
                    f"{sorted(known)}."
                )
            if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
                raise traitlets.TraitError(
                    f"domains[{family!r}] must be [low, high]. Got {bounds!r}."
                )
            for x in bounds:
                real = isinstance(x, numbers.Real) and not isinstance(x, bool)
                if not real or math.isnan(x):
                    raise traitlets.TraitError(
                        f"domains[{family!r}] must be two numbers (±inf allowed), [low, high]. "
                        f"Got {bounds!r}."
                    )
        return {k: [float(min(v)), float(max(v))] for k, v in value.items()}

    def _repr_mimebundle_(self, **kwargs):
        """The live view plus what shows where the live widget cannot.

        JupyterLab / Notebook 7 with diversity-profiles installed draw ``MIME_TYPE``
        (the same explorer, no kernel or saved widget state needed); GitHub, nbviewer
        and PDF exports show the SVG of the same charts and the Markdown summary.
        """
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        # One compare for the chart, the summary and the payload (display/_static.py).
        view = static_view(
            self._tree, self.condition, conditions=self.conditions, permutation=self._permutation
        )
        data.update(view.mimebundle())
        return bundle

    @traitlets.observe("explain_request")
    def _on_explain_request(self, change) -> None:
        from ._explain_view import witnesses_at

        request = change["new"]
        if not request:
            return
        self.status = f"finding {request.get('family')} witnesses…"
        explanation, why = witnesses_at(
            self._tree,
            self.condition,
            self.explanation,
            request.get("family", ""),
            request.get("value"),
            self._profiler.condition_state
            if self._profiler is not None and self._can_extend(self.condition)
            else None,
        )
        self.explanation = explanation
        self.status = why

    @traitlets.observe("extend_request")
    def _on_extend_request(self, change) -> None:
        request = change["new"]
        if request:
            self.extend(request.get("family", ""), request.get("side", "high"))

    def extend(self, family: str, side: str = "high", points: int = 10) -> None:
        """Compute ``points`` more grid points beyond one end of a family's domain.

        Needs the :class:`~diversity_profiles.Profiler` the explorer was given (its
        prepared matrices; nothing is recomputed). The explorer's :attr:`tree` becomes
        the extended tree (the tree you passed in is left unchanged), the view gets
        the new points, and ``domains[family]`` widens to include them.
        """
        fam = FAMILIES.get(family)
        if fam is None or not fam.extendable:
            names = [name for name, f in FAMILIES.items() if f.extendable]
            self.status = f"{family!r} cannot be extended: only {', '.join(names)} can."
            return
        profiler = self._profiler
        if profiler is None or not self._can_extend(self.condition):
            self.status = (
                "No profiler stands behind this view, so its matrices are not in memory: pass "
                "ProfileExplorer(tree, profiler=profiler) with the dp.Profiler that computed "
                "the tree to extend a domain."
            )
            return
        self.status = f"computing {family} at {points} more {fam.parameter} values…"
        test = self._tested.get(self.condition)
        lost = False
        try:
            self._tree = profiler.extend(self._tree, family, side, points)
            grown = self._tree[self.condition].to_dataset()
            spec, packed = pack_condition(grown, can_extend=True, permutation=test)
            # The test's envelope is on the old grid: the grown family shows none.
            lost = test is not None and f"envelope_{family}" in test.data_vars
            domains = dict(self.domains)
            domains[family] = [float(grown[fam.parameter].min()), float(grown[fam.parameter].max())]
            with self.hold_sync():
                self.spec, self.curves, self.domains = spec, packed, domains
        finally:
            self.status = ""
        if lost:
            self.status = (
                f"{family}'s grid grew, so the permutation test's chance envelope (computed on "
                f"the old grid) is no longer drawn; rerun dp.permutation_test(explorer.tree, "
                f"profiler) and pass it as permutation= to see it again."
            )

    @property
    def tree(self) -> xr.DataTree:
        """The tree shown (after :meth:`extend`, the extended one)."""
        return self._tree

    def _can_extend(self, condition: str) -> bool:
        return self._profiler is not None and self._profiler.holds(self._tree, condition)


def static_fallbacks(tree, condition: str | None = None) -> dict:
    """``image/svg+xml`` charts and a ``text/markdown`` summary of a profile tree
    (one :func:`compare`, shared by the chart's crossings and the summary)."""
    condition = condition or conditions_of(tree)[0]
    return static_view(tree, condition, conditions=[condition]).fallbacks()
