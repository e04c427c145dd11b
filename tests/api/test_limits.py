"""Limits on what one request or one client may ask: body size, page size, request rate."""

import io
import json
import logging

import pytest
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Response

from service.api import create_app
from service.api.ratelimit import Rate, TokenBuckets, parse_rate
from service.application.tokens import hash_token
from service.settings import Settings

from .conftest import OPERATOR, bearer

PROBLEM = "application/problem+json"


def limited_app(store, **config):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **config})


def assert_problem(r, status, code):
    assert r.status_code == status, (r.status_code, r.data[:300])
    assert r.mimetype == PROBLEM
    assert set(r.json) >= {"type", "title", "status", "code", "detail"}
    assert r.json["status"] == status and r.json["code"] == code


# --- request bodies ------------------------------------------------------------------


def test_an_oversize_body_is_a_413_problem_naming_the_limit(client, new_match):
    r = client.post("/matches", data=json.dumps({"seats": [{"name": "x" * 70_000}]}), content_type="application/json")
    assert_problem(r, 413, "body_too_large")
    assert "65536 bytes" in r.json["detail"] and r.json["title"] == "Content Too Large"
    data, players = new_match()
    r = players[0].act({"type": "discard", "card": "AS", "pad": "y" * 70_000})
    assert_problem(r, 413, "body_too_large")


