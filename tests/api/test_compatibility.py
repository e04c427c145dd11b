"""The contract keeps what the last release documented (docs/compatibility.md).

The newest ``openapi/released/X.Y.Z.yaml`` (by semantic version) is the contract of the
last release; ``openapi/openapi.yaml`` is this tree's.  Whatever the release documented
and this tree's document removes or makes stricter is named (``tests/support/
compatibility.py``); it may go only under a new major version.  Additions are free."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from tests.support.compatibility import newest_release, removals, semver, version_problems

ROOT = Path(__file__).resolve().parents[2]
RELEASED = ROOT / "openapi" / "released"
CURRENT = ROOT / "openapi" / "openapi.yaml"


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def released() -> dict:
    return load(newest_release(RELEASED))


@pytest.fixture(scope="module")
def current() -> dict:
    return load(CURRENT)


def test_each_released_document_is_named_by_its_version():
    files = sorted(RELEASED.glob("*.yaml"))
    assert files, "cutting a release copies openapi/openapi.yaml to openapi/released/X.Y.Z.yaml"
    for path in files:
        assert load(path)["info"]["version"] == path.stem, path.name


def test_the_document_keeps_everything_the_last_release_documented(released, current):
    removed = removals(released, current)
    problems = version_problems(released["info"]["version"], current["info"]["version"], removed)
    assert not problems, "\n".join([*problems, *removed])


def test_the_document_is_versioned_as_the_package(current):
    from service.api.openapi import VERSION

    assert current["info"]["version"] == VERSION


def test_the_newest_release_is_chosen_by_semantic_version(tmp_path):
    for version in ("1.9.0", "1.10.0", "0.12.3", "notes"):
        (tmp_path / f"{version}.yaml").write_text("{}")
    assert newest_release(tmp_path).name == "1.10.0.yaml"
    assert semver("2.0.0-rc.1") == (2, 0, 0)


def test_a_changed_copy_is_reported_change_by_change(current):
    """The check can fail: a response field, an enum value and a now required parameter."""
    changed = copy.deepcopy(current)
    schemas = changed["components"]["schemas"]
    del schemas["SeatView"]["properties"]["deadline"]
    schemas["SeatView"]["required"] = [name for name in schemas["SeatView"].get("required", []) if name != "deadline"]
    schemas["Ticket"]["properties"]["status"]["enum"].remove("lapsed")
    (seat,) = [p for p in changed["paths"]["/matches/{match_id}"]["get"]["parameters"] if p["name"] == "seat"]
    assert not seat.get("required")
    seat["required"] = True

    removed = removals(current, changed)

    assert removed == [
        'enum value removed: components.schemas.Ticket.properties.status: "lapsed"',
        "parameter became required: GET /matches/{match_id} query seat",
        "property removed: components.schemas.SeatView.properties.deadline",
    ]
    same_major = version_problems(current["info"]["version"], current["info"]["version"], removed)
    assert same_major == [f"version {current['info']['version']} removes what {current['info']['version']} documented (3 removals) without a new major version"]
    major, _, _ = semver(current["info"]["version"])
    assert version_problems(current["info"]["version"], f"{major + 1}.0.0", removed) == []


def test_additions_are_not_removals(current):
    changed = copy.deepcopy(current)
    changed["paths"]["/new"] = {"get": {"responses": {"200": {"description": "new"}}}}
    changed["components"]["schemas"]["SeatView"]["properties"]["new_field"] = {"type": "string"}
    changed["components"]["schemas"]["Ticket"]["properties"]["status"]["enum"].append("expired")
    changed["paths"]["/matches"]["get"]["responses"]["418"] = {"description": "new"}
    assert removals(current, changed) == []
    assert version_problems("1.0.0", "1.1.0", []) == []
    assert version_problems("1.1.0", "1.0.0", []) == ["version 1.0.0 is lower than the released 1.1.0"]


def operation(**parts) -> dict:
    return {"paths": {"/things/{id}": {"post": {"responses": {"200": {"description": "ok"}}, **parts}}}}


def json_body(schema: dict, required: bool = True) -> dict:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def test_operations_responses_headers_and_parameters():
    query = {"name": "q", "in": "query", "required": False, "schema": {"type": "string", "enum": ["a", "b"]}}
    old = operation(parameters=[query, {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}])
    old["paths"]["/things/{id}"]["post"]["responses"]["200"]["headers"] = {"ETag": {"schema": {"type": "string"}}}
    old["paths"]["/things/{id}"]["get"] = {"responses": {"200": {"description": "ok"}}}
    new = operation(parameters=[{**query, "schema": {"type": "string", "enum": ["a"]}}])
    new["paths"]["/things/{id}"]["post"]["responses"]["201"] = {"description": "created"}
    assert removals(old, new) == [
        'enum value removed: POST /things/{id} query q: "b"',
        "operation removed: GET /things/{id}",
        "parameter removed: POST /things/{id} path id",
        "response header removed: POST /things/{id} 200 ETag",
    ]


def test_request_properties_inline_and_through_references_and_all_of():
    base = {"type": "object", "properties": {"name": {"type": "string"}, "kind": {"type": "string"}}, "required": ["name"]}
    spec = {"allOf": [{"$ref": "#/components/schemas/Base"}], "properties": {"note": {"type": "string"}}}
    old = {**operation(requestBody=json_body(spec, required=False)), "components": {"schemas": {"Base": base}}}
    tighter = {**base, "required": ["name", "kind"], "properties": {"name": {"type": "integer"}, "kind": {"type": "string"}}}
    new = {**operation(requestBody=json_body({"allOf": spec["allOf"]})), "components": {"schemas": {"Base": tighter}}}
    assert removals(old, new) == [
        "property became required: components.schemas.Base.properties.kind",
        "property removed: POST /things/{id} request application/json.properties.note",
        "request body became required: POST /things/{id}",
        "type changed: components.schemas.Base.properties.name: ['string'] -> ['integer']",
    ]


def test_response_variants_items_and_required_members():
    item = {"type": "object", "properties": {"at": {"type": "string"}, "by": {"type": "string"}}, "required": ["at", "by"]}
    variants = {"oneOf": [{"title": "draw", "type": "object", "properties": {"type": {"const": "draw"}}},
                          {"title": "pass", "type": "object", "properties": {"type": {"const": "pass"}}}]}
    old = operation(responses={"200": {"description": "ok", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"items": {"type": "array", "items": item}, "action": variants,
                                         "count": {"type": "integer"}}}}}}})
    looser = {**item, "required": ["at"], "properties": {"at": {"type": ["string", "null"]}, "by": {"type": "string"}}}
    new = operation(responses={"200": {"description": "ok", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"items": {"type": "array", "items": looser}, "action": {"oneOf": variants["oneOf"][:1]},
                                         "count": {"type": "integer"}}}}}}})
    where = "POST /things/{id} 200 application/json.properties"
    assert removals(old, new) == [
        f"property no longer required: {where}.items.items.properties.by",
        f"type changed: {where}.items.items.properties.at: ['string'] -> ['null', 'string']",
        f"variant removed: {where}.action.oneOf[pass]",
    ]
