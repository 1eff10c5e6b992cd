"""Merging profile trees of the same sets under other conditions into one tree.

A condition node comes with everything stored under it (:func:`dp.explain`'s
``samples``, ``distances`` and ``categories`` nodes, a ``convergence`` result, any node a
user put there) and every other node of its tree. What cannot be one tree is refused,
saying why: a tree with no profiles, a condition or node in two trees, sets of other
labels or sizes, or sets of one representation computed from other samples (the nodes'
``set_fingerprints``, see :mod:`._fingerprint`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import _fingerprint as fingerprints
from ._layout import conditions_of

if TYPE_CHECKING:
    import xarray as xr

FUNC = "merge"
#: Fingerprints that say which samples a set holds, whatever the distance prepared from them
#: (a given similarity matrix belongs to the condition, not to the samples).
_SAMPLE_KINDS = ("samples", "unit rows", "distances")


def _join(base: str, rel: str) -> str:
    if rel == ".":
        return base or "/"
    return f"{base}/{rel}" if base else rel


def _base(tree: xr.DataTree, paths: list[str]) -> str:
    """Where ``tree``'s nodes go: a tree that *is* a condition node (``tree["x/cosine"]``)
    goes to its ``representation/distance`` path, any other stays where it is."""
    if "." not in paths:
        return ""
    attrs = tree.attrs
    return f"{attrs['representation']}/{attrs.get('distance', 'unknown')}"


class _Merged:
    """The nodes gathered so far and what the conditions among them must agree on."""

    def __init__(self) -> None:
        self.nodes: dict[str, xr.Dataset] = {}
        self.source: dict[str, int] = {}
        self.sizes: tuple[str, dict[str, int]] | None = None  # first condition: label -> n
        # representation -> (path, label -> fingerprint or None) of its first condition
        self.samples: dict[str, tuple[str, dict | None]] = {}
        self.unchecked: list[str] = []

    def condition(self, path: str, ds: xr.Dataset, k: int) -> None:
        if path in self.nodes:
            raise ValueError(
                f"The condition {path!r} appears in more than one tree passed to {FUNC} "
                f"(trees[{self.source[path]}] and trees[{k}]); drop one of them or give a "
                f"distinct representation name."
            )
        if "n_samples" not in ds:
            raise ValueError(
                f"The condition {path!r} of trees[{k}] passed to {FUNC} has no 'n_samples' "
                f"(not a tree of dp.profiles, or an incomplete one); recompute it."
            )
        labels = [str(v) for v in ds["set"].values]
        sizes = dict(zip(labels, (int(n) for n in ds["n_samples"].values), strict=True))
        if self.sizes is None:
            self.sizes = (path, sizes)
        else:
            first, ref = self.sizes
            if sorted(sizes) != sorted(ref):
                raise ValueError(
                    f"{FUNC} combines conditions of the same sets, but {path!r} (trees[{k}]) "
                    f"holds sets {labels} while {first!r} holds {list(ref)}."
                )
            for label, n in sizes.items():
                if n != ref[label]:
                    raise ValueError(
                        f"{FUNC} combines conditions of the same sets, but set {label!r} has "
                        f"{n} samples in {path!r} (trees[{k}]) and {ref[label]} in {first!r}; "
                        f"profile the same samples under every condition."
                    )
        self._same_samples(path, ds, k)

    def _same_samples(self, path: str, ds: xr.Dataset, k: int) -> None:
        """Conditions of one representation must come from the same samples."""
        rep = str(ds.attrs.get("representation"))
        mine = fingerprints.read(ds.attrs, f"node {path!r} of trees[{k}] passed to {FUNC}")
        if rep not in self.samples:
            self.samples[rep] = (path, mine)
            return
        first, theirs = self.samples[rep]
        if mine is None or theirs is None:
            self.unchecked.append(path if mine is None else first)
            return
        for label, own in mine.items():
            kind = fingerprints.differs(own, theirs.get(label, {}), _SAMPLE_KINDS)
            if kind is not None:
                raise ValueError(
                    f"{FUNC} combines conditions of the same sets, but set {label!r} of "
                    f"{path!r} (trees[{k}]) was computed from other samples than in {first!r} "
                    f"(both of the representation {rep!r}; their {kind} fingerprints differ: "
                    f"{fingerprints.short(own[kind])} vs {fingerprints.short(theirs[label][kind])}"
                    f"). Merge profiles of the same samples, or name the other data's "
                    f"representation differently."
                )

    def node(self, path: str, ds: xr.Dataset, k: int) -> None:
        """Any other node (a condition's children, a node of its own): kept as it is."""
        if path in self.nodes and not ds.identical(self.nodes[path]):
            raise ValueError(
                f"The node {path!r} appears in trees[{self.source[path]}] and trees[{k}] "
                f"passed to {FUNC} with different contents; drop it from one of them."
            )
        self.nodes[path] = ds
        self.source.setdefault(path, k)


def merge(trees: Sequence) -> xr.DataTree:
    """Merge profile trees of the same sets under other conditions into one tree.

    Every node of every tree is kept: the condition nodes and what is stored under them
    (:func:`explain`'s ``samples``, ``distances`` and ``categories`` nodes, a
    ``convergence`` result), their attributes unchanged.

    Parameters
    ----------
    trees : sequence of xarray.DataTree
        Results of :func:`profiles` (or a condition node of one, ``tree["x/cosine"]``).
        Condition paths must not repeat; every condition must hold the same set labels
        with the same numbers of samples; conditions of one representation must be
        computed from the same samples (checked on the nodes' ``set_fingerprints``:
        conditions of different representations hold different embeddings and are not
        compared; a node written before version 0.2.0 has no fingerprints, and merging it
        with another of its representation warns that the samples were not checked).

    Returns
    -------
    xarray.DataTree

    Raises
    ------
    ValueError
        A tree that holds no profiles, a condition in two trees, sets of other labels or
        sizes, sets of one representation computed from other samples, or another node
        that two trees hold with different contents.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> sets = {"A": [[1., 0.], [0., 1.]], "B": [[1., 1.], [2., 0.]]}
    >>> a = dp.profiles(sets, representation="x", distance="euclidean", families="richness")
    >>> b = dp.profiles(sets, representation="x", distance="cosine", families="richness")
    >>> sorted(dp.merge([a, b]).dp.conditions)
    ['x/cosine', 'x/euclidean']
    """
    import xarray as xr

    if isinstance(trees, (xr.DataTree, str)) or not isinstance(trees, Sequence) or not trees:
        raise ValueError(
            f"The 'trees' argument of {FUNC} must be a non-empty list of DataTrees. "
            f"Got {type(trees).__name__}."
        )
    merged = _Merged()
    for k, tree in enumerate(trees):
        if not isinstance(tree, xr.DataTree):
            raise TypeError(
                f"trees[{k}] passed to {FUNC} is a {type(tree).__name__}, not a DataTree."
            )
        paths = conditions_of(tree)
        if not paths:
            raise ValueError(
                f"trees[{k}] passed to {FUNC} holds no profiles (no node with a 'set' "
                f"dimension and a 'representation' attribute); pass results of dp.profiles."
            )
        base = _base(tree, paths)
        for path in paths:
            node = tree[path]
            assert isinstance(node, xr.DataTree)  # conditions_of names nodes
            merged.condition(_join(base, path), node.to_dataset(inherit=False), k)
        for node in tree.subtree:
            own = node.to_dataset(inherit=False)
            if own.variables or own.attrs:  # empty group nodes are made again by from_dict
                rel = "." if node is tree else node.relative_to(tree)
                merged.node(_join(base, rel), own, k)
    if merged.unchecked:
        warnings.warn(
            f"{FUNC} could not check that {sorted(set(merged.unchecked))} hold the same samples "
            f"as the other conditions of their representation: they record no "
            f"'{fingerprints.ATTR}' (written before version 0.2.0). Recompute them to have "
            f"that checked.",
            UserWarning,
            stacklevel=2,
        )
    return xr.DataTree.from_dict(merged.nodes)
