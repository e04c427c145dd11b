"""The OpenAPI 3.1 document, made from the marshmallow schemas and the routes' metadata.

``gin-rummy openapi`` writes it to ``openapi/openapi.yaml``; a test fails when the
committed file differs from what the code generates.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from importlib import metadata, resources
from typing import Any

import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask

from service.application import signin
from service.records.records import record_schema

from . import docs
from . import schemas as s
from .problems import by_code
from .ratelimit import EXEMPT_ENDPOINTS

TITLE = "Gin Rummy service"
#: The contract's version is the package's (pyproject.toml), under the compatibility
#: policy of docs/compatibility.md.
DISTRIBUTION = "gin-rummy-service"
VERSION = metadata.version(DISTRIBUTION)
DESCRIPTION = """\
An event-sourced Gin Rummy backend. Create a match, keep the seat token it returns, and
send `Authorization: Bearer <token>` with every other request. A seat's view carries its
`legal_actions`: each is a complete body for `POST /matches/{id}/actions`.

Every response about a match carries its version as an `ETag`; send it back as `If-Match`
to act only on the state you saw (412 otherwise), and an `Idempotency-Key` to make a retry
safe. Every error is `application/problem+json` with a stable `code`; its `type`,
`/problems/{code}`, is that code's entry in [the catalogue of error codes](/problems): what
it means, and whether to fix the request, re-read the match and act again, wait, or sign in.
Short guides (a first match, online play, records, errors and retries): [/docs/guides](/docs/guides)."""

REFUSALS = ', '.join(f'`{code}`' for code in signin.REFUSALS)
#: Kept from 1.0.0, whose operations all named it: any of the kinds of token below.
BEARER = (
    "Any of the kinds of token below (`seatToken`, `playerToken`, `operatorToken`, `signInJwt`): each operation's "
    "`security` names those it takes. A seat token, a player token, the operator token, or (when the service is "
    "configured with an issuer) a sign-in JWT of the front end's identity provider. A JWT refused is 401 with a "
    f"`code` naming the check it failed: {REFUSALS}."
)
#: One security scheme per kind of token (service.api.docs names the kinds each route takes).
SCHEMES = {
    docs.SEAT: ("seatToken", "gr1.{match id}.{secret}", (
        "A seat's token, from the answer that made the seat (`POST /matches`, `/join`, `/rematch`, `/matches/import`). "
        "It reads and plays that seat of that match alone: another match's answers 403 `forbidden`.")),
    docs.PLAYER: ("playerToken", "gp1.{player id}.{secret}", (
        "A player's token (`POST /players`): the same person's matches on every device. For a match it acts for the "
        "seats bound to the player (`?seat=` picks one when it holds both); a match it holds no seat of is 403.")),
    docs.OPERATOR: ("operatorToken", None, (
        "The operator's token (`GIN_RUMMY_OPERATOR_TOKEN`): reads every match and manages webhooks and players, but "
        "acts for no seat (a seat's play is 403 `forbidden`).")),
    docs.JWT: ("signInJwt", "JWT", (
        "When the service is configured with an issuer (`GIN_RUMMY_JWT_ISSUER`), a sign-in JWT of the front end's "
        "identity provider: the player of its `sub`, made on first sight; taken wherever a player token is. "
        f"A JWT refused is 401 with a `code` naming the check it failed: {REFUSALS}.")),
    docs.METRICS: ("metricsToken", None, (
        "The metrics' own token (`GIN_RUMMY_METRICS_TOKEN`), needed by `GET /metrics` when the operator set one: "
        "the operator's and seats' tokens are not taken there.")),
}


#: The response headers of the contract (``components.headers``): which operation and
#: status answers ``ETag``, ``Location`` or ``Idempotent-Replayed`` is recorded from a real
#: session with the examples (tests/api/examples.py); the others follow from rules below.
HEADERS = {
    "ETag": ("The match's version the answer was read at, as a strong ETag (`\"12\"`; another representation "
             "adds a suffix: `\"12.text\"`). Send it back as `If-Match` to act, as `If-None-Match` to revalidate."),
    "Location": "The URL of what was created.",
    "Idempotent-Replayed": ("`true` when this is the stored answer to an earlier request with the same "
                            "`Idempotency-Key`: nothing was done again."),
    "Retry-After": "Seconds to wait before sending the request again.",
    "RateLimit-Policy": ("The request limits that counted this request, one item per limit (`address`, `token`): "
                         "`q` the burst, `w` the seconds to refill it from empty. "
                         'Example: `"address";q=3000;w=3, "token";q=300;w=3` (IETF draft-ietf-httpapi-ratelimit-headers). '
                         "Absent where the operator turned the limits off."),
    "RateLimit": ("Where the caller stands in each limit of `RateLimit-Policy`: `r` the requests left now, `t` the "
                  'seconds until the allowance is full again. Example: `"address";r=2987;t=1, "token";r=288;t=1`.'),
    "X-Request-Id": "The request's id, as in the service's log: quote it when reporting a problem.",
}
#: Statuses whose answers carry Retry-After.
RETRY_STATUSES = ("429", "503")


#: The tags in the order a reader meets them (the API reference lists them so), with what
#: each holds; a tag not listed here comes after them.
TAGS = {
    "matches": "Create, join, view and play matches; follow them live.",
    "players": "Players: one token for a person's matches on every device; profiles, ratings, the leaderboard.",
    "coach": "Hints for the seat to play, and the analysis of a hand's decisions.",
    "records": "Finished matches as records: export, import, audit, the hands in full.",
    "rules": "The rules presets and their parameters.",
    "webhooks": "For the operator: endpoints the notifications are sent to (Standard Webhooks), and their delivery log.",
    "service": "Health, metrics, and this document.",
}


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
    spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer", "description": BEARER})
    for name, bearer_format, description in SCHEMES.values():
        scheme = {"type": "http", "scheme": "bearer", **({"bearerFormat": bearer_format} if bearer_format else {})}
        spec.components.security_scheme(name, {**scheme, "description": description})
    for name, description in HEADERS.items():
        spec.components.header(name, {"description": description, "schema": {"type": "string"}})
    spec.components.schema("Problem", schema=s.ProblemSchema)
    # The record's JSON Schema is a file of its own (openapi/, served at /match-record.schema.json),
    # and part of this document too: code generators take the document alone.
    for name, schema in record_components().items():
        spec.components.schema(name, schema)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        view = app.view_functions.get(rule.endpoint)
        meta = getattr(view, "__openapi__", None)
        if meta is None:
            continue
        assert rule.methods is not None, "Flask gives every route its methods"
        methods = sorted(m for m in rule.methods if m not in ("HEAD", "OPTIONS"))
        operations = {}
        for method in methods:
            operations[method.lower()] = _operation(rule, meta)
        spec.path(path=_path(rule.rule), operations=operations)
    used = {tag for view in app.view_functions.values() for tag in getattr(view, "__openapi__", {}).get("tags", ())}
    for tag in sorted(used, key=lambda tag: (list(TAGS).index(tag) if tag in TAGS else len(TAGS), tag)):
        spec.tag({"name": tag, **({"description": TAGS[tag]} if tag in TAGS else {})})
    # An event stream's items are referred to by name (see _response).
    for what in _stream_items(app):
        name = what.__name__.removesuffix("Schema")
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=what)
    return spec


def record_components() -> dict[str, dict]:
    """The match record's JSON Schema as components: the record (``MatchRecord``) and each of
    its ``$defs`` as a schema of its own (``MatchRecord`` + the name in CamelCase:
    ``MatchRecordHandDealtV1``), its references rewritten to them.

    An OpenAPI 3.1 schema is JSON Schema 2020-12, so every keyword stays as it is but two:
    ``$schema`` (the document's dialect is OpenAPI's) and ``$id``, which would make the
    references inside resolve against the file's address instead of this document."""
    record = copy.deepcopy(record_schema())
    defs = record.pop("$defs")
    record.pop("$schema", None)
    record.pop("$id", None)
    names = {key: s.MatchRecordSchema.__name__ + "".join(part.capitalize() for part in key.split("_")) for key in defs}

    def rewrite(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                node["$ref"] = "#/components/schemas/" + names[ref.removeprefix("#/$defs/")]
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    components = {s.MatchRecordSchema.__name__: record, **{names[key]: schema for key, schema in defs.items()}}
    rewrite(components)
    event = components.get(names.get("event", ""))
    variants = _event_variants(event, components) if event else None
    if variants:
        assert event is not None, "variants are found only for an event"
        # The same constraint, said so that generators type an event's data by its type.
        del event["allOf"]
        event["properties"]["data"] = {"description": "The event's data: its schema follows from type and schema_version."}
        event["oneOf"] = variants
    return components


def _event_variants(event: dict, components: dict) -> list[dict] | None:
    """The event's ``allOf: [{if: type (and schema_version) is ..., then: ...}]`` said as
    ``oneOf`` one variant per type and schema version: ``{type: T, schema_version: V, data:
    T's schema at V}``.  Code generators read no ``if``/``then`` (the data would be typed as
    an empty object), and they make a union of a ``oneOf``.

    The two say the same when every branch is of the two kinds the file has (a type's
    versions; a type's, or a type and version's, data schema) and every type and version
    has exactly one data schema; otherwise this answers None and the branches stay."""
    types = event.get("properties", {}).get("type", {}).get("enum")
    if not types or event["properties"].get("data") != {"type": "object"}:
        return None
    versions: dict[str, list] = {}
    data: dict[tuple, dict] = {}
    for branch in event.get("allOf", []):
        if set(branch) != {"if", "then"} or set(branch["if"]) != {"properties"} or set(branch["then"]) != {"properties"}:
            return None
        condition, then = branch["if"]["properties"], branch["then"]["properties"]
        kind = condition.get("type", {}).get("const")
        if kind not in types or set(condition) - {"type", "schema_version"}:
            return None
        if set(then) == {"schema_version"} and set(condition) == {"type"} and set(then["schema_version"]) == {"enum"}:
            if kind in versions:
                return None
            versions[kind] = then["schema_version"]["enum"]
        elif set(then) == {"data"} and set(then["data"]) == {"$ref"}:
            version = condition.get("schema_version", {"const": None})
            if set(version) != {"const"} or (kind, version["const"]) in data:
                return None
            target = components.get(then["data"]["$ref"].removeprefix("#/components/schemas/"), {})
            if target.get("type") != "object":
                return None
            data[(kind, version["const"])] = then["data"]
        else:
            return None
    if set(versions) != set(types):
        return None  # a type whose versions are not listed
    variants = []
    for kind in types:
        for version in versions[kind]:
            general, specific = data.get((kind, None)), data.get((kind, version))
            if (general is None) == (specific is None):
                return None
            variants.append(
                {
                    "title": f"{kind} (schema_version {version})",
                    "type": "object",
                    "required": ["type", "schema_version", "data"],
                    "properties": {"type": {"const": kind}, "schema_version": {"const": version}, "data": specific or general},
                }
            )
    return variants or None


def _stream_items(app: Flask) -> list:
    return [
        what.item
        for view in app.view_functions.values()
        for what in getattr(view, "__openapi__", {}).get("responses", {}).values()
        if isinstance(what, (s.ServerSentEvents, s.JsonLines))
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
    if meta["tokens"]:
        # The alternatives it takes; {} first where a request without a token is answered too.
        op["security"] = [{}] * meta["optional_token"] + [{SCHEMES[kind][0]: []} for kind in meta["tokens"]]
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
    if meta["tokens"]:
        responses.setdefault(401, s.ProblemSchema)  # a token that is none of the service's
    for status, what in responses.items():
        op["responses"][str(status)] = _response(status, what, meta["content_type"])
    _add_problem_codes(op, rule, meta)
    op["responses"].setdefault(
        "default", {"description": "Any other error", "content": {"application/problem+json": {"schema": "Problem"}}}
    )
    _add_examples(op, examples().get(op["operationId"], {}))
    _add_headers(op, rule.endpoint, examples().get(op["operationId"], {}).get("headers", {}))
    return op


#: The codes a request of a kind may meet before its view runs, by what makes it that kind.
BODY_CODES = ("malformed_json", "unsupported_media_type", "invalid_request", "body_too_large")
HEADER_CODES = {"If-Match": ("invalid_if_match", "version_mismatch"), "Idempotency-Key": ("invalid_idempotency_key", "idempotency_key_reused")}
TOKEN_CODES = ("unauthorized", "invalid_token")


def problem_codes(rule, meta: dict, operation_id: str) -> set[str]:
    """The codes an operation may answer: those its kind of request meets (its body, query,
    headers, tokens, a match id in its path, the request limits), and those the catalogue
    (service/api/problems.json) says it answers for a reason of its own (``operations``)."""
    codes = {entry["code"] for entry in by_code().values() if operation_id in entry["operations"]}
    if meta["body"] is not None:
        codes.update(BODY_CODES)
    if meta["query"] is not None:
        codes.add("invalid_request")
    for header in meta["headers"]:
        codes.update(HEADER_CODES.get(header.get("name"), ()))
    if meta["tokens"] == (docs.METRICS,):
        codes.add("unauthorized")  # compared with the metrics token alone
    elif meta["tokens"]:
        # Every token that looks like a JWT is verified (with an issuer configured), even
        # where a player's is not taken: a refused one is 401 before the 403.
        codes.update((*TOKEN_CODES, *signin.REFUSALS))
        # A kind of token it does not take, or one of another match.
        if not meta["optional_token"] and (set(meta["tokens"]) != set(docs.READS) or "match_id" in rule.arguments):
            codes.add("forbidden")
    if "match_id" in rule.arguments:
        codes.add("match_not_found")
    if rule.endpoint not in EXEMPT_ENDPOINTS:
        codes.add("rate_limited")
    return codes


def _add_problem_codes(op: dict, rule, meta: dict) -> None:
    """Each error response names the codes it may carry (``x-problem-codes``, in the
    catalogue's order), each linked to its entry in the description."""
    codes = problem_codes(rule, meta, op["operationId"])
    for status, response in op["responses"].items():
        if not status.isdigit() or int(status) < 400:
            continue
        listed = [code for code, entry in by_code().items() if code in codes and int(status) in entry["status"]]
        if listed:
            response["x-problem-codes"] = listed
            response["description"] += ": " + ", ".join(f"[`{code}`](/problems/{code})" for code in listed)


def _add_headers(op: dict, endpoint: str, recorded: dict[str, list[str]]) -> None:
    """Each response's headers: those the examples' session saw (ETag, Location,
    Idempotent-Replayed), Retry-After on 429 and 503, the RateLimit fields wherever the
    request limits count, and X-Request-Id on every answer."""
    for status, response in op["responses"].items():
        names = set(recorded.get(status, ()))
        if status in RETRY_STATUSES:
            names.add("Retry-After")
        if endpoint not in EXEMPT_ENDPOINTS:
            names |= {"RateLimit", "RateLimit-Policy"}
        names.add("X-Request-Id")
        response["headers"] = {name: {"$ref": f"#/components/headers/{name}"} for name in HEADERS if name in names}


@functools.cache
def examples() -> dict:
    """Every operation's examples, by operation id: ``{"request": body, "responses": {status:
    {media type: example}}}``, captured from a real session by ``python -m tests.api.examples``."""
    return json.loads(resources.files("service.api").joinpath("examples.json").read_text())


def _add_examples(op: dict, given: dict) -> None:
    if "request" in given and "requestBody" in op:
        for media in op["requestBody"]["content"].values():
            media["example"] = given["request"]
    for status, by_media in given.get("responses", {}).items():
        content = op["responses"].get(status, {}).get("content", {})
        for media_type, example in by_media.items():
            if media_type in content:
                content[media_type]["example"] = example


def _path_schema(rule, arg: str) -> dict:
    if type(rule._converters.get(arg)).__name__ == "IntegerConverter":
        return {"type": "integer", "minimum": 1}
    if not arg.endswith("_id"):
        return {"type": "string"}  # a name (an error code)
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
    if isinstance(what, s.JsonLines):
        lines = {
            "type": "string",
            "description": "One JSON document per line, each of the line schema.",
            "contentMediaType": "application/x-ndjson",
            "contentSchema": {"$ref": f"#/components/schemas/{what.item.__name__.removesuffix('Schema')}"},
        }
        return {"description": what.description, "content": {"application/x-ndjson": {"schema": lines}}}
    if isinstance(what, str):
        response: dict[str, Any] = {"description": what}
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
