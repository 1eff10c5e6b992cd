"""Choose the sets' colours (``display._constants.PALETTE``): 12 colours that are readable
on light and dark backgrounds and stay apart under the common colour-vision deficiencies.

Candidates are sRGB colours on an OKLCH grid whose contrast is at least 3:1 (WCAG's
figure for graphics) against both white and JupyterLab Dark's #111111. From a blue, each
next colour is the candidate farthest (in OKLab) from those chosen, distance taken as the
smaller of normal vision and 1.6 × protan/deutan vision (Machado et al. 2009, severity 1),
so the first colours, the ones most plots use, are the most distinct. Prints the palette
to paste into ``src/diversity_profiles/display/_constants.py``.
"""

import itertools

import numpy as np

_M1 = np.array([[0.4122214708, 0.5363325363, 0.0514459929],
                [0.2119034982, 0.6806995451, 0.1073969566],
                [0.0883024619, 0.2817188376, 0.6299787005]])  # fmt: skip
_M2 = np.array([[0.2104542553, 0.7936177850, -0.0040720468],
                [1.9779984951, -2.4285922050, 0.4505937099],
                [0.0259040371, 0.7827717662, -0.8086757660]])  # fmt: skip
PROTAN = np.array([[0.152286, 1.052583, -0.204868],
                   [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]])  # fmt: skip
DEUTAN = np.array([[0.367322, 0.860646, -0.227968],
                   [0.280085, 0.672501, 0.047413],
                   [-0.011820, 0.042940, 0.968881]])  # fmt: skip
DARK = np.array([0x11, 0x11, 0x11]) / 255


def linear(srgb):
    srgb = np.asarray(srgb, dtype=float)
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def luminance(srgb):
    return linear(srgb) @ np.array([0.2126, 0.7152, 0.0722])


def contrast(a, b) -> float:
    la, lb = sorted((float(luminance(a)), float(luminance(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def oklab(lin):
    return np.cbrt(np.asarray(lin) @ _M1.T) @ _M2.T


def views(srgb):
    """OKLab coordinates under normal, protan and deutan vision."""
    lin = linear(srgb)
    return [oklab(lin)] + [oklab(np.clip(lin @ m.T, 0, 1)) for m in (PROTAN, DEUTAN)]


def separation(v, i, j) -> float:
    normal = np.linalg.norm(v[0][i] - v[0][j])
    deficient = min(np.linalg.norm(v[k][i] - v[k][j]) for k in (1, 2))
    return min(normal, 1.6 * deficient)


def candidates():
    inv1, inv2 = np.linalg.inv(_M1), np.linalg.inv(_M2)
    out = []
    for L, C, h in itertools.product(np.linspace(0.45, 0.75, 13), np.linspace(0.06, 0.2, 8),
                                     np.arange(0, 360, 6)):  # fmt: skip
        lab = np.array([L, C * np.cos(np.radians(h)), C * np.sin(np.radians(h))])
        lin = ((lab @ inv2.T) ** 3) @ inv1.T
        if (lin < 0).any() or (lin > 1).any():
            continue
        gamma = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
        srgb = np.round(gamma * 255) / 255  # what a hex code can say
        if contrast(srgb, np.ones(3)) >= 3 and contrast(srgb, DARK) >= 3:
            out.append(srgb)
    return np.array(out)


def palette(k: int = 12) -> list[str]:
    c = candidates()
    v = views(c)
    chosen = [int(np.argmin(np.linalg.norm(c - np.array([0x1F, 0x78, 0xC1]) / 255, axis=1)))]
    far = np.array([separation(v, chosen[0], j) for j in range(len(c))])
    while len(chosen) < k:
        chosen.append(int(np.argmax(far)))
        far = np.minimum(far, [separation(v, chosen[-1], j) for j in range(len(c))])
    return ["#" + "".join(f"{round(x * 255):02X}" for x in c[i]) for i in chosen]


if __name__ == "__main__":
    print(palette())
