"""The documentation's own Sphinx extension: offline math, live explorers, the CLI reference.

- **Math as MathML.** ``$...$`` and ``$$...$$`` are converted at build time by docutils'
  LaTeX-to-MathML translator, which browsers draw natively: no MathJax, nothing fetched.
- **Live explorers.** ``docs/build.py`` turns each explorer output of an executed notebook
  into a ``<div class="dp-docs-explorer">`` holding its standalone payload (the same one the
  HTML report and the JupyterLab extension draw) and the static SVG as a fallback. Pages
  that contain one load the package's own bundle from ``_static`` and mount an explorer
  in each: sliders move and verdicts update with no kernel and no network.
- **The CLI reference.** ``{dp-cli}`` prints ``diversity-profiles --help`` and each
  subcommand's help, as the installed program prints them.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from docutils import nodes
from docutils.utils.math import MathError
from docutils.utils.math.latex2mathml import tex2mathml
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

LOGGER = logging.getLogger(__name__)

#: The class of an explorer output on a page (written by docs/build.py).
EXPLORER_CLASS = "dp-docs-explorer"
#: The package's explorer bundle, served from the site's own _static folder.
BUNDLE_FILE = "dp-explorer-bundle.js"
MOUNT_FILE = "dp-docs.js"


# --- MathML ------------------------------------------------------------------------------
def _mathml(translator, node, *, block: bool) -> str:
    latex = node.astext()
    try:
        return tex2mathml(latex, as_block=block)
    except (MathError, SyntaxError) as exc:  # the strict build turns this into a failure
        LOGGER.warning("cannot write %r as MathML: %s", latex, exc, location=node)
        return f"<code>{translator.encode(latex)}</code>"


def _visit_math(translator, node) -> None:
    translator.body.append(_mathml(translator, node, block=False))
    raise nodes.SkipNode


def _visit_math_block(translator, node) -> None:
    translator.body.append(f'<div class="math-block">{_mathml(translator, node, block=True)}</div>')
    raise nodes.SkipNode


# --- explorers ------------------------------------------------------------------------------
def _write_bundle(app: Sphinx, exception: Exception | None) -> None:
    """Put the explorer's bundle beside the pages, as a classic script (file:// too)."""
    if exception is not None or app.builder.format != "html":
        return
    from diversity_profiles.core import script_json
    from diversity_profiles.display import BUNDLE

    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    # A string, not a module: a page opened from disk may run a classic <script src>
    # but not import a module from file://; the page imports it from a Blob URL.
    text = f"window.__dpExplorerBundle = {script_json(BUNDLE.read_text(encoding='utf-8'))};\n"
    (static / BUNDLE_FILE).write_text(text, encoding="utf-8")


def _add_explorer_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Only pages that show an explorer load the bundle (about a megabyte)."""
    if EXPLORER_CLASS in context.get("body", ""):
        app.add_js_file(BUNDLE_FILE)
        app.add_js_file(MOUNT_FILE, loading_method="defer")


# --- the CLI ---------------------------------------------------------------------------------
class CliDirective(SphinxDirective):
    """Every subcommand's ``--help``, as the program prints it (88 columns)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from diversity_profiles.cli import parser

        main = parser()
        commands = [None, *_subcommands(main)]
        out: list[nodes.Node] = []
        for command in commands:
            text = _help(command)
            title = "diversity-profiles" if command is None else f"diversity-profiles {command}"
            section = nodes.section(ids=[nodes.make_id(f"cli-{command or 'main'}")])
            section += nodes.title(text=title)
            section += nodes.literal_block(text, text, language="text")
            out.append(section)
        return out


def _subcommands(main) -> list[str]:
    """The subcommands, read from the parser's usage line ("{compute,summary,...}")."""
    usage = main.format_usage()
    inside = usage[usage.index("{") + 1 : usage.index("}")]
    return inside.split(",")


def _help(command: str | None) -> str:
    from diversity_profiles.cli import parser

    buffer = io.StringIO()
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
            parser().parse_args(["--help"] if command is None else [command, "--help"])
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous
    return buffer.getvalue().rstrip()


def setup(app: Sphinx) -> dict:
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(_visit_math, None),
        block_renderers=(_visit_math_block, None),
    )
    app.connect("html-page-context", _add_explorer_scripts)
    app.connect("build-finished", _write_bundle)
    app.add_directive("dp-cli", CliDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
