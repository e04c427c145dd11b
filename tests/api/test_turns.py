"""A turn's two requests answered by ``service.api.turns`` get Flask's answer.

Two apps share one store: ``fast`` as served (``Turns`` in front), ``routes`` with
``Turns`` stepped around (its Flask app alone).  The same requests go to each, and
the answers must be the same: status, body, every header (the request id's value
apart, each request has its own), the log line and the metrics.  Each check also
asserts which path answered, so that a change of ``Turns`` that quietly hands every
request to Flask fails here.
"""

from __future__ import annotations

import json
import logging

import pytest
from werkzeug.test import Client

from service.api import create_app
from service.api.turns import Turns

from .conftest import OPERATOR, UNLIMITED, bearer, plays

LIMITED = {**UNLIMITED, "RATE_LIMIT_PER_TOKEN": "5/minute burst 5"}


class Paths:
    """``fast``: the app as served; ``routes``: the same kind of app with Flask alone."""

    def __init__(self, store, config):
        self.apps = [create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **config}) for _ in range(2)]
        fast, routes = (app.wsgi_app for app in self.apps)
        assert isinstance(fast, Turns) and isinstance(routes, Turns)
        self.handed_on = 0
        flask_alone = fast.inner

        def counted(environ, start_response):
            self.handed_on += 1
            return flask_alone(environ, start_response)

        fast.inner = counted
        self.fast, self.routes = Client(fast), Client(routes.inner)

    def both(self, method: str, path: str, *, expect_fast: bool, **kwargs):
        """The answer of each path to the same request; asserts they are the same."""
        before = self.handed_on
        a = self.fast.open(path, method=method, **kwargs)
        assert self.handed_on - before == (0 if expect_fast else 1), "the request took the other path"
        b = self.routes.open(path, method=method, **kwargs)
        assert (a.status_code, a.get_data()) == (b.status_code, b.get_data())
        assert fields(a) == fields(b)
        assert a.headers["X-Request-Id"] and a.headers["X-Request-Id"] != b.headers["X-Request-Id"]
        return a

    def close(self):
        for app in self.apps:
            app.extensions["gin_rummy"].hub.shutdown()


def fields(response) -> list[tuple[str, str]]:
    return sorted((name, "" if name == "X-Request-Id" else value) for name, value in response.headers.items())


@pytest.fixture
def paths(store):
    made = Paths(store, UNLIMITED)
    yield made
    made.close()


def two_people(paths: Paths) -> tuple[str, dict[int, dict]]:
    r = paths.fast.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "human"}]})
    assert r.status_code == 201
    body = r.get_json()
    return body["id"], {seat["seat"]: bearer(seat["token"]) for seat in body["seats"]}


def to_play(paths: Paths, match_id: str, seats: dict[int, dict]) -> tuple[int, dict]:
    for seat, headers in seats.items():
        view = paths.fast.get(f"/matches/{match_id}", headers=headers).get_json()
        if plays(view):
            return seat, view
    raise AssertionError("nobody may play")


def test_a_view_is_the_same_either_way(paths):
    match_id, seats = two_people(paths)
    for seat in (0, 1):
        r = paths.both("GET", f"/matches/{match_id}", headers=seats[seat], expect_fast=True)
        assert r.status_code == 200 and r.get_json()["seat"] == seat
        assert r.headers["Cache-Control"] == "private, no-cache" and r.headers["ETag"].startswith('"')
        # Not modified: the ETag sent back.
        again = paths.both("GET", f"/matches/{match_id}", headers={**seats[seat], "If-None-Match": r.headers["ETag"]}, expect_fast=True)
        assert again.status_code == 304 and again.get_data() == b""
    # A page on this machine (the default CORS origins) gets the CORS fields.
    r = paths.both("GET", f"/matches/{match_id}", headers={**seats[0], "Origin": "http://localhost:5173"}, expect_fast=True)
    assert r.headers["Access-Control-Allow-Origin"] == "http://localhost:5173" and r.headers["Vary"] == "Origin"


def test_views_refused_are_the_same_either_way(paths):
    match_id, seats = two_people(paths)
    other_id, _ = two_people(paths)
    r = paths.both("GET", f"/matches/{match_id}", headers=bearer("no-such-token"), expect_fast=True)
    assert r.status_code == 401 and r.get_json()["code"] == "invalid_token"
    r = paths.both("GET", f"/matches/{other_id}", headers=seats[0], expect_fast=True)
    assert r.status_code == 403
    r = paths.both("GET", "/matches/00000000-0000-4000-8000-000000000000", headers=bearer(OPERATOR), expect_fast=True)
    assert r.status_code == 404 and r.get_json()["code"] == "match_not_found"
    # Other forms are Flask's: no token, a malformed one, a path that is no match id, a query.
    assert paths.both("GET", f"/matches/{match_id}", expect_fast=False).status_code == 401
    assert paths.both("GET", f"/matches/{match_id}", headers={"Authorization": "Basic abc"}, expect_fast=False).status_code == 401
    assert paths.both("GET", "/matches/not-a-match", headers=seats[0], expect_fast=False).status_code == 404
    r = paths.both("GET", f"/matches/{match_id}?seat=1", headers=bearer(OPERATOR), expect_fast=False)
    assert r.status_code == 200 and r.get_json()["seat"] == 1