def chunked(app, body: bytes) -> Response:
    """POST /matches with a chunked body, as gunicorn passes it on: no Content-Length,
    and the server marks the input as terminated."""
    environ = EnvironBuilder(path="/matches", method="POST", data=body, content_type="application/json").get_environ()
    del environ["CONTENT_LENGTH"]
    environ.update({"wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True, "HTTP_TRANSFER_ENCODING": "chunked"})
    return Response.from_app(app, environ)


def test_an_oversize_body_without_a_length_is_refused_while_it_is_read(app):
    # Not cut at the limit and then misjudged as malformed JSON: refused for its size.
    r = chunked(app, b'{"seats": [{"name": "' + b"z" * 100_000 + b'"}]}')
    assert r.status_code == 413 and r.mimetype == PROBLEM and json.loads(r.get_data())["code"] == "body_too_large"
    assert chunked(app, b'{"single_hand": true}').status_code == 201


def test_a_match_record_may_be_larger_than_other_bodies(client):
    big = {"format": "gin-rummy-match", "padding": "p" * 200_000}
    r = client.post("/matches/import", json=big)
    assert r.status_code == 422 and r.mimetype == PROBLEM  # read and judged, not refused for its size


# --- page sizes ------------------------------------------------------------------------


def test_a_page_larger_than_the_maximum_is_a_422_naming_the_field(client, operator):
    assert client.get("/matches?limit=100", headers=operator).status_code == 200
    for bad in ("101", "100000", "0", "-1", "many"):
        r = client.get(f"/matches?limit={bad}", headers=operator)
        assert_problem(r, 422, "invalid_request")
        assert list(r.json["errors"]) == ["limit"], r.json


def test_the_page_size_limits_are_in_the_openapi_document(client):
    spec = client.get("/openapi.json").json
    limit = next(p for p in spec["paths"]["/matches"]["get"]["parameters"] if p["name"] == "limit")
    assert limit["schema"]["minimum"] == 1 and limit["schema"]["maximum"] == 100 and limit["schema"]["default"] == 20
    assert "422" in limit["description"]


# --- the rate limit's arithmetic --------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_limit_is_written_as_a_rate_and_a_burst():
    assert parse_rate("20/second burst 60") == Rate(20, 60)
    assert parse_rate("20/s") == Rate(20, 20)
    assert parse_rate("120 per minute, burst 10") == Rate(2, 10)
    assert parse_rate("3600/hour") == Rate(1, 3600)
    for off in ("0", "off", "", None, "0/second"):
        assert parse_rate(off) is None
    for bad in ("fast", "10/ms", "-5/s", "10/second burst 0", "10/second burst"):
        with pytest.raises(ValueError):
            parse_rate(bad)


def test_a_bad_limit_stops_the_app_at_startup(store):
    with pytest.raises(ValueError, match="rate limit"):
        limited_app(store, RATE_LIMIT_PER_TOKEN="lots")


def test_a_bucket_allows_its_burst_then_refills_at_its_rate():
    clock = Clock()
    buckets = TokenBuckets(Rate(2, 3), clock=clock)
    assert [buckets.take("k") for _ in range(3)] == [0, 0, 0]
    assert buckets.take("k") == pytest.approx(0.5)  # one more request needs half a second
    assert buckets.take("other") == 0  # each key has its own bucket
    clock.now += 0.5
    assert buckets.take("k") == 0
    clock.now += 100  # a long pause refills to the burst, no further
    assert [buckets.take("k") for _ in range(4)][-1] > 0


def test_the_buckets_forget_the_least_recently_seen_keys_beyond_their_bound():
    buckets = TokenBuckets(Rate(1, 1), clock=Clock(), max_keys=3)
    for key in "abcd":
        buckets.take(key)
    assert len(buckets) == 3
    assert buckets.take("a") == 0  # forgotten, so full again
    assert buckets.take("d") > 0


# --- rate limits through the API ----------------------------------------------------


def test_a_token_beyond_its_limit_gets_429_with_retry_after(store):
    client = limited_app(store, RATE_LIMIT_PER_TOKEN="1/minute burst 3", RATE_LIMIT_PER_ADDRESS="0").test_client()
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    ann, bob = (bearer(s["token"]) for s in created["seats"])
    url = f"/matches/{created['id']}"
    assert [client.get(url, headers=ann).status_code for _ in range(3)] == [200] * 3
    r = client.get(url, headers=ann)
    assert_problem(r, 429, "rate_limited")
    assert r.json["title"] == "Too Many Requests" and "token" in r.json["detail"]
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    assert client.get(url, headers=bob).status_code == 200  # another token has its own allowance
    assert client.get("/rules/presets").status_code == 200  # no token: only the address limit applies


def test_an_address_beyond_its_limit_gets_429_whatever_token_it_sends(store):
    client = limited_app(store, RATE_LIMIT_PER_TOKEN="0", RATE_LIMIT_PER_ADDRESS="1/minute burst 2").test_client()
    here, there = {"REMOTE_ADDR": "198.51.100.7"}, {"REMOTE_ADDR": "198.51.100.8"}
    statuses = [client.get("/matches", headers=bearer(f"made-up-{i}"), environ_base=here).status_code for i in range(3)]
    assert statuses == [401, 401, 429]
    r = client.get("/rules/presets", environ_base=here)
    assert_problem(r, 429, "rate_limited")
    assert "address" in r.json["detail"] and int(r.headers["Retry-After"]) >= 1
    assert client.get("/rules/presets", environ_base=there).status_code == 200


def test_x_forwarded_for_is_ignored_unless_proxies_are_trusted(store):
    client = limited_app(store, RATE_LIMIT_PER_TOKEN="0", RATE_LIMIT_PER_ADDRESS="1/minute burst 1").test_client()
    spoofed = [client.get("/rules/presets", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in range(3)]
    assert spoofed == [200, 429, 429]  # a made-up header does not make a new client


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_client(store, caplog):
    caplog.set_level(logging.INFO, logger="gin_rummy.requests")
    app = limited_app(store, RATE_LIMIT_PER_TOKEN="0", RATE_LIMIT_PER_ADDRESS="1/minute burst 1", TRUSTED_PROXIES=1)
    client = app.test_client()
    proxy = {"REMOTE_ADDR": "10.0.0.2"}
    # The proxy appends the address it saw; whatever the client wrote before it is not trusted.
    first = client.get("/rules/presets", headers={"X-Forwarded-For": "1.1.1.1, 203.0.113.5"}, environ_base=proxy)
    again = client.get("/rules/presets", headers={"X-Forwarded-For": "9.9.9.9, 203.0.113.5"}, environ_base=proxy)
    other = client.get("/rules/presets", headers={"X-Forwarded-For": "203.0.113.6"}, environ_base=proxy)
    assert (first.status_code, again.status_code, other.status_code) == (200, 429, 200)
    remotes = [json.loads(rec.getMessage())["remote"] for rec in caplog.records if rec.name == "gin_rummy.requests"]
    assert remotes == ["203.0.113.5", "203.0.113.5", "203.0.113.6"]


def test_health_checks_and_metrics_are_never_limited(store):
    client = limited_app(store, RATE_LIMIT_PER_TOKEN="1/minute burst 1", RATE_LIMIT_PER_ADDRESS="1/minute burst 1").test_client()
    assert client.get("/rules/presets").status_code == 200
    assert client.get("/rules/presets").status_code == 429
    for _ in range(5):
        assert client.get("/health").status_code == 200
        assert client.get("/health/live").status_code == 200
        assert client.get("/metrics", headers=bearer(OPERATOR)).status_code == 200


def test_the_limiter_keeps_no_token(store):
    app = limited_app(store, RATE_LIMIT_PER_TOKEN="100/second", RATE_LIMIT_PER_ADDRESS="0")
    client = app.test_client()
    created = client.post("/matches", json={}).json
    token = created["seats"][0]["token"]
    assert client.get(f"/matches/{created['id']}", headers=bearer(token)).status_code == 200
    keys = app.extensions["gin_rummy_rate_limiter"].per_token.keys()
    assert len(keys) == 1
    secret = token.split(".")[-1]
    assert secret not in keys[0] and token not in keys[0] and keys[0] != hash_token(token)


def test_the_default_limits_leave_room_for_fast_play(client, new_match):
    assert Settings().rate_limit_per_token.burst >= 200
    assert Settings().rate_limit_per_address.per_second >= 500
    _, players = new_match()
    statuses = {players[0].client.get(f"/matches/{players[0].match_id}", headers=players[0].headers).status_code for _ in range(150)}
    assert statuses == {200}


def test_every_counted_answer_says_where_the_caller_stands_in_ratelimit_fields(store):
    # 1 a minute, a burst of 3 per token; 1 a second, a burst of 5 per address.
    client = limited_app(store, RATE_LIMIT_PER_TOKEN="1/minute burst 3", RATE_LIMIT_PER_ADDRESS="1/second burst 5").test_client()
    headers = bearer(OPERATOR)
    first = client.get("/matches", headers=headers)
    assert first.status_code == 200
    # Refilling from empty takes 3 minutes for the token, 5 seconds for the address.
    assert first.headers["RateLimit-Policy"] == '"address";q=5;w=5, "token";q=3;w=180'
    # One taken from each: 4 and 2 left; each full again within one refill (1 s, 60 s).
    assert first.headers["RateLimit"] == '"address";r=4;t=1, "token";r=2;t=60'
    client.get("/matches", headers=headers)
    assert client.get("/matches", headers=headers).headers["RateLimit"].endswith('"token";r=0;t=180')
    refused = client.get("/matches", headers=headers)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert refused.headers["RateLimit"].endswith('"token";r=0;t=180')
    # Without a token only the address counts; the probes are not counted at all.
    assert client.get("/lobby").headers["RateLimit-Policy"] == '"address";q=5;w=5'
    assert "RateLimit" not in client.get("/health/live").headers
