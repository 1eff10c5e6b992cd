"""Self-contained interactive reports: one HTML file that works offline, anywhere.

The file inlines the explorer's bundle (Vega included), the condition's curves,
the static charts as SVG and the summary; nothing is loaded from the network.
The explorer runs from the same in-page model as the JupyterLab extension
(``js/standalone.ts``), so sliders and verdicts work without a kernel.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..core import script_json
from ..files import GENERATOR_META, check_output, write_atomic
from ..pipeline import FAMILIES, conditions_of
from ._constants import BUNDLE
from ._payload import permutation_nodes
from ._static import static_view

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{generator}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
:root {{ color-scheme: light dark; }}  /* the reader's light or dark preference */
body {{ font: 14px system-ui, sans-serif; margin: 24px; color: CanvasText; background: Canvas; }}
table.dp-condition td {{ padding: 2px 12px 2px 0; vertical-align: top; }}
pre.dp-summary-text {{ white-space: pre-wrap; }}
details {{ margin: 16px 0; }}
/* The page's title names the condition: the explorer's own heading would repeat it. */
#explorer .dp-explorer > h3 {{ display: none; }}
</style></head>
<body>
<h1>{title}</h1>
<div id="explorer"></div>
<details class="dp-facts"><summary>Condition, sample sizes and settings</summary>
<table class="dp-condition">{condition_rows}</table></details>
<details class="dp-text"><summary>Summary of the full domains, as text</summary>
<pre class="dp-summary-text">{summary}</pre></details>
<details><summary>Static charts</summary>{svg}</details>
<script type="module">
const bundle = {bundle};
const payload = {payload};
const url = URL.createObjectURL(new Blob([bundle], {{ type: "text/javascript" }}));
const {{ mountStandalone }} = await import(url);
mountStandalone(document.getElementById("explorer"), payload);
window.__dpReady = true;
</script>
</body></html>
"""


def report(
    tree,
    path,
    *,
    condition: str | None = None,
    overwrite: bool = False,
    title: str | None = None,
    permutation=None,
) -> Path:
    """Write an interactive, offline HTML report of one condition of a profile tree.

    Parameters
    ----------
    tree : xarray.DataTree
        A result of :func:`profiles`.
    path : str or pathlib.Path
        Where to write the ``.html`` file.
    condition : str, optional
        Which condition; the first one by default.
    overwrite : bool, default False
        Replace an existing report written by this package. Without it an existing file
        is never touched; with it, any other file (one without our generator mark) is
        still refused with ValueError. The page is written beside ``path`` and renamed
        into place, so an interrupted write leaves nothing behind.
    title : str, optional
        The page's title.
    permutation : xarray.DataTree, optional
        The result of :func:`permutation_test` for this condition. The summary then
        reports its p-values, and when two sets are highlighted each family's panel draws
        their difference against the chance envelope (what relabelling the pooled samples
        alone produces), with the pair's Holm-adjusted p-value.
        Default: the test ``profiles(..., permutations=R)`` stored in ``tree``, if any.

    Returns
    -------
    pathlib.Path
        The file written.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import diversity_profiles as dp
    >>> tree = dp.profiles({"A": [[1.], [2.], [3.]], "B": [[0.], [4.]]},
    ...                    representation="line", distance="euclidean",
    ...                    families=["richness", "average_distance"])
    >>> page = dp.report(tree, pathlib.Path(tempfile.mkdtemp()) / "line.html",
    ...                  title="Two sets on a line")
    >>> page.suffix, "Two sets on a line" in page.read_text()
    ('.html', True)
    """
    path = check_output(path, kind="html", overwrite=overwrite)
    paths = conditions_of(tree)
    condition = condition or paths[0]
    if condition not in paths:
        raise ValueError(
            f"The 'condition' argument of report must be one of {paths}. Got {condition!r}."
        )
    tested = permutation_nodes(permutation, tree, [condition], "report")
    ds = tree[condition].to_dataset()
    rows = [("condition", condition)]
    rows += [(k, str(v)) for k, v in ds.attrs.items()]
    rows += [
        (
            "n per set",
            ", ".join(
                f"{s}: {int(n)}"
                for s, n in zip(ds["set"].values, ds["n_samples"].values, strict=True)
            ),
        )
    ]
    for dim in dict.fromkeys(f.parameter for f in FAMILIES.values() if f.parameter):
        if dim in ds.coords:
            grid = ds[dim].values
            rows.append(
                (
                    f"domain of {dim}",
                    f"{grid.min():.4g} … {grid.max():.4g} "
                    f"({grid.size} points): {ds[dim].attrs.get('domain', '')}",
                )
            )
    if condition in tested:
        test = tested[condition]
        rows.append(
            (
                "permutation test",
                f"{int(test.attrs.get('n_permutations', 0))} relabellings per pair; "
                f"{test.attrs.get('p_holm', 'Holm-adjusted p-values')}",
            )
        )
    # One compare for the chart, the summary and the payload (display/_static.py); the
    # page's explorer carries this condition only.
    view = static_view(tree, condition, conditions=[condition], permutation=permutation)
    condition_rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows
    )
    page = _PAGE.format(
        generator=GENERATOR_META,
        title=html.escape(title or f"Diversity profiles — {condition}"),
        condition_rows=condition_rows,
        # Plain text (not Markdown-escaped): the <pre> shows it HTML-escaped, as written.
        summary=html.escape(view.text),
        svg=view.svg,
        # Neither '</script>' nor '<!--<script>' in a label can end or derail the script.
        bundle=script_json(BUNDLE.read_text()),
        payload=script_json(view.payload),
    )
    return write_atomic(
        path, lambda p: p.write_text(page, encoding="utf-8"), kind="html", overwrite=overwrite
    )
