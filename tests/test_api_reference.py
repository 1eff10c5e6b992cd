"""The API reference (docs/api/index.md) has an entry for every public name, and every
public name's docstring carries an example that runs (the examples are doctests: the
suite runs them with the rest of ``src/``).

The public names are read from the package itself — ``diversity_profiles.__all__``, each
public module's ``__all__`` and the ``tree.dp`` accessor's methods — so a name added
without documentation fails here. The built site is checked in tests/test_docs_site.py.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest

import diversity_profiles as dp
from diversity_profiles import _accessor

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api" / "index.md"
MODULES = ["text", "molecules", "images", "datasets", "sharing", "vendi_compat"]


def public_names() -> list[str]:
    """Every public name, as the reference writes it (``text.profiles``, ``DataTree.dp.sets``)."""
    names = [n for n in dp.__all__ if n != "__version__"]
    for module in MODULES:
        names += [
            f"{module}.{n}" for n in importlib.import_module(f"diversity_profiles.{module}").__all__
        ]
    accessor = _accessor.DiversityProfilesAccessor
    names += [f"DataTree.dp.{n}" for n in vars(accessor) if not n.startswith("_")]
    return names


def documented_names() -> set[str]:
    """The entries of the API page: autosummary lines and ``py:*`` directives."""
    text = API_PAGE.read_text(encoding="utf-8")
    entries = set()
    for block in re.findall(r"\.\. autosummary::\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith((":", "..")):
                entries.add(line)
    entries |= {
        m.removeprefix("diversity_profiles.")
        for m in re.findall(r"\.\. py:(?!module)\w+:: (\S+)", text)
    }
    return entries


def test_the_public_names_are_found():
    names = public_names()
    assert "profiles" in names and "text.profiles" in names and "DataTree.dp.summary" in names
    assert len(names) == len(set(names)) > 50


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_has_an_entry_in_the_api_reference(name):
    assert name in documented_names(), f"{name} is public but has no entry in {API_PAGE.name}"


def test_every_public_module_has_an_entry_in_the_api_reference():
    text = API_PAGE.read_text(encoding="utf-8")
    modules = re.findall(r"\.\. py:module:: diversity_profiles\.(\S+)", text)
    assert sorted(modules) == sorted(MODULES)


def test_the_api_reference_lists_nothing_that_is_not_public():
    assert documented_names() - set(public_names()) == set()


def resolve(name: str):
    if name.startswith("DataTree.dp."):
        return getattr(_accessor.DiversityProfilesAccessor, name.rsplit(".", 1)[1])
    obj = dp
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", [n for n in public_names() if n != "FAMILIES"])
def test_every_public_name_has_an_example(name):
    obj = resolve(name)
    doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
    assert re.search(r"^Examples\n--------\n", doc, flags=re.M), f"{name}: no Examples section"
    examples = doc.split("Examples\n--------\n", 1)[1]
    assert ">>> " in examples, f"{name}: its Examples section has no example to run"


def test_the_registry_has_its_example_on_the_api_page():
    # FAMILIES is a dict: its entry (and example) is written on the page itself.
    text = API_PAGE.read_text(encoding="utf-8")
    entry = text.split(".. py:data:: FAMILIES", 1)[1].split("```", 1)[0]
    assert ">>> list(dp.FAMILIES)" in entry
    shown = entry.split(">>> list(dp.FAMILIES)\n", 1)[1].splitlines()[0].strip()
    assert shown == repr(list(dp.FAMILIES))  # the example's output is today's registry
