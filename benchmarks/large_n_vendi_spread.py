"""Large-n Vendi's sampling band: does m-out-of-n subsampling (the exact method on random
subsets of m samples, spread scaled by sqrt(m/(n-m)) g, as pipeline/_resampling.py's
large_subsamples and compare do) recover the standard deviation of the estimate across
independent draws of n samples from one source (a 5-mode Gaussian mixture in d = 16)?

    python benchmarks/large_n_vendi_spread.py N M DRAWS REPS [vendi|vendi,magnitude]

prints, per grid point, the sd over DRAWS independent sets and, for 4 sets, the ratio of
the subsampling estimate (REPS subsets of M) to it. Measured on 2026-12-02 (2 busy cores):
n = 1,200, m = 300: Vendi 0.79-1.53 (q = 0.1 to inf), magnitude 0.92-1.55 up to t = 0.7
but 0.25-0.52 at t >= 1.3 (so magnitude gets no band this way); n = 2,400, m = 240:
Vendi 0.73-0.80 at q = 0.1, 0.81-0.91 at q = 0.5, 0.78-1.53 at q >= 1.
"""
import sys
import warnings

import numpy as np

import diversity_profiles as dp

warnings.filterwarnings("ignore")
n, m, draws, reps = (int(a) for a in sys.argv[1:5])
FAMS = (sys.argv[5] if len(sys.argv) > 5 else "vendi,magnitude").split(",")
d = 16
centers = np.random.default_rng(99).normal(size=(5, d)) * 3
def draw(rng, size):
    return centers[rng.integers(0, 5, size)] + rng.normal(size=(size, d))
doms = {"vendi": np.array([0.1, 0.5, 1, 2, 5, np.inf]), "magnitude": np.geomspace(0.05, 5, 8)}
BW = 8.0
doms = {f: doms[f] for f in FAMS}


def fam_values(X):
    t = dp.profiles({"a": X}, representation="x", distance="euclidean", families=FAMS,
                    domains=doms, n_boot=0, bandwidth=BW, method="exact", max_seconds=None)
    ds = t["x/euclidean"].to_dataset()
    return np.concatenate([ds[f].values[0] for f in FAMS])
rng = np.random.default_rng(1)
full = np.array([fam_values(draw(rng, n)) for _ in range(draws)])
true_sd = full.std(axis=0, ddof=1)
ratios = []
for _ in range(4):
    X = draw(rng, n)
    est = fam_values(X)
    sub = np.array([fam_values(X[np.sort(rng.choice(n, m, replace=False))]) for _ in range(reps)])
    mean = sub.mean(axis=0)
    g = np.clip(est / mean, 1, n / m)
    sd = np.sqrt(m / (n - m)) * g * sub.std(axis=0, ddof=1)
    ratios.append(sd / true_sd)
r = np.array(ratios)
labels = [f"vendi q={q}" for q in doms.get("vendi", [])] + [
    f"mag t={t:.2g}" for t in doms.get("magnitude", [])]
for i, lab in enumerate(labels):
    print(f"{lab:14s} true sd {true_sd[i]:.4g}  est/true: " + " ".join(f"{x:.2f}" for x in r[:, i]))
