"""Live streams as served by ``gin-rummy serve``: gevent workers, LISTEN/NOTIFY between
processes, limits, and resuming after a restart."""

from __future__ import annotations

import threading
import time

from tests.scale.cluster import OPERATOR_TOKEN

from .sse import Stream, call, new_match, play

UNLIMITED = {"GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off", "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off"}


def test_two_hundred_followers_of_one_match_each_get_every_event_once_and_in_order(serve):
    # Two workers: the followers and the actions are spread over both processes, so
    # every event reaches the other process by NOTIFY.
    instance = serve(workers=2, GIN_RUMMY_STREAMS_PER_ADDRESS="off", **UNLIMITED)
    match_id, tokens = new_match(instance.port)
    streams = [Stream(instance.port, match_id, OPERATOR_TOKEN, wait=120).start() for _ in range(200)]
    for stream in streams:
        assert stream.opened.wait(30) and stream.status == 200, (stream.status, stream.problem, stream.error)
        assert stream.wait_for(2), "the backlog (match_started, hand_dealt) did not arrive"

    version = play(instance.port, match_id, tokens, actions=60)

    for stream in streams:
        assert stream.wait_for(version), f"a follower stopped at {stream.ids[-1:]}, the match is at {version}"
    for stream in streams:
        stream.close()
    expected = list(range(1, version + 1))
    assert all(stream.ids == expected for stream in streams), "an event was missed, doubled or out of order"


def test_health_never_waits_behind_streams_while_every_stream_slot_is_taken_and_a_load_runs(serve):
    instance = serve(workers=1, GIN_RUMMY_STREAMS_PER_PROCESS="100", GIN_RUMMY_STREAMS_PER_ADDRESS="off", **UNLIMITED)
    port = instance.port
    watched, _ = new_match(port)
    streams = [Stream(port, watched, OPERATOR_TOKEN, wait=120).start() for _ in range(100)]
    assert all(s.opened.wait(30) and s.status == 200 for s in streams)
    refused = Stream(port, watched, OPERATOR_TOKEN).start()
    refused.ended.wait(10)
    assert refused.status == 429 and refused.problem["code"] == "too_many_streams", (refused.status, refused.problem)

    stop = threading.Event()
    played = []

    def load():
        while not stop.is_set():
            match_id, tokens = new_match(port)
            play(port, match_id, tokens, actions=20)
            played.append(20)

    players = [threading.Thread(target=load, daemon=True) for _ in range(4)]
    for p in players:
        p.start()
    latencies = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        started = time.perf_counter()
        status, body = call(port, "GET", "/health/live")
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, body
        time.sleep(0.02)
    stop.set()
    for p in players:
        p.join(30)
    for s in streams:
        s.close()
    assert played, "the load did not run"
    # Behind the streams it would wait seconds (a thread each, before the event loop);
    # the bound is loose because the load shares this machine's cores with the test.
    latencies.sort()
    assert latencies[len(latencies) // 2] < 50 and latencies[-1] < 1000, (
        f"/health/live: median {latencies[len(latencies) // 2]:.1f} ms, slowest {latencies[-1]:.1f} ms of {len(latencies)}"
    )


def test_a_stream_resumes_with_last_event_id_after_the_instance_restarts(serve):
    instance = serve(workers=2, **UNLIMITED)
    other = serve(workers=1, **UNLIMITED)
    match_id, tokens = new_match(instance.port)
    first = Stream(instance.port, match_id, tokens[1], wait=120).start()
    assert first.wait_for(2)
    version = play(instance.port, match_id, tokens, actions=5)
    assert first.wait_for(version)

    instance.stop()  # the stream ends with its instance
    assert first.ended.wait(30)
    version = play(other.port, match_id, tokens, actions=5)  # meanwhile, on another instance
    instance.start()
    instance.wait_ready()

    resumed = Stream(instance.port, match_id, tokens[1], wait=120, last_event_id=first.ids[-1]).start()
    assert resumed.opened.wait(30) and resumed.status == 200
    later = play(instance.port, match_id, tokens, actions=3)
    assert resumed.wait_for(later)
    resumed.close()
    assert first.ids + resumed.ids == list(range(1, later + 1))
    assert later > version > first.ids[-1]


