"""Export, import, past states, hands and the audit through the REST API."""

import pytest

from service.api import create_app
from service.engine import PRESETS
from tests.api.conftest import OPERATOR, UNLIMITED, Player, bearer, plays
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory, in_hand
from tests.records.conftest import content


@pytest.fixture
def app(store):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def other_client(target):
    return target


OP = bearer(OPERATOR)


def stored_match(store, **kwargs):
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], **kwargs.pop("start", {}))
    return MatchFactory.create(store=store, start=start, **kwargs)


#: Random play almost never goes Gin: Straight Gin's record is played with knocks.
KNOCKING = {"straight": {"knock_limit": 10}}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_export_import_export_round_trips_exactly_under_every_preset(store, client, other_client, preset):
    for seed in range(3):
        match = stored_match(store, seed=seed, start={"rules": {"preset": preset, "target_score": 80, **KNOCKING.get(preset, {})}})
        assert match.state.finished and match.state.hand_number >= 2
        exported = client.get(f"/matches/{match.match_id}/export", headers=OP)
        assert exported.status_code == 200
        imported = other_client.post("/matches/import", json=exported.json)
        assert imported.status_code == 201, imported.json
        assert imported.json["id"] == str(match.match_id) and imported.json["created"] is True
        again = other_client.get(f"/matches/{match.match_id}/export", headers=OP)
        assert content(again.json) == content(exported.json)


def test_importing_the_same_record_twice_returns_the_existing_match(store, client, other_client):
    match = stored_match(store)
    record = client.get(f"/matches/{match.match_id}/export", headers=OP).json
    first = other_client.post("/matches/import", json=record)
    second = other_client.post("/matches/import", json=record)
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json["created"] is False and all(s["token"] is None for s in second.json["seats"])
    assert second.json["id"] == first.json["id"]


def test_a_refused_import_writes_nothing(store, client, other_client):
    match = stored_match(store)
    record = client.get(f"/matches/{match.match_id}/export", headers=OP).json
    record["events"][-3]["data"]["seat"] = 1 - record["events"][-3]["data"]["seat"]
    from service.records.format import digest_of

    record["digest"]["value"] = digest_of(record["events"])
    r = other_client.post("/matches/import", json=record)
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    assert r.json["code"] == "illegal_event" and r.json["index"] == len(record["events"]) - 3 and r.json["rule"]
    assert other_client.get(f"/matches/{match.match_id}", headers=OP).status_code == 404


def test_an_unfinished_match_is_exported_to_the_operator_only_and_continues_after_import(store, client, other_client):
    match = stored_match(store, until=in_hand(1, moves=6))
    url = f"/matches/{match.match_id}/export"
    seat_token = client.post("/matches", json={}).json["seats"][0]["token"]  # some other match's seat
    assert client.get(url, headers=bearer(seat_token)).status_code == 403
    record = client.get(url, headers=OP).json
    assert record["result"]["status"] == "active"
    imported = other_client.post("/matches/import", json=record).json
    seat = imported["seats"][match.state.turn]
    player = Player(other_client, imported["id"], seat["token"])
    view = player.view()
    assert view["version"] == len(record["events"])
    r = player.act(plays(view)[0])
    assert r.status_code == 200, r.json


def test_seats_see_past_states_and_hands_only_once_they_are_over(client):
    data = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    ann = bearer(data["seats"][0]["token"])
    mid = data["id"]
    assert client.get(f"/matches/{mid}/state?version=2", headers=ann).json["code"] == "hidden_until_over"
    assert client.get(f"/matches/{mid}/hands/1", headers=ann).status_code == 403
    assert client.get(f"/matches/{mid}/export", headers=ann).status_code == 403
    assert client.get(f"/matches/{mid}/audit", headers=ann).status_code == 403
    full = client.get(f"/matches/{mid}/state?version=2", headers=OP).json
    assert len(full["hands"][0]) == len(full["hands"][1]) == 10 and len(full["stock"]) == 31
    summary = client.get(f"/matches/{mid}/hands", headers=ann).json["hands"]
    assert summary == [dict(summary[0], hand=1, status="in_progress", result=None)]


def test_a_finished_hand_is_shown_in_full_with_its_audit(store, client):
    match = stored_match(store, start={"rules": {"single_hand": True}})
    mid = match.match_id
    hand = client.get(f"/matches/{mid}/hands/1", headers=OP).json
    assert hand["status"] == "over" and hand["deal"]["commitment_valid"] is True
    assert len(hand["deal"]["stock"]) == 31 and hand["end"]["result"] in ("knock", "undercut", "gin", "dead")
    assert client.get(f"/matches/{mid}/hands/2", headers=OP).status_code == 404
    report = client.get(f"/matches/{mid}/audit", headers=OP).json
    assert report["ok"] is True and report["problems"] == [] and report["hands"][0]["commitment_valid"]
    state = client.get(f"/matches/{mid}/state?version=3", headers=OP).json
    assert state["version"] == 3
    assert client.get(f"/matches/{mid}/state?version=99999", headers=OP).status_code == 422


def test_the_operator_exports_every_match_as_ndjson(store, client):
    ids = {str(stored_match(store).match_id) for _ in range(2)}
    r = client.get("/matches/export?status=finished", headers=OP)
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    import json

    lines = [json.loads(line) for line in r.get_data(as_text=True).splitlines()]
    assert ids <= {rec["match_id"] for rec in lines} and all(rec["result"]["status"] == "finished" for rec in lines)
    seat = client.post("/matches", json={}).json["seats"][0]["token"]
    assert client.get("/matches/export", headers=bearer(seat)).status_code == 403


def test_the_record_schema_is_served(client):
    r = client.get("/match-record.schema.json")
    assert r.status_code == 200 and r.json["title"] == "Gin Rummy match record"
