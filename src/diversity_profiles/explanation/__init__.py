"""Why a profile says what it says: witnesses, distance distributions, per-category
diversity and convergence in the sample size, stored beside the profiles."""

from ._convergence import convergence
from ._explain import explain
from ._one_call import profiles
from ._partition import SUBCOMMUNITY
from ._witnesses import packing_on_checked, weights_on_checked

__all__ = [
    "SUBCOMMUNITY",
    "convergence",
    "explain",
    "packing_on_checked",
    "profiles",
    "weights_on_checked",
]
