"""Limits by cost: creations per address and per player, CPU per address and caller, and
the analyses every worker shares (findings 11 and 12)."""

from __future__ import annotations

import threading

import pytest

from service.api import create_app
from service.application import costs as costs_module
from service.application.errors import Unavailable
from service.store import EventStore
from tests.factories import MatchFactory, in_hand

from .conftest import OPERATOR, UNLIMITED, bearer

OP = bearer(OPERATOR)


def served(store, **config):
    limits = {**UNLIMITED, **{k.upper(): v for k, v in config.items()}}
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **limits})


@pytest.fixture(autouse=True)
def fresh_buckets(pool):
    """Every test starts with full buckets (the session's database keeps them)."""
    with pool.connection() as conn:
        conn.execute("DELETE FROM rate_buckets")


def count(store, sql: str) -> int:
    with store.connection() as conn:
        return conn.execute(sql).fetchone()[0]


def assert_429(r, code: str, retry_after: int, *, refilled: int = 0):
    """A 429 problem whose Retry-After is ``retry_after`` s, or up to ``refilled`` s less
    (a bucket refills while the test runs)."""
    assert r.status_code == 429, r.json
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == code and r.json["status"] == 429 and r.json["title"] and r.json["detail"], r.json
    assert retry_after - refilled <= int(r.headers["Retry-After"]) <= retry_after, r.headers


# --- finding 12: guests, invites and the lobby -------------------------------------------


def test_one_address_flooding_guests_is_refused_429_after_its_burst_and_writes_nothing(store):
    client = served(store, guests_per_address="10/minute burst 20").test_client()
    before = count(store, "SELECT count(*) FROM players")
    answers = [client.post("/players", json={"name": f"g{i}"}) for i in range(25)]
    assert [r.status_code for r in answers] == [201] * 20 + [429] * 5
    assert_429(answers[-1], "rate_limited", 6)  # one guest refills every 60 / 10 = 6 s
    assert count(store, "SELECT count(*) FROM players") == before + 20
    other = client.post("/players", json={"name": "elsewhere"}, environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert other.status_code == 201  # another address has its own bucket


def test_the_guest_limit_is_one_count_for_every_worker_process(pool):
    # Two apps on one database: two workers (or two instances) of one deployment.
    a, b = (served(EventStore(pool), guests_per_address="10/minute burst 20").test_client() for _ in "ab")
    statuses = [(a if i % 2 else b).post("/players", json={"name": f"g{i}"}).status_code for i in range(22)]
    assert statuses == [201] * 20 + [429] * 2


def test_one_address_flooding_invites_is_refused_429_after_its_burst(store):
    client = served(store, invites_per_address="20/hour burst 10").test_client()
    open_seat = {"seats": [{"name": "Ann"}, {"kind": "open"}]}
    before = count(store, "SELECT count(*) FROM match_invites")
    answers = [client.post("/matches", json={**open_seat, "public": i % 2 == 0}) for i in range(12)]
    assert [r.status_code for r in answers] == [201] * 10 + [429] * 2
    assert_429(answers[-1], "rate_limited", 180)  # 3600 / 20
    assert count(store, "SELECT count(*) FROM match_invites") == before + 10
    assert client.post("/matches", json={}).status_code == 201  # no open seat, no invite: not counted


def test_a_player_with_three_public_matches_waiting_is_refused_a_fourth_until_one_is_taken(store):
    client = served(store, public_matches_per_player="3").test_client()
    me = bearer(client.post("/players", json={"name": "Ann"}).json["token"])
    public = {"seats": [{"kind": "human"}, {"kind": "open"}], "public": True}
    made = [client.post("/matches", json=public, headers=me) for _ in range(3)]
    assert [r.status_code for r in made] == [201] * 3
    fourth = client.post("/matches", json=public, headers=me)
    assert fourth.status_code == 429 and fourth.json["code"] == "too_many_public_matches", fourth.json
    assert 3590 <= int(fourth.headers["Retry-After"]) <= 3600  # the oldest leaves the lobby within the hour
    mine = {r.json["id"] for r in made}
    assert len([m for m in client.get("/lobby").json["items"] if m["id"] in mine]) == 3
    # A private invite is not a lobby entry; a match joined leaves the lobby.
    assert client.post("/matches", json={**public, "public": False}, headers=me).status_code == 201
    joined = client.post(f"/matches/{made[0].json['id']}/join", json={"name": "Bob"})
    assert joined.status_code == 201, joined.json
    assert client.post("/matches", json=public, headers=me).status_code == 201


# --- finding 11: CPU, kept analyses, cheap refusals ------------------------------------------


@pytest.fixture
def two_hands(store):
    """A match in its second hand (the first over), in the store."""
    return MatchFactory.create(store=store, seed=11, until=in_hand(2, moves=4))


def test_a_hand_analysis_is_computed_once_for_every_worker_and_kept_per_seat(pool, two_hands, monkeypatch):
    calls = []
    real = costs_module.off_process_timed

    def counted(function, *args):
        calls.append(function.__name__)
        return real(function, *args)

    monkeypatch.setattr(costs_module, "off_process_timed", counted)
    a, b = (served(EventStore(pool)).test_client() for _ in "ab")
    first = a.get(f"/matches/{two_hands.match_id}/hands/1/analysis", headers=OP)
    assert first.status_code == 200 and first.json["over"] is True, first.json
    again = b.get(f"/matches/{two_hands.match_id}/hands/1/analysis", headers=OP)
    assert again.json == first.json
    assert calls == ["analyse"]  # the second worker read what the first kept
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT hand, seat, decisions FROM hand_analyses WHERE match_id = %s ORDER BY seat", (two_hands.match_id,)
        ).fetchall()
    assert [(hand, seat) for hand, seat, _ in rows] == [(1, 0), (1, 1)]
    for _, seat, decisions in rows:  # each row holds one seat's decisions only
        assert {d["seat"] for d in decisions} <= {seat}
    assert sum(len(d) for _, _, d in rows) == len(first.json["decisions"])


