"""Retrying requests: numbers in headers too long for Python, joins and rematches sent
again with their Idempotency-Key, and replayed answers given as they were first given."""

from __future__ import annotations

from tests.support.matches import greedy_action_on_view

from .test_online import app, clock, invite, joined  # noqa: F401 (app and clock: the fixtures, with a clock moved by hand)


def test_an_if_match_or_last_event_id_of_thousands_of_digits_is_a_4xx_not_a_500(client, new_match):
    data, players = new_match()
    me = players[0]
    digits = "9" * 4301  # one more than Python's int() reads from text
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{digits}"'})
    assert (r.status_code, r.json["code"]) == (400, "invalid_if_match")
    # 19 digits: more than any version has (at most 18), refused the same way.
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": '"1' + "0" * 18 + '"'})
    assert (r.status_code, r.json["code"]) == (400, "invalid_if_match")
    assert me.view()["version"] == data["version"]  # nothing was written
    r = me.client.get(f"/matches/{data['id']}/stream?wait=0", headers={**me.headers, "Last-Event-ID": digits})
    assert (r.status_code, r.json["code"]) == (422, "invalid_request")
    r = me.client.get("/", headers={"X-Code": digits})  # an ingress's status: a bad one is a 502
    assert (r.status_code, r.json["code"]) == (502, "service_unreachable")


# --- an act's answer, given again ----------------------------------------------------------


def discard_with_key(players: dict, key: str):
    """Play until a seat discards, that discard sent with ``key``: (its seat, the discard, its answer)."""
    for _ in range(10):
        seat = players[0].view()["turn"]
        view = players[seat].view()
        if view["phase"] == "discard":
            discard = next(a for a in view["legal_actions"] if a["type"] == "discard")
            r = players[seat].act(discard, **{"Idempotency-Key": key})
            assert r.status_code == 200, r.json
            return seat, discard, r
        assert players[seat].act(greedy_action_on_view(view)).status_code == 200
    raise AssertionError("nobody discarded")


def test_a_replayed_answer_does_not_list_a_timeout_claim_that_was_not_due_when_first_answered(client, clock):
    created, ann = invite(client, single_hand=False, rules={"turn_seconds": 30})
    bob, _ = joined(client, created)
    seat, discard, first = discard_with_key({0: ann, 1: bob}, "discard-1")
    assert {"type": "claim_timeout"} not in first.json["view"]["legal_actions"]
    clock.advance(31)  # the opponent's 30 seconds are over: a view now lists the claim
    player = {0: ann, 1: bob}[seat]
    assert {"type": "claim_timeout"} in player.view()["legal_actions"]
    retry = player.act(discard, **{"Idempotency-Key": "discard-1"})
    assert retry.status_code == 200 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json == first.json  # the same answer: no claim_timeout in it


def test_a_replayed_answer_names_no_rematch_made_after_it_was_first_answered(client):
    created, ann = invite(client)
    bob, _ = joined(client, created)
    first = bob.act({"type": "resign"}, **{"Idempotency-Key": "give-up"})
    assert first.status_code == 200 and first.json["view"]["rematch"] is None
    made = client.post(f"/matches/{created['id']}/rematch", headers=ann.headers)
    assert made.status_code == 201 and bob.view()["rematch"] == made.json["id"]
    retry = bob.act({"type": "resign"}, **{"Idempotency-Key": "give-up"})
    assert retry.status_code == 200 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json == first.json and retry.json["view"]["rematch"] is None


# --- joins and rematches, retried -----------------------------------------------------------


def test_join_and_rematch_are_safe_to_retry_a_retried_join_gets_the_same_seat_and_a_token_that_works(app, client):
    created, ann = invite(client)
    body = {"code": created["invite"]["code"], "name": "Bob"}
    key = {"Idempotency-Key": "0b0e7f3c-join"}
    first = client.post(f"/matches/{created['id']}/join", json=body, headers=key)
    assert first.status_code == 201 and first.json["seat"] == 1 and "Idempotent-Replayed" not in first.headers
    ann.act({"type": "resign"})  # the match moves on before the retry: the answer is still the first one
    retry = client.post(f"/matches/{created['id']}/join", json=body, headers=key)
    assert (retry.status_code, retry.headers["Idempotent-Replayed"]) == (201, "true")
    assert retry.json == first.json  # seat 1, the same token, the view as it was (phase draw or upcard_offer)
    bob = client.get(f"/matches/{created['id']}", headers={"Authorization": f"Bearer {retry.json['token']}"})
    assert (bob.status_code, bob.json["seat"], bob.json["status"]) == (200, 1, "finished")
    events = client.get(f"/matches/{created['id']}/events", headers=ann.headers).json["events"]
    assert [e["type"] for e in events].count("seat_joined") == 1  # joined once
    # The same key with another name is another request: refused as an action's would be.
    other = client.post(f"/matches/{created['id']}/join", json={**body, "name": "Rob"}, headers=key)
    assert (other.status_code, other.json["code"]) == (422, "idempotency_key_reused")
    # Without the key a join is not a retry: the seat is taken.
    assert client.post(f"/matches/{created['id']}/join", json=body).json["code"] == "seat_taken"
    # The token is kept as a hash, and sealed: no column of the record holds it.
    secret = first.json["token"].rsplit(".", 1)[1]
    with app.extensions["gin_rummy"].store.pool.connection() as conn:
        rows = conn.execute("SELECT t::text FROM idempotency_keys t WHERE match_id = %s", (created["id"],)).fetchall()
    assert len(rows) == 1 and secret not in rows[0][0] and first.json["token"] not in rows[0][0]


def test_join_and_rematch_are_safe_to_retry_a_retried_rematch_gets_its_token_again(client):
    created, ann = invite(client)
    bob, _ = joined(client, created)
    assert bob.act({"type": "resign"}).status_code == 200
    url = f"/matches/{created['id']}/rematch"
    made = client.post(url, headers={**bob.headers, "Idempotency-Key": "bob-again"})
    assert made.status_code == 201 and made.json["seat"] == 0 and made.json["token"]
    made_again = client.post(url, headers={**bob.headers, "Idempotency-Key": "bob-again"})
    assert (made_again.status_code, made_again.headers["Idempotent-Replayed"]) == (201, "true")
    assert made_again.json == made.json
    found = client.post(url, headers={**ann.headers, "Idempotency-Key": "ann-again"})
    assert found.status_code == 200 and found.json["seat"] == 1 and found.json["token"]
    found_again = client.post(url, headers={**ann.headers, "Idempotency-Key": "ann-again"})
    assert (found_again.status_code, found_again.headers["Idempotent-Replayed"]) == (200, "true")
    assert found_again.json == found.json and found_again.json["token"] == found.json["token"]  # before: null
    for answer, seat in ((made_again, 0), (found_again, 1)):
        r = client.get(f"/matches/{answer.json['id']}", headers={"Authorization": f"Bearer {answer.json['token']}"})
        assert (r.status_code, r.json["seat"]) == (200, seat)
    # Asked again without the key (or with another): the token was given, it is not shown again.
    assert client.post(url, headers=ann.headers).json["token"] is None
    assert client.post(url, headers={**ann.headers, "Idempotency-Key": "ann-third"}).json["token"] is None
