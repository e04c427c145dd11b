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
