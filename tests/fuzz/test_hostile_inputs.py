"""Hostile inputs that once answered 500, each now a 4xx problem (found while fuzzing).

- digits ``str.isdigit()`` accepts but ``int()`` refuses ("²") in If-Match, the list
  cursor, Last-Event-ID and the stream's query;
- text PostgreSQL cannot store (a NUL character, an unpaired surrogate) in a new match's
  names or an imported record's events, or a NUL in an Idempotency-Key;
- JSON nested deeper than the parser's recursion limit.
"""

from __future__ import annotations

import json
import uuid

import pytest

from service.api import create_app
from service.records.format import digest_of
from tests.api.conftest import OPERATOR, client, new_match, operator  # noqa: F401 - fixtures

JSON = "application/json"


@pytest.fixture
def app(own_store):
    return create_app({"STORE": own_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True})


def assert_problem(r, status: int, code: str | None = None):
    assert r.status_code == status, (r.status_code, r.get_data(as_text=True)[:300])
    assert r.mimetype == "application/problem+json"
    if code is not None:
        assert r.json["code"] == code


@pytest.fixture
def match(new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    return data["id"], players[0]


@pytest.mark.parametrize("value", ['"²"', 'W/"²"', '"1²"', '"٣"'])
def test_an_if_match_of_other_digits_is_a_400(match, value):
    match_id, ann = match
    assert_problem(ann.act({"type": "draw", "source": "stock"}, **{"If-Match": value}), 400, "invalid_if_match")


def test_a_cursor_of_other_digits_is_a_422(client, operator):
    assert_problem(client.get("/matches?cursor=²", headers=operator), 422, "invalid_request")


@pytest.mark.parametrize(
    "query, headers", [("wait=0&after=²", {}), ("wait=²", {}), ("wait=0", {"Last-Event-ID": "²"})]
)
def test_a_stream_position_of_other_digits_is_a_422(client, match, query, headers):
    match_id, ann = match
    r = client.get(f"/matches/{match_id}/stream?{query}", headers={**ann.headers, **headers})
    assert_problem(r, 422, "invalid_request")


@pytest.mark.parametrize("name", ["a\x00b", "\ud800", "x\udfffy"])
def test_a_name_the_database_cannot_store_is_a_422(client, name):
    body = json.dumps({"seats": [{"name": name}, {"kind": "computer"}]})
    assert_problem(client.post("/matches", data=body, content_type=JSON), 422, "invalid_request")


@pytest.mark.parametrize(
    "body",
    [
        '{"seats": [{"name": "a\\u0000b"}, {"kind": "computer"}]}',    # escapes, in any case
        '{"seats": [{"name": "\\uDBFF"}, {"kind": "computer"}]}',
        '{"seats": [{"\\udc00": "x"}, {"kind": "computer"}]}',         # in a key
    ],
)
def test_text_the_database_cannot_store_is_a_422_however_it_is_spelled(client, body):
    # Refused by the body's check itself, before the fields are looked at.
    utf16 = body.encode("utf-16")  # JSON may come in UTF-16, whose bytes hide the escapes
    raw = body.replace("\\uDBFF", "\udbff").replace("\\udc00", "\udc00").encode("utf-8", "surrogatepass")
    for data in (body, utf16, raw):  # (raw: a surrogate's own three bytes, in UTF-8)
        r = client.post("/matches", data=data, content_type=JSON)
        assert_problem(r, 422, "invalid_request")
        assert "NUL character or an unpaired surrogate" in r.json["detail"], r.json


def test_a_surrogates_own_bytes_in_a_record_are_a_422_not_a_500(client, new_match, operator):
    data, players = new_match({"single_hand": True, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    record = client.get(f"/matches/{data['id']}/export", headers=operator).json
    record["match_id"] = str(uuid.uuid4())
    record["seats"][0]["name"] = record["events"][0]["data"]["seats"][0]["name"] = "Ann MARK"
    body = json.dumps(record).encode().replace(b"MARK", "\ud800".encode("utf-8", "surrogatepass"))
    assert body.count(b"\xed\xa0\x80") == 2
    r = client.post("/matches/import", data=body, content_type=JSON)
    assert_problem(r, 422, "invalid_request")
    assert "unpaired surrogate" in r.json["detail"]


@pytest.mark.parametrize("name", ["Ann \\ud83d\\ude00", "a\\\\u0000b"])
def test_a_paired_surrogate_or_an_escaped_backslash_is_fine(client, name):
    # An emoji as a surrogate pair, and a backslash followed by "u0000", are text.
    body = f'{{"seats": [{{"name": "{name}"}}, {{"kind": "computer"}}]}}'
    r = client.post("/matches", data=body, content_type=JSON)
    assert r.status_code == 201, r.json
    assert r.json["seats"][0]["name"] == json.loads(f'"{name}"')


@pytest.mark.parametrize("name", ["a\x00b", "\ud800"])
def test_a_record_the_database_cannot_store_is_a_422(client, new_match, operator, name):
    data, players = new_match({"single_hand": True, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    record = client.get(f"/matches/{data['id']}/export", headers=operator).json
    record["match_id"] = str(uuid.uuid4())
    record["seats"][0]["name"] = record["events"][0]["data"]["seats"][0]["name"] = name
    body = json.dumps(record)
    assert_problem(client.post("/matches/import", data=body, content_type=JSON), 422, "invalid_request")


def test_an_idempotency_key_with_a_nul_is_a_400(match):
    match_id, ann = match
    r = ann.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "key\x00"})
    assert_problem(r, 400, "invalid_idempotency_key")


@pytest.mark.parametrize(
    "path, body",
    [
        ("/matches", "[" * 30000 + "]" * 30000),
        ("/matches/import", '{"events": ' + "[" * 100000 + "]" * 100000 + "}"),
    ],
)
def test_json_nested_too_deeply_is_a_400(client, path, body):
    assert_problem(client.post(path, data=body, content_type=JSON), 400, "malformed_json")


def test_a_deep_action_body_is_a_400(match):
    match_id, ann = match
    body = '{"type": "defend", "melds": ' + "[" * 20000 + "]" * 20000 + "}"
    r = ann.client.post(f"/matches/{match_id}/actions", data=body, content_type=JSON, headers=ann.headers)
    assert_problem(r, 400, "malformed_json")


def test_a_record_nested_deeply_but_readable_is_refused_by_its_checks(client, new_match, operator):
    data, players = new_match({"single_hand": True, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    record = client.get(f"/matches/{data['id']}/export", headers=operator).json
    record["match_id"] = str(uuid.uuid4())
    deep: list = []
    for _ in range(800):
        deep = [deep]
    record["events"].append(
        {"seq": len(record["events"]) + 1, "type": "hand_dealt", "schema_version": 1,
         "recorded_at": record["events"][0]["recorded_at"], "data": {"x": deep}}
    )
    record["digest"]["value"] = digest_of(record["events"])
    assert_problem(client.post("/matches/import", data=json.dumps(record), content_type=JSON), 422)
