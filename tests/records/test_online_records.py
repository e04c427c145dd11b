"""Records of online play: joins, resignations, timeouts and matches called off export,
import into an empty database, replay and audit; a timeout claim edited to before its
deadline is refused."""

from __future__ import annotations

import copy
import uuid

import pytest

from service.api import create_app
from service.application.records import home_of
from service.records.format import digest_of
from service.store import EventStore, connect
from service.store.migrate import upgrade
from tests.api.conftest import OPERATOR, UNLIMITED, Player, bearer, plays
from tests.api.test_online import Clock
from tests.records.conftest import content
from tests.support.matches import greedy_action_on_view
from tests.support.records import jwks_file

OP = bearer(OPERATOR)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(store, clock):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED})
    yield app.test_client()
    app.extensions["gin_rummy"].hub.shutdown()


@pytest.fixture
def empty(fresh_database_url, store, tmp_path):
    """A client of a service on an empty database, which trusts the first service's
    signatures (so its records keep their id)."""
    upgrade(fresh_database_url)
    pool = connect(fresh_database_url, min_size=1, max_size=2)
    trusted = jwks_file(store, tmp_path)
    app = create_app({"STORE": EventStore(pool), "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "TRUSTED_JWKS": trusted, **UNLIMITED})
    yield app.test_client()
    app.extensions["gin_rummy"].hub.shutdown()
    pool.close()


def online_match(client, **rules):
    body = {"seats": [{"name": "Ann"}, {"kind": "open"}], "single_hand": False}
    if rules:
        body["rules"] = rules
    created = client.post("/matches", json=body).json
    joined = client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"], "name": "Bob"}).json
    ann = Player(client, created["id"], created["seats"][0]["token"])
    bob = Player(client, created["id"], joined["token"])
    return created["id"], {0: ann, 1: bob}


def play_turns(players, turns):
    for _ in range(turns):
        for player in players.values():
            view = player.view()
            if plays(view):
                assert player.act(greedy_action_on_view(view)).status_code == 200
                break


def round_trip(client, empty, match_id):
    """Export, import into the empty database, export again; the audit there."""
    record = client.get(f"/matches/{match_id}/export", headers=OP).json
    imported = empty.post("/matches/import", json=record)
    assert imported.status_code == 201, imported.json
    again = empty.get(f"/matches/{match_id}/export", headers=OP).json
    assert content(again) == content(record)
    audit = empty.get(f"/matches/{match_id}/audit", headers=OP).json
    assert audit["ok"], audit
    assert empty.post("/matches/import", json=record).status_code == 200  # the same record again
    return record


def test_a_joined_and_resigned_match_round_trips_and_tells_how_it_ended(client, empty):
    match_id, players = online_match(client)
    play_turns(players, 6)
    assert players[1].act({"type": "resign"}).status_code == 200
    record = round_trip(client, empty, match_id)
    types = [e["type"] for e in record["events"]]
    assert types[:3] == ["match_started", "seat_joined", "hand_dealt"] and types[-1] == "match_ended"
    assert record["events"][0]["data"]["seats"][1] == {"kind": "open"}
    assert record["seats"][1] == {"seat": 1, "name": "Bob", "kind": "human", "level": None}
    assert record["events"][-1]["data"] == {"winner": 0, "scores": record["result"]["scores"], "reason": "resigned", "seat": 1}
    hand = empty.get(f"/matches/{match_id}/hands/{record['result']['hands']}", headers=OP).json  # the hand resigned in
    assert hand["status"] == "over" and hand["end"] is None
    assert hand["match_end"] == {"reason": "resigned", "seat": 1, "winner": 0}


def test_a_timed_out_match_round_trips_and_a_claim_moved_before_its_deadline_is_refused(client, empty, clock):
    match_id, players = online_match(client, turn_seconds=30)
    play_turns(players, 3)
    view = players[0].view()
    waiter = 1 - view["turn"]
    clock.advance(31)
    assert players[waiter].act({"type": "claim_timeout"}).status_code == 200
    record = round_trip(client, empty, match_id)
    assert all("at" in e["data"] for e in record["events"])  # every event of a clocked match has its time
    claim = record["events"][-1]["data"]
    assert (claim["reason"], claim["seat"], claim["winner"]) == ("timeout", waiter, waiter)

    forged = copy.deepcopy(record)
    forged["match_id"] = "11111111-1111-4111-8111-111111111111"
    forged["events"][-1]["data"]["at"] = record["events"][-2]["data"]["at"]  # as if claimed at once
    forged["digest"]["value"] = digest_of(forged["events"])
    refused = empty.post("/matches/import", json=forged)
    assert refused.status_code == 422 and refused.json["rule"] == "not_timed_out", refused.json
    assert refused.json["index"] == len(record["events"]) - 1
    assert empty.get(f"/matches/{forged['match_id']}", headers=OP).status_code == 404


def test_a_time_going_back_is_refused(client, empty, clock):
    match_id, players = online_match(client, turn_seconds=30)
    play_turns(players, 4)
    record = client.get(f"/matches/{match_id}/export", headers=OP).json
    forged = copy.deepcopy(record)
    forged["match_id"] = "22222222-2222-4222-8222-222222222222"
    forged["events"][-1]["data"]["at"] = "2026-11-30T00:00:00.000+00:00"
    forged["digest"]["value"] = digest_of(forged["events"])
    refused = empty.post("/matches/import", json=forged)
    assert refused.status_code == 422 and refused.json["rule"] == "time_went_back", refused.json


def test_a_match_called_off_round_trips(client, empty):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}).json
    ann = Player(client, created["id"], created["seats"][0]["token"])
    assert ann.act({"type": "abort"}).status_code == 200
    record = round_trip(client, empty, created["id"])
    assert [e["type"] for e in record["events"]] == ["match_started", "match_ended"]
    assert record["result"] == {"status": "finished", "hands": 0, "scores": [0, 0], "winner": None}


