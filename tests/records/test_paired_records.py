"""A paired match's record keeps ``paired`` (and ``rated: false``) through export,
import and replay."""

import pytest

from service.api import create_app
from service.records.records import check_record
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.records.conftest import content

OP = bearer(OPERATOR)


@pytest.fixture
def client(store):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


def test_a_paired_casual_match_round_trips_with_its_flags(store, client, target):
    with store.connection() as conn:
        conn.execute("DELETE FROM matchmaking_tickets")
    players = [client.post("/players", json={"name": n}).json for n in ("Ann", "Bob")]
    for player in players:
        r = client.post("/matchmaking/tickets", json={"rated": False}, headers=bearer(player["token"]))
        assert r.status_code == 201
    match_id = r.json["match"]["id"]
    exported = client.get(f"/matches/{match_id}/export", headers=OP).json
    assert exported["events"][0]["data"]["paired"] is True and exported["events"][0]["data"]["rated"] is False
    text = client.get(f"/matches/{match_id}/export?format=text", headers=OP).get_data(as_text=True)
    assert '[Paired "true"]' in text and '[Rated "false"]' in text
    _, events, state = check_record(exported)
    assert events[0]["data"]["paired"] is True and state.hand_number == 1
    imported = target.post("/matches/import", json=exported)
    assert imported.status_code == 201, imported.json
    again = target.get(f"/matches/{match_id}/export", headers=OP).json
    assert content(again) == content(exported) and again["events"][0]["data"]["rated"] is False


def test_a_record_with_a_flag_of_another_value_is_refused(client):
    players = [client.post("/players", json={"name": n}).json for n in ("Cy", "Di")]
    for player in players:
        r = client.post("/matchmaking/tickets", json={"rated": False, "turn_seconds": 77}, headers=bearer(player["token"]))
    exported = client.get(f"/matches/{r.json['match']['id']}/export", headers=OP).json
    exported["events"][0]["data"]["paired"] = False
    refused = client.post("/matches/import", json=exported)
    assert refused.status_code == 422 and refused.json["code"] == "invalid_record"
    assert refused.json["errors"] == {"events/0/data/paired": ["false should be true"]}


