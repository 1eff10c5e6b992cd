"""diversity-profiles: diversity of generated content as curves, not one fragile scalar.

>>> import diversity_profiles as dp
>>> dp.vendi_score([[1.0, 0.0], [0.0, 1.0]])
2.0

Submodules load on first use, so ``import diversity_profiles`` stays fast; the
``tree.dp`` accessor is registered as soon as xarray is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

# Family modules import only numpy at load time (scipy inside functions), so they
# load eagerly: a function named like its module (energy, magnitude, circles) must
# be bound here, or importing the submodule would shadow it with the module.
from .circles import circles
from .distances import pairwise_distances
from .energy import CoincidentPointsWarning, energy
from .magnitude import magnitude
from .scalefree import average_distance, richness
from .vendi import vendi_score, vendi_score_dual

# The profile layer needs xarray (slow to import): loaded on first use.
_LAZY = {
    "profiles": "profiles",
    "merge": "profiles",
    "compare": "compare",
    "FAMILIES": "families",
}

__all__ = [
    "FAMILIES",
    "CoincidentPointsWarning",
    "__version__",
    "average_distance",
    "circles",
    "compare",
    "energy",
    "magnitude",
    "merge",
    "pairwise_distances",
    "profiles",
    "richness",
    "vendi_score",
    "vendi_score_dual",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'diversity_profiles' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


class _RegisterAccessorAfterXarray(importlib.abc.MetaPathFinder):
    """Registers ``tree.dp`` right after xarray finishes importing.

    Importing xarray eagerly would triple the import time of this package; this
    finder only wraps xarray's own loader and removes itself once it has fired.
    """

    def find_spec(self, fullname, path, target=None):
        if fullname != "xarray":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("xarray")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            importlib.import_module(".accessor", __name__)

        spec.loader.exec_module = exec_then_register
        return spec


if "xarray" in sys.modules:
    from . import accessor as _accessor  # noqa: F401
else:
    sys.meta_path.insert(0, _RegisterAccessorAfterXarray())
