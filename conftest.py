"""Gives every collected test (doctests included) one kind, as a marker.

``python -m pytest -m unit`` then runs the fast part alone. A test module's kind is
set here, by name, rather than in each file; a test marked by hand keeps its mark.
"""

import pytest

KIND_OF_MODULE = {
    # Playwright + Debian's Chromium, vitest in Chromium, or a real JupyterLab server.
    "test_js_unit": "browser",
    "test_labextension": "browser",
    "test_live_roundtrip": "browser",
    "test_report": "browser",
    "test_shared_notebook": "browser",
    "test_widget_browser": "browser",
    "test_notebooks": "notebook",
    "test_types": "types",
}
KINDS = ("unit", "browser", "notebook", "types")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(kind) for kind in KINDS):
            item.add_marker(KIND_OF_MODULE.get(item.path.stem, "unit"))
