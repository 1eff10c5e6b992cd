"""Helpers to run the built widget in Debian's Chromium through Playwright.

The page loads the real bundle and calls its ``render`` with a model that holds
the widget's real state (``ProfileExplorer.get_state()``) and counts listeners.
Every request that is not to the local test server is blocked.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as rule
from diversity_profiles.comparison._summary import summary
from diversity_profiles.pipeline import conditions_of

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

#: The test page: loads the real bundle and renders it with a counting model.
PAGE = (Path(__file__).resolve().parents[1] / "js" / "tests" / "explorer_page.html").read_text()


def settled(page) -> None:
    """Wait until the explorer has followed the last domain step: the matrices, the summary
    and the synced domains are redrawn after the chart's next frame (js/explorer.ts), so
    after a frame and two tasks they are."""
    page.evaluate(
        "() => new Promise((done) =>"
        " requestAnimationFrame(() => setTimeout(() => setTimeout(done))))"
    )


def write_page(folder: Path, bundle: Path, state: dict) -> None:
    """The test page, the bundle and the widget state, side by side in ``folder``."""
    shutil.copy(bundle, folder / "widget.js")
    serialisable = dict(state)
    serialisable["curves"] = base64.b64encode(bytes(state["curves"])).decode()
    (folder / "state.json").write_text(json.dumps(serialisable))
    (folder / "index.html").write_text(PAGE)


def write_themed_page(folder: Path, bundle: Path, state: dict, theme: str) -> None:
    """:func:`write_page` under the installed JupyterLab's own ``theme`` stylesheet
    ("light" or "dark"), the page's background and text taken from it as JupyterLab does."""
    import jupyterlab

    themes = Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab"
    css = (themes / f"theme-{theme}-extension" / "index.css").read_text("utf-8")
    (folder / "theme.css").write_text(css, "utf-8")
    write_page(folder, bundle, state)
    (folder / "index.html").write_text(
        PAGE.replace(
            "<title>explorer test</title>",
            '<title>explorer test</title><link rel="stylesheet" href="theme.css">'
            "<style>body { background: var(--jp-layout-color0); "
            "color: var(--jp-ui-font-color1); }</style>",
        )
    )


@contextlib.contextmanager
def serve(folder: Path):
    """A loopback HTTP server for ``folder``; yields its base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


#: What a page opened from disk may load: itself, and the blobs and data URLs it makes.
LOCAL_FILE = ("file://", "blob:", "data:")


def block_outside(page, base_url: str | tuple[str, ...]) -> list[str]:
    """Abort every request not addressed to the local server (or, with LOCAL_FILE, not a
    local file); returns what was blocked."""
    blocked: list[str] = []

    def route(r):
        if r.request.url.startswith(base_url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return blocked


@contextlib.contextmanager
def jupyterlab(root: Path, *, app: str = "jupyterlab"):
    """A real JupyterLab (or ``app="notebook"``: Notebook 7) server for ``root`` on
    loopback, with no token; yields its base URL. Its log goes to ``root/server.log``."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (root / "server.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            app,
            "--allow-root",
            "--no-browser",
            f"--ServerApp.port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.root_dir={root}",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            # window.jupyterapp, for commands and for knowing the app has started.
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                urllib.request.urlopen(f"{url}/api", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(
                        f"{app} did not start:\n{(root / 'server.log').read_text()[-3000:]}"
                    ) from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def compare_as_the_view_does(tree, domains: dict, monkeypatch):
    """``dp.compare(tree, domains=domains)`` with each family's family-wise z for the full
    grid, as the view reads findings on a narrowed domain (verdict rule step 8: compare
    draws a z for the domain it is given, never a larger one; checked here)."""
    full = dp.compare(tree)
    wanted = [  # in the order compare draws them: condition by condition, family by family
        full[path].attrs[f"finding_z_{f}"]
        for path in conditions_of(tree)
        for f in full[path].to_dataset().family.values.tolist()
        if f"finding_z_{f}" in full[path].attrs
    ]
    own = rule.familywise_z
    drawn: list[float] = []

    def full_grid_z(centred, level, seed=0):
        drawn.append(own(centred, level, seed))
        return wanted[len(drawn) - 1]

    with monkeypatch.context() as m:
        m.setattr(rule, "familywise_z", full_grid_z)
        got = dp.compare(tree, domains=domains)
    assert len(drawn) == len(wanted)
    assert all(z <= big + 1e-12 for z, big in zip(drawn, wanted, strict=True))  # conservative
    return got


def view_summary_lines(page, scope: str = "") -> list[str]:
    """The view's summary as lines: its headline, and each pair's detail, which sits behind
    a closed disclosure (so read as text, not as what is drawn)."""
    text = page.locator(f"{scope} .dp-summary".strip()).first.text_content()
    return [line for line in text.splitlines() if line]


def summary_lines(comparison) -> list[str]:
    """What the view's summary says: summary.py's lines without the condition's facts
    (heading, representation, sizes), which the view shows elsewhere."""
    facts = ("### ", "Condition: ", "Sample sizes: ", "> **Warning", "Every family is the mean")
    return [
        line
        for line in summary(comparison, markdown=False).splitlines()
        if line and not line.startswith(facts)
    ]
