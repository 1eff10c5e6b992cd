"""The ``diversity-profiles`` command line: compute, summarise and report profiles.

Exit codes: 0 success, 1 an expected problem with the input or the files (one
line on stderr naming the file), 2 a usage error (from argparse).
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from pathlib import Path

import numpy as np

READERS = (".npy", ".npz", ".csv", ".parquet")


class InputError(Exception):
    """An expected problem with the user's files: reported in one line, no traceback."""


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


#: Invisible characters that reorder the text around them (bidirectional overrides).
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}


def for_terminal(text: str) -> str:
    """``text`` made harmless for a terminal: control characters shown as escapes.

    Labels and file names come from users and files; an escape sequence printed raw
    could recolour, retitle or rewrite the terminal. Newlines and tabs are kept.

    >>> print(for_terminal("a\\x1b[31mb\\u202ec"))
    a\\x1b[31mb\\u202ec
    """
    out = []
    for ch in text:
        if ch in "\n\t" or (unicodedata.category(ch) not in ("Cc", "Cs") and ch not in _BIDI):
            out.append(ch)
        else:
            out.append(ascii(ch)[1:-1])  # \x1b, \u202e, \udc80 (an undecodable byte)
    return "".join(out)


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
            from .files import CsvError, read_csv

            try:
                arr = read_csv(path)
            except CsvError as exc:
                raise InputError(str(exc)) from None
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


def _auto_or_int(expected: str):
    """An argparse type: "auto", or an int (its range checked by profiles)."""

    def parse(value: str) -> int | str:
        if value == "auto":
            return value
        try:
            return int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {expected}, not {value!r}") from None

    return parse


#: --n-boot: "auto" or a count; --n-points: "auto" (adaptive grids) or a fixed grid size.
_n_boot = _auto_or_int("'auto', 0 or a number of replicates >= 2")
_n_points = _auto_or_int("'auto' or a number of grid points (5 to 10000)")


def _non_negative_int(value: str) -> int:
    """An argparse type: an int >= 0."""
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, not {value!r}")
    return number


def _progress(message: str) -> None:
    print(for_terminal(message), file=sys.stderr, flush=True)


def _check_output(path: str, kind: str, overwrite: bool, inputs=()) -> Path:
    from .files import check_output

    try:
        return check_output(path, kind=kind, overwrite=overwrite, inputs=inputs, flag="--overwrite")
    except (ValueError, FileExistsError) as exc:
        raise InputError(str(exc)) from None


def _write(tree, out: Path, overwrite: bool) -> None:
    from .files import write_profiles

    try:
        write_profiles(tree, out, overwrite=overwrite, flag="--overwrite")
    except FileExistsError as exc:
        raise InputError(f"{exc} (it appeared while computing; nothing was replaced)") from None
    except OSError as exc:  # the system's reason (no space left on device), not HDF5's story
        raise InputError(f"{out}: not written ({exc.strerror or _first_line(exc)})") from None
    except ValueError as exc:
        raise InputError(f"{out}: not written ({_first_line(exc)})") from None


