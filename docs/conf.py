"""Sphinx configuration of the diversity-profiles documentation (see docs/README.md).

Built by ``python docs/build.py``: strict (every warning is an error, every internal
reference must resolve) and offline (no extension, theme or page loads anything from the
network: math is MathML, explorers run from the package's own bundle).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import diversity_profiles  # noqa: E402

project = "diversity-profiles"
author = "diversity-profiles developers"
copyright = "2026, diversity-profiles developers"
release = diversity_profiles.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_nb",
    "sphinx_autosummary_accessors",  # tree.dp.<method> pages
    "dp_docs",  # _ext/dp_docs.py: MathML math, live explorers, the CLI reference
]

exclude_patterns = ["_build", "README.md", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
import sphinx_autosummary_accessors  # noqa: E402

templates_path = ["_templates", sphinx_autosummary_accessors.templates_path]
html_static_path = ["_static"]
html_math_renderer = "mathml"  # _ext/dp_docs.py: drawn by the browser, nothing fetched
html_css_files = ["dp-docs.css"]

# --- strict: a reference that does not resolve is a warning, and warnings are errors -----
nitpicky = True
# Private modules are named in docstrings to say where something lives, not to link to it;
# Python's and third-party types are not linked (no intersphinx: the build is offline).
nitpick_ignore_regex = [
    (r"py:.*", r".*\._[a-z].*"),  # diversity_profiles.pipeline._plan.Plan and the like
    (r"py:.*", r"(anywidget|traitlets|ipywidgets|xarray|numpy|scipy|pandas|altair|dask|torch)\b.*"),
]
suppress_warnings: list[str] = []

# --- API reference from the numpydoc docstrings -------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the numpydoc "Parameters" sections say the types, in words
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()
add_module_names = False

# --- pages in Markdown, notebooks with their stored outputs -------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # docs/build.py executes them (once) before Sphinx reads them
nb_output_stderr = "remove"  # progress bars; the pages show results
nb_merge_streams = True
nb_render_markdown_format = "myst"

# --- theme ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "diversity-profiles"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "auto"}  # the reader's light or dark preference
html_show_sourcelink = False
