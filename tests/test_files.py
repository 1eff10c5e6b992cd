"""Files and the command line: no data loss, atomic writes, untrusted input.

The real console module runs in temporary folders on real files (pandas-written CSVs,
crafted netCDF and zarr trees); nothing is mocked.
"""

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp
from diversity_profiles.files._io import _move_noreplace, write_atomic

FAMILY_VARS = ["vendi", "magnitude", "circles", "circles_upper", "energy"]
FAMILY_VARS += ["average_distance", "richness"]


def load(path):
    """Read a tree with xarray itself, independently of the code under test."""
    return xr.open_datatree(path, engine="zarr" if path.is_dir() else None).load()


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "diversity_profiles.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def one_line_error(run, *fragments):
    """Exit 1, no traceback, and a last stderr line naming the problem."""
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("diversity-profiles: error:"), run.stderr
    for fragment in fragments:
        assert fragment in last, last
    return last


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("files")
    rng = np.random.default_rng(1)
    np.save(path / "a.npy", rng.standard_normal((25, 4)))
    np.save(path / "b.npy", rng.standard_normal((25, 4)) * 0.5)
    run = cli("compute", "a.npy", "b.npy", "-o", "p.nc", "--n-points", "8", cwd=path)
    assert run.returncode == 0, run.stderr
    return path


@pytest.fixture(scope="module")
def condition(folder):
    return load(folder / "p.nc")["embedding/cosine"].to_dataset()


def test_overwrite_replaces_only_what_this_tool_wrote(folder):
    photos = folder / "photos.zarr"
    photos.mkdir()
    (photos / "holiday.jpg").write_bytes(b"\xff\xd8 a photo")
    run = cli("compute", "a.npy", "b.npy", "-o", photos, "--overwrite", cwd=folder)
    one_line_error(run, "photos.zarr: exists and is not a profile file written by")
    assert (photos / "holiday.jpg").read_bytes() == b"\xff\xd8 a photo"

    before = (folder / "a.npy").read_bytes()
    run = cli("compute", "a.npy", "b.npy", "-o", "a.npy", "--overwrite", cwd=folder)
    one_line_error(run, "a.npy: is also an input")
    assert (folder / "a.npy").read_bytes() == before

    before = (folder / "p.nc").read_bytes()
    run = cli("report", "p.nc", "-o", "p.nc", "--overwrite", cwd=folder)
    one_line_error(run, "p.nc: is also an input")
    assert (folder / "p.nc").read_bytes() == before

    (folder / "notes.html").write_text("my notes")
    run = cli("report", "p.nc", "-o", "notes.html", "--overwrite", cwd=folder)
    one_line_error(run, "notes.html: exists and is not an HTML page written by")
    assert (folder / "notes.html").read_text() == "my notes"

    # What it did write, it replaces (a zarr directory: moved aside, then deleted).
    args = ["compute", "a.npy", "b.npy", "--n-points", "8", "--families", "richness"]
    assert cli(*args, "-o", "mine.zarr", cwd=folder).returncode == 0
    run = cli(*args, "--label", "x", "--label", "y", "-o", "mine.zarr", "--overwrite", cwd=folder)
    assert run.returncode == 0, run.stderr
    assert load(folder / "mine.zarr").dp.sets == ["x", "y"]
    assert not [p for p in folder.iterdir() if p.name.startswith(".mine.zarr")]


def test_an_interrupted_write_leaves_no_target_and_no_debris(tmp_path):
    target = tmp_path / "p.nc"

    def half_then_ctrl_c(path):
        path.write_bytes(b"\x89HDF\r\n\x1a\n half a file")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, half_then_ctrl_c, kind="store", overwrite=False)
    assert list(tmp_path.iterdir()) == []

    def half_a_directory(path):
        path.mkdir()
        (path / "zarr.json").write_text("{")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "p.zarr", half_a_directory, kind="store", overwrite=False)
    assert list(tmp_path.iterdir()) == []


