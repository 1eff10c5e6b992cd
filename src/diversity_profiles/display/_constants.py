"""What the display layer's Python and TypeScript sides must agree on, stated once.

The palette and the MIME type are read by the view as well: ``scripts/constants_ts.py``
writes them (with the verdict's defaults from :mod:`..comparison._verdict`) into
``js/constants.ts``, and the test suite fails while that file is stale. Edit them here,
then rerun ``python scripts/constants_ts.py``.
"""

from __future__ import annotations

from pathlib import Path

#: Colours of the sets, in order: Okabe–Ito, distinguishable with the common
#: colour-vision deficiencies. Charts with more sets fall back to a 20-colour scheme.
PALETTE: tuple[str, ...] = (
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
)  # fmt: skip

#: Carried by every explorer display; drawn by the JupyterLab extension with no kernel.
MIME_TYPE = "application/vnd.diversity-profiles.explorer+json"

#: The explorer's JavaScript (built by ``npm run build``; the widget and the report load it).
BUNDLE = Path(__file__).parents[1] / "static" / "widget.js"
