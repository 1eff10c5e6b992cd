"""What the display layer's Python and TypeScript sides must agree on, stated once.

The palette and the MIME type are read by the view as well: ``scripts/constants_ts.py``
writes them (with the verdict's defaults from :mod:`..comparison._verdict`) into
``js/constants.ts``, and the test suite fails while that file is stale. Edit them here,
then rerun ``python scripts/constants_ts.py``.
"""

from __future__ import annotations

from pathlib import Path

#: Colours of the sets, in order: 12 colours with at least 3:1 contrast on white and on
#: JupyterLab Dark's #111, kept apart under protan and deutan vision, the first ones the
#: most distinct (chosen by ``scripts/palette.py``). More sets than colours reuse them.
PALETTE: tuple[str, ...] = (
    "#2773C0", "#F6600C", "#B91C72", "#39A678", "#964D0C", "#9F7CF9",
    "#8D80A7", "#875297", "#C64948", "#6C60E9", "#959447", "#3D98D1",
)  # fmt: skip

#: Carried by every explorer display; drawn by the JupyterLab extension with no kernel.
MIME_TYPE = "application/vnd.diversity-profiles.explorer+json"

#: The explorer's JavaScript (built by ``npm run build``; the widget and the report load it).
BUNDLE = Path(__file__).parents[1] / "static" / "widget.js"
