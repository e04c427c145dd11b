"""Notifications: one feed per player (``GET /players/me/notifications``, and live:
``GET /players/me/stream``), folded from the events; reminders of correspondence
clocks; "My games" with the player's moves first."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

from service import feed
from service.api import create_app
from service.engine.rules import PRESETS
from service.store import players as store_players

from .conftest import OPERATOR, UNLIMITED, bearer
from .test_ratings import START, app, clock  # noqa: F401 - the app on a clock the tests set

DAY = 86_400


def guest(client, name):
    r = client.post("/players", json={"name": name})
    assert r.status_code == 201, r.json
    return r.json, bearer(r.json["token"])


def notes(client, headers, after=0, limit=100) -> dict:
    r = client.get(f"/players/me/notifications?after={after}&limit={limit}", headers=headers)
    assert r.status_code == 200, r.json
    return r.json


def summary(page) -> list[tuple]:
    return [(n["kind"], n["match"], n["seat"]) for n in page["items"]]


def invited(client, a, b, turn_seconds=3 * DAY):
    """Ann's clocked single hand against an open seat, joined by Bob: its id."""
    created = client.post(
        "/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "rules": {"turn_seconds": turn_seconds}, "single_hand": True},
        headers=a,
    ).json
    assert client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=b).status_code == 201
    return created["id"]


def draw_and_discard(client, mid, headers):
    assert client.post(f"/matches/{mid}/actions", json={"type": "draw", "source": "stock"}, headers=headers).status_code == 200
    hand = client.get(f"/matches/{mid}", headers=headers).json["hand"]
    r = client.post(f"/matches/{mid}/actions", json={"type": "discard", "card": hand[0]}, headers=headers)
    assert r.status_code == 200, r.json


def paired(store, ann, bob, *, bind=True) -> str:
    """A match as pairing makes it (``"paired": true`` in its ``match_started``); its
    seats bound to the players unless ``bind`` is false (as an imported record's)."""
    mid = uuid.uuid4()
    seats = [{"kind": "human", "name": "Ann", "player": ann["id"]}, {"kind": "human", "name": "Bob", "player": bob["id"]}]
    data = {"rules": PRESETS["classic"].to_json(), "seats": seats, "paired": True}
    with store.transaction() as conn:
        store.append(mid, 0, [{"type": "match_started", "data": data}], actor="system" if bind else "import", conn=conn)
        if bind:
            store_players.bind_seats(conn, mid, {0: ann["id"], 1: bob["id"]})
    return str(mid)


def played_out(client, store, clock):
    """Ann and Bob: an invite, a move each way, a resignation, a rematch and a paired
    match.  Returns (ann, a, bob, b, the match, the rematch, the paired match)."""
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    mid = invited(client, a, b)
    clock.now = START + timedelta(days=1)
    draw_and_discard(client, mid, a)  # Bob's move now: his deadline is 1 + 3 days after START
    assert client.post(f"/matches/{mid}/actions", json={"type": "resign"}, headers=b).status_code == 200
    rematch = client.post(f"/matches/{mid}/rematch", headers=a)
    assert rematch.status_code == 201, rematch.json
    return ann, a, bob, b, mid, rematch.json["id"], paired(store, ann, bob)


def test_each_kind_is_made_once_for_the_right_player(client, store, clock):
    ann, a, bob, b, mid, again, found = played_out(client, store, clock)
    for _ in range(3):  # every read catches up; nothing is made twice
        anns, bobs = notes(client, a), notes(client, b)
    assert summary(anns) == [
        ("invite_accepted", mid, 0), ("your_move", mid, 0), ("match_ended", mid, 0), ("match_found", found, 0),
    ]
    # The rematch swaps the seats: Bob holds seat 0 and starts its first hand.
    assert summary(bobs) == [
        ("your_move", mid, 1), ("match_ended", mid, 1), ("rematch_offered", again, 0), ("your_move", again, 0),
        ("match_found", found, 1),
    ]
    invite, ann_move, ann_end, ann_found = anns["items"]
    assert invite["opponent"] == "Bob" and invite["created_at"] == ann_move["created_at"]
    assert (ann_move["hand"], ann_move["deadline"]) == (1, "2026-12-04T09:00:00.000+00:00")  # START + 3 days
    bob_move, bob_end, offered, bob_again, bob_found = bobs["items"]
    assert bob_move["deadline"] == "2026-12-05T09:00:00.000+00:00"  # his turn began a day later
    assert (ann_end["result"], ann_end["winner"], ann_end["reason"], ann_end["scores"]) == ("won", 0, "resigned", [0, 0])
    assert (bob_end["result"], bob_end["winner"], bob_end["reason"]) == ("lost", 0, "resigned")
    assert offered["rematch_of"] == mid and offered["opponent"] == "Ann"
    assert bob_again["deadline"] == "2026-12-05T09:00:00.000+00:00"  # the rematch began at START + 1 day
    assert (ann_found["opponent"], bob_found["opponent"]) == ("Bob", "Ann")
    ids = [int(n["id"]) for n in anns["items"]]
    assert ids == sorted(ids) and len(set(ids)) == 4
    assert anns["next_cursor"] == str(ids[-1])


