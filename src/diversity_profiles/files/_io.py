"""Writing files safely: atomic writes beside the target, and ``overwrite`` that replaces
only what this package wrote.

Every write goes to a hidden temporary name in the target's own folder (same file
system, so the final step is a rename) and is moved into place only once complete:
an interrupted write (Ctrl-C, SIGTERM, SIGHUP, a crash, a full disk) never leaves a
half-written target, and all but a crash leave no temporary either. Without
``overwrite`` the final move refuses to replace anything, so the existence check
that binds is made at that moment, not before a long computation:
of two concurrent writers to one path exactly one wins and the other gets
``FileExistsError``. With ``overwrite`` an existing target is replaced only if it
is something this package wrote (a profile store, or an HTML page carrying our
generator mark) and is not one of the inputs.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from .._version import __version__

#: Written into every HTML page we produce; its presence is what lets ``overwrite``
#: replace the page later (and nothing else).
GENERATOR_META = f'<meta name="generator" content="diversity-profiles {__version__}">'
_GENERATOR_PREFIX = b'<meta name="generator" content="diversity-profiles'

#: Suffixes of profile stores, compared case-insensitively (``x.ZARR`` is a zarr store).
STORE_SUFFIXES = (".nc", ".zarr")
HTML_SUFFIXES = (".html", ".htm")
#: Written into the metadata of every notebook we execute and save (see sharing).
NOTEBOOK_MARK = "diversity_profiles_executed"


def store_kind(path: Path) -> str | None:
    """``"zarr"`` or ``"netcdf"`` from the suffix (any case), else None."""
    suffix = path.suffix.lower()
    return {".zarr": "zarr", ".nc": "netcdf"}.get(suffix)


def _same_file(a: Path, b: Path) -> bool:
    with contextlib.suppress(OSError):
        return a.exists() and b.exists() and os.path.samefile(a, b)
    return False


def check_output(
    path, *, kind: str, overwrite: bool, inputs: Iterable = (), flag: str = "overwrite=True"
) -> Path:
    """Refuse, before any work, an output that cannot or must not be written.

    ``kind`` is ``"store"`` (``.nc``/``.zarr``), ``"html"`` or ``"notebook"`` (``.ipynb``).
    Raises ValueError for a bad suffix, a missing folder, an input named as output, or an
    existing target this package did not write; FileExistsError for an existing target
    without ``overwrite``. The binding checks are repeated at the final rename
    (:func:`write_atomic`).

    Examples
    --------
    >>> check_output("x.npy", kind="store", overwrite=False)
    Traceback (most recent call last):
    ...
    ValueError: x.npy: a profile file must end in .nc (netCDF) or .zarr (zarr directory)
    """
    path = Path(path)
    for source in inputs:
        if _same_file(path, Path(source)) or Path(source).absolute() == path.absolute():
            raise ValueError(f"{path}: is also an input; choose another output file")
    if kind == "store" and store_kind(path) is None:
        raise ValueError(
            f"{path}: a profile file must end in .nc (netCDF) or .zarr (zarr directory)"
        )
    if kind == "html" and path.suffix.lower() not in HTML_SUFFIXES:
        raise ValueError(f"{path}: an HTML report must end in .html or .htm")
    if kind == "notebook" and path.suffix.lower() != ".ipynb":
        raise ValueError(f"{path}: a notebook must end in .ipynb")
    parent = path.parent
    if not parent.is_dir():
        raise ValueError(f"{path}: the folder {str(parent)!r} does not exist; create it first")
    if path.is_dir() and not (kind == "store" and store_kind(path) == "zarr"):
        raise ValueError(f"{path}: is a directory; name a file inside it")
    if os.path.lexists(path):
        if not overwrite:
            raise FileExistsError(f"{path}: exists; pass {flag} to replace it")
        check_ours(path, kind)
    return path


def is_our_html(path: Path) -> bool:
    """True if ``path`` is a regular file whose head carries our generator mark."""
    if path.is_symlink() or not path.is_file():
        return False
    with open(path, "rb") as fh:
        head = fh.read(65536)  # nbconvert pages put our mark right after <head>
    return _GENERATOR_PREFIX in head


def is_our_notebook(path: Path) -> bool:
    """True if ``path`` is a notebook whose metadata carries our execution mark."""
    import json

    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, encoding="utf-8") as fh:
            meta = json.load(fh).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(meta, dict) and NOTEBOOK_MARK in meta


def is_profile_store(path: Path) -> bool:
    """True if ``path`` opens as a profile tree this package wrote (see open_profiles)."""
    from ._storage import open_profiles

    if path.is_symlink():
        return False
    try:
        open_profiles(path).close()
    except (ValueError, OSError):
        return False
    return True


def check_ours(path: Path, kind: str) -> None:
    """Refuse to replace ``path`` unless this package wrote it (as ``kind``).

    A symbolic link is refused whatever it points to: replacing it would replace the
    link, not the file it names, and following it could replace a file elsewhere.
    """
    if path.is_symlink():
        raise ValueError(
            f"{path}: is a symbolic link (to {os.readlink(path)!r}); overwrite never "
            f"replaces a link or writes through one, so name the file itself or remove the link"
        )
    ours = {"store": is_profile_store, "html": is_our_html, "notebook": is_our_notebook}[kind]
    if not ours(path):
        what = {"store": "a profile file", "html": "an HTML page", "notebook": "a notebook"}[kind]
        raise ValueError(
            f"{path}: exists and is not {what} written by diversity-profiles; overwrite "
            f"replaces only those, so remove or rename it yourself if you mean to replace it"
        )


def _renameat2_noreplace(src: Path, dst: Path) -> bool:
    """rename(2) that fails if ``dst`` exists (Linux renameat2 RENAME_NOREPLACE).

    Returns False where the call is unavailable (other systems, old kernels, file systems
    without support) so the caller can fall back; raises FileExistsError if ``dst`` exists.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_noreplace = -100, 1
    ok = renameat2(at_fdcwd, os.fsencode(src), at_fdcwd, os.fsencode(dst), rename_noreplace)
    if ok == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.EEXIST:
        raise FileExistsError(errno.EEXIST, "exists", str(dst))
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _move_noreplace(src: Path, dst: Path, *, renameat2: bool = True) -> None:
    """Move ``src`` onto ``dst`` atomically, failing if ``dst`` exists in any form.

    Plain rename(2) is not enough: it silently replaces a file, and replaces a directory
    if that one is empty. Where renameat2 is missing: a file is hard-linked (link(2) fails
    if the name exists) then its temporary name removed; a directory name is reserved
    with mkdir(2) (fails if the name exists) and the new directory renamed onto that
    empty directory, which POSIX rename allows.
    """
    if renameat2 and _renameat2_noreplace(src, dst):
        return
    if src.is_dir():
        os.mkdir(dst)
        os.rename(src, dst)
    else:
        os.link(src, dst)
        os.unlink(src)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _replace(temp: Path, path: Path, kind: str) -> None:
    """Put ``temp`` in place of ``path``, which must be ours (checked again: it may have
    changed while we computed)."""
    check_ours(path, kind)
    if temp.is_dir() or path.is_dir():
        # A non-empty directory cannot be replaced in one step: move the old one aside,
        # move the new one in, then delete the old one.
        old = path.parent / f".{path.name}.old-{uuid.uuid4().hex[:12]}"
        os.rename(path, old)
        try:
            _move_noreplace(temp, path)
        except BaseException:
            os.rename(old, path)
            raise
        _remove(old)
    else:
        os.replace(temp, path)


