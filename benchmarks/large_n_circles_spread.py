"""Large-n Circles' sampling band: do the default's half-samples of the exact method's greedy
bound (pipeline/_resampling.py's half_samples; spread times g = clip(value / mean, 1, 2))
recover the standard deviation of the large-n value itself across independent draws of n
samples from one source (a 5-mode Gaussian mixture)?

    python benchmarks/large_n_circles_spread.py N DRAWS BANDED [D] [euclidean|cosine]

profiles DRAWS independent sets with ``method="auto"`` (Circles on its large-n method above
4,000 samples), the first BANDED of them with the default uncertainty, at 6 thresholds (the
0.5-35% quantiles of a pilot draw's distances), and prints the sd over the draws and, for
each banded set, the ratio of its standard error to it. Measured on 2026-12-06 (2 cores, busy
with other jobs): n = 6,000, d = 16, Euclidean (20 draws, 5 banded): 0.85-1.51; n = 6,000,
d = 64, cosine (16, 4): 0.71-1.26; n = 8,000, d = 64, cosine (16, 4): 0.61-1.12, mostly
below 1 (so the default stops at 6,000: CIRCLES_LARGE_HALF_SAMPLE_MAX_N).
"""

import sys
import warnings

import numpy as np
from scipy.spatial.distance import pdist

import diversity_profiles as dp

warnings.filterwarnings("ignore")
n, draws, banded = (int(a) for a in sys.argv[1:4])
d = int(sys.argv[4]) if len(sys.argv) > 4 else 16
distance = sys.argv[5] if len(sys.argv) > 5 else "euclidean"
centres = np.random.default_rng(123).normal(size=(5, d)) * 2.5


def draw(seed):
    rng = np.random.default_rng(seed)
    return centres[rng.integers(0, 5, n)] + rng.normal(size=(n, d))


pilot = draw(0)[:1500]
if distance == "cosine":
    pilot = pilot / np.linalg.norm(pilot, axis=1, keepdims=True)
taus = [float(t) for t in np.quantile(pdist(pilot, metric=distance), [.005, .02, .05, .1, .2, .35])]
values, errors = [], []
for r in range(draws):
    ds = dp.profiles(
        {"A": draw(1000 + r)}, representation="x", distance=distance, families=["circles"],
        domains={"circles": taus}, n_boot="auto" if r < banded else 0, max_seconds=None,
    )["x/" + distance].ds  # fmt: skip
    value = ds.circles.values[0]
    values.append(value)
    if r < banded:
        boot = ds.circles_boot.values[0]
        errors.append(np.clip(value / boot.mean(axis=0), 1, 2) * boot.std(axis=0, ddof=1))
        print(r, ds.attrs["methods"], "|", ds.attrs["uncertainty_circles"], flush=True)
true_sd = np.std(values, axis=0, ddof=1)
for i, tau in enumerate(taus):
    ratios = " ".join(f"{e[i] / true_sd[i]:.2f}" if true_sd[i] > 0 else "-" for e in errors)
    print(f"tau {tau:.4g}: mean {np.mean(values, axis=0)[i]:.1f}, sd over draws {true_sd[i]:.3g}, "
          f"standard error / sd: {ratios}")