def test_only_players_bound_to_seats_are_notified(client, store):
    ann, a = guest(client, "Ann")
    computer = client.post("/matches", json={}, headers=a).json  # Ann against the computer
    tokens_only = client.post("/matches", json={"seats": [{"name": "X"}, {"name": "Y"}]}).json  # no player
    for made in (computer, tokens_only):
        seat0 = bearer(made["seats"][0]["token"])
        assert client.post(f"/matches/{made['id']}/actions", json={"type": "resign"}, headers=seat0).status_code == 200
    feed.catch_up(store)
    with store.connection() as conn:
        counts = dict(conn.execute(
            "SELECT match_id::text, count(*) FROM notifications WHERE match_id = ANY(%s::uuid[]) GROUP BY 1",
            ([computer["id"], tokens_only["id"]],),
        ).fetchall())
        turns = {row[0] for row in conn.execute(
            "SELECT match_id::text FROM match_turns WHERE match_id = ANY(%s::uuid[])", ([computer["id"], tokens_only["id"]],),
        )}
    # Ann's end of the match (the computer answers her moves in her own requests: no
    # your_move); the computer and the seats of tokens alone get nothing, and a match no
    # player holds a seat of has no turn to list either (it is not folded at all).
    assert counts == {computer["id"]: 1}
    assert turns == {computer["id"]}
    page = notes(client, a)
    assert summary(page) == [("match_ended", computer["id"], 0)] and page["items"][0]["result"] == "lost"


def test_a_seat_that_names_a_player_without_binding_it_notifies_nobody(client, store):
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    unbound = paired(store, ann, bob, bind=False)  # as an imported record names anyone
    bound = paired(store, ann, bob)
    assert summary(notes(client, a)) == [("match_found", bound, 0)]
    assert summary(notes(client, b)) == [("match_found", bound, 1)]
    with store.connection() as conn:
        assert conn.execute("SELECT count(*) FROM notifications WHERE match_id = %s", (unbound,)).fetchone() == (0,)


def test_an_app_that_was_closed_resumes_by_cursor_without_a_gap_or_a_repeat(client, store, clock):
    *_, b, _mid, _again, _found = played_out(client, store, clock)
    everything = notes(client, b)["items"]
    assert len(everything) == 5
    seen, cursor, pages = [], 0, 0
    while True:
        page = notes(client, b, after=cursor, limit=2)
        if not page["items"]:
            assert page["next_cursor"] == str(cursor)  # the same cursor: nothing new
            break
        seen += page["items"]
        cursor, pages = int(page["next_cursor"]), pages + 1
    assert seen == everything and pages == 3  # 2 + 2 + 1
    assert client.get("/players/me/notifications?limit=501", headers=b).status_code == 422
    assert client.get("/players/me/notifications?after=-1", headers=b).status_code == 422
    assert client.get("/players/me/notifications").status_code == 401


def test_the_stream_sends_the_same_notifications_and_resumes_after_last_event_id(client, store, clock):
    *_, b, _mid, _again, _found = played_out(client, store, clock)
    everything = notes(client, b)["items"]
    r = client.get("/players/me/stream?wait=0", headers=b)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    frames = [block for block in r.get_data(as_text=True).split("\n\n") if block.startswith("id: ")]
    assert [f.splitlines()[:2] for f in frames] == [[f"id: {n['id']}", f"event: {n['kind']}"] for n in everything]
    third = everything[2]["id"]
    resumed = client.get("/players/me/stream?wait=0", headers={**b, "Last-Event-ID": third}).get_data(as_text=True)
    assert [line[4:] for line in resumed.splitlines() if line.startswith("id: ")] == [n["id"] for n in everything[3:]]
    assert client.get("/players/me/stream?wait=0&after=" + third, headers=b).get_data(as_text=True) == resumed
    bad = client.get("/players/me/stream?wait=0", headers={**b, "Last-Event-ID": "x"})
    assert bad.status_code == 422


def test_a_live_stream_wakes_for_a_move_in_any_match_of_the_player(app, client, store):
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    first, second = invited(client, a, b), invited(client, a, b)
    cursor = notes(client, b)["next_cursor"]
    stream = app.test_client().get(f"/players/me/stream?wait=20&after={cursor}", headers=b, buffered=False)
    assert stream.status_code == 200
    got: list[str] = []
    done = threading.Event()

    def read():
        for chunk in stream.response:
            got.extend(line[7:] for line in chunk.decode().splitlines() if line.startswith("event: "))
            if len(got) >= 2:
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    draw_and_discard(client, first, a)
    draw_and_discard(client, second, a)
    assert done.wait(15), got
    stream.close()
    assert got == ["your_move", "your_move"]