def test_incomplete_or_foreign_files_are_refused_in_one_line(folder, condition):
    # A file cut short, and one whose curves were never written (what an interrupted
    # writer leaves): both read as "tied in every family" with exit 0 before.
    partial = xr.DataTree.from_dict({"embedding/cosine": condition.drop_vars(FAMILY_VARS)})
    partial.to_netcdf(folder / "partial.nc")
    run = cli("summary", "partial.nc", cwd=folder)
    one_line_error(run, "partial.nc: not a valid profile tree", "vendi")
    data = (folder / "p.nc").read_bytes()
    (folder / "cut.nc").write_bytes(data[: len(data) // 2])
    one_line_error(cli("summary", "cut.nc", cwd=folder), "cut.nc: not a readable profile file")
    xr.DataTree.from_dict({"x": xr.Dataset({"v": ("i", [1.0, 2.0])})}).to_netcdf(
        folder / "foreign.nc"
    )
    one_line_error(cli("summary", "foreign.nc", cwd=folder), "foreign.nc: not a valid", "no prof")


def test_concurrent_runs_without_overwrite_one_wins_and_nothing_is_lost(folder):
    # Big enough that both runs pass the early existence check before either finishes.
    rng = np.random.default_rng(2)
    np.save(folder / "big1.npy", rng.standard_normal((250, 8)))
    np.save(folder / "big2.npy", rng.standard_normal((250, 8)))
    runs = [
        subprocess.Popen(
            [
                *(
                    sys.executable,
                    "-m",
                    "diversity_profiles.cli",
                    "compute",
                    "big1.npy",
                    "big2.npy",
                ),
                *("--label", f"{who}1", "--label", f"{who}2", "-o", "race.nc"),
                *("--n-points", "20", "--families", "vendi,magnitude"),
            ],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("first", "second")
    ]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results
    winner = "first" if results[0][0] == 0 else "second"
    loser_err = results[1 if winner == "first" else 0][1]
    assert "race.nc: exists" in loser_err and "Traceback" not in loser_err
    assert load(folder / "race.nc").dp.sets == [f"{winner}1", f"{winner}2"]


def test_the_binding_existence_check_is_at_the_rename(tmp_path):
    # The competitor finishes while we compute: we must fail, its file must survive.
    for name, make in (
        ("t.html", lambda p: p.write_text("ours")),
        ("t.zarr", lambda p: p.mkdir()),  # an empty directory: plain rename(2) replaces it
    ):
        target = tmp_path / name

        def write(path, target=target, make=make):
            make(target)
            if target.is_dir():
                path.mkdir()
                (path / "zarr.json").write_text("{}")
            else:
                path.write_text("late")

        with pytest.raises(FileExistsError, match="exists"):
            write_atomic(target, write, kind="store", overwrite=False)
        if target.is_dir():
            assert list(target.iterdir()) == []
        else:
            assert target.read_text() == "ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.html", "t.zarr"]


@pytest.mark.parametrize("renameat2", [True, False])  # False: the link/mkdir fallback
def test_the_no_replace_move_never_replaces(tmp_path, renameat2):
    for make in (lambda p: p.write_text("new"), lambda p: p.mkdir()):
        for existing in (lambda p: p.write_text("old"), lambda p: p.mkdir()):
            src, dst = tmp_path / "src", tmp_path / "dst"
            make(src)
            existing(dst)
            with pytest.raises(FileExistsError):
                _move_noreplace(src, dst, renameat2=renameat2)
            assert dst.is_dir() or dst.read_text() == "old"
            _move_noreplace(src, tmp_path / "free", renameat2=renameat2)
            assert not src.exists() and (tmp_path / "free").exists()
            for p in (dst, tmp_path / "free"):
                p.rmdir() if p.is_dir() else p.unlink()


def test_csv_files_written_by_pandas_are_read_whole(folder):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((41, 5)), rng.standard_normal((40, 5))
    pd.DataFrame(x).to_csv(folder / "noindex.csv", index=False)  # header "0,1,2,3,4"
    pd.DataFrame(y).to_csv(folder / "indexed.csv")  # header ",0,1,2,3,4" and an index
    run = cli("compute", "noindex.csv", "indexed.csv", "-o", "pd.nc", "--n-points", "8", cwd=folder)
    assert run.returncode == 0, run.stderr
    ds = load(folder / "pd.nc")["embedding/cosine"]
    assert ds["n_samples"].values.tolist() == [41, 40]
    for label, arr in (("noindex", x), ("indexed", y)):
        got = float(ds["vendi"].sel(set=label, q=1.0))
        assert got == pytest.approx(dp.vendi_score_dual(arr), rel=1e-9)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1,2\n3,4,5\n6,7,8\n", "line 2 has 3 value(s) but line 1 has 2"),  # ragged first row
        ("a,b\n1,2\n3,4\n5\n", "line 4 has 1 value(s) but line 1 has 2"),
        ("a,b\n1,2\n3,four\n", "line 3, column 2: 'four' is not a number"),
        ("1,2\n3,\n", "line 2, column 2: an empty cell is not a number"),
    ],
)
def test_malformed_csv_names_the_line(folder, text, fragment):
    (folder / "bad.csv").write_text(text)
    one_line_error(cli("compute", "bad.csv", "a.npy", "-o", "never.nc", cwd=folder), fragment)
    assert not (folder / "never.nc").exists()