def test_an_analysis_of_a_hand_being_played_is_never_kept_for_any_seat(store, two_hands):
    client = served(store).test_client()
    r = client.get(f"/matches/{two_hands.match_id}/analysis", headers=OP)
    assert [h["hand"] for h in r.json["hands"]] == [1, 2]  # the operator's: the hand being played too
    with store.connection() as conn:
        kept = conn.execute("SELECT DISTINCT hand FROM hand_analyses WHERE match_id = %s", (two_hands.match_id,))
        assert {row[0] for row in kept} == {1}


def test_a_caller_whose_cpu_budget_is_spent_is_refused_429_before_any_work(store, monkeypatch):
    charged = []

    def two_cpu_seconds(function, *args):
        charged.append(function.__name__)
        return function(*args), 2.0

    monkeypatch.setattr(costs_module, "off_process_timed", two_cpu_seconds)
    client = served(store, cpu_per_token="6/minute burst 3").test_client()
    matches = [MatchFactory.create(store=store, seed=20 + i, until=in_hand(2, moves=2)).match_id for i in range(3)]
    statuses = [client.get(f"/matches/{m}/hands/1/analysis", headers=OP) for m in matches]
    # 3 CPU-seconds: 2 taken (1 left), 2 more (-1: spent), then refused for 1 / 0.1 = 10 s.
    assert [r.status_code for r in statuses] == [200, 200, 429]
    assert_429(statuses[2], "cpu_budget_spent", 10, refilled=1)
    assert charged == ["analyse", "analyse"]
    # What is kept costs nothing: a spent caller still reads it.
    assert client.get(f"/matches/{matches[0]}/hands/1/analysis", headers=OP).status_code == 200


def test_heavy_jobs_beyond_the_process_cap_answer_503_busy_with_retry_after(store):
    app = served(store, heavy_jobs_per_process="1")
    costs = app.extensions["gin_rummy"].costs
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(10)
        return "done"

    worker = threading.Thread(target=lambda: costs.heavy(None, slow))
    worker.start()
    assert started.wait(5)
    try:
        with pytest.raises(Unavailable) as refused:
            costs.heavy(None, lambda: "second")
        assert refused.value.code == "busy" and refused.value.retry_after == 2
    finally:
        release.set()
        worker.join()
    assert costs.heavy(None, lambda: "third") == "third"  # the slot is free again
