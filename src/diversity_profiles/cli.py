"""The ``diversity-profiles`` command line: compute, summarise and report profiles.

Exit codes: 0 success, 1 an expected problem with the input or the files (one
line on stderr naming the file), 2 a usage error (from argparse).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

READERS = (".npy", ".npz", ".csv", ".parquet")


class InputError(Exception):
    """An expected problem with the user's files: reported in one line, no traceback."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_embeddings(path: Path) -> np.ndarray:
    """One set from a file: .npy, .npz (one array), .csv (numbers, optional header), .parquet."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as archive:
                if len(archive.files) != 1:
                    raise InputError(f"{path}: holds arrays {archive.files}; keep exactly one")
                arr = archive[archive.files[0]]
        elif suffix == ".csv":
            try:
                arr = np.loadtxt(path, delimiter=",", ndmin=2)
            except ValueError:
                arr = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1)  # a header row
        elif suffix == ".parquet":
            import pandas as pd

            arr = pd.read_parquet(path).to_numpy(dtype=np.float64)
        else:
            raise InputError(f"{path}: unknown format; use one of {', '.join(READERS)}")
    except InputError:
        raise
    except ImportError as exc:
        raise InputError(f"{path}: reading parquet needs pyarrow ({exc})") from None
    except Exception as exc:  # corrupt or malformed files of any kind
        raise InputError(f"{path}: cannot be read as {suffix[1:]} ({_first_line(exc)})") from None
    if arr.ndim != 2 or (not np.issubdtype(arr.dtype, np.number) and arr.dtype != bool):
        raise InputError(
            f"{path}: expected a 2-D numeric array (samples × features), "
            f"got shape {arr.shape} of {arr.dtype}"
        )
    return arr


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cmd_compute(args) -> int:
    import diversity_profiles as dp

    out = Path(args.output)
    if out.exists() and not args.overwrite:
        raise InputError(f"{out}: exists; pass --overwrite to replace it")
    labels = args.label or [Path(f).stem for f in args.files]
    if len(labels) != len(args.files):
        raise InputError(f"--label given {len(labels)} time(s) for {len(args.files)} file(s)")
    if len(set(labels)) != len(labels):
        raise InputError(f"set labels must differ; got {labels} (use --label)")
    sets = {}
    for k, (label, name) in enumerate(zip(labels, args.files, strict=True), start=1):
        _progress(f"[{k}/{len(labels)}] reading {name}")
        sets[label] = read_embeddings(Path(name))
    families = args.families.split(",") if args.families else None
    _progress(f"profiling {len(sets)} set(s): {args.distance} distance…")
    try:
        tree = dp.profiles(
            sets,
            representation=args.representation,
            distance=args.distance,
            families=families,
            n_points=args.n_points,
            n_boot=args.n_boot,
        )
    except (ValueError, MemoryError) as exc:
        raise InputError(_first_line(exc)) from None
    if out.suffix == ".zarr":
        tree.to_zarr(out, mode="w")
    else:
        tree.to_netcdf(out, mode="w")
    _progress(f"wrote {out}")
    return 0


def _open(path: str):
    import xarray as xr

    import diversity_profiles  # noqa: F401 - registers tree.dp

    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    try:
        return xr.open_datatree(p, engine="zarr" if p.suffix == ".zarr" else None)
    except Exception as exc:
        raise InputError(f"{p}: not a profile file ({_first_line(exc)})") from None


def cmd_summary(args) -> int:
    tree = _open(args.file)
    if not tree.dp.conditions:
        raise InputError(f"{args.file}: holds no profiles")
    print(tree.dp.summary())
    return 0


def cmd_report(args) -> int:
    tree = _open(args.file)
    if not tree.dp.conditions:
        raise InputError(f"{args.file}: holds no profiles")
    try:
        path = tree.dp.report(args.output, overwrite=args.overwrite)
    except FileExistsError:
        raise InputError(f"{args.output}: exists; pass --overwrite to replace it") from None
    _progress(f"wrote {path}")
    return 0


def cmd_demo(args) -> int:
    import diversity_profiles as dp
    from diversity_profiles.demo import digit_sets

    out = Path(args.output)
    if out.exists() and not args.overwrite:
        raise InputError(f"{out}: exists; pass --overwrite to replace it")
    _progress("profiling three sets of scikit-learn's handwritten digits (1, 3, 10 classes)…")
    tree = dp.profiles(digit_sets(args.n), representation="pixels", distance="euclidean", n_boot=50)
    print(tree.dp.summary())
    tree.dp.report(out, overwrite=args.overwrite)
    _progress(f"wrote {out}")
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="diversity-profiles",
        description="Diversity profiles of sample sets: compute them, summarise them, share them.",
    )
    sub = main.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compute", help="profile embedding files, one file per set")
    c.add_argument("files", nargs="+", help=f"one file per set ({', '.join(READERS)})")
    c.add_argument("-o", "--output", required=True, help="profile file to write (.nc or .zarr)")
    c.add_argument("--label", action="append", help="set label (repeat; default: file stem)")
    c.add_argument("--representation", default="embedding", help="name of the embedding")
    c.add_argument(
        "--distance",
        default="cosine",
        help="euclidean, cosine, tanimoto, jaccard or precomputed (files hold D)",
    )
    c.add_argument("--families", help="comma-separated families (default: all)")
    c.add_argument("--n-points", type=int, default=100, help="grid size per family")
    c.add_argument("--n-boot", type=int, default=0, help="bootstrap resamples for bands")
    c.add_argument("--overwrite", action="store_true", help="replace the output if it exists")
    c.set_defaults(run=cmd_compute)

    s = sub.add_parser("summary", help="print the verdicts and conditions of a profile file")
    s.add_argument("file")
    s.set_defaults(run=cmd_summary)

    r = sub.add_parser("report", help="write a self-contained interactive HTML report")
    r.add_argument("file")
    r.add_argument("-o", "--output", required=True, help="the .html file to write")
    r.add_argument("--overwrite", action="store_true", help="replace the output if it exists")
    r.set_defaults(run=cmd_report)

    d = sub.add_parser("demo", help="profile a built-in real dataset and write a report")
    d.add_argument("-o", "--output", default="diversity_report.html")
    d.add_argument("--n", type=int, default=150, help="images per set")
    d.add_argument("--overwrite", action="store_true", help="replace the output if it exists")
    d.set_defaults(run=cmd_demo)
    return main


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except InputError as exc:
        print(f"diversity-profiles: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
