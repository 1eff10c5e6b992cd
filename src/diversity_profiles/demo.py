"""The built-in real-data example: mode dropping on scikit-learn's handwritten digits.

Three sets of 8×8 digit images (UCI, bundled with scikit-learn, CC BY 4.0):
drawn from one class, from three classes and from all ten. A diversity measure
worth its name ranks them 1 < 3 < 10 — at every parameter, if it can. The summary
says first what the images support about the three sources (with 95% confidence,
for every pair, point and family at once), then what these samples show.

Run ``python -m diversity_profiles.demo`` (or ``diversity-profiles-demo``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .pipeline import FAMILIES

#: The most images a set can hold: each set draws without repeats, and the first set's
#: one class (digit 0) has 178 images in scikit-learn's copy. Diversity needs 2.
MAX_PER_SET = 178


def images_per_set(value: str) -> int:
    """The argparse type of ``--n``: a whole number of images per set in [2, MAX_PER_SET].

    >>> images_per_set("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number of images per set from 2 to 178, not '0'
    """
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not 2 <= n <= MAX_PER_SET:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of images per set from 2 to {MAX_PER_SET}, not {value!r}"
        )
    return n


def digit_sets(n_per_set: int = 150, seed: int = 0) -> dict[str, np.ndarray]:
    """Pixel vectors (64 features, scaled to [0, 1]) of digits from the first k classes.

    Raises
    ------
    ValueError
        If ``n_per_set`` is not an int in [2, MAX_PER_SET] (diversity needs two samples;
        the one-class set has no more distinct images).
    ImportError
        Without scikit-learn, naming the extra that installs it (the CLI ``main``
        turns it into an error message and exit status 2).
    """
    if (
        isinstance(n_per_set, bool)
        or not isinstance(n_per_set, (int, np.integer))
        or not (2 <= n_per_set <= MAX_PER_SET)
    ):
        raise ValueError(
            f"The 'n_per_set' argument of digit_sets must be an int from 2 to {MAX_PER_SET} "
            f"(diversity needs 2 images; digit 0 has {MAX_PER_SET}). Got {n_per_set!r} instead."
        )
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError(
            "digit_sets reads scikit-learn's bundled digits, which is not installed: "
            "pip install 'diversity-profiles[examples]'"
        ) from None
    digits = load_digits()
    X, y = digits.data / 16.0, digits.target
    rng = np.random.default_rng(seed)
    sets = {}
    for k in (1, 3, 10):
        pool = np.flatnonzero(y < k)
        sets[f"{k} class{'es' if k > 1 else ''}"] = X[rng.choice(pool, n_per_set, replace=False)]
    return sets


def summarize(tree) -> str:
    """A readable table of every family at a few landmark parameters."""
    lines = []
    for path in tree.dp.conditions:
        ds = tree[path].to_dataset()
        lines.append(
            f"Condition {path}: kernel {ds.attrs['kernel']}, n = "
            + ", ".join(
                f"{s}: {n}" for s, n in zip(ds.set.values, ds.n_samples.values, strict=True)
            )
        )
        header = f"{'family':<28}" + "".join(f"{s:>14}" for s in ds.set.values)
        lines.append(header)
        lines.append("-" * len(header))

        def row(label, values):
            lines.append(f"{label:<28}" + "".join(f"{v:>14.4g}" for v in values))

        for fam in FAMILIES.values():
            if fam.name not in ds:
                continue
            if fam.parameter is None:
                row(fam.name, ds[fam.name].values)
                continue
            grid = ds[fam.parameter].values
            # the registry's landmarks on the grid, else its quartiles
            picks = [
                int(np.flatnonzero(grid == x)[0]) for x in fam.shown.landmarks if x in grid
            ] or [
                len(grid) // 4,
                len(grid) // 2,
                3 * len(grid) // 4,
            ]
            for idx in picks:
                row(
                    f"{fam.name} {fam.parameter}={grid[idx]:.3g}",
                    ds[fam.name].isel({fam.parameter: idx}).values,
                )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="diversity-profiles-demo",
        description="Profile three sets of real handwritten digits (1, 3 and 10 classes) and "
        "save the profile tree to netCDF.",
    )
    parser.add_argument(
        "-o", "--output", default="digits_profiles.nc", help="profile file to write (.nc or .zarr)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace the output if it exists")
    parser.add_argument(
        "--n",
        type=images_per_set,
        default=150,
        help=f"images per set, 2 to {MAX_PER_SET} (default 150)",
    )
    args = parser.parse_args(argv)

    import diversity_profiles as dp

    from .comparison import summary
    from .files import check_output, write_profiles

    try:
        # --overwrite replaces only a profile file written by this package.
        out = check_output(args.output, kind="store", overwrite=args.overwrite, flag="--overwrite")
    except (ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    try:
        sets = digit_sets(args.n)
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    # The default uncertainty (n_boot="auto") is what lets the summary say what the samples
    # support about the generators, not only what these 3 x n images show.
    tree = dp.profiles(sets, representation="pixels", distance="euclidean")
    elapsed = time.perf_counter() - start
    print(summarize(tree))
    # Plain text for a terminal (the labels are ours): findings first, then these samples'
    # point verdicts.
    print(summary(tree.dp.compare(), markdown=False))
    try:
        write_profiles(tree, out, overwrite=args.overwrite, flag="--overwrite")
    except (ValueError, OSError) as exc:
        print(f"error: {exc}; nothing was written", file=sys.stderr)
        return 2
    print(f"Profiled {len(tree.dp.sets)} sets in {elapsed:.1f} s; saved to {out}")
    print("Open it with: xarray.open_datatree(" + repr(str(out)) + ")")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
