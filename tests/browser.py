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
import threading
from pathlib import Path

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


def write_page(folder: Path, bundle: Path, state: dict) -> None:
    """The test page, the bundle and the widget state, side by side in ``folder``."""
    shutil.copy(bundle, folder / "widget.js")
    serialisable = dict(state)
    serialisable["curves"] = base64.b64encode(bytes(state["curves"])).decode()
    (folder / "state.json").write_text(json.dumps(serialisable))
    (folder / "index.html").write_text(PAGE)


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


def block_outside(page, base_url: str) -> list[str]:
    """Abort every request not addressed to the local server; returns what was blocked."""
    blocked: list[str] = []

    def route(r):
        if r.request.url.startswith(base_url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return blocked