def _connect(address: str):
    """A dask.distributed client of the scheduler at ``address`` (it becomes the default)."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError(
            '--scheduler needs dask.distributed: pip install "diversity-profiles[dask]"'
        ) from None
    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise InputError(
            f"--scheduler {address!r}: cannot connect to a dask scheduler there "
            f"({_first_line(exc)})"
        ) from None


def cmd_compute(args) -> int:
    import diversity_profiles as dp

    from .core import check_text

    # Checked before computing so nobody waits for a doomed run; the binding check is
    # made again at the final rename (two runs may race for one name).
    out = _check_output(args.output, "store", args.overwrite, inputs=args.files)
    labels = args.label or [Path(f).stem for f in args.files]
    if len(labels) != len(args.files):
        raise InputError(f"--label given {len(labels)} time(s) for {len(args.files)} file(s)")
    try:
        check_text(args.representation, "--representation")
        for label in labels:
            check_text(label, "set label")
    except ValueError as exc:  # storable text, so the run cannot fail at the very end
        raise InputError(f"{exc} (use --label or --representation)") from None
    if len(set(labels)) != len(labels):
        raise InputError(f"set labels must differ; got {labels} (use --label)")
    sets = {}
    for k, (label, name) in enumerate(zip(labels, args.files, strict=True), start=1):
        _progress(f"[{k}/{len(labels)}] reading {name}")
        sets[label] = read_embeddings(Path(name))
    families = args.families.split(",") if args.families else None
    if args.device:  # refused before any work when the device or torch is missing
        from .engines import resolve_device

        try:
            resolve_device(args.device, "diversity-profiles compute (--device)")
        except (ImportError, RuntimeError, ValueError) as exc:
            raise InputError(_first_line(exc)) from None
    client = _connect(args.scheduler) if args.scheduler else None
    if client is not None:  # dask arrays: profiles runs its passes on the cluster
        import dask.array as da

        sets = {k: da.from_array(v, chunks=(4096, -1)) for k, v in sets.items()}
    where = f" on the dask cluster at {args.scheduler!r}" if client is not None else ""
    _progress(f"profiling {len(sets)} set(s): {args.distance} distance{where}…")
    try:
        tree = dp.profiles(
            sets,
            representation=args.representation,
            distance=args.distance,
            families=families,
            n_points=args.n_points,
            n_boot=args.n_boot,
            permutations=args.permutations,
            device=args.device,
        )
    except (ValueError, TypeError, MemoryError) as exc:  # the library's documented errors
        raise InputError(_first_line(exc)) from None
    finally:
        if client is not None:
            client.close()
    _write(tree, out, args.overwrite)
    _progress(f"wrote {out}")
    return 0


def _open(path: str):
    from .files import open_profiles

    try:
        return open_profiles(path)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def cmd_summary(args) -> int:
    tree = _open(args.file)
    print(for_terminal(tree.dp.summary(markdown=False)))  # a terminal: no Markdown escapes
    return 0


def _report(tree, out: Path, overwrite: bool) -> None:
    try:
        path = tree.dp.report(out, overwrite=overwrite)
    except FileExistsError:
        raise InputError(f"{out}: exists; pass --overwrite to replace it") from None
    except (ValueError, OSError) as exc:
        raise InputError(_first_line(exc)) from None
    _progress(f"wrote {path}")


def cmd_report(args) -> int:
    tree = _open(args.file)
    _report(
        tree, _check_output(args.output, "html", args.overwrite, inputs=[args.file]), args.overwrite
    )
    return 0


def cmd_demo(args) -> int:
    import diversity_profiles as dp
    from diversity_profiles.demo import digit_sets

    out = _check_output(args.output, "html", args.overwrite)
    _progress("profiling three sets of scikit-learn's handwritten digits (1, 3, 10 classes)…")
    tree = dp.profiles(digit_sets(args.n), representation="pixels", distance="euclidean")
    print(for_terminal(tree.dp.summary(markdown=False)))  # a terminal: no Markdown escapes
    _report(tree, out, args.overwrite)
    return 0


def parser() -> argparse.ArgumentParser:
    from .demo import MAX_PER_SET, images_per_set

    main = argparse.ArgumentParser(
        prog="diversity-profiles",
        description="Diversity profiles of sample sets: compute them, summarise them, share them.",
    )
    sub = main.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compute", help="profile embedding files, one file per set")
    c.add_argument("files", nargs="+", help=f"one file per set ({', '.join(READERS)})")
    c.add_argument(
        "-o",
        "--output",
        required=True,
        help="profile file to write: .nc (netCDF) or .zarr (directory)",
    )
    c.add_argument("--label", action="append", help="set label (repeat; default: file stem)")
    c.add_argument("--representation", default="embedding", help="name of the embedding")
    c.add_argument(
        "--distance",
        default="cosine",
        help="euclidean, cosine, tanimoto, jaccard or precomputed (files hold D)",
    )
    c.add_argument("--families", help="comma-separated families (default: all)")
    c.add_argument(
        "--n-points",
        type=_n_points,
        default="auto",
        help="'auto' (adaptive grids, the default) or a fixed grid size per family (5 to 10000)",
    )
    c.add_argument(
        "--n-boot",
        type=_n_boot,
        default="auto",
        help="sampling uncertainty: 'auto' (default: what fits the cost), 0 (none: no verdict "
        "is supported) or a number of half-sample replicates",
    )
    c.add_argument(
        "--permutations",
        type=_non_negative_int,
        default=0,
        metavar="R",
        help="also run the exact two-sample permutation test with R relabellings per pair "
        "(199: p-values down to 0.005), stored in the output; 0 (default) skips it",
    )
    c.add_argument(
        "--overwrite", action="store_true", help="replace the output if this tool wrote it"
    )
    c.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the passes on the dask.distributed scheduler at ADDRESS "
        "(e.g. tcp://10.0.0.5:8786; needs the 'dask' extra)",
    )
    c.add_argument(
        "--device",
        help="run the heavy kernels on this torch device (cuda, cuda:1, cpu; needs the "
        "'torch' extra)",
    )
    c.set_defaults(run=cmd_compute)

    s = sub.add_parser("summary", help="print the verdicts and conditions of a profile file")
    s.add_argument("file")
    s.set_defaults(run=cmd_summary)

    r = sub.add_parser("report", help="write a self-contained interactive HTML report")
    r.add_argument("file")
    r.add_argument("-o", "--output", required=True, help="the .html file to write")
    r.add_argument(
        "--overwrite", action="store_true", help="replace the output if this tool wrote it"
    )
    r.set_defaults(run=cmd_report)

    d = sub.add_parser("demo", help="profile a built-in real dataset and write a report")
    d.add_argument("-o", "--output", default="diversity_report.html")
    d.add_argument(
        "--n", type=images_per_set, default=150, help=f"images per set, 2 to {MAX_PER_SET}"
    )
    d.add_argument(
        "--overwrite", action="store_true", help="replace the output if this tool wrote it"
    )
    d.set_defaults(run=cmd_demo)
    return main


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader of a pipe left (``summary p.nc | head``), and
    Python's final flush would otherwise fail again at exit with a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code = args.run(args)
        sys.stdout.flush()  # a closed pipe fails here, inside the handler, not at exit
        return code
    except BrokenPipeError:  # as the Python docs advise (signal module, "Note on SIGPIPE")
        _quiet_stdout()
        return 1
    except InputError as exc:
        print(for_terminal(f"diversity-profiles: error: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # writes are atomic: an interrupted run leaves no output
        print("diversity-profiles: interrupted; no output was written", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
