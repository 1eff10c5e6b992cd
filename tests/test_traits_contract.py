"""The explorer's synced traits on both sides of the boundary against one description.

``explorer_traits.schema.json`` (in the package) describes every synced trait of
:class:`ProfileExplorer` and the shapes of the ``spec`` it sends. Python's traits and the
values it actually sends are checked against it here; the TypeScript types the view
compiles against (``js/traits.ts``) are generated from it, and tsc checks the view
(tests/test_js_types.py). A trait added on one side only fails here. The constants both
sides use (palette, MIME type, the verdict's defaults) are generated into ``js/constants.ts``
from Python the same way, and checked for staleness here too.
"""

import importlib.util
import json
from pathlib import Path

import anywidget
import jsonschema
import numpy as np
import pytest
import traitlets

import diversity_profiles as dp
from diversity_profiles.comparison import _verdict as verdict
from diversity_profiles.display._constants import MIME_TYPE, PALETTE
from diversity_profiles.display._explorer import ProfileExplorer, standalone_payload

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads(
    (ROOT / "src" / "diversity_profiles" / "explorer_traits.schema.json").read_text("utf-8")
)


def _generator(name: str = "traits_ts"):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _expected_trait(node: dict) -> tuple[type, type | None]:
    """The traitlet class a schema node needs (and its list elements' class)."""
    node = _resolve(node)
    if node.get("x-bytes"):
        return traitlets.Bytes, None
    kinds = {_resolve(option).get("type") for option in node.get("anyOf", [node])}
    if kinds == {"object"}:
        return traitlets.Dict, None
    if kinds == {"string"}:
        return traitlets.Unicode, None
    if kinds == {"array"}:
        return traitlets.List, _expected_trait(node["items"])[0]
    raise AssertionError(f"no traitlet is known for schema node {node!r}")


def contract_errors(widget_class: type) -> list[str]:
    """How ``widget_class``'s synced traits differ from the schema (empty: they agree)."""
    base = set(anywidget.AnyWidget.class_traits(sync=True))
    ours = {k: v for k, v in widget_class.class_traits(sync=True).items() if k not in base}
    described = SCHEMA["properties"]
    errors = [f"{name}: synced in Python, not in the schema" for name in ours.keys() - described]
    errors += [f"{name}: in the schema, not synced in Python" for name in described.keys() - ours]
    for name in sorted(ours.keys() & described.keys()):
        kind, element = _expected_trait(described[name])
        trait = ours[name]
        if type(trait) is not kind:
            errors.append(f"{name}: {type(trait).__name__} in Python, schema wants {kind.__name__}")
        elif element is not None and type(trait._trait) is not element:
            got = type(trait._trait).__name__
            errors.append(f"{name}: items are {got} in Python, schema wants {element.__name__}")
    return errors


def test_python_synced_traits_are_the_schemas():
    assert contract_errors(ProfileExplorer) == []


def test_a_trait_on_one_side_only_is_caught():
    class Extra(ProfileExplorer):
        zoom = traitlets.Float().tag(sync=True)

    class Retyped(ProfileExplorer):
        status = traitlets.Dict().tag(sync=True)

    assert contract_errors(Extra) == ["zoom: synced in Python, not in the schema"]
    assert contract_errors(Retyped) == ["status: Dict in Python, schema wants Unicode"]
    # Added to the schema only: the generated TypeScript no longer matches js/traits.ts.
    grown = {
        **SCHEMA,
        "properties": {**SCHEMA["properties"], "zoom": {"type": "number"}},
        "required": [*SCHEMA["required"], "zoom"],
    }
    assert "  zoom: number;" in _generator().render(grown).splitlines()
    assert _generator().render(grown) != (ROOT / "js" / "traits.ts").read_text("utf-8")


def test_typescript_traits_are_generated_from_the_schema():
    current = (ROOT / "js" / "traits.ts").read_text("utf-8")
    assert current == _generator().render(SCHEMA), "stale: run python scripts/traits_ts.py"


def test_typescript_constants_are_generated_from_python():
    generator = _generator("constants_ts")
    current = (ROOT / "js" / "constants.ts").read_text("utf-8")
    assert current == generator.render(generator.current()), (
        "stale: run python scripts/constants_ts.py"
    )
    # The script reads the source; what it read is what the package holds.
    assert generator.current()["PALETTE"][0] == PALETTE
    assert generator.current()["MIME_TYPE"][0] == MIME_TYPE
    assert [generator.current()[k][0] for k in ("RTOL", "ATOL", "MARGIN", "MIN_SHARE")] == [
        verdict.RTOL,
        verdict.ATOL,
        verdict.MARGIN,
        verdict.MIN_SHARE,
    ]
    # A changed Python value makes the committed file stale.
    changed = {**generator.current(), "MIN_SHARE": (0.1, "changed")}
    assert "export const MIN_SHARE = 0.1;" in generator.render(changed).splitlines()
    assert generator.render(changed) != current
    with pytest.raises(ValueError, match=r"finite numbers"):
        generator.ts_literal(float("nan"))


def test_no_typescript_file_keeps_its_own_copy_of_the_constants():
    copies = {
        path.name
        for path in (ROOT / "js").rglob("*.ts")
        if path.name != "constants.ts"
        and "node_modules" not in path.parts
        and (MIME_TYPE in (text := path.read_text("utf-8")) or PALETTE[0] in text)
    }
    assert copies == set(), "import them from js/constants.ts"


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(1)
    sets = {"a": rng.standard_normal((12, 2)), "b": 0.5 * rng.standard_normal((10, 2))}
    return dp.profiles(sets, representation="toy", distance="euclidean", n_points=5, n_boot=4)


def test_what_python_sends_is_valid_against_the_schema(tree):
    widget = ProfileExplorer(tree)
    widget.domains = {"vendi": [0.5, 2.0]}
    widget.extend_request = {"family": "magnitude", "side": "low", "nonce": 1.0}
    traits = {name: getattr(widget, name) for name in SCHEMA["properties"]}
    assert isinstance(traits["curves"], bytes)
    jsonschema.Draft202012Validator(SCHEMA).validate(traits)
    # Every offset lies inside the buffer the view reads it from.
    size = len(traits["curves"]) // 8
    n_sets = len(traits["spec"]["sets"])
    kinds = set()
    for fam in traits["spec"]["families"]:
        assert fam["grid"] + fam["n"] <= size
        for key in ("values", "lower", "upper"):
            if fam[key] is not None:
                assert fam[key] + n_sets * fam["n"] <= size
        kinds.add(("scale-free" if fam["parameter"] is None else "swept", fam["lower"] is None))
    # Swept and scale-free families, and bands, are all covered.
    assert {kind for kind, _ in kinds} == {"swept", "scale-free"}
    assert any(not no_band for _, no_band in kinds)
    spec_schema = {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/ExplorerSpec"}
    for packed in standalone_payload(tree, widget.conditions)["conditions"].values():
        jsonschema.Draft202012Validator(spec_schema).validate(packed["spec"])


def test_the_schema_rejects_what_the_view_cannot_read(tree):
    spec = ProfileExplorer(tree).spec
    validator = jsonschema.Draft202012Validator(
        {"$defs": SCHEMA["$defs"], "$ref": "#/$defs/ExplorerSpec"}
    )
    broken = json.loads(json.dumps(spec))
    broken["families"][0]["axis"] = "logarithmic"
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(spec))
    broken["families"][0]["n"] = np.int64(3)  # not JSON: the comm would refuse it
    assert not validator.is_valid(broken)
