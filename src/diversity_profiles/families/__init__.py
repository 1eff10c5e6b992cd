"""The exact diversity families, one module each: Vendi, magnitude, Circles, energy, the
scale-free average distance and richness, and Leinster–Cobbold similarity-sensitive
diversity. numpy and scipy only; never imports the pipeline."""

from ._circles import (
    AUTO_EXACT_MAX_N,
    AUTO_TIME_LIMIT,
    circles,
    circles_sweep,
    clique_cover,
    dsatur_clique_cover,
    graph_at,
    greedy_independent_set,
    load_cp_model,
    min_degree_greedy,
    solve_component,
    solve_threshold,
)
from ._energy import CoincidentPointsWarning, energy, energy_from_histogram, energy_scale_range
from ._magnitude import MERGE_TOL, SM_SWITCH, magnitude, magnitude_scale_range, magnitude_values
from ._scalefree import average_distance, group_duplicate_rows, richness
from ._similarity_diversity import Z_OF_KERNEL, similarity_diversity, similarity_diversity_values
from ._vendi import (
    clean_spectrum,
    dual_kernel_spectrum,
    rank_cutoff,
    spectrum_of_kernel,
    vendi_from_spectrum,
    vendi_score,
    vendi_score_dual,
)

__all__ = [
    "AUTO_EXACT_MAX_N",
    "AUTO_TIME_LIMIT",
    "MERGE_TOL",
    "SM_SWITCH",
    "Z_OF_KERNEL",
    "CoincidentPointsWarning",
    "average_distance",
    "circles",
    "circles_sweep",
    "clean_spectrum",
    "clique_cover",
    "dsatur_clique_cover",
    "dual_kernel_spectrum",
    "energy",
    "energy_from_histogram",
    "energy_scale_range",
    "graph_at",
    "greedy_independent_set",
    "group_duplicate_rows",
    "load_cp_model",
    "magnitude",
    "magnitude_scale_range",
    "magnitude_values",
    "min_degree_greedy",
    "rank_cutoff",
    "richness",
    "similarity_diversity",
    "similarity_diversity_values",
    "solve_component",
    "solve_threshold",
    "spectrum_of_kernel",
    "vendi_from_spectrum",
    "vendi_score",
    "vendi_score_dual",
]