def test_a_token_and_an_address_get_429_beyond_their_streams(serve):
    instance = serve(workers=1, GIN_RUMMY_STREAMS_PER_TOKEN="2", GIN_RUMMY_STREAMS_PER_ADDRESS="3", **UNLIMITED)
    port = instance.port
    match_id, tokens = new_match(port)
    held = [Stream(port, match_id, tokens[0]).start() for _ in range(2)]
    assert all(s.opened.wait(10) and s.status == 200 for s in held)
    third = Stream(port, match_id, tokens[0]).start()
    third.ended.wait(10)
    assert (third.status, third.problem["code"]) == (429, "too_many_streams")
    assert "per token" in third.problem["detail"]

    held.append(Stream(port, match_id, tokens[1]).start())
    assert held[-1].opened.wait(10) and held[-1].status == 200
    fourth = Stream(port, match_id, OPERATOR_TOKEN).start()
    fourth.ended.wait(10)
    assert (fourth.status, fourth.problem["code"]) == (429, "too_many_streams")
    assert "per client address" in fourth.problem["detail"]

    held.pop(0).close()  # a place is free again
    time.sleep(0.2)
    again = Stream(port, match_id, OPERATOR_TOKEN).start()
    assert again.opened.wait(10) and again.status == 200
    for s in [*held, again]:
        s.close()


def test_a_quiet_stream_outlives_its_send_timeout_with_heartbeats(serve):
    # The send timeout closes a stream whose client reads nothing; one that reads stays.
    instance = serve(
        workers=1, GIN_RUMMY_STREAM_SEND_TIMEOUT_SECONDS="1", GIN_RUMMY_STREAM_HEARTBEAT_SECONDS="0.5", **UNLIMITED
    )
    match_id, tokens = new_match(instance.port)
    stream = Stream(instance.port, match_id, tokens[0], wait=4).start()
    started = time.monotonic()
    assert stream.wait_for(2)
    assert stream.ended.wait(10)
    lasted = time.monotonic() - started
    assert 3.5 < lasted < 8, f"the stream lasted {lasted:.1f} s, asked for 4"
    assert stream.comments.count("keep-alive") >= 5, stream.comments


def _move(port: int, match_id: str, token: str) -> None:
    """One turn of the player of ``token``: a card drawn from the stock, the first card discarded."""
    headers = {"Authorization": f"Bearer {token}"}
    status, _ = call(port, "POST", f"/matches/{match_id}/actions", {"type": "draw", "source": "stock"}, headers)
    assert status == 200
    _, view = call(port, "GET", f"/matches/{match_id}", headers=headers)
    assert view is not None
    status, body = call(port, "POST", f"/matches/{match_id}/actions", {"type": "discard", "card": view["hand"][0]}, headers)
    assert status == 200, body


def test_a_players_notifications_stream_across_processes_and_resume_after_a_restart(serve):
    instance = serve(workers=2, **UNLIMITED)
    other = serve(workers=1, **UNLIMITED)
    _, ann = call(instance.port, "POST", "/players", {"name": "Ann"})
    _, bob = call(instance.port, "POST", "/players", {"name": "Bob"})
    assert ann is not None and bob is not None
    a, b = ({"Authorization": f"Bearer {p['token']}"} for p in (ann, bob))
    _, created = call(instance.port, "POST", "/matches", {"seats": [{"kind": "human"}, {"kind": "open"}]}, a)
    assert created is not None
    match_id = created["id"]
    assert call(other.port, "POST", f"/matches/{match_id}/join", {"code": created["invite"]["code"]}, b)[0] == 201
    # Bob follows his feed on one instance while Ann moves on the other.
    first = Stream(instance.port, None, bob["token"], wait=120, path="/players/me/stream").start()
    assert first.opened.wait(30) and first.status == 200
    for _ in range(2):
        _move(other.port, match_id, ann["token"])
        _move(other.port, match_id, bob["token"])
    deadline = time.monotonic() + 20
    while len(first.types) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert first.types == ["your_move", "your_move"]
    instance.stop()  # the stream ends with its instance
    assert first.ended.wait(30)
    _move(other.port, match_id, ann["token"])  # meanwhile, on the other instance
    instance.start()
    instance.wait_ready()
    resumed = Stream(instance.port, None, bob["token"], wait=120, last_event_id=first.ids[-1], path="/players/me/stream").start()
    assert resumed.opened.wait(30) and resumed.status == 200
    _move(instance.port, match_id, bob["token"])
    _move(instance.port, match_id, ann["token"])
    deadline = time.monotonic() + 20
    while len(resumed.types) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    resumed.close()
    _, page = call(other.port, "GET", "/players/me/notifications", headers=b)
    assert page is not None
    assert first.ids + resumed.ids == [int(n["id"]) for n in page["items"]]  # no gap, no repeat
    assert len(page["items"]) == 4 and {n["kind"] for n in page["items"]} == {"your_move"}
