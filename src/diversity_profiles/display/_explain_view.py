"""What the explorer's explanation panels show, read from an explained tree.

:func:`explain` stores the witnesses, the distance histogram and the per-category
measures under a condition node (``C/samples/set_k``, ``C/distances``,
``C/categories/set_k``, and ``C/convergence`` when a :func:`convergence` result is stored
there). This module turns them into the JSON the view draws (the ``explanation`` trait
of the explorer, and each condition of the report's payload). Every number is read from
the tree; the only choices made here are which samples to list (the ranking below), so
the view does no arithmetic the core owns.

Which samples are sent, per set (everything else stays in the tree):

- Magnitude: the :data:`TOP` largest weights and the :data:`TOP` most negative ones.
- Circles: the packing's members, at most :data:`MAX_MEMBERS` (the count says how many).
- Vendi: each stored mode's top-loading samples, and the :data:`TOP` largest
  contributions to the order-1 entropy.
- Richness / nearest neighbours: the :data:`TOP` samples closest to another sample, and
  those neighbours.

Payload budget: a sample's display is at most 280 characters of text or one 48-pixel
thumbnail (a PNG of about 0.3–1.5 kB in base64) or an RDKit SVG drawing (about 5–10 kB);
at most ``5 * TOP + MAX_MEMBERS + n_modes * n_top`` samples per set are sent, so two
sets of 500 digit thumbnails add about 50 kB (measured: 64 and 58 samples sent, 49 kB of JSON,
with magnitude, Circles, Vendi and richness; the test bound is 0.5 MB).
"""

from __future__ import annotations

import base64
import math
import re

import numpy as np

#: Samples listed per ranking (largest weights, most negative weights, contributions).
TOP = 8
#: Members of a Circles packing listed at most.
MAX_MEMBERS = 40

