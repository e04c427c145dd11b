"""What must never leave the service: tokens, hidden cards, and its own internals.

A match is played through the API with every log record captured (at every level, from
every logger) and every error body kept; then no log line and no error body may hold a
seat token (or its secret part), the operator token, a card the caller may not see, or
a trace ("Traceback", 'File "').
"""

import json
import logging
import re

import pytest

from service.api import create_app
from tests.support.matches import greedy_action_on_view

from .conftest import OPERATOR, bearer, plays

TRACE_MARKS = ("Traceback", 'File "')
CARD_CODE = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][CDHS](?![A-Za-z0-9])")
CARD_EXAMPLE = "e.g. TD"  # the card-code rule's own example, in every invalid-card answer
FORMAT = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")


class Recorder:
    """Every response the app gives, with the seat whose token asked (None: no seat)."""

    def __init__(self):
        self.responses = []

    def install(self, app):
        from flask import request

        @app.after_request
        def _keep(response):
            if not response.is_streamed:
                auth = request.headers.get("Authorization", "")
                self.responses.append((request.method, request.path, auth, response.status_code, response.get_data(as_text=True)))
            return response


@pytest.fixture
def hygiene(store, caplog):
    caplog.set_level(logging.DEBUG)  # everything any logger says
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR})
    recorder = Recorder()
    recorder.install(app)
    app.config["BOOM_MESSAGE"] = "boom"

    def boom():  # a bug, in this test app only, whose message holds secrets
        try:
            {}["missing"]
        except KeyError as exc:
            raise RuntimeError(app.config["BOOM_MESSAGE"]) from exc

    app.add_url_rule("/test/boom", "boom", boom)
    return app, recorder, caplog


def log_lines(caplog) -> list[str]:
    return [FORMAT.format(record) for record in caplog.records]


def assert_clean(text: str, secrets: list[str], where: str) -> None:
    for secret in secrets:
        assert secret not in text, f"a secret in {where}: {text[:500]}"
    for mark in TRACE_MARKS:
        assert mark not in text, f"a trace in {where}: {text[:500]}"


def seat_secrets(tokens: list[str]) -> list[str]:
    return [OPERATOR] + tokens + [t.split(".")[-1] for t in tokens]


def provoke_errors(client, match_id: str, token: str, view: dict) -> None:
    """Requests a careless or hostile seat might send, all refused."""
    url = f"/matches/{match_id}"
    own = view["hand"][0]
    auth = bearer(token)
    if plays(view):
        public = [c for c in view["discard_pile"] if c not in view["hand"]]
        if public:  # not held (or not now): refused with the caller's own hand in the detail
            client.post(f"{url}/actions", json={"type": "discard", "card": public[0]}, headers=auth)
    else:
        client.post(f"{url}/actions", json={"type": "discard", "card": own}, headers=auth)  # not its turn
        client.post(f"{url}/actions", json={"type": "draw", "source": "stock"}, headers=auth)
    client.post(f"{url}/actions", json={"type": "discard", "card": own}, headers={**auth, "If-Match": '"0"'})
    client.post(f"{url}/actions", data="{", headers={**auth, "Content-Type": "application/json"})
    client.post(f"{url}/actions", json={"type": "discard", "card": "1X"}, headers=auth)
    client.post(f"{url}/actions", json={"type": "pass", "pad": "x" * 70_000}, headers=auth)
    client.get(f"{url}?token={token}")  # a token in the query string, no header: 401
    client.get(url, headers={"Authorization": f"Token {token}"})
    client.get(url, headers=bearer(token[:-4] + "AAAA"))  # the right match, a wrong secret
    client.get(f"/matches/{match_id}/export", headers=auth)  # unfinished: hidden until over
    # The hand being played (hand 1 may be over: a seat then sees it, and its past states).
    client.get(f"/matches/{match_id}/hands/{view['hand_number']}", headers=auth)
    client.get(f"/matches/{match_id}/state?version={view['version']}", headers=auth)


