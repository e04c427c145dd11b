"""A player's data in one download: ``GET /players/me/data``."""

from __future__ import annotations

import json

from service.records.records import check_record

from .test_full_matches import cards_in
from .test_notifications import guest
from .test_ratings import app, clock, face_off, resign, settle  # noqa: F401 - the app on a clock the tests set


def lines_of(client, headers) -> list[dict]:
    r = client.get("/players/me/data", headers=headers)
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson", r.get_data(as_text=True)[:300]
    assert r.headers["Content-Disposition"].startswith('attachment; filename="gin-rummy-player-')
    return [json.loads(line) for line in r.get_data(as_text=True).splitlines()]


def test_the_download_holds_the_player_the_ratings_every_match_as_the_seat_saw_it_the_feed_and_the_tickets(app):  # noqa: F811
    client = app.test_client()
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    finished = face_off(client, a, b)
    resign(client, finished, b)
    running = face_off(client, a, b)
    ticket = client.post("/matchmaking/tickets", json={"kind": "correspondence"}, headers=a).json
    settle(client)

    lines = lines_of(client, a)
    kinds = [line["type"] for line in lines]
    assert kinds == ["player", "rating_change", "match", "match", *["notification"] * (len(kinds) - 5), "ticket"]
    assert all(set(line) == {"type", line["type"]} for line in lines)
    me = client.get("/players/me", headers=a).json
    assert lines[0]["player"] == me
    assert lines[1]["rating_change"] == client.get(f"/players/{ann['id']}/ratings").json["items"][0]
    matches = [line["match"] for line in lines[2:4]]
    assert [(m["id"], m["seat"], m["status"]) for m in matches] == [(running, 0, "active"), (finished, 0, "finished")]
    # The finished match: its whole signed record, which verifies.
    record = matches[1]["record"]
    assert check_record(record)[0].hex == finished.replace("-", "")
    # The running one: its events as Ann's seat sees them, so never Bob's hidden cards.
    truth = client.get(f"/matches/{running}", headers={"Authorization": "Bearer operator-secret-for-tests"}).json
    bobs_hand = set(truth["hidden"]["hands"][1]) - set(client.get(f"/matches/{running}", headers=a).json["opponent"]["known_cards"])
    assert matches[0]["events"] and not cards_in(matches[0]["events"]) & bobs_hand
    assert len(matches[0]["events"]) == truth["version"]
    feed = client.get("/players/me/notifications?limit=500", headers=a).json["items"]
    assert [line["notification"] for line in lines if line["type"] == "notification"] == feed
    last = lines[-1]["ticket"]
    assert last["id"] == ticket["id"] and last["status"] == "waiting" and last["match"] is None
    # No token of anyone's.
    text = json.dumps(lines)
    assert a["Authorization"].split()[1] not in text and b["Authorization"].split()[1] not in text
    assert bob["id"] in text  # the opponent's id is in the records, as their seat shows it

    assert client.get("/players/me/data").status_code == 401
    seat = client.post("/matches", json={}).json["seats"][0]["token"]
    r = client.get("/players/me/data", headers={"Authorization": f"Bearer {seat}"})
    assert r.status_code == 403 and r.mimetype == "application/problem+json"
