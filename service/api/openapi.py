"""The OpenAPI 3.1 document, made from the marshmallow schemas and the routes' metadata.

``gin-rummy openapi`` writes it to ``openapi/openapi.yaml``; a test fails when the
committed file differs from what the code generates.
"""

from __future__ import annotations

import re

import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask

from . import schemas as s

TITLE = "Gin Rummy service"
VERSION = "1.0.0"
DESCRIPTION = """\
An event-sourced Gin Rummy backend. Create a match, keep the seat token it returns, and
send `Authorization: Bearer <token>` with every other request. A seat's view carries its
`legal_actions`: each is a complete body for `POST /matches/{id}/actions`.

Every response about a match carries its version as an `ETag`; send it back as `If-Match`
to act only on the state you saw (412 otherwise), and an `Idempotency-Key` to make a retry
safe. Every error is `application/problem+json` with a stable `code`."""


def _path(rule: str) -> str:
    return re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule)


def build_spec(app: Flask) -> APISpec:
    spec = APISpec(
        title=TITLE,
        version=VERSION,
        openapi_version="3.1.0",
        plugins=[MarshmallowPlugin()],
        info={"description": DESCRIPTION},
    )
    spec.components.security_scheme(
        "bearer", {"type": "http", "scheme": "bearer", "description": "A seat token, or the operator token."}
    )
    spec.components.schema("Problem", schema=s.ProblemSchema)
    # The record's JSON Schema is its own file beside this document (openapi/).
    spec.components.schema(s.MatchRecordSchema.__name__, {"$ref": s.MatchRecordSchema.file})
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        view = app.view_functions.get(rule.endpoint)
        meta = getattr(view, "__openapi__", None)
        if meta is None:
            continue
        methods = sorted(m for m in rule.methods if m not in ("HEAD", "OPTIONS"))
        operations = {}
        for method in methods:
            operations[method.lower()] = _operation(rule, meta)
        spec.path(path=_path(rule.rule), operations=operations)
    # An event stream's items are referred to by name (see _response).
    for what in _stream_items(app):
        name = what.__name__.removesuffix("Schema")
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=what)
    return spec


def _stream_items(app: Flask) -> list:
    return [
        what.item
        for view in app.view_functions.values()
        for what in getattr(view, "__openapi__", {}).get("responses", {}).values()
        if isinstance(what, s.ServerSentEvents)
    ]


def _operation(rule, meta: dict) -> dict:
    op: dict = {
        "summary": meta["summary"],
        "tags": meta["tags"],
        "operationId": rule.endpoint.split(".")[-1],
        "responses": {},
    }
    if meta["description"]:
        op["description"] = meta["description"]
    params = [{"name": arg, "in": "path", "required": True, "schema": _path_schema(rule, arg)} for arg in sorted(rule.arguments)]
    if meta["query"] is not None:
        params.append({"in": "query", "schema": meta["query"]})
    params.extend(meta["headers"])
    if params:
        op["parameters"] = params
    if meta["body"] is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _schema(meta["body"])}}}
    if meta["auth"]:
        op["security"] = [{"bearer": []}]
    responses = dict(meta["responses"])
    # The errors every request of a kind may meet, answered before the view runs its own checks.
    if meta["body"] is not None:
        responses.setdefault(400, s.ProblemSchema)  # malformed JSON
        responses.setdefault(415, s.ProblemSchema)  # not application/json
        responses.setdefault(422, s.ProblemSchema)  # not a valid body
    if meta["query"] is not None:
        responses.setdefault(422, s.ProblemSchema)  # invalid query parameters
    if any(header.get("in") == "header" for header in meta["headers"]):
        responses.setdefault(400 if meta["body"] is not None else 422, s.ProblemSchema)
    if meta["auth"]:
        responses.setdefault(401, s.ProblemSchema)
    for status, what in responses.items():
        op["responses"][str(status)] = _response(status, what, meta["content_type"])
    op["responses"].setdefault(
        "default", {"description": "Any other error", "content": {"application/problem+json": {"schema": "Problem"}}}
    )
    return op


def _path_schema(rule, arg: str) -> dict:
    if type(rule._converters.get(arg)).__name__ == "IntegerConverter":
        return {"type": "integer", "minimum": 1}
    return {"type": "string", "format": "uuid"}


def _response(status: int, what, content_type: str) -> dict:
    if isinstance(what, tuple):
        # One response in several representations (a query parameter picks one).
        parts = [_response(status, each, content_type) for each in what]
        return {
            "description": ", or ".join(part["description"] for part in parts),
            "content": {kind: media for part in parts for kind, media in part["content"].items()},
        }
    if isinstance(what, s.PlainText):
        return {"description": what.description, "content": {what.content_type: {"schema": {"type": "string"}}}}
    if isinstance(what, s.ServerSentEvents):
        # Each event, as Schemathesis and OpenAPI 3.2 (itemSchema) read an event stream:
        # its data is one JSON document of the item schema.
        event = {
            "type": "object",
            "required": ["data"],
            "properties": {
                "event": {"type": "string"},
                "id": {"type": "string"},
                "retry": {"type": "integer"},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": f"#/components/schemas/{what.item.__name__.removesuffix('Schema')}"},
                },
            },
        }
        return {"description": what.description, "content": {content_type: {"schema": event}}}
    if isinstance(what, str):
        response = {"description": what}
        if status < 300 and status != 204 and status != 304:
            # A JSON document (application/json, application/schema+json...) is an object;
            # anything else (HTML, an event stream, NDJSON) is text.
            json_like = content_type == "application/json" or content_type.endswith("+json")
            response["content"] = {content_type: {"schema": {"type": "object" if json_like else "string"}}}
        return response
    name = what.__name__.removesuffix("Schema")
    if what is s.ProblemSchema:
        return {"description": "A problem", "content": {"application/problem+json": {"schema": "Problem"}}}
    return {"description": name, "content": {"application/json": {"schema": _schema(what)}}}


def _schema(what):
    if isinstance(what, s.ExternalSchema):
        return {"$ref": f"#/components/schemas/{what.__name__}"}
    return what


def spec_dict(app: Flask) -> dict:
    document = build_spec(app).to_dict()
    _one_schema_per_action(document["components"]["schemas"])
    return document


def _one_schema_per_action(schemas: dict) -> None:
    """An action's fields depend on its type (``ActionSchema`` checks them in code): the
    document says so with one schema per type, so a body it accepts the service accepts."""
    action = schemas["Action"]
    variants = []
    for kind, allowed in s.ACTION_FIELDS.items():
        required = ["type", *sorted(s.REQUIRED_FIELDS.get(kind, ()))]
        properties = {"type": {"const": kind}}
        properties.update({name: action["properties"][name] for name in action["properties"] if name in allowed})
        variants.append(
            {"title": kind, "type": "object", "properties": properties, "required": required, "additionalProperties": False}
        )
    schemas["Action"] = {"description": (s.ActionSchema.__doc__ or "").strip(), "oneOf": variants}


def spec_yaml(app: Flask) -> str:
    return yaml.safe_dump(spec_dict(app), sort_keys=False, allow_unicode=True)