_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def _num(x) -> float | None:
    """A JSON number, or None where it is not finite (JSON has no NaN or infinity)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _nums(values) -> list:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        return _num(arr)  # type: ignore[return-value]
    return [_nums(v) if arr.ndim > 1 else _num(v) for v in arr]


def _order_label(q: float) -> str:
    return "∞" if np.isinf(q) else f"{q:g}"


def _image_src(payload: str, fmt: str) -> str:
    """A ``data:`` URL of a stored thumbnail, or "" when it is not what explain writes.

    PNGs are stored as base64 (checked here: a file read back could hold anything); SVG
    drawings as text, encoded here. An ``<img>`` never runs script from either.
    """
    if not payload:
        return ""
    if fmt == "png":
        return f"data:image/png;base64,{payload}" if _BASE64.match(payload) else ""
    if fmt == "svg":
        encoded = base64.b64encode(payload.encode("utf-8")).decode("ascii")
        return f"data:image/svg+xml;base64,{encoded}"
    return ""


def _set_witnesses(node) -> dict:
    ds = node.to_dataset() if hasattr(node, "to_dataset") else node
    n = int(ds.sizes["sample"])
    chosen: list[int] = []

    def take(indices) -> list[int]:
        out = [int(i) for i in indices]
        chosen.extend(out)
        return out

    out: dict = {
        "set": str(ds.attrs.get("set", "")),
        "index": int(ds.attrs.get("set_index", 0)),
        "n": n,
        "groups": int(ds["duplicate_group"].max()) + 1 if "duplicate_group" in ds else None,
        "witnesses": {},
    }
    if "magnitude_weight" in ds:
        w = ds["magnitude_weight"]
        values = np.asarray(w.values, dtype=np.float64)
        order = np.argsort(-values, kind="stable")
        top = take(order[:TOP])
        negative = np.flatnonzero(values < 0)
        worst = take(negative[np.argsort(values[negative], kind="stable")][:TOP])
        out["witnesses"]["magnitude"] = {
            "kind": "weights",
            "at": float(w.attrs["t"]),
            "total": _num(w.attrs.get("magnitude", values.sum())),
            "stored": _num(w.attrs["stored_magnitude"]) if "stored_magnitude" in w.attrs else None,
            "top": [{"i": i, "weight": _num(values[i])} for i in top],
            "negative": [{"i": i, "weight": _num(values[i])} for i in worst],
            "n_negative": int(negative.size),
        }
    if "circles_member" in ds:
        c = ds["circles_member"]
        members = np.flatnonzero(np.asarray(c.values))
        out["witnesses"]["circles"] = {
            "kind": "packing",
            "at": float(c.attrs["tau"]),
            "method": str(c.attrs.get("method", "greedy")),
            "size": int(c.attrs.get("size", members.size)),
            "stored_lower": int(c.attrs["stored_lower"]) if "stored_lower" in c.attrs else None,
            "stored_upper": int(c.attrs["stored_upper"]) if "stored_upper" in c.attrs else None,
            "members": take(members[:MAX_MEMBERS]),
        }
    if "vendi_share" in ds:
        loading = np.asarray(ds["vendi_loading"].values, dtype=np.float64)
        tops = np.asarray(ds["vendi_top"].values)
        modes = [
            {
                "share": _num(share),
                "samples": [{"i": i, "loading": _num(loading[m, i])} for i in take(tops[m])],
            }
            for m, share in enumerate(ds["vendi_share"].values)
        ]
        contrib = np.asarray(ds["vendi_contribution"].values, dtype=np.float64)
        best = take(np.argsort(-contrib, kind="stable")[:TOP])
        out["witnesses"]["vendi"] = {
            "kind": "modes",
            "entropy": _num(ds["vendi_contribution"].attrs.get("entropy", contrib.sum())),
            "modes": modes,
            "top_contribution": [{"i": i, "contribution": _num(contrib[i])} for i in best],
        }
    if "nn_distance" in ds:
        d = np.asarray(ds["nn_distance"].values, dtype=np.float64)
        j = np.asarray(ds["nn_index"].values)
        closest = take(np.argsort(d, kind="stable")[:TOP])
        take(j[closest])
        out["nearest"] = [{"i": i, "j": int(j[i]), "distance": _num(d[i])} for i in closest]
    else:
        out["nearest"] = []
    text = ds["display_text"].values if "display_text" in ds else None
    image = ds["display_image"].values if "display_image" in ds else None
    cut = ds["display_truncated"].values if "display_truncated" in ds else None
    meta = ds["display_text"].attrs if text is not None else {}
    out["kind"] = str(meta.get("kind", "none"))
    fmt = str(meta.get("image_format", ""))
    samples = []
    for i in sorted(set(chosen)):
        samples.append(
            {
                "i": i,
                "text": "" if text is None else str(text[i]),
                "image": "" if image is None else _image_src(str(image[i]), fmt),
                "truncated": bool(cut[i]) if cut is not None else False,
                "nn_distance": _num(ds["nn_distance"].values[i]) if "nn_distance" in ds else None,
                "group": int(ds["duplicate_group"].values[i]) if "duplicate_group" in ds else None,
                "category": str(ds["category"].values[i]) if "category" in ds else None,
            }
        )
    out["samples"] = samples
    return out


def _concentration(ds, prefix: str = "", k: int | None = None) -> dict:
    keys = (
        "min_positive_distance",
        "max_distance",
        "mean_distance",
        "relative_contrast",
        "coefficient_of_variation",
    )
    return {
        key: _num(ds[prefix + key].values if k is None else ds[prefix + key].values[k])
        for key in keys
    }


#: How a family's slider lies on the distance axis, by ``domain_mapping``.
_SLIDER = {"tau directly": "direct", "1/t": "inverse"}


def _distances(ds, sets: list[str]) -> dict:
    return {
        "bin_lower": _nums(ds["bin_lower"].values),
        "bin_upper": _nums(ds["bin_upper"].values),
        "pooled_count": [int(c) for c in ds["pooled_count"].values],
        "count": [[int(c) for c in row] for row in ds["count"].values],
        "pooled": _concentration(ds, "pooled_"),
        "per_set": [_concentration(ds, "", k) for k in range(len(sets))],
        "domains": [
            {
                "family": str(f),
                "lower": _num(lo),
                "upper": _num(hi),
                "mapping": str(how),
                "slider": _SLIDER.get(str(how), "none"),
            }
            for f, lo, hi, how in zip(
                ds["family"].values,
                ds["domain_lower"].values,
                ds["domain_upper"].values,
                ds["domain_mapping"].values,
                strict=True,
            )
        ],
    }


def _categories(node) -> dict:
    from ..explanation import SUBCOMMUNITY
    from ..pipeline import FAMILIES

    ds = node.to_dataset() if hasattr(node, "to_dataset") else node
    names = [str(c) for c in ds["category"].values]
    scalar = {}
    swept = []
    for name, fam in FAMILIES.items():
        if name not in ds:
            continue
        if fam.parameter is None:
            scalar[name] = _nums(ds[name].values)
        else:
            swept.append(
                {
                    "family": name,
                    "parameter": fam.parameter,
                    "grid": _nums(ds[fam.parameter].values),
                    "values": _nums(ds[name].values),
                }
            )
    parts = {key: _nums(ds[key].values) for key in ("alpha", "beta", "gamma") if key in ds}
    meta = {key: _nums(ds[f"meta_{key}"].values) for key in ("alpha", "beta", "gamma")}
    assert set(SUBCOMMUNITY) >= set(parts)
    return {
        "set": str(ds.attrs.get("set", "")),
        "categories": names,
        "size": [int(s) for s in ds["category_size"].values],
        "orders": [_order_label(q) for q in ds["order"].values],
        "partition": parts,
        "meta": meta,
        "similarity": str(ds["gamma"].attrs.get("similarity", "")) if "gamma" in ds else "",
        "scalar": scalar,
        "swept": swept,
    }


def _convergence(ds, sets: list[str]) -> dict | None:
    from ..pipeline import FAMILIES

    if "size" not in ds.dims:
        return None
    stored = [str(s) for s in ds["set"].values]
    kept = [s for s in sets if s in stored]
    order = [stored.index(s) for s in kept]
    families = []
    for name, fam in FAMILIES.items():
        if f"{name}_mean" not in ds:
            continue
        mean = np.asarray(ds[f"{name}_mean"].values, dtype=np.float64)[order]
        sd = np.asarray(ds[f"{name}_sd"].values, dtype=np.float64)[order]
        if fam.parameter is None:
            mean, sd = mean[..., None], sd[..., None]
        families.append(
            {
                "family": name,
                "parameter": fam.parameter,
                "grid": [] if fam.parameter is None else _nums(ds[fam.parameter].values),
                "mean": _nums(mean),
                "sd": _nums(sd),
                "estimate": str(ds[f"{name}_mean"].attrs.get("estimate", "mean over repeats")),
            }
        )
    return {
        "sizes": [int(m) for m in ds["size"].values],
        "repeats": int(ds.sizes.get("repeat", 1)),
        "sets": kept,
        "subsampling": str(ds.attrs.get("subsampling", "")),
        "families": families,
    }


def explanation_payload(tree, condition: str) -> dict:
    """The ``explanation`` the explorer draws for one condition; ``{}`` if none is stored.

    Examples
    --------
    >>> import diversity_profiles as dp
    >>> sets = {"A": [[0.], [1.], [2.5]], "B": [[0.], [2.], [5.]]}
    >>> tree = dp.profiles(sets, representation="x", distance="euclidean",
    ...                    families=["circles"], domains={"circles": [0.5, 1.5, 2.5]})
    >>> explanation_payload(tree, "x/euclidean")
    {}
    >>> out = explanation_payload(dp.explain(tree, sets, tau=1.5), "x/euclidean")
    >>> packing = out["sets"][0]["witnesses"]["circles"]
    >>> packing["members"], packing["method"]
    ([0, 2], 'exact')
    """
    node = tree[condition]
    children = node.children
    if not any(k in children for k in ("samples", "distances", "categories", "convergence")):
        return {}
    sets = [str(s) for s in node["set"].values]
    witnesses = []
    if "samples" in children:
        for key in sorted(children["samples"].children, key=lambda s: int(s.split("_")[-1])):
            witnesses.append(_set_witnesses(children["samples"][key]))
    categories = []
    if "categories" in children:
        for key in sorted(children["categories"].children, key=lambda s: int(s.split("_")[-1])):
            entry = _categories(children["categories"][key])
            entry["index"] = int(key.split("_")[-1])
            categories.append(entry)
    return {
        "version": 1,
        "witness_kinds": witness_kinds(),
        "sets": witnesses,
        "distances": _distances(children["distances"].to_dataset(), sets)
        if "distances" in children
        else None,
        "categories": categories,
        "convergence": _convergence(children["convergence"].to_dataset(), sets)
        if "convergence" in children
        else None,
    }


#: Families whose witness depends on the parameter (and can be found again at another one).
SWEPT_WITNESSES = {"magnitude": "t", "circles": "tau"}

#: The families with witnesses, in the view's order: how each is shown and its label.
#: Richness's witnesses are the ``nearest`` samples every set carries.
WITNESS_KINDS = {
    "vendi": ("modes", "Vendi modes"),
    "magnitude": ("weights", "Magnitude weights"),
    "circles": ("packing", "Circles packing"),
    "richness": ("nearest", "Nearest samples (richness)"),
}


def witness_kinds() -> dict:
    """What the view needs to show each family's witnesses (so js/ names no family):
    the panel ``kind``, its ``title``, the parameter's ``symbol`` and name, whether the
    profile is a ``step`` function, and whether the witness is ``swept`` (found again at
    another grid point by :func:`witnesses_at`)."""
    from ..pipeline import FAMILIES

    out = {}
    for name, (kind, title) in WITNESS_KINDS.items():
        shown = FAMILIES[name].display()
        out[name] = {
            "kind": kind,
            "title": title,
            "symbol": shown["symbol"],
            "parameter": shown["parameter"],
            "step": bool(shown["step"]),
            "swept": name in SWEPT_WITNESSES,
        }
    return out


def witnesses_at(
    tree, condition: str, explanation: dict, family: str, value, cond=None
) -> tuple[dict, str]:
    """The explanation with ``family``'s witnesses found again at the grid point nearest
    ``value``, from the prepared condition ``cond`` (a :class:`~.Profiler`'s, held by the
    live explorer). Returns the new explanation and "" , or the old one and why it was kept.

    The witnesses are those :func:`explain` stores (the same solve and packing search);
    the tree is not changed.
    """
    from ..explanation import packing_on_checked, weights_on_checked
    from ..families import AUTO_TIME_LIMIT

    param = SWEPT_WITNESSES.get(family)
    node = tree[condition]
    if param is None or "samples" not in node.children or not explanation:
        return explanation, f"{family!r} has no witness that depends on its parameter."
    ds = node.to_dataset()
    if cond is None or param not in ds.coords:
        return explanation, (
            "No profiler stands behind this view, so the matrices behind these profiles are "
            "not in memory: pass ProfileExplorer(tree, profiler=...) with the dp.Profiler "
            f"that computed them, or run dp.explain(tree, sets, {param}=...) for witnesses at "
            f"another {param}."
        )
    grid = ds[param].values
    try:
        at = float(grid[np.argmin(np.abs(grid - float(value)))])
    except (TypeError, ValueError):
        return explanation, f"{value!r} is not a value of {param}."
    proved = int(ds["circles"].attrs.get("exact", 0)) == 1 if "circles" in ds else False
    method = "exact" if proved else "auto"
    sets = []
    for k, item in enumerate(cond.sets):
        witness = node["samples"][f"set_{k}"].to_dataset()
        attrs: dict[str, object]
        if family == "magnitude":
            w = weights_on_checked(item.D, at)
            attrs = {"t": at, "magnitude": float(w.sum())}
            if "magnitude" in ds:
                attrs["stored_magnitude"] = float(ds["magnitude"].sel(t=at).values[k])
            witness["magnitude_weight"] = ("sample", w, attrs)
        else:
            limit = 60.0 if method == "exact" else AUTO_TIME_LIMIT
            mask, how = packing_on_checked(item.D, at, grid[grid >= at], method, cond.seed, limit)
            attrs = {"tau": at, "method": how, "size": int(mask.sum())}
            if "circles" in ds:
                attrs["stored_lower"] = int(ds["circles"].sel(tau=at).values[k])
                attrs["stored_upper"] = int(ds["circles_upper"].sel(tau=at).values[k])
            witness["circles_member"] = ("sample", mask.astype(np.int8), attrs)
        sets.append(_set_witnesses(witness))
    return {**explanation, "sets": sets}, ""
