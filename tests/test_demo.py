"""The built-in demo's summary, the first thing a new user reads, states only findings.

At tau = 0.472 the 1-class set has 150 circles and the 3-class set 149 (one
near-duplicate pair); from tau ~ 1 on the 3-class set leads by 37-54. That blip is
within the verdict rule's margin (1% of n = 1.5 samples), so the summary must not call
it a crossing, and must say what it dismissed.
"""

import re

import xarray as xr

from diversity_profiles import demo


def test_demo_summary_reports_no_negligible_crossing(tmp_path, capsys):
    out = tmp_path / "digits.nc"
    assert demo.main(["-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cross in circles" not in text
    assert "3 classes ≻ 1 class in vendi, magnitude, circles" in text
    assert re.search(
        r"within the margin: 1 class ahead by ≤ 1 sample on \d+% of the domain in circles", text
    )
    assert "Margins (leads within them, or on less than 5% of the domain" in text
    # Without replicates the summary says that nothing holds with confidence.
    assert "No verdict here holds with confidence" in text
    # The data are what the docstring says: the crossing exists without the margin.
    res = xr.open_datatree(out).dp.compare()["pixels/euclidean"]
    pair = dict(set_a="1 class", set_b="3 classes", family="circles")
    assert str(res.verdict_plain.sel(**pair).values) == "crosses"
    assert str(res.verdict.sel(**pair).values) == "dominated"
    assert float(res.minor_lead.sel(**pair)) == 1.0


def test_digit_sets_without_scikit_learn_raises_importerror_and_the_cli_exits_2(
    monkeypatch, tmp_path, capsys
):
    import sys

    import pytest

    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'diversity-profiles\[examples\]'"):
        demo.digit_sets(10)
    assert demo.main(["-o", str(tmp_path / "d.nc")]) == 2
    assert "error: digit_sets reads scikit-learn" in capsys.readouterr().err
    assert not (tmp_path / "d.nc").exists()