def test_a_waiting_match_round_trips_and_can_still_be_joined_after_its_import(client, empty):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}).json
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json
    assert record["result"]["status"] == "waiting"
    answer = empty.post("/matches/import", json=record)
    assert answer.status_code == 201, answer.json
    assert answer.json["status"] == "waiting" and answer.json["seats"][1]["token"] is None
    token = answer.json["seats"][0]["token"]
    assert Player(empty, created["id"], token).view()["phase"] == "waiting_for_players"
    code = answer.json["invite"]["code"]  # a new invite: the record holds no code
    assert code != created["invite"]["code"]
    joined = empty.post(f"/matches/{created['id']}/join", json={"code": code, "name": "Bob"})
    assert joined.status_code == 201 and joined.json["view"]["phase"] in ("draw", "upcard_offer")


def test_the_replay_text_tells_who_joined_and_how_the_match_ended(client, database_url, monkeypatch, capsys):
    from service.cli import main

    match_id, players = online_match(client)
    play_turns(players, 2)
    assert players[0].act({"type": "resign"}).status_code == 200
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["replay", match_id]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Bob joins, in seat 2.\n")
    assert "Hand 1 — Ann starts" in out and "Ann resigns: Bob wins the match." in out
    assert main(["audit", match_id]) == 0


def test_a_match_between_players_round_trips_naming_them_by_id_and_name_only(client, empty):
    ann = client.post("/players", json={"name": "Ann"}).json
    bob = client.post("/players", json={"name": "Bob"}).json
    created = client.post(
        "/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "single_hand": False}, headers=bearer(ann["token"])
    ).json
    joined = client.post(
        f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=bearer(bob["token"])
    )
    assert joined.status_code == 201
    players = {0: Player(client, created["id"], ann["token"]), 1: Player(client, created["id"], bob["token"])}
    play_turns(players, 4)
    assert players[0].act({"type": "resign"}).status_code == 200
    record = round_trip(client, empty, created["id"])
    assert record["seats"] == [
        {"seat": 0, "name": "Ann", "kind": "human", "level": None, "player": ann["id"]},
        {"seat": 1, "name": "Bob", "kind": "human", "level": None, "player": bob["id"]},
    ]
    assert record["events"][0]["data"]["seats"][0] == {"kind": "human", "name": "Ann", "player": ann["id"]}
    assert record["events"][1]["data"] == {"seat": 1, "name": "Bob", "player": bob["id"]}
    text = __import__("json").dumps(record)
    for token in (ann["token"], bob["token"]):
        assert token not in text and token.split(".")[-1] not in text


@pytest.mark.parametrize("name", ["Eve\x1b[31m", "Eve\x07", "\u202eEve"])
def test_a_record_naming_a_seat_with_control_characters_is_refused(client, empty, name):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]}).json
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json
    forged = copy.deepcopy(record)
    forged["events"][0]["data"]["seats"][0]["name"] = name
    forged["seats"][0]["name"] = name
    forged["digest"]["value"] = digest_of(forged["events"])
    refused = empty.post("/matches/import", json=forged)
    assert refused.status_code == 422, refused.json
    assert empty.get(f"/matches/{created['id']}", headers=OP).status_code == 404


def test_finding_9_a_clocked_record_dated_in_the_future_is_refused_so_its_clock_cannot_be_frozen(client, empty):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}], "rules": {"turn_seconds": 30}}).json
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json
    forged = copy.deepcopy(record)
    forged["match_id"] = "33333333-3333-4333-8333-333333333333"
    forged.pop("signature", None)
    forged["events"][0]["data"]["at"] = "2100-01-01T00:00:00.000+00:00"  # its recorded_at stays today's
    forged["digest"]["value"] = digest_of(forged["events"])
    refused = empty.post("/matches/import", json=forged)
    assert refused.status_code == 422 and refused.json["index"] == 0, refused.json
    assert "2100-01-01T00:00:00.000+00:00 is in the future" in refused.json["detail"]
    home = home_of(uuid.UUID(forged["match_id"]), forged["digest"]["value"], verified=False)
    assert empty.get(f"/matches/{home}", headers=OP).status_code == 404  # nothing written