@pytest.mark.parametrize(
    "output, fragment",
    [
        ("x.npy", "x.npy: a profile file must end in .nc"),
        ("nowhere/x.nc", "the folder 'nowhere' does not exist"),
        ("adir.nc", "adir.nc: is a directory"),
    ],
)
def test_bad_output_paths_are_refused_before_computing(folder, output, fragment):
    (folder / "adir.nc").mkdir(exist_ok=True)
    run = cli("compute", "a.npy", "b.npy", "-o", output, cwd=folder)
    one_line_error(run, fragment)
    assert "reading" not in run.stderr  # refused before any work
    assert not (folder / "x.npy").exists() and list((folder / "adir.nc").iterdir()) == []


def test_suffix_case_does_not_change_the_format(folder):
    run = cli("compute", "a.npy", "b.npy", "-o", "UPPER.ZARR", "--families", "richness", cwd=folder)
    assert run.returncode == 0, run.stderr
    assert (folder / "UPPER.ZARR").is_dir()  # a zarr store, not netCDF under a zarr name
    assert load(folder / "UPPER.ZARR").dp.sets == ["a", "b"]
    one_line_error(cli("report", "p.nc", "-o", "r.txt", cwd=folder), "must end in .html")


def test_demo_refuses_a_foreign_output(folder):
    (folder / "theirs.nc").write_text("someone else's data")
    run = subprocess.run(
        [sys.executable, "-m", "diversity_profiles.demo", "-o", "theirs.nc", "--overwrite"],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=300,
    )
    assert run.returncode == 2 and "not a profile file written by" in run.stderr
    assert (folder / "theirs.nc").read_text() == "someone else's data"


def test_control_characters_in_labels_reach_the_terminal_escaped(folder):
    label = "\x1b[31mred\x1b]0;pwned\x07"
    args = ["compute", "a.npy", "b.npy", "--label", label, "--label", "b", "--families"]
    run = cli(*args, "richness,average_distance", "-o", "ansi.nc", cwd=folder)
    assert run.returncode == 0, run.stderr
    summary = cli("summary", "ansi.nc", cwd=folder)
    assert summary.returncode == 0, summary.stderr
    assert "\x1b" not in summary.stdout and "\x07" not in summary.stdout
    # Visible as text: escaped for the terminal (the terminal summary is plain text).
    assert "\\x1b[31mred\\x1b]0;pwned\\x07" in summary.stdout  # plain text, escaped


