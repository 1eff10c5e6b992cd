"""Files and the command line under hostile or unlucky conditions (issue 22).

Crafted files that claim gigabytes, bad ``demo --n``, a closed pipe, a full disk, a
symlinked output and signals in the middle of a write: each ends in one line naming the
true reason (or, for a closed pipe, quietly), and leaves no debris. Everything runs for
real: files are crafted with h5netcdf, h5py and zarr, the disk is a real tmpfs (or a
real file-size limit), signals are real signals sent to a real process.
"""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.files import _declared

GiB = 1024**3


def cap_memory():  # a regression must hit MemoryError, not take the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (3 * GiB, 3 * GiB))


def cli(*args, cwd, preexec_fn=None):
    return subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        preexec_fn=preexec_fn,
    )


def one_line_error(run, *fragments, code=1):
    assert run.returncode == code, (run.returncode, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    for fragment in fragments:
        assert fragment in last, last
    return last


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """An honest profile tree written by the package, as netCDF and as zarr."""
    folder = tmp_path_factory.mktemp("hardening")
    rng = np.random.default_rng(0)
    sets = {"A": rng.normal(size=(20, 3)), "B": rng.normal(size=(15, 3))}
    tree = dp.profiles(
        sets, representation="x", distance="euclidean", families=["vendi", "richness"], n_points=8
    )
    tree.to_netcdf(folder / "p.nc")
    tree.to_zarr(folder / "p.zarr")
    return folder


def allocated(path):
    """Bytes on disk of a file or directory, from the blocks the system reports."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(min(p.stat().st_size, 512 * p.stat().st_blocks) for p in files)


def netcdf_claiming(stores, name, n, dtype="f8", chunk=1 << 20):
    """The honest netCDF plus a chunked, never-written variable of n elements (h5netcdf)."""
    import h5netcdf

    path = stores / name
    shutil.copy(stores / "p.nc", path)
    with h5netcdf.File(path, "a") as f:
        group = f["x/euclidean"]
        group.dimensions["big"] = n
        group.create_variable("junk", ("big",), dtype=dtype, chunks=(min(chunk, n),))
    return path


def zarr_claiming(stores, name, n, chunk=1 << 20, consolidated=True):
    """The honest zarr store plus a never-written array of n elements (zarr's own API)."""
    import zarr

    path = stores / name
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(stores / "p.zarr", path)
    group = zarr.open_group(path, mode="a")
    group["x/euclidean"].create_array(
        "junk", shape=(n,), chunks=(min(chunk, n),), dtype="f8", dimension_names=["big"]
    )
    if consolidated:
        zarr.consolidate_metadata(path)
    else:  # xarray then reads each node's own zarr.json
        for meta_path in path.rglob("zarr.json"):
            meta = json.loads(meta_path.read_text())
            meta.pop("consolidated_metadata", None)
            meta_path.write_text(json.dumps(meta))
    return path


def refused_lean(path, *fragments):
    """open_profiles refuses ``path`` quickly, allocating almost nothing."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError) as info:
            dp.open_profiles(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 20
    assert peak < 64 * 1024**2, f"{peak / 2**20:.0f} MiB allocated before refusing"
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: not read: it ")
    for fragment in fragments:
        assert fragment in message, message
    return message


# --- files that claim more than they hold --------------------------------------------------


def test_honest_stores_open_as_xarray_reads_them(stores):
    for name, engine in (("p.nc", None), ("p.zarr", "zarr")):
        ours = dp.open_profiles(stores / name)
        xr.testing.assert_identical(ours, xr.open_datatree(stores / name, engine=engine).load())
        assert ours["x/euclidean"].sel(set="B").richness.item() == 15  # indexes work


@pytest.mark.parametrize("n", [5 * 10**8, 2 * 10**9])
def test_a_netcdf_declaring_gigabytes_is_refused_naming_the_variable(stores, n):
    path = netcdf_claiming(stores, f"claims{n}.nc", n)
    assert path.stat().st_size < 400_000  # the file itself is small
    size = f"{n * 8 / GiB:.1f} GiB"  # 3.7 GiB, 14.9 GiB
    refused_lean(path, "variable 'junk' of node '/x/euclidean'", f"({n},) of float64, {size}")


@pytest.mark.filterwarnings("ignore:Failed to open Zarr store with consolidated metadata")
@pytest.mark.parametrize("consolidated", [True, False])
def test_a_zarr_declaring_gigabytes_is_refused_naming_the_variable(stores, consolidated):
    n = 3 * 10**9
    path = zarr_claiming(stores, f"claims{consolidated}.zarr", n, consolidated=consolidated)
    refused_lean(path, "variable 'junk' of node '/x/euclidean'", "22.4 GiB")


def test_an_edited_zarr_json_is_refused(stores):
    """Only the metadata is edited (a text editor's attack): the shape of ``richness``
    becomes 3e9 on a new dimension, in its own zarr.json and the consolidated copy."""
    path = stores / "edited.zarr"
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(stores / "p.zarr", path)

    def edit(meta):
        if isinstance(meta, dict):
            if meta.get("node_type") == "array" and meta["attributes"].get("family") == "richness":
                meta.update(shape=[3 * 10**9], dimension_names=["huge"])
                meta["chunk_grid"]["configuration"]["chunk_shape"] = [1 << 20]
            for value in meta.values():
                edit(value)

    for meta_path in (path / "zarr.json", path / "x/euclidean/richness/zarr.json"):
        meta = json.loads(meta_path.read_text())
        edit(meta)
        meta_path.write_text(json.dumps(meta))
    refused_lean(path, "variable 'richness'", "shape (3000000000,) of int64, 22.4 GiB")


def test_the_limit_is_the_larger_of_a_base_and_what_the_file_stores(stores, monkeypatch):
    monkeypatch.setattr(_declared, "BASE_BYTES", 1024**2)
    monkeypatch.setattr(_declared, "RATIO", 1)  # limit: max(1 MiB, bytes on disk)
    small = netcdf_claiming(stores, "half.nc", 64 * 1024)  # 0.5 MiB declared, unwritten
    big = netcdf_claiming(stores, "twice.nc", 256 * 1024)  # 2 MiB
    assert allocated(big) < 1024**2  # so only the base allows anything
    assert dp.open_profiles(small)["x/euclidean"]["junk"].shape == (64 * 1024,)
    refused_lean(big, "at most 1.0 MiB")
    # 100 times what it stores (about 160 KiB on disk here) admits the 2 MiB.
    monkeypatch.setattr(_declared, "RATIO", 100)
    assert 100 * allocated(big) > 2.1 * 1024**2
    assert dp.open_profiles(big)["x/euclidean"]["junk"].shape == (256 * 1024,)


def test_the_limit_is_half_the_available_memory(stores, monkeypatch):
    monkeypatch.setattr(_declared, "available_memory_bytes", lambda: 4 * 1024**2)
    assert dp.open_profiles(stores / "p.nc").dp.sets == ["A", "B"]
    path = netcdf_claiming(stores, "3mib.nc", 3 * 1024**2 // 8)
    refused_lean(path, "at most 2.0 MiB (half the 4.0 MiB of memory available)")


def test_a_zarr_chunk_larger_than_its_array_counts(stores, monkeypatch):
    """A reader decodes a chunk whole: 10 elements in one chunk of 2**20 weigh 8 MiB."""
    monkeypatch.setattr(_declared, "BASE_BYTES", 1024**2)
    monkeypatch.setattr(_declared, "RATIO", 1)
    import zarr

    path = zarr_claiming(stores, "wide.zarr", 10, chunk=10)
    zarr.open_group(path, mode="a")["x/euclidean/junk"][:] = np.arange(10.0)
    for meta_path in (path / "zarr.json", path / "x/euclidean/junk/zarr.json"):
        meta = json.loads(meta_path.read_text())
        stack = [meta]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("dimension_names") == ["big"]:
                    node["chunk_grid"]["configuration"]["chunk_shape"] = [1 << 20]
                stack.extend(node.values())
        meta_path.write_text(json.dumps(meta))
    refused_lean(path, "variable 'junk'", "8.0 MiB")


@pytest.mark.parametrize("kind", ["nc", "zarr"])
def test_a_file_declaring_a_hundred_thousand_chunks_is_refused(stores, kind):
    """800 KB of never-written one-element chunks: tiny, but each chunk is a lookup
    (measured: 40 s for a million in HDF5, 18 s for 100,000 in zarr)."""
    n = 100_000
    make = netcdf_claiming if kind == "nc" else zarr_claiming
    path = make(stores, f"chunks.{kind}", n, chunk=1)
    assert n > _declared.BASE_CHUNKS and n * 8 < _declared.BASE_BYTES  # few bytes, many chunks
    refused_lean(path, "declares 100,0", "'junk' of node '/x/euclidean' alone has 100,000")


def test_links_and_special_files_inside_a_zarr_store_are_refused(stores, tmp_path):
    path = tmp_path / "linked.zarr"
    shutil.copytree(stores / "p.zarr", path)
    chunk = next(p for p in (path / "x/euclidean/richness").rglob("*") if p.name == "0")
    outside = tmp_path / "elsewhere"
    shutil.move(chunk, outside)
    chunk.symlink_to(outside)  # harmless here; /dev/zero there would never end
    refused_lean(path, "holds a link", "a store's parts must lie inside it")
    chunk.unlink()
    shutil.move(outside, chunk)
    os.mkfifo(path / "x" / "pipe")  # reading a FIFO blocks forever
    refused_lean(path, "which is not a regular file")


def test_the_command_line_refuses_claiming_files_in_one_line(stores):
    paths = [netcdf_claiming(stores, "cli.nc", 5 * 10**8)]
    paths.append(zarr_claiming(stores, "cli.zarr", 3 * 10**9))
    for path in paths:
        for args in (["summary", path.name], ["report", path.name, "-o", "r.html"]):
            start = time.perf_counter()
            run = cli(*args, cwd=stores, preexec_fn=cap_memory)
            assert time.perf_counter() - start < 60
            one_line_error(run, f"{path.name}: not read: it declares", "'junk'")
    assert not (stores / "r.html").exists()


# --- the command line --------------------------------------------------------------------


@pytest.mark.parametrize("n", ["1", "0", "-5", "179", "x", "2.5"])
def test_demo_refuses_an_impossible_n_in_one_usage_line(tmp_path, n):
    for command in (["-m", "diversity_profiles.cli", "demo"], ["-m", "diversity_profiles.demo"]):
        run = subprocess.run(
            [sys.executable, *command, "--n", n, "-o", "d.html"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        # A usage error, as for every other bad argument: argparse's status 2.
        last = one_line_error(run, "argument --n: must be a whole number", "from 2 to 178", code=2)
        assert last.endswith(f"not {n!r}")
    assert list(tmp_path.iterdir()) == []


def test_the_demo_bound_is_the_one_class_sets_images():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits

    from diversity_profiles import demo

    assert demo.MAX_PER_SET == int((load_digits().target == 0).sum())
    assert [len(v) for v in demo.digit_sets(demo.MAX_PER_SET).values()] == [178] * 3
    for bad in (demo.MAX_PER_SET + 1, 1, 0, -5, 2.0, True):
        with pytest.raises(ValueError, match="'n_per_set' argument of digit_sets must be an int"):
            demo.digit_sets(bad)


def test_a_closed_pipe_ends_summary_quietly(stores):
    """``summary p.nc | head -3``: the reader is gone before we write (its end of the
    pipe is closed first, so every write fails: no race with a real head)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "diversity_profiles.cli", "summary", "p.nc"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=stores,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert run.returncode == 1 and run.stderr == ""


def test_overwrite_onto_a_symlink_says_it_is_the_link(stores, tmp_path):
    shutil.copy(stores / "p.nc", tmp_path / "p.nc")
    shutil.copytree(stores / "p.zarr", tmp_path / "p.zarr")
    np.save(tmp_path / "a.npy", np.random.default_rng(1).normal(size=(6, 2)))
    (tmp_path / "page.html").write_text("<!doctype html>" + dp.files.GENERATOR_META)
    before = {p.name: allocated(p) for p in tmp_path.iterdir()}
    for target, kind in (("p.nc", "store"), ("p.zarr", "store"), ("page.html", "html")):
        link = tmp_path / f"link{target[target.index('.') :]}"
        link.symlink_to(target)
        if kind == "store":
            args = ["compute", "a.npy", "a.npy", "--label", "x", "--label", "y"]
            run = cli(*args, "--families", "richness", "-o", link.name, "--overwrite", cwd=tmp_path)
        else:
            run = cli("report", "p.nc", "-o", link.name, "--overwrite", cwd=tmp_path)
        one_line_error(run, f"{link.name}: is a symbolic link (to {target!r})", "name the file")
        assert link.is_symlink() and os.readlink(link) == target
        link.unlink()
    # Our own files behind the links are untouched, and nothing else was left.
    assert {p.name: allocated(p) for p in tmp_path.iterdir()} == before
    xr.testing.assert_identical(
        dp.open_profiles(tmp_path / "p.nc"), dp.open_profiles(stores / "p.nc")
    )


# --- a full disk -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def sets_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sets")
    rng = np.random.default_rng(2)
    for k in range(3):
        np.save(folder / f"s{k}.npy", rng.normal(size=(60, 5)))
    return folder


def small_disk(folder):
    """A real 64 KiB tmpfs at ``folder`` (root only), or None where it cannot be mounted."""
    folder.mkdir()
    if os.geteuid() != 0:
        return None
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)])
    return folder if mounted.returncode == 0 else None