def test_a_played_match_leaves_no_secret_in_logs_or_error_bodies(hygiene):
    app, recorder, caplog = hygiene
    client = app.test_client()
    # A whole match, not one hand: a greedy hand may end after a few turns.
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    match_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    secrets = seat_secrets(tokens)
    checked = 0
    for _ in range(300):
        hidden = client.get(f"/matches/{match_id}", headers=bearer(OPERATOR)).json["hidden"]["hands"]
        views = [client.get(f"/matches/{match_id}", headers=bearer(t)).json for t in tokens]
        if views[0]["status"] == "finished" or checked > 150:
            break
        mark = len(recorder.responses)
        for seat, token in enumerate(tokens):
            provoke_errors(client, match_id, token, views[seat])
        # Each seat's refusals may name its own cards (it sent them, or holds them), never the other's.
        for method, path, auth, status, body in recorder.responses[mark:]:
            assert status >= 400, (method, path, status, body[:300])
            assert_clean(body, secrets, f"the error body of {method} {path}")
            asker = next((seat for seat, t in enumerate(tokens) if t in auth), None)
            if asker is not None:
                other = set(hidden[1 - asker])
                named = set(CARD_CODE.findall(body.replace(CARD_EXAMPLE, "")))
                assert not other & named, f"seat {asker} was shown a card of the other seat: {body}"
            checked += 1
        mover = next(seat for seat, view in enumerate(views) if plays(view))
        view = views[mover]
        r = client.post(
            f"/matches/{match_id}/actions", json=greedy_action_on_view(view), headers={**bearer(tokens[mover]), "If-Match": f'"{view["version"]}"'}
        )
        assert r.status_code == 200, r.json
    assert checked > 150
    lines = log_lines(caplog)
    assert len([line for line in lines if "gin_rummy.requests" in line]) >= len(recorder.responses)
    for line in lines:
        assert_clean(line, secrets, "a log line")
        assert not CARD_CODE.search(line.split(" ", 3)[-1]), f"a card in a log line: {line}"


def test_an_internal_error_answers_500_with_neither_trace_nor_secret(hygiene):
    app, recorder, caplog = hygiene
    client = app.test_client()
    created = client.post("/matches", json={}).json
    token = created["seats"][0]["token"]
    hand = created["view"]["hand"]
    app.config["BOOM_MESSAGE"] = f"failed for token {token} ({OPERATOR}) holding {hand}"
    r = client.get("/test/boom", headers={**bearer(token), "X-Request-Id": "boom-1"})
    assert r.status_code == 500 and r.mimetype == "application/problem+json"
    assert r.json == {
        "type": "/problems/internal_error",
        "title": "Internal Server Error",
        "status": 500,
        "code": "internal_error",
        "detail": "an unexpected error occurred; it has been logged",
    }
    assert r.headers["X-Request-Id"] == "boom-1"
    lines = log_lines(caplog)
    # The log says what failed and for which request, so it can be found; nothing more.
    assert any("RuntimeError" in line and "boom-1" in line for line in lines)
    request_log = [json.loads(line.split(" ", 4)[-1]) for line in lines if "gin_rummy.requests" in line]
    assert request_log[-1]["status"] == 500 and request_log[-1]["request_id"] == "boom-1"
    for text in [r.get_data(as_text=True), *lines]:
        assert_clean(text, seat_secrets([token]), "the 500 answer or its log")
        assert not any(card in text for card in hand if f'"{card}"' in text or f"'{card}'" in text)
    assert all(record.exc_info is None and not record.exc_text for record in caplog.records)


def test_a_wrong_secret_and_an_unknown_match_are_refused_alike(client, new_match):
    data, players = new_match()
    token = players[0].headers["Authorization"].split(" ", 1)[1]
    prefix, match_hex, secret = token.split(".")
    wrong_secret = f"{prefix}.{match_hex}.{'A' * len(secret)}"
    unknown_match = f"{prefix}.{'0' * 32}.{secret}"
    answers = []
    for fake in (wrong_secret, unknown_match, "not-a-token"):
        r = client.get("/matches", headers=bearer(fake))
        answers.append((r.status_code, r.json, r.headers.get("WWW-Authenticate")))
        assert fake not in r.get_data(as_text=True)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0] == 401 and answers[0][1]["code"] == "invalid_token"


def test_a_request_id_is_echoed_only_when_it_is_a_plain_id(client):
    assert client.get("/health/live", headers={"X-Request-Id": "edge-7:a.b_c"}).headers["X-Request-Id"] == "edge-7:a.b_c"
    for odd in ('x" "status":200', "a" * 65, "id with spaces", "<script>"):
        echoed = client.get("/health/live", headers={"X-Request-Id": odd}).headers["X-Request-Id"]
        assert echoed != odd and re.fullmatch(r"[0-9a-f]{32}", echoed)
