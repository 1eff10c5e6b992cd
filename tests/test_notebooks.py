"""The notebooks in notebooks/ run end to end on a fresh kernel, and git holds them clean.

Each notebook is copied with its siblings into a temporary folder (the sharing
notebook executes the quickstart) and executed with nbclient, once for the whole suite
(the ``executed_notebooks`` fixture, which the docs-site build reuses); any error fails
the test with the cell that raised. In git they carry no outputs, execution counts or
widget metadata, so diffs stay readable and GitHub renders them.
"""

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9]*.ipynb"))


def test_the_notebooks_are_there():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {k} of {path.name} has outputs; strip them"
            assert cell.execution_count is None, f"cell {k} of {path.name} has a count"
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_end_to_end(path, executed_notebooks):
    # Executed once for the whole suite (conftest.py), as the docs build executes them.
    result = executed_notebooks[path.name]
    if isinstance(result, Exception):
        raise result  # CellExecutionError names the failing cell
    nb = nbformat.read(result, as_version=4)
    errors = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "error"
    ]
    assert errors == []
    assert all(cell.execution_count for cell in nb.cells if cell.cell_type == "code")
