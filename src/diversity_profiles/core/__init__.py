"""The foundation every layer stands on: input checks, progress bars, time and memory
budgets, escaping of untrusted text, named representations, and how a set's samples are
read from DataArrays and tensors. Imports numpy only."""

from ._budget import PROGRESS_AFTER_S, plan_repeats, plan_work
from ._callables import Pairwise, as_pairwise, pairwise, short_repr
from ._escaping import (
    ScriptSafeEncoder,
    display_labels,
    markdown_code,
    markdown_text,
    script_json,
    script_safe,
    shorten,
)
from ._inputs import SAMPLE_DIM, refuse_dataless_tensor, samples_first
from ._methods import BOUNDS, ESTIMATE, EXACT, STRENGTH
from ._pair_work import PairWorkMeter, counts_as_pair_work, metered_pair_work, pair_work
from ._progress import progress, quiet_progress, timed_progress
from ._representation import Representation
from ._validation import (
    MATRIX_RTOL,
    as_finite_array,
    available_memory_bytes,
    check_distance_matrix,
    check_int,
    check_node_name,
    check_pairwise_memory,
    check_parameter,
    check_real,
    check_seed,
    check_sets,
    check_similarity_matrix,
    check_text,
    check_weights,
    human_bytes,
    one_of,
    require,
)

__all__ = [
    "BOUNDS",
    "ESTIMATE",
    "EXACT",
    "MATRIX_RTOL",
    "PROGRESS_AFTER_S",
    "SAMPLE_DIM",
    "STRENGTH",
    "PairWorkMeter",
    "Pairwise",
    "Representation",
    "ScriptSafeEncoder",
    "as_finite_array",
    "as_pairwise",
    "available_memory_bytes",
    "check_distance_matrix",
    "check_int",
    "check_node_name",
    "check_pairwise_memory",
    "check_parameter",
    "check_real",
    "check_seed",
    "check_sets",
    "check_similarity_matrix",
    "check_text",
    "check_weights",
    "counts_as_pair_work",
    "display_labels",
    "human_bytes",
    "markdown_code",
    "markdown_text",
    "metered_pair_work",
    "one_of",
    "pair_work",
    "pairwise",
    "plan_repeats",
    "plan_work",
    "progress",
    "quiet_progress",
    "refuse_dataless_tensor",
    "require",
    "samples_first",
    "script_json",
    "script_safe",
    "short_repr",
    "shorten",
    "timed_progress",
]
