"""Sharing notebooks: execute with widget state, export HTML that works offline, clean metadata.

JupyterLab does not save widget state by default and nbconvert's HTML loads
require.js, the widget manager and anywidget from CDNs; GitHub rejects notebooks
whose ``metadata.widgets`` lacks its ``state``. These helpers fix all three.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
from functools import partial
from pathlib import Path

import anywidget

from .._version import __version__
from ..core import script_safe

_SHARE = Path(__file__).parents[1] / "static" / "share"
_STATE_KEY = "application/vnd.jupyter.widget-state+json"


def execute_notebook(
    path, output=None, *, overwrite: bool = False, timeout: int = 600, kernel_name: str = "python3"
) -> Path:
    """Run every cell and save the notebook with its widget state stored.

    ``output`` defaults to ``<name>.executed.ipynb`` beside the input, which is
    never modified. The notebook is written beside ``output`` and renamed into place;
    ``overwrite=True`` replaces only a notebook this function saved (its metadata
    carries ``diversity_profiles_executed``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    >>> nbformat.write(nb, folder / "tiny.ipynb")
    >>> done = execute_notebook(folder / "tiny.ipynb")
    >>> done.name, nbformat.read(done, as_version=4).cells[0].outputs[0]["data"]["text/plain"]
    ('tiny.executed.ipynb', '2')
    """
    import nbformat
    from nbclient import NotebookClient

    from ..files import NOTEBOOK_MARK, check_output, write_atomic

    path = Path(path)
    output = Path(output) if output else path.with_suffix(".executed.ipynb")
    output = check_output(output, kind="notebook", overwrite=overwrite, inputs=[path])
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        kernel_name=kernel_name,
        timeout=timeout,
        store_widget_state=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    nb.metadata[NOTEBOOK_MARK] = __version__
    return write_atomic(
        output, lambda p: nbformat.write(nb, p), kind="notebook", overwrite=overwrite
    )


def _side_files(folder: Path) -> list[tuple[Path, Path]]:
    """(source, destination) of every file the exported page loads from its folder."""
    pairs = [
        (item, folder / item.relative_to(_SHARE)) for item in _SHARE.rglob("*") if item.is_file()
    ]
    amd = Path(anywidget.__file__).parent / "nbextension" / "index.js"
    pairs.append((amd, folder / "anywidget.js"))
    return pairs


def _check_side_files(pairs: list[tuple[Path, Path]]) -> None:
    """Refuse, before writing anything, to replace a file that is not byte-identical to ours.

    The page's scripts are this package's own files; an existing file of the same name
    with other content is someone else's (overwrite never replaces it).
    """
    for source, dest in pairs:
        if os.path.lexists(dest) and (
            dest.is_symlink() or not dest.is_file() or not filecmp.cmp(source, dest, shallow=False)
        ):
            raise FileExistsError(
                f"{dest}: exists and is not the file export_html would put there; export into "
                f"an empty folder, or remove or rename it yourself"
            )


def export_html(notebook, html_path, *, overwrite: bool = False) -> Path:
    """Export an executed notebook to HTML whose widgets render with no network.

    require.js, the widget manager, anywidget and MathJax (for LaTeX in Markdown
    cells, in a ``mathjax/`` folder) are copied next to the HTML file (they ship with
    this package) instead of being loaded from CDNs, so the page makes no request
    outside its folder. Those files are only ever added: one that exists with other
    content is refused before anything is written (identical ones are kept).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    >>> nbformat.write(nb, folder / "tiny.ipynb")
    >>> page = export_html(folder / "tiny.ipynb", folder / "tiny.html")
    >>> page.name, (folder / "require.js").exists()
    ('tiny.html', True)
    """
    import nbformat
    from nbconvert import HTMLExporter

    from ..files import GENERATOR_META, check_output, write_atomic

    # overwrite=True replaces only a page this function wrote (it carries our generator
    # mark); the page is written beside html_path and renamed into place.
    html_path = check_output(html_path, kind="html", overwrite=overwrite)
    side_files = _side_files(html_path.parent)
    _check_side_files(side_files)
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
    for source, dest in side_files:
        if dest.exists():  # identical (checked above): left as it is
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            write_atomic(dest, partial(shutil.copyfile, source), kind="html", overwrite=False)
        except FileExistsError:  # a concurrent export put it there: fine if it is ours
            _check_side_files([(source, dest)])
    return html_path


def clean_widget_metadata(path) -> bool:
    """Make a notebook acceptable to GitHub: drop ``metadata.widgets`` without a state.

    Returns True if the file was changed.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import nbformat
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    >>> nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    >>> nbformat.write(nb, folder / "tiny.ipynb")
    >>> clean_widget_metadata(folder / "tiny.ipynb"), clean_widget_metadata(folder / "tiny.ipynb")
    (True, False)
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


__all__ = ["clean_widget_metadata", "execute_notebook", "export_html"]
