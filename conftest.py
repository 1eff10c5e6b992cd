"""Gives every collected test (doctests included) one kind, as a marker.

``python -m pytest -m unit`` then runs the fast part alone. Kinds are set here, by
module or test name, rather than in each file; a test marked by hand keeps its mark.
"""

import pytest

KINDS = ("unit", "integration", "browser", "notebook", "types")
KIND_OF_MODULE = {
    # Playwright + Debian's Chromium, vitest in Chromium, or a real JupyterLab server.
    "test_js_unit": "browser",
    "test_labextension": "browser",
    "test_live_roundtrip": "browser",
    "test_report": "browser",
    "test_shared_notebook": "browser",
    "test_widget_browser": "browser",
    "test_widget_confidence": "browser",
    "test_notebooks": "notebook",
    "test_docs_site": "notebook",  # builds the site from the executed notebooks; Chromium too
    "test_types": "types",
    "test_cli": "integration",  # the console script, in a subprocess each time
    "test_files": "integration",  # the console module on real files, mostly in subprocesses
}
KIND_OF_TEST = {
    "test_explorer.py::test_built_wheel_ships_the_bundle": "integration",  # pip builds a wheel
    # A real torch model (importing torch alone takes seconds).
    "test_images.py::test_torch_linear_against_matrix_product": "integration",
    "test_images.py::test_callable_may_return_a_tensor_and_resize_first": "integration",
    "test_images.py::test_extractor_profiles_and_merge": "integration",
    "test_text.py::test_embed_never_downloads": "integration",  # imports sentence-transformers
    "test_fuzz.py::test_console_script_reports_bad_input_in_one_line": "integration",
    "test_labels_as_text.py::test_every_html_page_shows_hostile_labels_as_text_in_chromium": (
        "browser"
    ),
}
#: Tests using these fixtures load a real sentence-transformer model.
INTEGRATION_FIXTURES = {"minilm"}


def _kind(item: pytest.Item) -> str:
    test = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
    if test in KIND_OF_TEST:
        return KIND_OF_TEST[test]
    if INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "integration"
    return KIND_OF_MODULE.get(item.path.stem, "unit")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(kind) for kind in KINDS):
            item.add_marker(_kind(item))
