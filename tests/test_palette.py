"""The sets' colours: one per set up to 12, readable on light and dark notebooks, apart
under colour-vision deficiencies, and the same in the explorer and the static charts.

References are computed here from their definitions: WCAG 2 relative luminance and
contrast ratio, Machado et al. (2009) protan/deutan simulation at severity 1, and
CIE ΔE*76 in CIELAB (D65) — not with the script that chose the colours (OKLab there).
"""

import itertools
import re
from pathlib import Path

import numpy as np

from diversity_profiles.display._constants import PALETTE

ROOT = Path(__file__).parents[1]
WHITE, JUPYTERLAB_DARK = "#FFFFFF", "#111111"
PROTAN = [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
          [-0.003882, -0.048116, 1.051998]]  # fmt: skip
DEUTAN = [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
          [-0.011820, 0.042940, 0.968881]]  # fmt: skip


def linear_rgb(colour: str) -> np.ndarray:
    c = np.array([int(colour[k : k + 2], 16) for k in (1, 3, 5)]) / 255
    return np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def contrast(a: str, b: str) -> float:
    la, lb = (float(linear_rgb(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def cielab(lin: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ lin  # fmt: skip
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_twelve_distinct_colours_readable_on_white_and_on_jupyterlab_dark():
    assert len(PALETTE) >= 12 and len(set(PALETTE)) == len(PALETTE)
    for colour in PALETTE:
        # WCAG's minimum for graphical objects: 3:1 against the background.
        assert contrast(colour, WHITE) >= 3.0, colour
        assert contrast(colour, JUPYTERLAB_DARK) >= 3.0, colour


def test_colours_stay_apart_with_normal_protan_and_deutan_vision():
    worst = {}
    for name, seen in (("normal", np.eye(3)), ("protan", PROTAN), ("deutan", DEUTAN)):
        lab = [cielab(np.clip(np.asarray(seen) @ linear_rgb(c), 0, 1)) for c in PALETTE]
        worst[name] = min(np.linalg.norm(a - b) for a, b in itertools.combinations(lab, 2))
    # ΔE*76 ≈ 2.3 is a just-noticeable difference; lines of two sets must differ at a glance.
    assert worst["normal"] >= 12, worst
    assert min(worst["protan"], worst["deutan"]) >= 8, worst


def test_the_view_and_the_static_charts_use_the_same_colours():
    ts = (ROOT / "js" / "constants.ts").read_text("utf-8")
    line = next(x for x in ts.splitlines() if x.startswith("export const PALETTE"))
    assert tuple(re.findall(r"#[0-9A-Fa-f]{6}", line)) == PALETTE
    from diversity_profiles.display._plotting import SET_COLOURS

    assert tuple(SET_COLOURS) == PALETTE
