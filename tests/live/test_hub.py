"""The live hub in one process, on the real database and its notifications."""

from __future__ import annotations

import threading
import uuid

import pytest

from service.api import create_app
from tests.api.conftest import OPERATOR, UNLIMITED, Player, bearer, plays
from tests.support.live import streams_of, wait_listening


def sse_ids(chunks) -> tuple[list[int], list[str]]:
    ids, comments = [], []
    for chunk in chunks:
        for line in chunk.decode().splitlines():
            if line.startswith("id: "):
                ids.append(int(line[4:]))
            elif line.startswith(":"):
                comments.append(line[1:].strip())
    return ids, comments


@pytest.fixture
def app(store):
    # A small buffer: a follower 8 events behind the others is too far behind.
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "STREAM_BUFFER_EVENTS": 8, **UNLIMITED})
    yield app
    app.extensions["gin_rummy"].hub.shutdown()


def test_a_follower_too_far_behind_is_disconnected_and_resumes_without_a_gap(app):
    client = app.test_client()
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    match_id = created["id"]
    players = {s["seat"]: Player(client, match_id, s["token"]) for s in created["seats"]}
    hub = app.extensions["gin_rummy"].hub

    def open_stream(**headers):
        r = app.test_client().get(
            f"/matches/{match_id}/stream?wait=30", headers={**bearer(OPERATOR), **headers}, buffered=False
        )
        assert r.status_code == 200
        return r

    fast, slow = open_stream(), open_stream()
    fast_chunks, slow_chunks = fast.iter_encoded(), slow.iter_encoded()
    slow_seen = [next(slow_chunks), next(slow_chunks)]  # retry, then the backlog: seq 1 and 2
    assert sse_ids(slow_seen)[0] == [1, 2]
    assert wait_listening(hub, 10)

    fast_seen: list[bytes] = []
    reader = threading.Thread(target=lambda: fast_seen.extend(fast_chunks), daemon=True)
    reader.start()
    seat, version = 0, created["version"]
    for _ in range(20):  # 20 actions, far more than the 8 events kept
        view = players[seat].view()
        if not plays(view):
            seat = 1 - seat
            view = players[seat].view()
        action = next((a for a in plays(view) if a["type"] == "discard"), plays(view)[0])
        answer = players[seat].act(action).json
        version = answer["view"]["version"]
    for _ in range(500):
        if sse_ids(fast_seen)[0][-1:] == [version]:
            break
        threading.Event().wait(0.01)
    assert sse_ids(fast_seen)[0] == list(range(1, version + 1))  # the fast one got everything

    rest = list(slow_chunks)  # the slow one reads again: it is told it fell behind, and the stream ends
    slow.close()
    ids, comments = sse_ids(slow_seen + rest)
    assert any("too far behind" in c for c in comments), comments
    assert ids[-1] < version
    resumed = app.test_client().get(
        f"/matches/{match_id}/stream?wait=0", headers={**bearer(OPERATOR), "Last-Event-ID": str(ids[-1])}
    )
    more, _ = sse_ids([resumed.data])
    resumed.close()
    assert ids + more == list(range(1, version + 1))
    hub.shutdown()  # ends the fast one's stream too
    reader.join(10)
    assert not reader.is_alive()
    fast.close()
    assert hub.open_streams == 0, (hub._by_token, hub._by_address, {k: c.followers for k, c in hub._channels.items()})


def test_a_closed_stream_gives_its_place_back(app):
    client = app.test_client()
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    hub = app.extensions["gin_rummy"].hub
    r = client.get(f"/matches/{created['id']}/stream?wait=30", headers=bearer(created["seats"][0]["token"]), buffered=False)
    assert hub.open_streams == 1 and streams_of(hub, uuid.UUID(created["id"])) == 1
    r.close()  # never read: the place is given back all the same
    assert hub.open_streams == 0