#: Signals whose default action ends the process on the spot, running no ``finally``:
#: ``kill``, a closing terminal, a batch system's time limit.
_UNWIND_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class _Signalled(BaseException):
    """SIGTERM or SIGHUP during a write: unwinds it as Ctrl-C does, so it is cleaned up."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _unwinding_signals():
    """Within the block, SIGTERM and SIGHUP raise instead of ending the process at once;
    once the block has unwound (its temporaries removed), the signal is delivered again
    with its default action, so the process still ends as it was asked to.

    Only signals left at their default are taken (a handler someone installed is theirs),
    and only in the main thread, the one Python runs signal handlers in.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def handler(signum, frame):
        if not caught:  # a second signal must not interrupt the cleanup of the first
            caught.append(signum)
            raise _Signalled(signum)

    previous = {}
    for signum in _UNWIND_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, handler)
    try:
        yield
    except _Signalled as exc:
        for signum, old in previous.items():
            signal.signal(signum, old)
        os.kill(os.getpid(), exc.signum)  # default action: the process ends here
        raise SystemExit(128 + exc.signum) from None  # only if the signal is blocked
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def write_atomic(
    path,
    write: Callable[[Path], object],
    *,
    kind: str,
    overwrite: bool,
    flag: str = "overwrite=True",
) -> Path:
    """Call ``write(temp)`` on a temporary path beside ``path``, then move it into place.

    ``write`` may create a file or a directory. On any exception (KeyboardInterrupt
    included) the temporary is removed and ``path`` is untouched; so it is on SIGTERM
    and SIGHUP, after which the process ends by that signal as it would have. Without
    ``overwrite`` the move fails with FileExistsError if ``path`` appeared meanwhile.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> page = "<!doctype html>" + GENERATOR_META
    >>> write_atomic(folder / "a.html", lambda p: p.write_text(page), kind="html",
    ...              overwrite=False).read_text() == page
    True
    >>> write_atomic(folder / "a.html", lambda p: p.write_text("x"), kind="html",
    ...              overwrite=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: ...a.html: exists; pass overwrite=True to replace it
    """
    path = Path(path)
    temp = path.parent / f".{path.name}.tmp-{uuid.uuid4().hex[:12]}"
    with _unwinding_signals():
        try:
            write(temp)
            if overwrite and os.path.lexists(path):
                _replace(temp, path, kind)
            else:
                try:
                    _move_noreplace(temp, path)
                except FileExistsError:
                    if not overwrite:
                        raise FileExistsError(
                            f"{path}: exists; pass {flag} to replace it"
                        ) from None
                    _replace(temp, path, kind)  # appeared while we computed
        finally:
            if os.path.lexists(temp):
                _remove(temp)
    return path