def limit_file_size():
    # Writes past 64 KiB fail with EFBIG instead of killing the process (SIGXFSZ).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


@pytest.mark.parametrize("how", ["tmpfs", "file-size limit"])
@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_a_full_disk_gives_one_line_and_leaves_the_old_file(sets_folder, tmp_path, how, suffix):
    """Before: about 40 h5py "Exception ignored ... No space left on device" tracebacks
    (or a segmentation fault at exit) after the one-line error, for netCDF output."""
    disk = tmp_path / "disk"
    if how == "tmpfs":
        if small_disk(disk) is None:
            pytest.skip("a tmpfs cannot be mounted here (needs root)")
        reason, limit = "No space left on device", None
    else:
        disk.mkdir()
        reason, limit = "File too large", limit_file_size
    try:
        for k in range(3):
            shutil.copy(sets_folder / f"s{k}.npy", disk.parent / f"s{k}.npy")
        small = ["compute", "s0.npy", "s1.npy", "--families", "richness", "--n-boot", "0"]
        out = f"disk/out{suffix}"
        assert cli(*small, "-o", out, cwd=tmp_path).returncode == 0  # fits (about 16 KB)
        before = dp.open_profiles(tmp_path / out)
        big = ["compute", "s0.npy", "s1.npy", "s2.npy", "--n-points", "50", "--overwrite"]
        run = cli(*big, "-o", out, cwd=tmp_path, preexec_fn=limit)
        one_line_error(run, f"{out}: not written ({reason})")
        assert "Fatal Python error" not in run.stderr
        assert [p.name for p in disk.iterdir()] == [f"out{suffix}"]  # no temporary left
        xr.testing.assert_identical(dp.open_profiles(tmp_path / out), before)
    finally:
        if how == "tmpfs":
            subprocess.run(["umount", str(disk)])