def test_crafted_trees_with_bad_labels_are_refused(folder, condition):
    dup = condition.assign_coords(set=["a", "a"])
    xr.DataTree.from_dict({"embedding/cosine": dup}).to_netcdf(folder / "dup.nc")
    for command in (["summary", "dup.nc"], ["report", "dup.nc", "-o", "dup.html"]):
        one_line_error(cli(*command, cwd=folder), "dup.nc: not a valid profile tree", "twice")
    nul = condition.assign_coords(set=np.array(["a\x00b", "c"], dtype=object))
    xr.DataTree.from_dict({"embedding/cosine": nul}).to_zarr(folder / "nul.zarr")
    one_line_error(cli("summary", "nul.zarr", cwd=folder), "nul.zarr", "NUL character")
    with pytest.raises(ValueError, match=r"dup\.nc: .* 'a' appears twice"):
        dp.open_profiles(folder / "dup.nc")


def test_export_html_overwrites_only_its_own_pages(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from diversity_profiles import sharing

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Hello")])
    page = sharing.export_html(nb, tmp_path / "page.html").read_text()
    assert '<meta name="generator" content="diversity-profiles' in page.split("</head>")[0]
    (tmp_path / "notes.html").write_text("<html>my notes</html>")
    with pytest.raises(ValueError, match="not an HTML page written by diversity-profiles"):
        sharing.export_html(nb, tmp_path / "notes.html", overwrite=True)
    assert (tmp_path / "notes.html").read_text() == "<html>my notes</html>"


def test_profiles_refuses_labels_that_cannot_be_stored():
    """A NUL or a lone surrogate in a label or the representation is refused at the source,
    naming the argument, instead of failing later with a partial file."""
    import diversity_profiles as dp

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    for bad in ("a\x00b", "a\ud800b"):
        with pytest.raises(ValueError, match="set label passed to profiles"):
            dp.profiles({bad: X}, representation="r", distance="euclidean", families="richness")
        with pytest.raises(ValueError, match="'representation' argument of profiles"):
            dp.profiles({"a": X}, representation=bad, distance="euclidean", families="richness")


def test_export_html_never_replaces_a_side_file_that_is_not_ours(tmp_path):
    """The page's scripts are only ever added beside it: a different require.js already in
    the folder is refused before anything is written, even with overwrite=True."""
    import nbformat

    from diversity_profiles import sharing

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("hello")])
    mine = tmp_path / "require.js"
    mine.write_text("// my own require.js")
    for overwrite in (False, True):
        with pytest.raises(FileExistsError, match=r"require\.js: exists and is not the file"):
            sharing.export_html(nb, tmp_path / "page.html", overwrite=overwrite)
    assert mine.read_text() == "// my own require.js"
    assert not (tmp_path / "page.html").exists()
    mine.unlink()
    sharing.export_html(nb, tmp_path / "page.html")
    sharing.export_html(nb, tmp_path / "again.html")  # identical side files are kept
    assert (tmp_path / "require.js").read_bytes() != b""


def test_execute_notebook_writes_atomically_and_overwrites_only_its_own(tmp_path):
    import nbformat

    from diversity_profiles import sharing

    source = tmp_path / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), source)
    with pytest.raises(ValueError, match="is also an input"):
        sharing.execute_notebook(source, source, overwrite=True)
    notes = tmp_path / "notes.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notes)
    with pytest.raises(ValueError, match="not a notebook written by diversity-profiles"):
        sharing.execute_notebook(source, notes, overwrite=True)
    out = sharing.execute_notebook(source)
    assert nbformat.read(out, as_version=4).cells[0].outputs[0]["data"]["text/plain"] == "2"
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        sharing.execute_notebook(source)
    assert sharing.execute_notebook(source, overwrite=True) == out
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []
