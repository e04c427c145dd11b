"""What a later OpenAPI document takes away from an earlier one (docs/compatibility.md).

``removals(old, new)`` names everything the earlier document promised that the later one
no longer does, one line each: an operation, a response status, a media type, a response
header, a parameter, a schema, a property, a variant of a ``oneOf``/``anyOf``, an enum
value, a type; a request parameter, body or property that was optional and became
required; a response property that was required and became optional.  Additions are
never named.  A schema is followed through ``$ref``, ``allOf`` (its properties merged),
``oneOf``/``anyOf``, ``items``, ``additionalProperties`` and ``contentSchema``; what a
component holds is named by the component (``components.schemas.X.properties.Y``),
what an inline schema holds by where it is (``GET /path 200 application/json``).

>>> old = {"paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}}
>>> removals(old, {"paths": {"/a": {"get": {"responses": {}}}}})
['response removed: GET /a 200']
>>> removals(old, {"paths": {}})
['operation removed: GET /a']
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
REQUEST, RESPONSE = "request", "response"
COMPONENT = "#/components/schemas/"


def semver(text: str) -> tuple[int, int, int]:
    """``"1.2.3"`` (a pre-release or build suffix ignored) as ``(1, 2, 3)``."""
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:[-+].*)?", text.strip())
    if found is None:
        raise ValueError(f"not a semantic version: {text!r}")
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def newest_release(directory: Path) -> Path:
    """The file of the highest version among ``directory``'s ``X.Y.Z.yaml``."""
    releases = [path for path in directory.glob("*.yaml") if re.fullmatch(r"\d+\.\d+\.\d+", path.stem)]
    if not releases:
        raise FileNotFoundError(f"no released document (X.Y.Z.yaml) in {directory}")
    return max(releases, key=lambda path: semver(path.stem))


def version_problems(released: str, current: str, removed: list[str]) -> list[str]:
    """What is wrong with ``current`` as the version after ``released``, given what it removes."""
    problems = []
    if semver(current) < semver(released):
        problems.append(f"version {current} is lower than the released {released}")
    if removed and semver(current)[0] <= semver(released)[0]:
        problems.append(f"version {current} removes what {released} documented ({len(removed)} removals) without a new major version")
    return problems


@dataclass
class _Walk:
    old: dict
    new: dict
    found: set[str] = field(default_factory=set)
    seen: set[tuple[str, str, str]] = field(default_factory=set)
    components: set[str] = field(default_factory=set)


def removals(old: dict, new: dict) -> list[str]:
    """Everything ``old`` documented that ``new`` removes or makes stricter, sorted."""
    walk = _Walk(old, new)
    new_paths = new.get("paths") or {}
    for path, item in (old.get("paths") or {}).items():
        for method in METHODS:
            if method not in item:
                continue
            name = f"{method.upper()} {path}"
            later = (new_paths.get(path) or {}).get(method)
            if later is None:
                walk.found.add(f"operation removed: {name}")
            else:
                _operation(walk, name, item[method], later)
    # Components no operation reaches (a webhook's payload, say) are what the service sends.
    new_schemas = _schemas(new)
    for name in _schemas(old):
        if name not in new_schemas:
            walk.found.add(f"schema removed: components.schemas.{name}")
        elif name not in walk.components:
            _schema(walk, {"$ref": COMPONENT + name}, {"$ref": COMPONENT + name}, "", RESPONSE)
    return sorted(walk.found)


def _schemas(document: dict) -> dict:
    return (document.get("components") or {}).get("schemas") or {}


def _operation(walk: _Walk, name: str, old: dict, new: dict) -> None:
    new_parameters = {(p.get("in"), p.get("name")): p for p in new.get("parameters", [])}
    for parameter in old.get("parameters", []):
        where = f"{name} {parameter.get('in')} {parameter.get('name')}"
        later = new_parameters.get((parameter.get("in"), parameter.get("name")))
        if later is None:
            walk.found.add(f"parameter removed: {where}")
            continue
        if later.get("required") and not parameter.get("required"):
            walk.found.add(f"parameter became required: {where}")
        _schema(walk, parameter.get("schema"), later.get("schema"), where, REQUEST)
    old_body, new_body = old.get("requestBody"), new.get("requestBody")
    if old_body is not None:
        if new_body is None:
            walk.found.add(f"request body removed: {name}")
        else:
            _content(walk, f"{name} request", old_body, new_body, REQUEST)
    elif new_body is not None and new_body.get("required"):
        walk.found.add(f"request body became required: {name}")
    new_responses = new.get("responses") or {}
    for status, response in (old.get("responses") or {}).items():
        where = f"{name} {status}"
        later = new_responses.get(status)
        if later is None:
            walk.found.add(f"response removed: {where}")
            continue
        new_headers = {header.lower(): value for header, value in (later.get("headers") or {}).items()}
        for header, value in (response.get("headers") or {}).items():
            if header.lower() not in new_headers:
                walk.found.add(f"response header removed: {where} {header}")
            else:
                _schema(walk, value.get("schema"), new_headers[header.lower()].get("schema"), f"{where} header {header}", RESPONSE)
        _content(walk, where, response, later, RESPONSE)


def _content(walk: _Walk, where: str, old: dict, new: dict, direction: str) -> None:
    if direction == REQUEST and new.get("required") and not old.get("required"):
        walk.found.add(f"request body became required: {where.removesuffix(' request')}")
    new_content = new.get("content") or {}
    for media_type, media in (old.get("content") or {}).items():
        if media_type not in new_content:
            walk.found.add(f"media type removed: {where} {media_type}")
        else:
            _schema(walk, media.get("schema"), new_content[media_type].get("schema"), f"{where} {media_type}", direction)


def _resolve(document: dict, node: Any) -> tuple[Any, str | None]:
    """A schema and the component it is (None when inline); a dangling reference is None."""
    if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith(COMPONENT):
        name = node["$ref"].removeprefix(COMPONENT)
        return _schemas(document).get(name), name
    return node, None


def _schema(walk: _Walk, old: Any, new: Any, where: str, direction: str) -> None:
    old, old_name = _resolve(walk.old, old)
    new, new_name = _resolve(walk.new, new)
    if old_name is not None:
        walk.components.add(old_name)
    if old_name is not None and old_name == new_name:
        where = f"components.schemas.{old_name}"
    key = (old_name or where, new_name or where, direction)
    if key in walk.seen:
        return
    walk.seen.add(key)
    if new is None and new_name is not None:
        walk.found.add(f"schema removed: components.schemas.{new_name}")
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    _type(walk, old, new, where, direction)
    _values(walk, old, new, where)
    _properties(walk, old, new, where, direction)
    for keyword in ("items", "additionalProperties", "contentSchema"):
        if isinstance(old.get(keyword), dict) and isinstance(new.get(keyword), dict):
            _schema(walk, old[keyword], new[keyword], f"{where}.{keyword}", direction)
    for keyword in ("oneOf", "anyOf"):
        if old.get(keyword):
            later = {_variant(walk.new, variant, i): variant for i, variant in enumerate(new.get(keyword) or [])}
            for i, variant in enumerate(old[keyword]):
                label = _variant(walk.old, variant, i)
                if label not in later:
                    walk.found.add(f"variant removed: {where}.{keyword}[{label}]")
                else:
                    _schema(walk, variant, later[label], f"{where}.{keyword}[{label}]", direction)


def _variant(document: dict, variant: Any, index: int) -> str:
    """A variant's name, the same in both documents: its title, its component, else its types."""
    if not isinstance(variant, dict):
        return str(index)
    if "title" in variant:
        return str(variant["title"])
    if "$ref" in variant:
        return str(variant["$ref"]).removeprefix(COMPONENT)
    if "type" in variant and not variant.get("properties"):
        return "|".join(_types(variant) or ())
    return str(index)


def _types(schema: dict) -> set[str] | None:
    given = schema.get("type")
    if given is None:
        return None
    return {given} if isinstance(given, str) else set(given)


def _type(walk: _Walk, old: dict, new: dict, where: str, direction: str) -> None:
    before, after = _types(old), _types(new)
    if before is None or after is None:
        return
    # A client may send fewer types than before, and must read no more than before.
    if (direction == REQUEST and not before <= after) or (direction == RESPONSE and not after <= before):
        walk.found.add(f"type changed: {where}: {sorted(before)} -> {sorted(after)}")


def _values(walk: _Walk, old: dict, new: dict, where: str) -> None:
    def values(schema: dict) -> list | None:
        if "enum" in schema:
            return list(schema["enum"])
        if "const" in schema:
            return [schema["const"]]
        return None

    before, after = values(old), values(new)
    if before is None or after is None:
        return
    for value in before:
        if value not in after:
            walk.found.add(f"enum value removed: {where}: {json.dumps(value)}")


def _merged(walk: _Walk, document: dict, schema: dict, where: str, depth: int = 0) -> tuple[dict[str, tuple[Any, str]], set[str]]:
    """A schema's properties, each with where it is said (the component of an ``allOf``
    member that holds it), and its required names, with those of its ``allOf`` members."""
    properties = {name: (value, where) for name, value in (schema.get("properties") or {}).items()}
    required = set(schema.get("required") or ())
    members = schema.get("allOf") or [] if depth < 20 else []  # a cycle of allOf ends somewhere
    for member in members:
        resolved, name = _resolve(document, member)
        if name is not None and document is walk.old:
            walk.components.add(name)
        if isinstance(resolved, dict):
            more, also = _merged(walk, document, resolved, where if name is None else f"components.schemas.{name}", depth + 1)
            properties = {**more, **properties}
            required |= also
    return properties, required


def _properties(walk: _Walk, old: dict, new: dict, where: str, direction: str) -> None:
    before, required_before = _merged(walk, walk.old, old, where)
    after, required_after = _merged(walk, walk.new, new, where)
    for name, (schema, owner) in before.items():
        if name not in after:
            walk.found.add(f"property removed: {owner}.properties.{name}")
            continue
        if direction == RESPONSE and name in required_before and name not in required_after:
            walk.found.add(f"property no longer required: {owner}.properties.{name}")
        _schema(walk, schema, after[name][0], f"{owner}.properties.{name}", direction)
    if direction == REQUEST:
        for name in sorted(required_after - required_before):
            owner = after[name][1] if name in after else where
            walk.found.add(f"property became required: {owner}.properties.{name}")
