"""From sample sets to a profile tree: prepared conditions, the per-call plan, the family
registry, method planning, resampling, the permutation test, the :class:`Profiler` and the
tree's layout."""

from ._condition import Condition, PreparedSet, prepare_sets
from ._layout import (
    PERMUTATION_NODE,
    Curves,
    band_of,
    brackets,
    comparison_paths,
    conditions_of,
    curves,
    replicate_sizes,
    stored_permutation_tests,
    tidy,
)
from ._merge import merge
from ._permutation import holm, rank_p_value, studentised_sup
from ._permutation_test import permutation_test
from ._plan import Plan
from ._planning import describe as describe_plan
from ._planning import plan as plan_methods  # "plan" alone would read as a Plan
from ._profiler import Profiler
from ._profiles import (
    MAX_N_POINTS,
    condition_grids,
    node_bandwidth,
    plan_bandwidth,
    resolve_families,
)
from ._registry import FAMILIES, Family
from ._resampling import centred_replicates, evaluate_all, multiplier_replicates, subsample_scale

__all__ = [
    "FAMILIES",
    "MAX_N_POINTS",
    "PERMUTATION_NODE",
    "Condition",
    "Curves",
    "Family",
    "Plan",
    "PreparedSet",
    "Profiler",
    "band_of",
    "brackets",
    "centred_replicates",
    "comparison_paths",
    "condition_grids",
    "conditions_of",
    "curves",
    "describe_plan",
    "evaluate_all",
    "holm",
    "merge",
    "multiplier_replicates",
    "node_bandwidth",
    "permutation_test",
    "plan_bandwidth",
    "plan_methods",
    "prepare_sets",
    "rank_p_value",
    "replicate_sizes",
    "resolve_families",
    "stored_permutation_tests",
    "studentised_sup",
    "subsample_scale",
    "tidy",
]
