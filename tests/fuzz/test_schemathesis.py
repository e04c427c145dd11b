"""Hostile input: every operation of ``openapi/openapi.yaml`` fuzzed by schemathesis against
the real app (WSGI, in process) on the real database.

Schemathesis generates valid and invalid requests from the document (its examples,
coverage and fuzzing phases, positive and negative modes).  Left alone it would mostly
hit random match ids without a token, so before each request the case is steered, by a
choice derived from the generated data itself (so every run sends the same requests):

- path ``match_id``: usually one of the real matches made below (two people, active;
  against the computer, active; finished), else the generated value;
- ``Authorization``: usually a seat token of that match or the operator token, else a
  token of another match, a malformed header, none, or the generated value;
- an action is, two times in three, one of the current ``legal_actions`` of the seat to
  play, with its token, mostly the current version as ``If-Match`` (sometimes a stale
  one, or none) and a fresh ``Idempotency-Key`` (so matches advance and successful
  answers are checked too);
- an imported record is sometimes a real export (as is, under a new id, or damaged) or
  a generated one with its digest made right, so that its events reach the replay.

Unauthenticated and malformed requests come from both sides: the steering above (no
token, another match's token, a garbled or non-Bearer header) and Schemathesis's
negative mode (bodies, queries and headers that break the document).

Every response must conform to the document: never a 5xx, a status code the operation
lists (``default`` only covers the few errors any request may meet), the documented
content type and the response schema.  The number of requests per operation is printed
at the end of the session (``tests/fuzz/conftest.py``).
"""

from __future__ import annotations

import copy
import json
import tempfile
import uuid
import zlib
from pathlib import Path

import pytest
import schemathesis
import yaml
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.api import create_app
from service.records.format import digest_of
from tests.api.conftest import bearer, plays
from tests.support.matches import greedy_action_on_view

from .conftest import FUZZED, STATUSES

DOCUMENT = Path(__file__).parents[2] / "openapi" / "openapi.yaml"
OPERATOR = "operator-token-for-fuzzing"
#: Fuzzing-phase examples per operation (the examples and coverage phases add their own).
MAX_EXAMPLES = 50
#: Statuses any request may meet whatever the operation: the document's ``default``
#: response ("Any other error") stands for these and only these.
GENERIC_STATUSES = {405, 413, 429, 503}


