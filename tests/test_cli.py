"""The command line end to end on files in a temporary folder, malformed ones included."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    np.save(folder / "beam.npy", rng.standard_normal((40, 6)) * [1, 1, 1, 0.2, 0.2, 0.2])
    np.savetxt(
        folder / "human.csv",
        rng.standard_normal((35, 6)),
        delimiter=",",
        header="a,b,c,d,e,f",
        comments="",
    )
    np.savez(folder / "dbs.npz", X=rng.standard_normal((30, 6)))
    (folder / "broken.npy").write_bytes(b"not a numpy file")
    (folder / "text.csv").write_text("x,y\nfoo,bar\n")
    return folder


def test_compute_summary_report(files):
    run = cli(
        "compute",
        "beam.npy",
        "human.csv",
        "dbs.npz",
        "-o",
        "prof.nc",
        "--representation",
        "toy",
        "--distance",
        "cosine",
        "--n-points",
        "12",
        cwd=files,
    )
    assert run.returncode == 0, run.stderr
    assert "[1/3] reading beam.npy" in run.stderr  # progress on stderr
    tree = xr.open_datatree(files / "prof.nc")
    assert tree.dp.conditions == ["toy/cosine"] and tree.dp.sets == ["beam", "human", "dbs"]
    expected = dp.vendi_score_dual(np.load(files / "beam.npy"))
    assert float(tree["toy/cosine"].vendi.sel(set="beam", q=1.0)) == pytest.approx(expected)
    summary = cli("summary", "prof.nc", cwd=files)
    assert summary.returncode == 0 and summary.stdout.startswith("### toy/cosine")
    report = cli("report", "prof.nc", "-o", "r.html", cwd=files)
    assert report.returncode == 0 and (files / "r.html").read_text().startswith("<!doctype html>")
    again = cli("report", "prof.nc", "-o", "r.html", cwd=files)
    assert again.returncode == 1 and "r.html: exists; pass --overwrite" in again.stderr
    assert cli("report", "prof.nc", "-o", "r.html", "--overwrite", cwd=files).returncode == 0
    refused = cli("compute", "beam.npy", "dbs.npz", "-o", "prof.nc", cwd=files)
    assert refused.returncode == 1 and "prof.nc: exists" in refused.stderr
    tested = cli(
        "compute", "beam.npy", "dbs.npz", "-o", "tested.nc", "--families", "vendi,energy",
        "--n-points", "6", "--permutations", "19", "--representation", "toy", "--distance",
        "cosine", cwd=files,
    )  # fmt: skip
    assert tested.returncode == 0, tested.stderr
    node = xr.open_datatree(files / "tested.nc")["toy/cosine/permutation"]
    assert int(node.attrs["n_permutations"]) == 19
    summary = cli("summary", "tested.nc", cwd=files)
    assert "Permutation test (19 relabellings per pair" in summary.stdout
    bad = cli("compute", "beam.npy", "-o", "x.nc", "--permutations", "-3", cwd=files)
    assert bad.returncode == 2 and "must be an int >= 0, not '-3'" in bad.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["compute", "broken.npy", "beam.npy", "-o", "x.nc"], "broken.npy: cannot be read as npy"),
        (
            ["compute", "text.csv", "beam.npy", "-o", "x.nc"],
            "text.csv: line 2, column 1: 'foo' is not a number",
        ),
        (["compute", "missing.npy", "-o", "x.nc"], "missing.npy: no such file"),
        (
            ["compute", "beam.npy", "dbs.npz", "-o", "x.nc", "--distance", "manhattan"],
            "'distance' argument of profiles must be one of",
        ),
        (["summary", "beam.npy"], "beam.npy: not a readable profile file"),
    ],
)
def test_expected_mistakes_get_one_line_and_no_traceback(files, args, message):
    run = cli(*args, cwd=files)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]  # earlier lines are progress
    assert last.startswith("diversity-profiles: error:") and message in last


def test_help_everywhere_and_usage_errors_exit_2(files):
    for sub in ([], ["compute"], ["summary"], ["report"], ["demo"]):
        assert cli(*sub, "--help", cwd=files).returncode == 0
    assert cli("compute", cwd=files).returncode == 2


def test_demo_profiles_real_digits_and_writes_a_report(files):
    run = cli("demo", "--n", "40", "-o", "demo.html", cwd=files)
    assert run.returncode == 0, run.stderr
    assert "### pixels/euclidean" in run.stdout
    assert (files / "demo.html").read_text().startswith("<!doctype html>")


def test_summary_in_a_terminal_writes_labels_without_markdown_escapes(files):
    shutil.copy(files / "beam.npy", files / "my_set[1].npy")
    run = cli(
        "compute", "my_set[1].npy", "dbs.npz", "-o", "escaped.nc", "--n-points", "12", cwd=files
    )
    assert run.returncode == 0, run.stderr
    summary = cli("summary", "escaped.nc", cwd=files)
    assert summary.returncode == 0
    assert (
        "my_set[1]" in summary.stdout
        and "\\[" not in summary.stdout
        and "\\_" not in summary.stdout
    )
