"""How a number was obtained: the three words every value of a profile is labelled with.

``"exact"`` (to working precision), ``"certified bounds"`` (the true value lies between
stored lower and upper bounds, with certainty) or ``"estimate ± error"`` (a value with a
stated error bar that was measured to hold, not proved). Merging sets keeps the weakest.

>>> weakest(EXACT, ESTIMATE, BOUNDS)
'estimate ± error'
"""

from __future__ import annotations

EXACT, BOUNDS, ESTIMATE = "exact", "certified bounds", "estimate ± error"
#: How a family's value was obtained, weakest last.
STRENGTH = {EXACT: 0, BOUNDS: 1, ESTIMATE: 2}


def weakest(*methods: str) -> str:
    """The weakest of ``methods`` (exact < certified bounds < estimate ± error)."""
    return max(methods, key=STRENGTH.__getitem__)
