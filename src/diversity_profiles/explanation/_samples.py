"""What to show for each sample: short text, a PNG thumbnail or a molecule drawing.

Payloads are plain strings so they survive netCDF, zarr and the offline report:
``display_text`` (text, SMILES or a label, cut to :data:`MAX_TEXT` characters) and
``display_image`` (a base64 PNG, or an SVG document drawn by RDKit; ``""`` when
there is none). Both are untrusted content: a page must escape the text and show
images only through ``<img src="data:...">``, never inline them into its markup.
"""

from __future__ import annotations

import base64
import io

import numpy as np

#: Characters of text kept for display (the rest is cut and marked with "…").
MAX_TEXT = 280
#: Largest side of an image thumbnail, in pixels.
THUMBNAIL = 48
KINDS = ("auto", "text", "image", "smiles", "label")


def _truncate(value: object) -> tuple[str, bool]:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    text = text.replace("\x00", "\ufffd")  # NUL cannot be stored in netCDF strings
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates either
    if len(text) <= MAX_TEXT:
        return text, False
    return text[: MAX_TEXT - 1] + "…", True


def _png_base64(image: np.ndarray) -> str:
    """A thumbnail (longest side THUMBNAIL px) of one image array, as base64 PNG."""
    from PIL import Image

    arr = np.asarray(image)
    if arr.dtype.kind == "f" or arr.max(initial=0) > 255 or arr.min(initial=0) < 0:
        lo, hi = float(arr.min()), float(arr.max())
        arr = (arr - lo) / (hi - lo if hi > lo else 1.0) * 255.0  # contrast of the image itself
    arr = np.clip(np.rint(arr), 0, 255).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    img = Image.fromarray(arr)
    img.thumbnail((THUMBNAIL, THUMBNAIL), Image.Resampling.NEAREST)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _svg(smiles: str) -> str:
    """RDKit's drawing of a SMILES as SVG, or "" when RDKit is missing or cannot parse it."""
    try:
        from rdkit import Chem, RDLogger
        from rdkit.Chem.Draw import rdMolDraw2D
    except ImportError:
        return ""
    RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]  # missing from RDKit's stubs
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return ""
    drawer = rdMolDraw2D.MolDraw2DSVG(160, 120)
    # RDKit's stubs type the options' attributes wrongly (as MolDrawOptions).
    drawer.drawOptions().clearBackground = False  # type: ignore[assignment]
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
    drawer.FinishDrawing()
    return drawer.GetDrawingText()


def _guess(values) -> str:
    arr = values if isinstance(values, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "biuf" and arr.ndim in (3, 4):
        return "image"
    if arr is None and len(values) and isinstance(values[0], np.ndarray):
        return "image"
    if all(isinstance(v, (str, bytes)) for v in values):
        return "text"
    return "label"


def display_payload(values, n: int, kind: str = "auto", where: str = "samples") -> dict:
    """Per-sample display strings for one set.

    Parameters
    ----------
    values : sequence
        One item per sample: image arrays (an (n, h, w[, c]) array or a list of arrays),
        strings, SMILES (with ``kind="smiles"``) or any labels (shown with ``str``).
    n : int
        The set's number of samples; ``values`` must have as many.
    kind : {"auto", "text", "image", "smiles", "label"}
        ``"auto"`` takes numeric 3-D/4-D arrays as images, strings as text, anything
        else as labels.

    Returns
    -------
    dict
        ``kind``, ``text`` (list of str), ``truncated`` (list of bool), ``image`` (list of
        str) and ``image_format`` (``"png"``, ``"svg"`` or ``""``).

    Examples
    --------
    >>> out = display_payload(["short", "x" * 400], 2)
    >>> out["kind"], len(out["text"][1]), out["truncated"]
    ('text', 280, [False, True])
    """
    if kind not in KINDS:
        raise ValueError(f"The display kind for {where} must be one of {KINDS}. Got {kind!r}.")
    if not hasattr(values, "__len__") or len(values) != n:
        got = len(values) if hasattr(values, "__len__") else type(values).__name__
        raise ValueError(
            f"{where} must hold one item per sample of its set ({n}). Got {got}; pass the "
            f"items in the same order as the set's rows."
        )
    if kind == "auto":
        kind = _guess(values)
    empty = [""] * n
    if kind == "image":
        images = [_png_base64(v) for v in values]
        return dict(kind=kind, text=empty, truncated=[False] * n, image=images, image_format="png")
    pairs = [_truncate(v) for v in values]
    text, cut = [p[0] for p in pairs], [p[1] for p in pairs]
    if kind == "smiles":
        images = [_svg(str(v)) for v in values]
        fmt = "svg" if any(images) else ""
        return dict(kind=kind, text=text, truncated=cut, image=images, image_format=fmt)
    return dict(kind=kind, text=text, truncated=cut, image=empty, image_format="")
