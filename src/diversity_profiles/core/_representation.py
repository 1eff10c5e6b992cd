"""Named representations: how samples became vectors, recorded with every profile.

A profile is only meaningful relative to its condition, and the representation is
the part a reader cannot guess: which model, which fingerprint radius, which
n-gram orders. Featurisers (``diversity_profiles.text``, ``.molecules``,
``.images``) return a :class:`Representation` with their vectors, and
:func:`~diversity_profiles.profiles` writes its details into the condition's
attributes as ``representation_<key>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Representation:
    """A representation's short name (the first level of the tree path) and details.

    Parameters
    ----------
    name : str
        Short name, e.g. ``"morgan-r2-2048"``; no ``/``.
    details : dict of str to str, int, float or bool
        What reproduces it: model name, radius, n-gram orders, image size...

    Examples
    --------
    >>> rep = Representation("ngram-1234", {"kind": "n-gram overlap", "orders": (1, 2, 3, 4)})
    >>> rep.attrs()
    {'representation_kind': 'n-gram overlap', 'representation_orders': '1, 2, 3, 4'}
    """

    name: str
    details: Mapping[str, object] = field(default_factory=dict)

    def attrs(self) -> dict[str, str | int | float]:
        """The details as netCDF-safe attributes (sequences joined, bools as 0/1)."""
        out: dict[str, str | int | float] = {}
        for key, value in self.details.items():
            if isinstance(value, bool):
                value = int(value)
            elif isinstance(value, (list, tuple)):
                value = ", ".join(str(v) for v in value)
            elif not isinstance(value, (str, int, float)):
                value = str(value)
            out[f"representation_{key}"] = value
        return out
