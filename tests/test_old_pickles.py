"""Pickles written by version 0.1 still load: they name the old module paths
(``diversity_profiles.profiler``, ``diversity_profiles.condition``), which resolve through
``_deprecated.MOVED``. The fixture and how it was made: ``tests/data/README.md``.

Run alone: ``python -m pytest tests/test_old_pickles.py``.
"""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import diversity_profiles as dp

FIXTURE = Path(__file__).parent / "data" / "profiler_v0_1.pkl"
#: Attributes that differ by construction: the time of the run and the version that made it.
STAMPS = ("created", "diversity_profiles_version")


@pytest.fixture(scope="module")
def old():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the old paths, on first use
        return pickle.loads(FIXTURE.read_bytes())


def sets():
    """The inputs of the fixture, drawn as ``tests/data/README.md`` did."""
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(30, 3)), rng.normal(size=(20, 3)) * 1.2
    return {"A": A, "B": B}


def nodes(tree: xr.DataTree) -> dict[str, xr.Dataset]:
    return {node.path: node.to_dataset(inherit=False) for node in tree.subtree}


def kept(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k not in STAMPS}


def test_the_old_pickle_loads_as_todays_classes(old):
    assert set(old) == {"profiler", "tree"}
    assert type(old["profiler"]) is dp.Profiler
    assert isinstance(old["tree"], xr.DataTree)
    assert old["tree"]["r/euclidean"].attrs["diversity_profiles_version"] == "0.1.0"


def test_the_old_tree_equals_one_computed_now(old):
    """Same values, coordinates and attributes; a newer version may record more attributes
    (it keeps every old one) and the interpolation bounds of monotone families (0.2)."""
    # 0.1 profiled without replicates by default; 0.2's default adds them (n_boot="auto").
    now = dp.profiles(sets(), representation="r", distance="euclidean", n_points=8, n_boot=0)
    before, after = nodes(old["tree"]), nodes(now)
    assert list(before) == list(after)
    for path, ds in before.items():
        # Energy is summed in log space since 0.2 (exact to round-off; 0.1 read it off the
        # log-distance histogram): the same values to well within 0.1's own error.
        added = sorted(set(after[path].data_vars) - set(ds.data_vars))
        assert all(name.endswith("_interpolation_error") for name in added), added
        xr.testing.assert_allclose(ds, after[path].drop_vars(added), rtol=1e-6)
        assert kept(ds.attrs).items() <= kept(after[path].attrs).items(), path
        for name, var in ds.variables.items():
            assert var.attrs.items() <= after[path][name].attrs.items(), f"{path}/{name}"


def test_the_old_profiler_still_profiles(old):
    tree = old["profiler"].profiles(families="richness")
    assert tree["r/euclidean"]["richness"].values.tolist() == [30, 20]
    assert tree["r/euclidean"]["set"].values.tolist() == ["A", "B"]
