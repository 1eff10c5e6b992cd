"""What one profiles call decided: an immutable plan, passed down and recorded in the node.

A :class:`~._condition.Condition` holds what the sets *are* (prepared once, never
rewritten); a :class:`Plan` holds what one call chose to do with them: the method of each
family, the grids, the Gaussian bandwidth, the large-n accuracy, time and memory budgets.
Every family evaluation receives the plan of its call explicitly, and the plan is stored
as the node's ``plan`` attribute (JSON), so that :meth:`Profiler.extend` recomputes with the
tree's own plan, not with whatever the latest call happened to choose.

>>> plan = Plan(routes={"magnitude": "large"}, accuracy=1e-6)
>>> plan.large("magnitude"), plan.large("vendi")
(True, False)
>>> Plan.from_attrs({"plan": plan.to_json()}).routes == plan.routes
True
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

#: Methods a family can be routed to (see :mod:`._planning`).
ROUTES = ("exact", "large")


def _frozen(mapping: Mapping | None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Plan:
    """The decisions of one call, read by every family it evaluates.

    Attributes
    ----------
    routes : mapping of str to {"exact", "large"}
        Per family, the method; families not listed run exactly.
    grids : mapping of str to ndarray
        Per family, the grid every set of the condition shares (read-only arrays).
    bandwidth : float or None
        The Gaussian kernel's bandwidth when the call uses that kernel.
    bandwidth_method : str
        How the bandwidth was chosen (recorded with it).
    accuracy, time_budget : float or None
        Target relative accuracy and seconds per set and family of the large-n methods.
    memory_limit : float or None
        Bytes a large-n method may hold (e.g. Z_t in float32), from the planner.
    stop : threading.Event or None
        Set when the call fails or is interrupted while a solver runs on another thread
        (:mod:`._beside`): the solvers that take it end at their next check. Not a
        decision about the values: neither compared nor stored.
    probe_of_n : int or None
        Set on the plan of a timing probe (:func:`._passes.solver_seconds`): the probe
        runs on a subset but stands for a set of this many samples, and the solvers make
        the choices that depend on n as that set would (what they hold in memory, whether
        Vendi's probes need float64). Neither compared nor stored.
    """

    routes: Mapping[str, str] = field(default_factory=dict)
    grids: Mapping[str, np.ndarray] = field(default_factory=dict)
    bandwidth: float | None = None
    bandwidth_method: str = ""
    accuracy: float | None = None
    time_budget: float | None = None
    memory_limit: float | None = None
    stop: threading.Event | None = field(default=None, compare=False, repr=False)
    probe_of_n: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Frozen all the way down: a plan handed to a family cannot be rewritten by it.
        grids = {}
        for name, grid in dict(self.grids).items():
            arr = np.array(grid, dtype=np.float64)
            arr.setflags(write=False)
            grids[name] = arr
        object.__setattr__(self, "routes", _frozen(self.routes))
        object.__setattr__(self, "grids", _frozen(grids))

    def large(self, family: str) -> bool:
        """Whether ``family`` runs its large-n method under this plan."""
        return self.routes.get(family) == "large"

    def with_grids(self, grids: Mapping[str, np.ndarray]) -> Plan:
        """A new plan with these grids (the other decisions unchanged)."""
        return replace(self, grids=grids)

    def to_json(self) -> str:
        """The decisions that shape the values, as stored in the node's ``plan`` attribute.

        Grids are the node's coordinates and are not repeated here; the memory limit is
        the machine's, not the result's (it changes how much a solver holds, not what it
        computes), so a later call takes its own.
        """
        return json.dumps(
            {
                "routes": dict(self.routes),
                "bandwidth": self.bandwidth,
                "bandwidth_method": self.bandwidth_method,
                "accuracy": self.accuracy,
                "time_budget": self.time_budget,
            },
            sort_keys=True,
        )

    @classmethod
    def from_attrs(cls, attrs: Mapping, grids: Mapping | None = None) -> Plan:
        """The plan a node was computed with, read from its attributes (untrusted input).

        Nodes written before plans were recorded carry ``methods`` (only when some family
        ran its large-n method) and ``bandwidth``; everything else was the default.
        """
        raw = attrs.get("plan")
        if raw is None:
            routes = {}
            for part in str(attrs.get("methods", "")).split(";"):
                name, _, route = part.partition(":")
                if route.strip() in ROUTES:
                    routes[name.strip()] = route.strip()
            bandwidth = attrs.get("bandwidth")
            return cls(
                routes=routes,
                grids=grids or {},
                bandwidth=None if bandwidth is None else float(bandwidth),
                bandwidth_method=str(attrs.get("bandwidth_method", "")),
            )
        try:
            data = json.loads(str(raw))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            routes = {str(k): str(v) for k, v in dict(data.get("routes") or {}).items()}
            if any(v not in ROUTES for v in routes.values()):
                raise ValueError(f"routes must be one of {ROUTES}")
            numbers = {
                key: None if data.get(key) is None else float(data[key])
                for key in ("bandwidth", "accuracy", "time_budget")
            }
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"The node's 'plan' attribute is not a plan written by diversity-profiles "
                f"({exc}); recompute the profiles instead of extending them."
            ) from None
        return cls(
            routes=routes,
            grids=grids or {},
            bandwidth_method=str(data.get("bandwidth_method", "")),
            bandwidth=numbers["bandwidth"],
            accuracy=numbers["accuracy"],
            time_budget=numbers["time_budget"],
        )
