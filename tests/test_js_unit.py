"""The JavaScript unit tests (vitest, in Debian's Chromium) run as part of the suite."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_vitest_suite_passes_in_chromium():
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npm is not installed: the JavaScript unit tests (vitest) need it")
    run = subprocess.run(
        [npx, "--no-install", "vitest", "run", "--reporter=dot"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"},
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert re.search(r"Tests\s+\d+ passed", run.stdout) and "failed" not in run.stdout
