"""Comparing profiles: the verdict rule (specified once, mirrored by the browser), its
wording, :func:`compare`, the exact :func:`permutation_test` and the plain-language
summary. Never imports the display."""

from ._compare import bounds_of, compare
from ._permutation import permutation_test
from ._summary import summary
from ._verdict import MIN_SHARE

__all__ = [
    "MIN_SHARE",
    "bounds_of",
    "compare",
    "permutation_test",
    "summary",
]
