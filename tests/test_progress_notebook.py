"""A saved notebook keeps no widget view for a finished progress bar.

A real notebook is executed with nbclient (widget state stored, as JupyterLab saves
it), with a bootstrap long enough to show its progress bar, and saved. Before the fix
each bar stayed as an ipywidget view that shows "Loading widget..." when the notebook
is reopened without a kernel; now its output is one plain line saying what finished.
"""

import re

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

SOURCE = """\
import diversity_profiles.core._budget as budget
budget.PROGRESS_AFTER_S = -1.0  # every repeated job shows its bar, however short
import diversity_profiles as dp
tree = dp.profiles({"A": [[0.0], [1.0], [2.0], [3.0]], "B": [[0.0], [0.5], [4.0]]},
                   representation="line", distance="euclidean", n_points=8, n_boot=6)
print("done")
"""


def test_saved_notebook_holds_text_where_the_progress_bars_were(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SOURCE)])
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert [o for o in outputs if o.output_type == "error"] == []
    assert not [o for o in outputs if WIDGET_VIEW in o.get("data", {})], outputs
    lines = [o.data["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    # one finished line per set's resampling, with the count and the time taken
    pattern = re.compile(r"^resampling set (\d)/2: 6/6 batches in \d+\.\d s$")
    assert sorted(pattern.match(line).group(1) for line in lines) == ["1", "2"], lines
    assert "done" in "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