class World:
    """The app, and real matches to aim requests at."""

    def __init__(self, store):
        self.app = create_app(
            {
                "STORE": store,
                "OPERATOR_TOKEN": OPERATOR,
                "TESTING": True,
                # The rate limits would answer 429 to a fuzzer's bursts.
                "RATE_LIMIT_PER_TOKEN": "off",
                "RATE_LIMIT_PER_ADDRESS": "off",
                "GUESTS_PER_ADDRESS": "off",
                "INVITES_PER_ADDRESS": "off",
                "PUBLIC_MATCHES_PER_PLAYER": "off",
                "CPU_PER_ADDRESS": "off",
                "CPU_PER_TOKEN": "off",
            }
        )
        client = self.app.test_client()
        self.matches: dict[str, dict] = {}
        self.matches["duo"] = self._create(client, {"seats": [{"name": "Ann"}, {"name": "Bob"}]})
        self.matches["computer"] = self._create(client, {"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]})
        finished = self._create(
            client, {"single_hand": True, "seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]}
        )
        _play_to_the_end(client, finished)
        self.matches["finished"] = finished
        record = client.get(f"/matches/{finished['id']}/export", headers=bearer(OPERATOR))
        assert record.status_code == 200, record.json
        self.record = record.json
        self.client = client

    @staticmethod
    def _create(client, body: dict) -> dict:
        r = client.post("/matches", json=body)
        assert r.status_code == 201, r.json
        data = r.json
        return {"id": data["id"], "tokens": {s["seat"]: s["token"] for s in data["seats"] if s["token"]}}

    def view(self, match: dict, token: str) -> dict | None:
        r = self.client.get(f"/matches/{match['id']}", headers=bearer(token))
        return r.json if r.status_code == 200 else None


def _play_to_the_end(client, match: dict) -> None:
    for _ in range(500):
        for token in match["tokens"].values():
            view = client.get(f"/matches/{match['id']}", headers=bearer(token)).json
            if view["status"] == "finished":
                return
            if plays(view):
                r = client.post(f"/matches/{match['id']}/actions", json=greedy_action_on_view(view), headers=bearer(token))
                assert r.status_code == 200, r.json
    raise AssertionError("the match did not end")


class Chooser:
    """Deterministic choices from a case's generated data: the same case, the same choices."""

    def __init__(self, case):
        raw = json.dumps(
            [case.operation.label, case.path_parameters, dict(case.headers or {}), case.query, _jsonable(case.body)],
            sort_keys=True,
            default=repr,
        )
        self.seed = zlib.crc32(raw.encode())

    def pick(self, options: list, weights: list[int] | None = None):
        weights = weights or [1] * len(options)
        self.seed = (self.seed * 1103515245 + 12345) & 0x7FFFFFFF
        point = self.seed % sum(weights)
        for option, weight in zip(options, weights):
            if point < weight:
                return option
            point -= weight
        raise AssertionError("unreachable")


def _jsonable(body):
    try:
        json.dumps(body)
        return body
    except (TypeError, ValueError):
        return repr(body)


def steer(case, world: World) -> None:
    """Aim the generated case at real matches with real tokens, most of the time."""
    choose = Chooser(case)
    match = None
    if "match_id" in case.path_parameters:
        name = choose.pick(["duo", "computer", "finished", None], [3, 3, 3, 1])
        if name is not None:
            match = world.matches[name]
            case.path_parameters["match_id"] = match["id"]
    if "number" in case.path_parameters and match is not None:
        case.path_parameters["number"] = choose.pick([1, 2, case.path_parameters["number"]], [3, 1, 1])
    if case.operation.definition.raw.get("security"):
        _steer_auth(case, world, match, choose)
    if match is not None and case.operation.label == "GET /matches/{match_id}/stream":
        # The live stream would otherwise hold the request for up to 30 s.
        case.query = {**(case.query or {}), "wait": "0"}
    if match is not None and case.operation.label == "POST /matches/{match_id}/actions":
        _steer_action(case, world, match, choose)
    if case.operation.label == "POST /matches/import":
        _steer_import(case, world, choose)


def _steer_auth(case, world: World, match: dict | None, choose: Chooser) -> None:
    tokens = (match or world.matches["duo"])["tokens"]
    other = world.matches["computer" if match is world.matches["duo"] else "duo"]["tokens"][0]
    options = {
        "seat": lambda: f"Bearer {choose.pick(list(tokens.values()))}",
        "operator": lambda: f"Bearer {OPERATOR}",
        "other match": lambda: f"Bearer {other}",
        "garbled seat": lambda: f"Bearer {tokens[0][:-3]}xyz",
        "basic": lambda: "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "empty bearer": lambda: "Bearer ",
        "none": lambda: None,
        "generated": lambda: case.headers.get("Authorization") if case.headers else None,
    }
    kind = choose.pick(list(options), [8, 4, 1, 1, 1, 1, 1, 1])
    value = options[kind]()
    headers = dict(case.headers or {})
    headers.pop("Authorization", None)
    if value is not None:
        headers["Authorization"] = value
    case.headers = headers


def _steer_action(case, world: World, match: dict, choose: Chooser) -> None:
    """Two times in three: a legal action of the seat to play, with its token."""
    if not choose.pick([True, False], [2, 1]):
        return
    for token in sorted(match["tokens"].values(), key=lambda _: choose.pick(range(100))):
        view = world.view(match, token)
        if view and plays(view):
            break
    else:
        return  # the match is over
    case.body = copy.deepcopy(choose.pick(plays(view)))
    case.media_type = "application/json"
    headers = dict(case.headers or {})
    headers["Authorization"] = f"Bearer {token}"
    headers.pop("If-Match", None)
    version = choose.pick([view["version"], view["version"] - 1, None], [3, 1, 1])
    if version is not None:
        headers["If-Match"] = f'"{version}"'
    if choose.pick([True, False], [2, 1]):
        # The coverage phase repeats a few keys: reused for another action they get 422.
        headers["Idempotency-Key"] = f"fuzz-{choose.seed}"
    case.headers = headers


def _steer_import(case, world: World, choose: Chooser) -> None:
    how = choose.pick(["generated", "digest fixed", "as is", "new id", "damaged"], [3, 3, 1, 2, 2])
    if how == "generated":
        return
    if how == "digest fixed":
        # A generated record with a correct digest: its events reach the replay.
        body = case.body
        if isinstance(body, dict) and isinstance(body.get("events"), list) and isinstance(body.get("digest"), dict):
            try:
                body["digest"]["value"] = digest_of(body["events"])
            except (TypeError, ValueError, KeyError, AttributeError):
                pass  # not events enough to digest: sent as generated
        return
    record = copy.deepcopy(world.record)
    if how == "new id":
        record["match_id"] = str(uuid.UUID(int=choose.seed * 7919 % (1 << 122) | (1 << 126)))
    elif how == "damaged":
        record["match_id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, str(choose.seed)))
        events = record["events"]
        event = events[choose.seed % len(events)]
        where = choose.pick(["seq", "type", "data", "digest"])
        if where == "seq":
            event["seq"] += 1
        elif where == "type":
            event["type"] = "card_discarded" if event["type"] != "card_discarded" else "card_drawn"
        elif where == "data":
            event["data"] = {**event["data"], "card": "ZZ"}
        else:
            record["digest"]["value"] = "0" * 64
    case.body = record
    case.media_type = "application/json"


def status_code_listed(ctx, response, case):
    """Stricter than ``status_code_conformance``: every operation has a ``default``
    response, so the status must be listed by the operation itself, or be one of the few
    statuses any request may meet."""
    if case.method.upper() != case.operation.method.upper():
        return None  # another method on this path (the coverage phase tries them): any 4xx will do
    status = response.status_code
    listed = {str(code) for code in case.operation.definition.raw.get("responses", {})}
    if str(status) in listed or status in GENERIC_STATUSES:
        return None
    raise Failure(
        operation=case.operation.label,
        title="Undocumented HTTP status code",
        message=f"{status} is not among the responses of {case.operation.label}: {sorted(listed)}",
    )


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    status_code_listed,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def world(own_store):
    return World(own_store)


def _generator_friendly_copy(folder: Path) -> Path:
    """The document, copied with one equivalent rewrite where it is needed.

    The document's record event says its data schema by type as a ``oneOf`` of one
    variant per type and version (``service.api.openapi._event_variants``) when the
    record schema's branches allow it; otherwise it keeps the file's ``allOf: [{if: type
    is T, then: data is T's}, ...]``, which Schemathesis cannot generate from beyond six
    branches at once, so the copy says the same as ``anyOf: [type is T and data is T's,
    ..., none of the types named]`` (the same, since each condition names one type and
    an event requires its type).
    """
    document = yaml.safe_load(DOCUMENT.read_text())
    event = document["components"]["schemas"]["MatchRecordEvent"]
    branches = event.pop("allOf", None)
    if branches is not None:
        assert all(set(branch) == {"if", "then"} for branch in branches), "the record schema changed shape"
        event["anyOf"] = [{"allOf": [b["if"], b["then"]]} for b in branches] + [
            {"not": {"anyOf": [b["if"] for b in branches]}}
        ]
    (folder / "openapi.json").write_text(json.dumps(document))
    return folder / "openapi.json"


_FOLDER = tempfile.TemporaryDirectory(prefix="gin-rummy-fuzz-")
schema = schemathesis.openapi.from_path(_generator_friendly_copy(Path(_FOLDER.name)))
schema.config.generation.update(max_examples=MAX_EXAMPLES, deterministic=True, database="none")


@schema.parametrize()
def test_every_operation_answers_as_documented(case, world):
    steer(case, world)
    FUZZED[case.operation.label] += 1
    # The app's test transport does not undo a gzipped answer (the docs' files and the
    # document are gzipped when accepted): ask for them as they are.
    response = case.call(app=world.app, headers={"Accept-Encoding": "identity"})
    STATUSES[case.operation.label][response.status_code] += 1
    case.validate_response(response, checks=CHECKS)
