"""The events feed in pages, and a live stream's long backlog in bounded pieces."""

from __future__ import annotations

import pytest

from service.application.tokens import hash_token, seat_token
from service.store import save_seat_tokens
from tests.factories import endless_match

from .conftest import bearer


@pytest.fixture(scope="module")
def long_match(pool):
    """A legal match of 20,000 events, stored, with seat 0's token."""
    from service.store import EventStore

    store = EventStore(pool)
    match = endless_match(20_000)
    store.append(match.match_id, 0, match.events, state=match.state)
    token = seat_token(match.match_id)
    with store.transaction() as conn:
        save_seat_tokens(conn, match.match_id, {0: hash_token(token)})
    return match, token


def test_the_events_feed_pages_through_a_20000_event_match(client, long_match):
    match, token = long_match
    after, pages, seqs = 0, 0, []
    while after is not None:
        r = client.get(f"/matches/{match.match_id}/events?after={after}&limit=1000", headers=bearer(token))
        assert r.status_code == 200, r.json
        page = r.json
        pages += 1
        seqs += [e["seq"] for e in page["events"]]
        assert page["version"] == page["events"][-1]["seq"] and r.headers["ETag"] == f'"{page["version"]}"'
        after = page["next_after"]
        assert after is None or after == page["version"]
    assert pages == 20 and seqs == list(range(1, 20_001))


def test_the_events_feed_answers_500_events_by_default_and_refuses_more_than_1000(client, long_match):
    match, token = long_match
    r = client.get(f"/matches/{match.match_id}/events", headers=bearer(token))
    assert len(r.json["events"]) == 500 and r.json["next_after"] == 500
    last = client.get(f"/matches/{match.match_id}/events?after=19990", headers=bearer(token)).json
    assert [e["seq"] for e in last["events"]] == list(range(19_991, 20_001)) and last["next_after"] is None
    assert client.get(f"/matches/{match.match_id}/events?after=20000", headers=bearer(token)).json == {
        "match_id": str(match.match_id), "version": 20_000, "events": [], "next_after": None,
    }
    r = client.get(f"/matches/{match.match_id}/events?limit=1001", headers=bearer(token))
    assert r.status_code == 422 and list(r.json["errors"]) == ["limit"]


def test_a_stream_sends_a_long_backlog_in_pieces_of_at_most_500_events(client, long_match):
    match, token = long_match
    r = client.get(f"/matches/{match.match_id}/stream?wait=0", headers=bearer(token), buffered=False)
    assert r.status_code == 200
    pieces = []
    for chunk in r.iter_encoded():
        ids = [int(line[4:]) for line in chunk.decode().splitlines() if line.startswith("id: ")]
        if ids:
            pieces.append(ids)
    r.close()
    assert [seq for piece in pieces for seq in piece] == list(range(1, 20_001))
    assert max(len(piece) for piece in pieces) == 500


def test_defect_8_a_computers_seed_is_not_shown_to_its_opponent_until_the_record_of_the_finished_match(client, new_match):
    from tests.support.matches import play_to_the_end

    created, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}], "single_hand": True})
    ann = players[0]
    for _ in range(2):  # during the match, and after it
        feed = client.get(f"/matches/{created['id']}/events", headers=ann.headers).json["events"]
        stream = client.get(f"/matches/{created['id']}/stream?wait=0", headers=ann.headers)
        text = stream.get_data(as_text=True)
        stream.close()
        assert feed[0]["data"]["seats"][1] == {"name": "Computer (easy)", "kind": "computer", "level": "easy"}
        assert '"seed"' not in text and '"seed"' not in str(feed)
        play_to_the_end(players)
    record = client.get(f"/matches/{created['id']}/export", headers=ann.headers).json
    assert isinstance(record["events"][0]["data"]["seats"][1]["seed"], int)
