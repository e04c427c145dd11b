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
    return spec


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
    for status, what in meta["responses"].items():
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
    if isinstance(what, str):
        response = {"description": what}
        if status < 300 and content_type != "application/json":
            response["content"] = {content_type: {"schema": {"type": "string"}}}
        elif status < 300:
            response["content"] = {"application/json": {"schema": {"type": "object"}}}
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
    return build_spec(app).to_dict()


def spec_yaml(app: Flask) -> str:
    return yaml.safe_dump(spec_dict(app), sort_keys=False, allow_unicode=True)
