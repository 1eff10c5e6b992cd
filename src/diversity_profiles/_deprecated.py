"""Module paths of earlier versions, kept working from one table.

Version 0.2 moved the flat package into subpackages that show its layers (``core``,
``engines``, ``families``, ``large``, ``pipeline``, ``comparison``, ``explanation``,
``display``, ``files``, ``featurisers``). Code that imports an old path, and pickles
that name one (a ``Profiler``, a ``Condition``), still load: importing
``diversity_profiles.<old>`` gives the module that now holds its code, under both
names, with a :class:`DeprecationWarning` naming the new path. Two old paths are now
subpackages of their own and are not aliased: ``diversity_profiles.families`` (the registry
is ``dp.FAMILIES``, or ``diversity_profiles.pipeline``) and ``diversity_profiles.large``
(the large-n solvers; their dispatch is in ``pipeline``). The featuriser modules
and ``sharing`` are public namespaces (``dp.text``, ``dp.sharing``): their old paths
keep working without a warning.

>>> import importlib, sys, warnings
>>> _ = sys.modules.pop("diversity_profiles.streaming", None)  # warns on first import only
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     module = importlib.import_module("diversity_profiles.streaming")
>>> module.__name__, caught[0].category.__name__
('diversity_profiles.engines._streaming', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

#: Old module (``diversity_profiles.<key>``) -> where its code lives now.
MOVED: dict[str, str] = {
    "_validation": "core._validation",
    "_progress": "core._progress",
    "_budget": "core._budget",
    "escaping": "core._escaping",
    "representation": "core._representation",
    "distances": "engines._distances",
    "histogram": "engines._histogram",
    "streaming": "engines._streaming",
    "_blockwise": "engines._blockwise",
    "_held_distances": "engines._held_distances",
    "_operators": "engines._operators",
    "_pcg": "engines._pcg",
    "dask_engine": "engines._dask_engine",
    "dask_operator": "engines._dask_operator",
    "torch_engine": "engines._torch_engine",
    "vendi": "families._vendi",
    "magnitude": "families._magnitude",
    "circles": "families._circles",
    "energy": "families._energy",
    "scalefree": "families._scalefree",
    "similarity_diversity": "families._similarity_diversity",
    "vendi_large": "large._vendi_large",
    "magnitude_large": "large._magnitude_large",
    "circles_large": "large._circles_large",
    "_spectral_bounds": "large._spectral_bounds",
    "_tau_graphs": "large._tau_graphs",
    "condition": "pipeline._condition",
    "planning": "pipeline._planning",
    "resampling": "pipeline._resampling",
    "profiles": "pipeline._profiles",
    "profiler": "pipeline._profiler",
    "layout": "pipeline._layout",
    "verdict": "comparison._verdict",
    "wording": "comparison._wording",
    "compare": "comparison._compare",
    "summary": "comparison._summary",
    "explain": "explanation._explain",
    "witnesses": "explanation._witnesses",
    "categories": "explanation._categories",
    "distribution": "explanation._distribution",
    "convergence": "explanation._convergence",
    "partition": "explanation._partition",
    "concentration": "explanation._concentration",
    "samples": "explanation._samples",
    "explorer": "display._explorer",
    "explain_view": "display._explain_view",
    "plotting": "display._plotting",
    "html_report": "display._html_report",
    "notebook": "display._notebook",
    "storage": "files._storage",
    "_io": "files._io",
    "_csv_input": "files._csv_input",
    "sharing": "display.sharing",
    "text": "featurisers.text",
    "molecules": "featurisers.molecules",
    "images": "featurisers.images",
    "datasets": "featurisers.datasets",
    "accessor": "_accessor",
}

#: Old paths that are public namespaces today: aliases without a warning.
SILENT = frozenset(["datasets", "images", "molecules", "sharing", "text"])

_PACKAGE = __name__.rpartition(".")[0]


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec):
        if self.old not in SILENT:
            warnings.warn(
                f"{_PACKAGE}.{self.old} moved to {_PACKAGE}.{self.new} in version 0.2; "
                f"import the public name from {_PACKAGE} (or the new module) instead. The old "
                f"path will be removed in a later release.",
                DeprecationWarning,
                stacklevel=2,
            )
        module = importlib.import_module(f"{_PACKAGE}.{self.new}")
        # The import system writes the alias's spec onto the module it gets back: keep the
        # real one, or the module's own relative imports would resolve from the old name.
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:  # the new module is already executed
        module.__spec__ = self.spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``diversity_profiles.<old>`` for every key of :data:`MOVED`."""

    def find_spec(self, fullname, path, target=None) -> importlib.machinery.ModuleSpec | None:
        package, _, old = fullname.rpartition(".")
        if package != _PACKAGE or old not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(old, MOVED[old]))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (the package's ``__init__`` calls it)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
