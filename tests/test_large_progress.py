"""Progress of the large-n solvers: a bar appears when the first step predicts slow work,
and not for quick work (each checked on what reaches stderr)."""

import numpy as np

from diversity_profiles.core import _budget, timed_progress
from diversity_profiles.large import circles_large, magnitude_large, vendi_large


def test_timed_progress_shows_a_bar_only_when_the_rest_is_predicted_slow(capsys):
    assert list(timed_progress(range(5), total=5, desc="quick work", after_s=60.0)) == list(
        range(5)
    )
    assert "quick work" not in capsys.readouterr().err
    assert list(timed_progress(range(5), total=5, desc="slow work", after_s=-1.0)) == list(range(5))
    assert "slow work (after the first)" in capsys.readouterr().err
    assert list(timed_progress([], total=0, desc="nothing")) == []


def test_forced_bars_name_the_solver_and_what_it_walks(capsys):
    X = np.random.default_rng(0).normal(size=(300, 3))
    mag = magnitude_large(X, [0.5, 1.0, 2.0], progress=True)
    err = capsys.readouterr().err
    assert "magnitude_large: scales of 300 points" in err
    circ = circles_large(X, [0.5, 1.0, 2.0], progress=True)
    err = capsys.readouterr().err
    assert "circles_large: pairs within the thresholds, 300 points" in err
    assert "upward over τ" in err and "downward over τ" in err
    vend = vendi_large(X, [0.5, 1.0, 2.0], bandwidth=1.0, rank=20, progress=True)
    assert "vendi_large: Lanczos steps" in capsys.readouterr().err
    # The bars change nothing: the same values without them.
    assert np.array_equal(magnitude_large(X, [0.5, 1.0, 2.0], progress=False).value, mag.value)
    assert np.array_equal(circles_large(X, [0.5, 1.0, 2.0], progress=False).lower, circ.lower)
    again = vendi_large(X, [0.5, 1.0, 2.0], bandwidth=1.0, rank=20, progress=False)
    assert np.array_equal(again.value, vend.value)
    assert "large" not in capsys.readouterr().err


def test_by_default_a_bar_appears_when_the_first_step_predicts_more_than_the_threshold(
    capsys, monkeypatch
):
    X = np.random.default_rng(1).normal(size=(200, 3))
    monkeypatch.setattr(_budget, "PROGRESS_AFTER_S", 1e9)
    magnitude_large(X, [0.5, 1.0])
    assert "magnitude_large" not in capsys.readouterr().err
    monkeypatch.setattr(_budget, "PROGRESS_AFTER_S", -1.0)
    magnitude_large(X, [0.5, 1.0])
    assert "magnitude_large: scales of 200 points" in capsys.readouterr().err


def test_the_plans_probes_draw_no_bar(capsys):
    """The up-front plan times the solvers on small probes inside quiet_progress: a bar
    there would read as if the real run had started. Outside it the same loop, predicted
    to be long (after_s=0), draws one."""
    import time

    from diversity_profiles.core import quiet_progress, timed_progress

    def loop():
        for _ in timed_progress(range(3), total=3, desc="probe", after_s=0.0):
            time.sleep(0.01)

    with quiet_progress():
        loop()
    assert "probe" not in capsys.readouterr().err
    loop()
    assert "probe" in capsys.readouterr().err