def test_streams_of_notifications_are_limited_per_player_token(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "STREAMS_PER_TOKEN": 1, **UNLIMITED})
    client = app.test_client()
    _, a = guest(client, "Ann")
    first = app.test_client().get("/players/me/stream?wait=20", headers=a, buffered=False)
    assert first.status_code == 200
    refused = client.get("/players/me/stream?wait=0", headers=a)
    assert refused.status_code == 429 and refused.json["code"] == "too_many_streams" and refused.headers["Retry-After"] == "5"
    first.close()
    assert client.get("/players/me/stream?wait=0", headers=a).status_code == 200
    app.extensions["gin_rummy"].hub.shutdown()


def reminders_of(client, headers) -> list[tuple]:
    return [(n["match"], n["seat"], n["deadline"]) for n in notes(client, headers)["items"] if n["kind"] == "reminder"]


def test_a_reminder_is_sent_once_twelve_hours_before_a_correspondence_deadline(app, client, store, clock):
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    slow = invited(client, a, b, turn_seconds=3 * DAY)  # Ann's move until START + 3 days
    quick = invited(client, a, b, turn_seconds=90)  # a clock of 90 s is never reminded
    sweep = app.extensions["gin_rummy"].players.sweep  # (the sweep covers every match: count Ann's and Bob's)
    feed.catch_up(store)
    clock.now = START + timedelta(days=2, hours=11, minutes=59)  # 12 h 1 min before: not yet
    sweep()
    assert reminders_of(client, a) == []
    clock.now = START + timedelta(days=2, hours=12)  # 12 hours before the deadline
    sweep()
    sweep()
    clock.now = START + timedelta(days=2, hours=20)
    sweep()
    assert reminders_of(client, a) == [(slow, 0, "2026-12-04T09:00:00.000+00:00")]  # once
    reminder = next(n for n in notes(client, a)["items"] if n["kind"] == "reminder")
    assert reminder["created_at"] == "2026-12-03T21:00:00+00:00"
    assert reminders_of(client, b) == []
    # Stored after every notification before it, before every one after it.
    draw_and_discard(client, slow, a)
    ids = {(n["kind"], n["match"], n["seat"]): int(n["id"]) for n in notes(client, a)["items"] + notes(client, b)["items"]}
    assert ids[("your_move", quick, 0)] < ids[("reminder", slow, 0)] < ids[("your_move", slow, 1)]
    # Bob's turn in the slow match began at START + 2 days 20 hours: his deadline is 3
    # days later, his reminder 12 hours before it.
    clock.now = START + timedelta(days=5, hours=7, minutes=59)
    sweep()
    assert reminders_of(client, b) == []
    clock.now = START + timedelta(days=5, hours=8)
    sweep()
    assert reminders_of(client, b) == [(slow, 1, "2026-12-07T05:00:00.000+00:00")]


def table(store) -> tuple[list, list]:
    with store.connection() as conn:
        rows = conn.execute("SELECT id, player_id, kind, match_id, data, source, key, created_at FROM notifications ORDER BY id").fetchall()
        turns = conn.execute("SELECT * FROM match_turns ORDER BY match_id").fetchall()
    return rows, turns


def test_the_rebuild_gives_the_rows_of_the_catch_up_reminders_kept(app, client, store, clock):
    played_out(client, store, clock)
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    invited(client, a, b)  # at START + 1 day: Ann's move until START + 4 days
    clock.now = START + timedelta(days=3, hours=13)
    assert app.extensions["gin_rummy"].players.sweep() >= 1
    draw_and_discard(client, invited(client, a, b), a)
    feed.catch_up(store)
    before = table(store)
    assert len(before[0]) >= 12 and any(row[2] == "reminder" for row in before[0])
    feed.rebuild(store)
    feed.catch_up(store)  # whatever another catch-up held back meanwhile
    assert table(store) == before


def test_my_games_lists_the_matches_waiting_for_my_move_first(client, store, clock):
    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    older, newer = invited(client, a, b), invited(client, a, b)
    draw_and_discard(client, older, a)  # Bob's move in the older one, Ann's in the newer
    bobs = client.get("/players/me/matches", headers=b).json["items"]
    assert [(m["id"], m["your_turn"]) for m in bobs] == [(older, True), (newer, False)]
    anns = client.get("/players/me/matches", headers=a).json["items"]
    assert [(m["id"], m["your_turn"]) for m in anns] == [(newer, True), (older, False)]
    second = client.get("/players/me/matches?limit=1&cursor=1", headers=b).json["items"]
    assert [m["id"] for m in second] == [newer]


def test_each_process_sweeps_for_reminders_in_the_background(client, store, clock):
    import time

    ann, a = guest(client, "Ann")
    bob, b = guest(client, "Bob")
    match = invited(client, a, b)  # Ann's move until START + 3 days
    clock.now = START + timedelta(days=2, hours=13)
    stop = feed.sweep_periodically(store, 0.05, timedelta(hours=12), clock)
    try:
        deadline = time.monotonic() + 10
        while not reminders_of(client, a) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)  # a few more sweeps: still one reminder
    finally:
        stop.set()
    assert reminders_of(client, a) == [(match, 0, "2026-12-04T09:00:00.000+00:00")]
