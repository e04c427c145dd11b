"""The OpenAPI document's examples: every operation has them, each is valid against its
schema, and each is what a real session of the service gets (``tests/api/examples.py``)."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from service.api import create_app
from service.api.openapi import examples, spec_dict
from service.store import EventStore, connect
from service.store.migrate import upgrade

from .examples import capture

HOW = (
    "add a call of the operation to tests/api/examples.py (session), then run "
    "`python -m tests.api.examples --only OPERATION_ID` and `gin-rummy openapi > openapi/openapi.yaml`"
)
#: The document as a JSON Schema resource, so that any schema in it is validated with
#: its references (``#/components/schemas/...``) resolved in the document.
DOCUMENT = "urn:gin-rummy:openapi"


@pytest.fixture(scope="module")
def document():
    # The document follows from the routes and schemas alone (as `gin-rummy openapi`).
    return spec_dict(create_app({"STORE": EventStore(pool=None)}))


def operations(document):
    for path, item in document["paths"].items():
        for method, op in item.items():
            yield f"{method.upper()} {path}", f"/paths/{_escape(path)}/{method}", op


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def media_with_examples(document):
    """(where, JSON pointer to the schema, media type, example) of every example."""
    for name, pointer, op in operations(document):
        for media_type, media in op.get("requestBody", {}).get("content", {}).items():
            if "example" in media:
                yield f"{name} request", f"{pointer}/requestBody/content/{_escape(media_type)}/schema", media_type, media["example"]
        for status, response in op["responses"].items():
            for media_type, media in response.get("content", {}).items():
                if "example" in media:
                    where = f"{pointer}/responses/{status}/content/{_escape(media_type)}/schema"
                    yield f"{name} {status} {media_type}", where, media_type, media["example"]


def schema_checker(document):
    registry = Registry().with_resource(DOCUMENT, Resource(contents=document, specification=DRAFT202012))

    def errors(pointer: str, instance) -> list[str]:
        validator = Draft202012Validator({"$ref": f"{DOCUMENT}#{pointer}"}, registry=registry, format_checker=FormatChecker())
        return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in validator.iter_errors(instance)]

    return errors


def resolve(document, pointer: str) -> dict:
    """The part of ``document`` at the JSON pointer ``pointer``."""
    node = document
    for part in pointer.lstrip("/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def example_problems(document, pointer: str, media_type: str, example) -> list[str]:
    """Why ``example`` is not a valid ``media_type`` answer of the schema at ``pointer``."""
    errors = schema_checker(document)
    if media_type == "text/event-stream":
        # Each event's data is one JSON document of the event's item schema.
        if not isinstance(example, str) or "\ndata: " not in example:
            return ["not an event stream"]
        item = pointer + "/properties/data/contentSchema"
        found = [json.loads(line.removeprefix("data: ")) for line in example.splitlines() if line.startswith("data: ")]
        return [f"event {i}: {e}" for i, data in enumerate(found) for e in errors(item, data)]
    if media_type == "application/x-ndjson":
        # One document per line: of the line schema the answer names, else a match record.
        lines = example.splitlines() if isinstance(example, str) else []
        if not lines:
            return ["no line"]
        line_schema = resolve(document, pointer).get("contentSchema")
        item = pointer + "/contentSchema" if line_schema else "/components/schemas/MatchRecord"
        return [f"line {i}: {e}" for i, line in enumerate(lines) for e in errors(item, json.loads(line))]
    return errors(pointer, example)


def test_every_operation_has_an_example_of_its_body_and_of_each_success(document):
    missing = []
    for name, _, op in operations(document):
        for media_type, media in op.get("requestBody", {}).get("content", {}).items():
            if "example" not in media:
                missing.append(f"{name}: the request body ({media_type})")
        successes = {status: r for status, r in op["responses"].items() if status.startswith("2") and r.get("content")}
        assert successes or "304" in op["responses"], f"{name} documents no success answer"
        for status, response in successes.items():
            for media_type, media in response["content"].items():
                if "example" not in media:
                    missing.append(f"{name}: the {status} answer ({media_type})")
    assert not missing, "operations without examples:\n  " + "\n  ".join(missing) + f"\nTo add them: {HOW}"


def test_every_example_is_valid_against_its_schema(document):
    problems = {
        where: found
        for where, pointer, media_type, example in media_with_examples(document)
        if (found := example_problems(document, pointer, media_type, example))
    }
    assert not problems, json.dumps(problems, indent=1)


def test_the_examples_file_names_only_operations_and_answers_of_the_document(document):
    ops = {op["operationId"]: op for _, _, op in operations(document)}
    stale = []
    for operation, entry in examples().items():
        if operation not in ops:
            stale.append(f"{operation}: no such operation")
            continue
        if "request" in entry and "requestBody" not in ops[operation]:
            stale.append(f"{operation}: a request example, but the operation takes no body")
        for status, by_media in entry["responses"].items():
            content = ops[operation]["responses"].get(status, {}).get("content", {})
            stale += [f"{operation} {status} {m}: not an answer of the operation" for m in by_media if m not in content]
    assert not stale, "\n".join(stale) + f"\n({HOW})"


@pytest.fixture(scope="module")
def other_store(server):
    """A second service's database: the one a record is imported into."""
    url = server.create_database("gin_rummy_examples_import")
    upgrade(url)
    pool = connect(url, min_size=1, max_size=4)
    yield EventStore(pool)
    pool.close()
    server.drop_database(url)