def test_an_action_and_its_retry_are_the_same_either_way(paths):
    match_id, seats = two_people(paths)
    seat, view = to_play(paths, match_id, seats)
    action = plays(view)[0]
    headers = {**seats[seat], "If-Match": f'"{view["version"]}"', "Idempotency-Key": "turn-1"}
    before = paths.handed_on
    first = paths.fast.post(f"/matches/{match_id}/actions", json=action, headers=headers)
    assert paths.handed_on == before, "the action took Flask's path"
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    assert first.headers["ETag"] == f'"{first.get_json()["view"]["version"]}"'
    # Its retry, through each path: the first answer again, marked replayed.
    retry = paths.both("POST", f"/matches/{match_id}/actions", json=action, headers=headers, expect_fast=True)
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.get_json() == first.get_json()
    assert fields(retry) == sorted([*fields(first), ("Idempotent-Replayed", "true")])


def test_actions_refused_are_the_same_either_way(paths):
    match_id, seats = two_people(paths)
    seat, view = to_play(paths, match_id, seats)
    url = f"/matches/{match_id}/actions"
    action = plays(view)[0]
    # Stale If-Match: 412; a malformed one, or key: 400; the other seat's turn: 409.
    r = paths.both("POST", url, json=action, headers={**seats[seat], "If-Match": '"999"'}, expect_fast=True)
    assert r.status_code == 412 and r.headers["ETag"] == f'"{view["version"]}"'
    assert paths.both("POST", url, json=action, headers={**seats[seat], "If-Match": "soon"}, expect_fast=True).status_code == 400
    assert paths.both("POST", url, json=action, headers={**seats[seat], "Idempotency-Key": "\x07"}, expect_fast=True).status_code == 400
    r = paths.both("POST", url, json=action, headers=seats[1 - seat], expect_fast=True)
    assert r.status_code == 409 and r.get_json()["code"] == "illegal_move"
    # A discard before drawing (the seat to play has ten cards: it draws or passes first).
    r = paths.both("POST", url, json={"type": "discard", "card": "AS"}, headers=seats[seat], expect_fast=True)
    assert r.status_code == 409 and r.get_json()["code"] == "illegal_move"
    # Bodies this path does not take are Flask's, read once: not JSON, another action, a
    # field too many, a text NUL, no token.
    r = paths.both("POST", url, data="type=draw", headers={**seats[seat], "Content-Type": "text/plain"}, expect_fast=False)
    assert r.status_code == 415
    r = paths.both("POST", url, data=b'{"type": "draw"', headers={**seats[seat], "Content-Type": "application/json"}, expect_fast=False)
    assert r.status_code == 400
    r = paths.both("POST", url, json={**action, "extra": 1}, headers=seats[seat], expect_fast=False)
    assert r.status_code == 422 and r.get_json()["code"] == "invalid_request"
    r = paths.both("POST", url, json={"type": "draw\u0000"}, headers=seats[seat], expect_fast=False)
    assert r.status_code == 422
    assert paths.both("POST", url, json=action, expect_fast=False).status_code == 401
    # The match is as it was: none of these moved it.
    assert paths.fast.get(f"/matches/{match_id}", headers=seats[seat]).get_json()["version"] == view["version"]


def test_an_action_flask_answers_after_its_body_was_read(paths):
    """A body read by ``Turns`` and handed on (an action it does not know) is whole."""
    match_id, seats = two_people(paths)
    seat, view = to_play(paths, match_id, seats)
    before = paths.handed_on
    r = paths.fast.post(f"/matches/{match_id}/actions", json={"type": "resign"}, headers=seats[seat])
    assert paths.handed_on == before + 1
    assert r.status_code == 200 and r.get_json()["view"]["phase"] == "match_over"


def test_rate_limits_are_the_same_either_way(store):
    paths = Paths(store, LIMITED)
    try:
        match_id, seats = two_people(paths)
        answers = [paths.both("GET", f"/matches/{match_id}", headers=seats[0], expect_fast=True) for _ in range(6)]
        assert [r.status_code for r in answers] == [200] * 5 + [429]
        assert answers[0].headers["RateLimit"] == '"token";r=4;t=12'
        assert answers[0].headers["RateLimit-Policy"] == '"token";q=5;w=60'
        assert answers[-1].get_json()["code"] == "rate_limited" and answers[-1].headers["Retry-After"]
    finally:
        paths.close()


def test_the_log_line_and_metrics_are_the_same_either_way(paths, caplog):
    match_id, seats = two_people(paths)
    lines = []
    with caplog.at_level(logging.INFO, logger="gin_rummy.requests"):
        for client in (paths.fast, paths.routes):
            caplog.clear()
            client.get(f"/matches/{match_id}", headers=seats[0])
            client.get(f"/matches/{match_id}", headers=bearer("no-such-token"))
            lines.append([{**json.loads(r.getMessage()), "request_id": None, "ms": None} for r in caplog.records])
    assert lines[0] == lines[1]
    assert [(line["route"], line["status"]) for line in lines[0]] == [("/matches/<match_id>", 200), ("/matches/<match_id>", 401)]
