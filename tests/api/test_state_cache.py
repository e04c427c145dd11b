"""Each process keeps the states it folded: reads are checked against the database, an
action decided on a stale state is decided again, and a retry's answer is rebuilt."""

from __future__ import annotations

import uuid

import pytest

from service.api import create_app
from service.store import EventStore

from .conftest import OPERATOR, UNLIMITED, Player


@pytest.fixture
def two_processes(pool):
    """Two apps on one database, each with a store (and a cache) of its own."""
    apps = [create_app({"STORE": EventStore(pool), "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}) for _ in "ab"]
    yield [app.test_client() for app in apps]
    for app in apps:
        app.extensions["gin_rummy"].hub.shutdown()


def people(client):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    return created["id"], {s["seat"]: s["token"] for s in created["seats"]}


def test_a_read_after_an_action_in_another_process_sees_the_action(two_processes):
    a, b = two_processes
    match_id, tokens = people(a)
    ann_a, ann_b = Player(a, match_id, tokens[0]), Player(b, match_id, tokens[0])
    before = ann_b.view()  # b now holds the match in its cache
    answer = ann_a.act({"type": "draw", "source": "stock"})
    assert answer.status_code == 200
    after = ann_b.view()
    assert after["version"] == answer.json["view"]["version"] == before["version"] + 1
    assert after == answer.json["view"]


def test_an_action_on_a_stale_cache_is_decided_on_the_database(two_processes):
    a, b = two_processes
    match_id, tokens = people(a)
    ann_a, ann_b = Player(a, match_id, tokens[0]), Player(b, match_id, tokens[0])
    ann_b.view()  # cached by b: Ann must draw
    drew = ann_a.act({"type": "draw", "source": "stock"}).json  # now Ann must discard
    card = drew["view"]["hand"][0]
    # b's cache says "draw": a discard would be refused on it; b must find the truth.
    r = ann_b.act({"type": "discard", "card": card})
    assert r.status_code == 200, r.json
    assert r.json["view"]["version"] == drew["view"]["version"] + 1
    # And a stale If-Match is still a 412, with the real version.
    stale = ann_b.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{drew["view"]["version"]}"'})
    assert (stale.status_code, stale.json["current_version"]) == (412, r.json["view"]["version"])


def test_a_refusal_on_a_fresh_cache_stands(two_processes):
    a, _ = two_processes
    match_id, tokens = people(a)
    bob = Player(a, match_id, tokens[1])
    r = bob.act({"type": "draw", "source": "stock"})  # Ann starts
    assert (r.status_code, r.json["rule"]) == (409, "not_your_turn")


def test_a_retried_action_against_the_computer_gets_its_first_answer_rebuilt(client, new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "medium"}]})
    me = players[0]
    me.act({"type": "draw", "source": "stock"})
    card = me.view()["discard_deadwood"]
    card = min(card, key=card.get)
    first = me.act({"type": "discard", "card": card}, **{"Idempotency-Key": "the-computer-answers"})
    assert first.status_code == 200 and len(first.json["events"]) >= 3  # mine, then the computer's
    again = me.act({"type": "discard", "card": card}, **{"Idempotency-Key": "the-computer-answers"})
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json


def test_an_answer_stored_by_an_earlier_version_of_the_service_is_replayed_as_stored(client, new_match, pool):
    data, players = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    me = players[0]
    first = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "new-record"})
    stored = {"view": first.json["view"], "events": first.json["events"], "note": "as stored"}
    from psycopg.types.json import Jsonb

    with pool.connection() as conn:
        conn.execute(
            "INSERT INTO idempotency_keys (match_id, scope, key, fingerprint, status, body)"
            " SELECT match_id, scope, 'old-record', fingerprint, 200, %s FROM idempotency_keys WHERE key = 'new-record'",
            (Jsonb(stored),),
        )
    again = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "old-record"})
    assert again.headers["Idempotent-Replayed"] == "true" and again.json == stored


def test_the_cache_forgets_the_least_recently_used_matches():
    from service.engine import State
    from service.store.cache import Entry, StateCache

    cache = StateCache(size=2)
    ids = [uuid.uuid4() for _ in range(3)]
    for match_id in ids:
        cache.put(match_id, Entry(State(), None))
    assert cache.get(ids[0]) is None and cache.get(ids[2]) is not None and len(cache) == 2
    newer = State()
    newer.version = 5
    cache.put(ids[2], Entry(newer, None))
    cache.put(ids[2], Entry(State(), None))  # an older state never replaces a newer one
    assert cache.get(ids[2]).state.version == 5