def test_the_examples_are_what_a_real_session_gets(store, other_store, document):
    captured = capture(store, other_store)
    differences = []
    for operation, entry in examples().items():
        got = captured.get(operation)
        if got is None:
            differences.append(f"{operation}: the session no longer calls it")
            continue
        if ("request" in entry) != ("request" in got):
            differences.append(f"{operation}: a request example in one, not the other")
        for status, by_media in entry["responses"].items():
            for media_type, example in by_media.items():
                now = got["responses"].get(status, {}).get(media_type)
                if now is None:
                    differences.append(f"{operation} {status} {media_type}: the session no longer gets that answer")
                elif isinstance(example, dict) and set(example) != set(now):
                    differences.append(f"{operation} {status} {media_type}: fields {sorted(set(example) ^ set(now))} differ")
    for operation in captured:
        if operation not in examples():
            differences.append(f"{operation}: called by the session, not in the examples file")
    assert not differences, "\n".join(differences) + "\nrun: python -m tests.api.examples, then gin-rummy openapi > openapi/openapi.yaml"


#: Error answers documented without an example, and why no session gets them.
NO_EXAMPLE = {
    ("rematch", "422"): "released in 1.0.0; its one code (idempotency_key_reused) cannot arise: a rematch's fingerprint is constant",
}


def test_every_error_response_has_an_example_of_a_code_it_names(document):
    missing, unnamed = [], []
    for name, _, op in operations(document):
        for status, response in op["responses"].items():
            if status[0] not in "45":
                continue
            examples_ = [media["example"] for media in response.get("content", {}).values() if "example" in media]
            if not examples_:
                if (op["operationId"], status) not in NO_EXAMPLE:
                    missing.append(f"{name} {status}")
                continue
            codes = response.get("x-problem-codes")
            if codes is not None:
                unnamed += [f"{name} {status}: {e.get('code')}" for e in examples_ if isinstance(e, dict) and e.get("code") not in codes]
    assert not missing, "error answers without examples:\n  " + "\n  ".join(missing) + f"\nTo add them: {HOW}"
    assert not unnamed, "a recorded code the response's x-problem-codes does not name:\n  " + "\n  ".join(unnamed)
    for (operation, status), why in NO_EXAMPLE.items():
        (op,) = [op for _, _, op in operations(document) if op["operationId"] == operation]
        assert status in op["responses"], f"stale in NO_EXAMPLE: {operation} {status} ({why})"
