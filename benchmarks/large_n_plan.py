"""Print the plan dp.profiles would follow for S sets of N points in d dimensions (no work).

    python benchmarks/large_n_plan.py --n 100000 --sets 2 --method auto

Shows, per family, the method (exact or large-n), why, and its peak memory, against the memory
available now; with a plan that does not fit, prints the refusal profiles would raise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from diversity_profiles.core._validation import available_memory_bytes
from diversity_profiles.pipeline import _planning as planning

FAMILIES = ["vendi", "magnitude", "circles", "energy", "average_distance", "richness"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--sets", type=int, default=2)
    p.add_argument("--d", type=int, default=768)
    p.add_argument("--method", default="auto", choices=planning.METHODS)
    args = p.parse_args()
    have = available_memory_bytes()
    try:
        routes = planning.plan(FAMILIES, [args.n] * args.sets, args.d, method=args.method)
    except MemoryError as exc:
        print(f"REFUSED up front:\n{exc}")
        return
    print(f"The plan fits in {have / 1024**3:.1f} GiB available:\n{planning.describe(routes)}")


if __name__ == "__main__":
    main()
