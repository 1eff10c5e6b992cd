"""Sharing notebooks: execute with widget state, export HTML that works offline, clean metadata.

JupyterLab does not save widget state by default and nbconvert's HTML loads
require.js, the widget manager and anywidget from CDNs; GitHub rejects notebooks
whose ``metadata.widgets`` lacks its ``state``. These helpers fix all three.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import anywidget

from .escaping import script_safe

_SHARE = Path(__file__).parent / "static" / "share"
_STATE_KEY = "application/vnd.jupyter.widget-state+json"


def refuse_overwrite(path: Path, overwrite: bool) -> None:
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} already exists; pass overwrite=True to replace it.")


def execute_notebook(
    path, output=None, *, overwrite: bool = False, timeout: int = 600, kernel_name: str = "python3"
) -> Path:
    """Run every cell and save the notebook with its widget state stored.

    ``output`` defaults to ``<name>.executed.ipynb`` beside the input, which is
    never modified.
    """
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    output = Path(output) if output else path.with_suffix(".executed.ipynb")
    refuse_overwrite(output, overwrite)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=timeout,
        store_widget_state=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nbformat.write(nb, output)
    return output


def export_html(notebook, html_path, *, overwrite: bool = False) -> Path:
    """Export an executed notebook to HTML whose widgets render with no network.

    require.js, the widget manager, anywidget and MathJax (for LaTeX in Markdown
    cells, in a ``mathjax/`` folder) are copied next to the HTML file (they ship with
    this package) instead of being loaded from CDNs, so the page makes no request
    outside its folder.
    """
    import nbformat
    from nbconvert import HTMLExporter

    from ._io import GENERATOR_META, check_output, write_atomic

    # overwrite=True replaces only a page this function wrote (it carries our generator
    # mark); the page is written beside html_path and renamed into place.
    html_path = check_output(html_path, kind="html", overwrite=overwrite)
    nb = nbformat.read(notebook, as_version=4) if not hasattr(notebook, "cells") else notebook
    exporter = HTMLExporter(
        require_js_url="require.js",
        widget_renderer_url="embed-amd.js",
        mathjax_url="mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
        # nbconvert's own filter only escapes '/', so a label '<!--<script>' in the
        # widget state would leave its <script> element open and break the page.
        filters={"escape_html_script": script_safe},
    )
    body, _ = exporter.from_notebook_node(nb)
    body = re.sub(r"<head>", "<head>\n" + GENERATOR_META, body, count=1, flags=re.IGNORECASE)
    write_atomic(
        html_path, lambda p: p.write_text(body, encoding="utf-8"), kind="html", overwrite=overwrite
    )
    folder = html_path.parent
    for item in _SHARE.iterdir():
        if item.is_dir():
            shutil.copytree(item, folder / item.name, dirs_exist_ok=True)
        else:
            shutil.copy(item, folder / item.name)
    shutil.copy(
        Path(anywidget.__file__).parent / "nbextension" / "index.js", folder / "anywidget.js"
    )
    return html_path


def clean_widget_metadata(path) -> bool:
    """Make a notebook acceptable to GitHub: drop ``metadata.widgets`` without a state.

    Returns True if the file was changed.
    """
    import nbformat

    nb = nbformat.read(path, as_version=4)
    widgets = nb.metadata.get("widgets")
    if widgets is None:
        return False
    state = widgets.get(_STATE_KEY, {})
    if isinstance(state, dict) and "state" in state:
        return False
    del nb.metadata["widgets"]
    nbformat.write(nb, path)
    return True
