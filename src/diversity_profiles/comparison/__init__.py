"""Comparing profiles: the verdict rule (specified once, mirrored by the browser), its
wording, :func:`compare` (which reads the exact permutation tests of
:func:`~diversity_profiles.permutation_test` where the tree stores them) and the
plain-language summary. Never imports the display."""

from ._compare import bounds_of, compare
from ._summary import summary
from ._verdict import MIN_SHARE

__all__ = [
    "MIN_SHARE",
    "bounds_of",
    "compare",
    "summary",
]
