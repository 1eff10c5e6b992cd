"""Build the documentation site: ``python docs/build.py`` (output: ``docs/_build/html``).

1. Executes the notebooks of ``notebooks/`` on a fresh kernel (or reuses an executed copy
   whose notebook and package source are unchanged), and turns each explorer output into
   a live, offline explorer for the page (see ``_ext/dp_docs.py``).
2. Runs Sphinx strictly: every warning is an error and every reference must resolve.

Options: ``--out DIR`` (default ``docs/_build/html``), ``--executed DIR`` (executed
notebooks to use instead of running them, as the test suite passes), ``--fresh`` (execute
even if a cached copy is current), ``--full`` (the large-n notebook at its full size
instead of the smaller one the tests run).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
EXAMPLES = DOCS / "examples"  # executed copies: read by Sphinx, ignored by git
CACHE = DOCS / "_build" / "executed"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def source_digest(notebook: Path) -> str:
    """What an executed copy depends on: the notebook, the package's source, the size flag."""
    digest = hashlib.sha256(notebook.read_bytes())
    for path in sorted((ROOT / "src" / "diversity_profiles").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    digest.update(os.environ.get("DP_NOTEBOOK_SMALL", "").encode())
    return digest.hexdigest()[:16]


def execute(notebook: Path, timeout: int = 900):
    """Run ``notebook`` with its siblings beside it (the sharing notebook runs the
    quickstart); raises nbclient's CellExecutionError naming the failing cell."""
    import nbformat
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="dp-docs-") as tmp:
        for sibling in NOTEBOOKS:
            shutil.copy(sibling, Path(tmp) / sibling.name)
        nb = nbformat.read(Path(tmp) / notebook.name, as_version=4)
        NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": tmp}}
        ).execute()
    return nb


def explorer_html(payload: dict, svg: str) -> str:
    """One explorer output of a page: the payload (JSON that no label can break out of),
    the place the live explorer mounts, and the static charts until it does."""
    from diversity_profiles.core import script_json

    return (
        '<div class="dp-docs-explorer">'
        f'<script type="application/json" class="dp-payload">{script_json(payload)}</script>'
        '<div class="dp-docs-live"></div>'
        '<div class="dp-docs-fallback">'
        '<p class="dp-docs-fallback-note">Static charts of the explorer (the live one needs '
        "JavaScript).</p>"
        f"{svg}</div></div>"
    )


def for_the_site(nb):
    """The executed notebook as a page shows it: explorers live, no widget state.

    ``svg`` in an output is the package's own vl-convert rendering; every label in the
    payload reaches the page through ``script_json`` and the explorer's textContent.
    """
    from diversity_profiles.display import MIME_TYPE

    nb.metadata.pop("widgets", None)  # nothing for a widget manager (and no CDN) to load
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            data = output.get("data")
            if not data:
                continue
            if MIME_TYPE in data:
                output["data"] = {
                    "text/html": explorer_html(data[MIME_TYPE], data.get("image/svg+xml", "")),
                    "text/plain": data.get("text/plain", "ProfileExplorer"),
                }
            else:
                data.pop(WIDGET_VIEW, None)  # a progress bar: its text form stays
                if not data:
                    output["data"] = {"text/plain": ""}
    return nb


def write_notebook(nb, path: Path) -> None:
    """Written beside ``path`` and renamed into place: an interrupted build leaves no
    half-written notebook for the next one to read."""
    import nbformat

    partial = path.with_name(f".{path.name}.partial")
    nbformat.write(nb, partial)
    os.replace(partial, path)


def prepare_notebooks(executed: Path | None, fresh: bool) -> None:
    """Write the pages' notebooks into docs/examples/, executing those not cached."""
    import nbformat

    EXAMPLES.mkdir(exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    for notebook in NOTEBOOKS:
        if executed is not None:
            nb = nbformat.read(executed / notebook.name, as_version=4)
            print(f"docs: {notebook.name}: executed copy from {executed}", flush=True)
        else:
            cached = CACHE / f"{notebook.stem}.{source_digest(notebook)}.ipynb"
            if cached.exists() and not fresh:
                nb = nbformat.read(cached, as_version=4)
                print(f"docs: {notebook.name}: unchanged since its last run, reused", flush=True)
            else:
                print(f"docs: {notebook.name}: executing…", flush=True)
                nb = execute(notebook)
                for old in CACHE.glob(f"{notebook.stem}.*.ipynb"):
                    old.unlink()
                write_notebook(nb, cached)
        write_notebook(for_the_site(nb), EXAMPLES / notebook.name)


def sphinx(out: Path) -> int:
    """Sphinx, strict: warnings are errors (all reported, then it fails), nitpicky refs,
    every page read afresh (-E: an incremental build would not repeat an unchanged
    page's warnings, and would keep pages made by an older version of _ext/)."""
    command = [
        sys.executable, "-m", "sphinx", "-E", "-b", "html", "-W", "--keep-going", "-n", "-q",
        "-d", str(DOCS / "_build" / "doctrees"), str(DOCS), str(out),
    ]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS / "_build" / "html")
    parser.add_argument("--executed", type=Path, default=None)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args(argv)
    os.environ["HF_HUB_OFFLINE"] = "1"  # models load from local packages, never a hub
    if not args.full:
        os.environ["DP_NOTEBOOK_SMALL"] = "1"
    prepare_notebooks(args.executed, args.fresh)
    code = sphinx(args.out)
    print(f"docs: {'built' if code == 0 else 'FAILED'}: {args.out / 'index.html'}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
