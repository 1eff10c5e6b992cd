"""diversity-profiles: diversity of generated content as curves, not one fragile scalar.

>>> import diversity_profiles as dp
>>> dp.vendi_score([[1.0, 0.0], [0.0, 1.0]])
2.0

scipy and xarray load on first use, so ``import diversity_profiles`` stays fast;
the ``tree.dp`` accessor is registered as soon as xarray is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

from . import _deprecated
from ._version import __version__
from .comparison import compare
from .core import Pairwise, Representation, pairwise
from .engines import pairwise_distances
from .explanation import convergence, explain, profiles

# Every module imports only numpy at load time (scipy and xarray inside the
# functions that need them), so all load eagerly. They must: a function named
# like its module (energy, magnitude, circles, profiles, compare) has to be bound
# here, or importing the submodule later would shadow it with the module.
from .families import (
    CoincidentPointsWarning,
    average_distance,
    circles,
    energy,
    magnitude,
    richness,
    similarity_diversity,
    vendi_score,
    vendi_score_dual,
)
from .files import open_profiles
from .pipeline import FAMILIES, Profiler, merge, permutation_test

__all__ = [
    "FAMILIES",
    "CoincidentPointsWarning",
    "Pairwise",
    "ProfileExplorer",
    "Profiler",
    "Representation",
    "__version__",
    "average_distance",
    "circles",
    "compare",
    "convergence",
    "energy",
    "explain",
    "magnitude",
    "merge",
    "open_profiles",
    "pairwise",
    "pairwise_distances",
    "permutation_test",
    "profiles",
    "report",
    "richness",
    "similarity_diversity",
    "vendi_score",
    "vendi_score_dual",
]


_FEATURISERS = ("text", "molecules", "images", "datasets")


def __getattr__(name: str):
    # The explorer pulls in anywidget and ipywidgets: loaded only when asked for.
    if name == "ProfileExplorer":
        from .display import ProfileExplorer

        return ProfileExplorer
    if name == "report":
        from .display import report

        return report
    if name in _FEATURISERS:  # optional extras: imported when first used
        return importlib.import_module(f".featurisers.{name}", __name__)
    if name == "sharing":  # nbconvert and anywidget: loaded only when asked for
        return importlib.import_module(".display.sharing", __name__)
    if name == "vendi_compat":  # vendi-score's API, drop-in: loaded only when asked for
        return importlib.import_module(".vendi_compat", __name__)
    raise AttributeError(f"module 'diversity_profiles' has no attribute {name!r}")


def load_ipython_extension(ipython) -> None:
    """``%load_ext diversity_profiles``: profile trees display as explorers.

    Registers a MIME-bundle formatter for ``xarray.DataTree`` that answers only
    for trees holding profiles or comparisons (others keep xarray's display); no
    other part of IPython's display system is touched.
    """
    import xarray as xr

    from .display import tree_mimebundle

    ipython.display_formatter.mimebundle_formatter.for_type(xr.DataTree, tree_mimebundle)


class _RegisterAccessorAfterXarray(importlib.abc.MetaPathFinder):
    """Registers ``tree.dp`` right after xarray finishes importing.

    Kept (issue 11 asked to measure it): on the development machine ``import
    diversity_profiles`` takes 0.40–0.46 s and importing xarray after it 0.61–0.99 s
    more, so registering at package import as xarray documents would make the
    package 2.5–3.5 times slower to import for the uses that never make a tree (the
    scalar functions, ``--help`` of the console scripts, featurisers). The surprise
    is bounded: a tree only exists once xarray is imported, and this finder fires
    exactly then (or at once, below, when xarray came first). It only wraps
    xarray's own loader and removes itself once it has fired.
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
            importlib.import_module("._accessor", __name__)

        spec.loader.exec_module = exec_then_register
        return spec


class _Package(types.ModuleType):
    """The package module: importing an old submodule path (see :mod:`._deprecated`)
    must not replace a public function of the same name (``profiles``, ``compare``, ...)
    with that module, as Python's import system would by default."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and name in __all__:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
_deprecated.install()

if "xarray" in sys.modules:
    from . import _accessor  # noqa: F401
else:
    sys.meta_path.insert(0, _RegisterAccessorAfterXarray())