# --- signals during a write ------------------------------------------------------------

SLOW_WRITER = """
import signal, sys, time
from pathlib import Path
from diversity_profiles.files import write_atomic

# The dispositions of a terminal: a runner under nohup hands SIGHUP down ignored, and an
# ignored signal is left alone by the write (it does not end the process).
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)

target, shape = Path(sys.argv[1]), sys.argv[2]

def write(temp):  # half a file (or store), then a long wait: the signal comes meanwhile
    if shape == "directory":
        temp.mkdir()
        (temp / "zarr.json").write_text("{")
    else:
        temp.write_bytes(b"\\x89HDF half a file")
    print("writing", flush=True)
    time.sleep(120)

write_atomic(target, write, kind="html", overwrite=True)
"""


def wait_for_line(process, expected, timeout=60):
    line = process.stdout.readline()  # blocks until the child writes it (or ends)
    assert line.strip() == expected, (line, process.stderr.read())


@pytest.mark.parametrize("shape", ["file", "directory"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_write_leaves_no_temporary(tmp_path, signum, shape):
    target = tmp_path / "page.html"
    page = "<!doctype html>" + dp.files.GENERATOR_META + "the old page"
    target.write_text(page)  # ours, so overwrite would replace it, had the write finished
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, str(target), shape],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(child, "writing")
        assert len(list(tmp_path.iterdir())) == 2  # the temporary exists, mid-write
        child.send_signal(signum)
        assert child.wait(timeout=60) == -signum  # it still ends by the signal
    finally:
        child.kill()
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]
    assert target.read_text() == page


CLI_WITH_SLOW_DISK = """
import os, sys, time
from diversity_profiles import cli

def slow_fsync(fd):  # the netCDF bytes (or a zarr store's first file) are written, then
    print("writing", flush=True)  # the disk stalls
    time.sleep(120)

os.fsync = slow_fsync
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_the_command_line_cleans_up_on_sigterm(sets_folder, suffix):
    out = sets_folder / f"term{suffix}"
    args = ["compute", "s0.npy", "s1.npy", "--families", "richness", "-o", out.name]
    assert cli(*args, cwd=sets_folder).returncode == 0
    again = [*args, "--label", "x", "--label", "y", "--overwrite"]
    before = dp.open_profiles(out)
    child = subprocess.Popen(
        [sys.executable, "-c", CLI_WITH_SLOW_DISK, *again],
        cwd=sets_folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_line(child, "writing")
        assert [p for p in sets_folder.iterdir() if ".tmp-" in p.name]  # mid-write
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == -signal.SIGTERM
    finally:
        child.kill()
    assert not [p.name for p in sets_folder.iterdir() if p.name.startswith(".")]
    xr.testing.assert_identical(dp.open_profiles(out), before)
