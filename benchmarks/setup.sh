#!/usr/bin/env bash
# Create the benchmark's own virtual environment at benchmarks/.env:
# this project (editable) plus the peers it is compared with.
#
#   bash benchmarks/setup.sh            # from the repository root (or anywhere)
#   PYTHON=python3.11 bash benchmarks/setup.sh
#   TORCH_SPEC='torch==2.9.1' bash benchmarks/setup.sh   # another CPU build of torch
#
# magnipy 1.0.0 imports torch at import time and pins scipy==1.13.0 (it imports
# scipy.integrate.trapz, removed in scipy 1.14), which in turn caps numpy below 2.3.
# Both libraries therefore run on that same numpy/scipy in this environment; run.py
# prints the versions and BLAS kernels it measured with.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
ENV="$HERE/.env"
PYTHON="${PYTHON:-python3}"
# torch before magnipy: an unpinned torch requirement would pull a multi-GB CUDA build.
TORCH_SPEC="${TORCH_SPEC:-torch==2.13.0}"

"$PYTHON" - <<'EOF'
import sys
if not ((3, 11) <= sys.version_info[:2] < (3, 13)):
    sys.exit(f"benchmarks need Python 3.11 or 3.12 (magnipy 1.0.0 requires <3.13); "
             f"got {sys.version.split()[0]}. Set PYTHON=python3.11.")
EOF

if [ ! -x "$ENV/bin/python" ]; then
    echo "creating $ENV"
    "$PYTHON" -m venv "$ENV"
fi
PIP=("$ENV/bin/python" -m pip)
"${PIP[@]}" install --quiet --upgrade pip
echo "installing $TORCH_SPEC (CPU build; needed by magnipy)"
"${PIP[@]}" install --quiet "$TORCH_SPEC"
echo "installing diversity-profiles (editable) and the peers"
"${PIP[@]}" install --quiet -e "$ROOT" \
    "vendi-score==0.0.3" "magnipy==1.0.0" "threadpoolctl>=3" "mpmath>=1.3"

echo "checking the environment"
"$ENV/bin/python" - <<'EOF'
import importlib.metadata as md
import io
import contextlib

import numpy as np
import scipy

import diversity_profiles as dp
from vendi_score import vendi

with contextlib.redirect_stdout(io.StringIO()):
    from magnipy import Magnipy
from threadpoolctl import threadpool_info

K = np.eye(3)
assert abs(vendi.score_K(K) - 3) < 1e-9 and abs(dp.vendi_score(K) - 3) < 1e-9
X = np.random.default_rng(0).standard_normal((20, 2))
with contextlib.redirect_stdout(io.StringIO()):  # magnipy prints as it goes
    mag, ts = Magnipy(X, n_ts=5).get_magnitude()
assert len(mag) == 5
for name in ("diversity-profiles", "vendi-score", "magnipy", "torch", "numpy", "scipy",
             "threadpoolctl", "mpmath"):
    print(f"  {name:<20} {md.version(name)}")
for pool in threadpool_info():
    print(f"  {pool['internal_api']:<9} {pool.get('architecture') or '-':<10} "
          f"threads={pool['num_threads']}  {pool['filepath'].rsplit('/', 1)[-1]}")
print("ok: run  benchmarks/.env/bin/python benchmarks/run.py [--quick] [--only NAME]")
EOF
