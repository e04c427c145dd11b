"""Matchmaking through the REST API: tickets, the widening range, lapses, cancels racing
pairings, and 200 players racing on two replicas of one database."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from service import ratings
from service.api import create_app
from service.application.matchmaking import Matchmaking, fit_of, pair_periodically, ticket_rules
from service.store import EventStore, connect
from service.store import matchmaking as rows
from tests.api.conftest import OPERATOR, UNLIMITED, Player, bearer
from tests.api.test_ratings import settle
from tests.support.matches import play_to_the_end

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


class Clock:
    """The time the app sees: moved by hand."""

    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(autouse=True)
def no_tickets(store):
    """Each test starts with no ticket waiting (tickets of other tests would fit)."""
    with store.connection() as conn:
        conn.execute("DELETE FROM matchmaking_tickets")


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def mm_app(store, clock):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED})
    yield app
    app.extensions["gin_rummy"].hub.shutdown()


@pytest.fixture
def mm(mm_app):
    return mm_app.test_client()


def guest(client, name: str) -> dict:
    r = client.post("/players", json={"name": name})
    assert r.status_code == 201, r.json
    return r.json


def post(client, player: dict, body: dict | None = None):
    return client.post("/matchmaking/tickets", json=body or {}, headers=bearer(player["token"]))


def poll(client, player: dict, ticket_id: str):
    return client.get(f"/matchmaking/tickets/{ticket_id}", headers=bearer(player["token"]))


@pytest.fixture
def set_rating(store):
    """Give a player a rating (deleted at the end: a rebuild of the ratings from the
    events, in another test, must find only what the events say)."""
    given = []

    def give(player: dict, rating: float) -> None:
        given.append(uuid.UUID(player["id"]))
        with store.connection() as conn:
            conn.execute(
                "INSERT INTO player_ratings (player_id, rating, deviation, volatility, matches, wins)"
                " VALUES (%s, %s, 350, 0.06, 0, 0)",
                (given[-1], rating),
            )

    yield give
    with store.connection() as conn:
        conn.execute("DELETE FROM player_ratings WHERE player_id = ANY(%s)", (given,))


def test_two_fitting_tickets_make_one_match_with_both_players_seated_and_each_sees_its_own_token(mm, store):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    first = post(mm, ann, {"turn_seconds": 45, "single_hand": True})
    assert first.status_code == 201 and first.json["status"] == "waiting"
    assert first.json["rating_range"] == {"low": 1400.0, "high": 1600.0}
    assert first.json["poll_within_seconds"] == 30 and first.json["lapses_at"] == "2026-12-02T09:00:30.000+00:00"
    second = post(mm, bob, {"turn_seconds": 45, "single_hand": True})
    assert second.status_code == 201 and second.json["status"] == "paired", second.json
    mine = poll(mm, ann, first.json["id"]).json
    assert mine["status"] == "paired" and mine["match"]["id"] == second.json["match"]["id"]
    assert {mine["match"]["seat"], second.json["match"]["seat"]} == {0, 1}
    assert mine["match"]["token"] != second.json["match"]["token"]
    assert mine["match"]["token_until"] == "2026-12-02T10:00:00.000+00:00"
    match_id = mine["match"]["id"]
    # Each seat token works, and so does each player's own token (the seats are bound).
    for token in (mine["match"]["token"], second.json["match"]["token"], ann["token"], bob["token"]):
        assert mm.get(f"/matches/{match_id}", headers=bearer(token)).status_code == 200
    events = mm.get(f"/matches/{match_id}/events", headers=bearer(ann["token"])).json["events"]
    started = events[0]["data"]
    assert events[0]["type"] == "match_started" and started["paired"] is True and "rated" not in started
    assert started["rules"]["turn_seconds"] == 45 and started["rules"]["single_hand"] is True
    assert sorted(seat["player"] for seat in started["seats"]) == sorted([ann["id"], bob["id"]])
    assert events[1]["type"] == "hand_dealt"
    # Another player never finds the ticket (nor its token).
    assert poll(mm, bob, first.json["id"]).status_code == 404
    assert poll(mm, bob, first.json["id"]).json["code"] == "ticket_not_found"


def test_a_seat_token_is_shown_for_an_hour_after_the_pairing_then_no_more(mm, clock):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    ticket = post(mm, ann).json
    post(mm, bob)
    clock.advance(3599)
    assert poll(mm, ann, ticket["id"]).json["match"]["token"] is not None
    clock.advance(1)
    later = poll(mm, ann, ticket["id"]).json
    assert later["status"] == "paired" and later["match"]["token"] is None and later["match"]["seat"] in (0, 1)


def test_a_second_waiting_ticket_of_one_kind_is_409_ticket_open_and_the_other_kind_is_allowed(mm):
    ann = guest(mm, "Ann")
    live = post(mm, ann)
    again = post(mm, ann, {"turn_seconds": 60})
    assert again.status_code == 409 and again.json["code"] == "ticket_open"
    assert again.json["ticket_id"] == live.json["id"]
    by_post = post(mm, ann, {"kind": "correspondence", "days_per_move": 2})
    assert by_post.status_code == 201 and by_post.json["rules"]["turn_seconds"] == 2 * 86400
    assert by_post.json["poll_within_seconds"] is None and by_post.json["lapses_at"] is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"rules": {"turn_seconds": 30}}, "clock_in_rules"),
        ({"kind": "live", "days_per_move": 3}, "clock_mismatch"),
        ({"kind": "correspondence", "turn_seconds": 30}, "clock_mismatch"),
        ({"kind": "blitz"}, "invalid_request"),
        ({"turn_seconds": 5}, "invalid_request"),
        ({"days_per_move": 31, "kind": "correspondence"}, "invalid_request"),
        ({"rated": "yes"}, "invalid_request"),
        ({"rules": {"preset": "nope"}}, "invalid_request"),
        ({"surprise": 1}, "invalid_request"),
    ],
)
def test_refused_ticket_bodies_are_422_with_a_code_and_write_nothing(mm, store, body, code):
    ann = guest(mm, "Ann")
    r = post(mm, ann, body)
    assert r.status_code == 422 and r.mimetype == "application/problem+json" and r.json["code"] == code, r.json
    with store.connection() as conn:
        assert conn.execute("SELECT count(*) FROM matchmaking_tickets").fetchone()[0] == 0


def test_a_ticket_needs_a_player(mm, new_match):
    assert mm.post("/matchmaking/tickets", json={}).status_code == 401
    seat_token = mm.post("/matches", json={}).json["seats"][0]["token"]
    assert mm.post("/matchmaking/tickets", json={}, headers=bearer(seat_token)).status_code == 403


def test_a_widening_range_pairs_two_players_300_points_apart_after_40_seconds_and_not_before(mm, set_rating, clock):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    set_rating(ann, 1500)
    set_rating(bob, 1800)
    a = post(mm, ann).json
    b = post(mm, bob).json
    assert (a["status"], b["status"]) == ("waiting", "waiting")
    clock.advance(20)  # ±200
    assert poll(mm, bob, b["id"]).json["status"] == "waiting"
    assert poll(mm, ann, a["id"]).json["rating_range"] == {"low": 1300.0, "high": 1700.0}
    clock.advance(19)  # 39 s: ±250, 300 apart is still too far
    assert poll(mm, ann, a["id"]).json["status"] == "waiting"
    assert poll(mm, bob, b["id"]).json["rating_range"] == {"low": 1550.0, "high": 2050.0}
    clock.advance(1)  # 40 s: ±300
    paired = poll(mm, ann, a["id"]).json
    assert paired["status"] == "paired" and poll(mm, bob, b["id"]).json["match"]["id"] == paired["match"]["id"]


def test_the_range_stops_widening_at_500_points(mm, clock):
    ann = guest(mm, "Ann")
    ticket = post(mm, ann).json
    for _ in range(10):
        clock.advance(25)
        ticket = poll(mm, ann, ticket["id"]).json
    assert ticket["rating_range"] == {"low": 1000.0, "high": 2000.0}  # 250 s would be ±1,350


def test_a_live_ticket_not_polled_for_30_seconds_lapses_and_is_never_paired(mm, clock):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    left = post(mm, ann).json
    clock.advance(30.001)
    came = post(mm, bob).json
    assert came["status"] == "waiting"  # Ann's ticket lapsed: she left
    assert poll(mm, ann, left["id"]).json["status"] == "lapsed"
    assert post(mm, ann).json["status"] == "paired"  # a new ticket of hers is welcome


def test_a_correspondence_ticket_waits_a_week_unpolled(mm, clock):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    waiting = post(mm, ann, {"kind": "correspondence"}).json
    clock.advance(7 * 86400)
    assert post(mm, bob, {"kind": "correspondence"}).json["status"] == "paired"
    assert poll(mm, ann, waiting["id"]).json["status"] == "paired"


def test_tickets_with_other_rules_or_another_rating_choice_are_not_paired(mm):
    players = [guest(mm, f"P{i}") for i in range(4)]
    assert post(mm, players[0], {"turn_seconds": 30}).json["status"] == "waiting"
    assert post(mm, players[1], {"turn_seconds": 60}).json["status"] == "waiting"
    assert post(mm, players[2], {"turn_seconds": 30, "rated": False}).json["status"] == "waiting"
    assert post(mm, players[3], {"turn_seconds": 30, "rules": {"preset": "short-stock"}}).json["status"] == "waiting"


def test_a_cancelled_ticket_is_not_paired_and_a_paired_one_cannot_be_cancelled(mm):
    ann, bob, cy = guest(mm, "Ann"), guest(mm, "Bob"), guest(mm, "Cy")
    ticket = post(mm, ann).json
    cancelled = mm.delete(f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"]))
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    assert mm.delete(f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"])).json["status"] == "cancelled"
    paired = post(mm, bob).json
    assert paired["status"] == "waiting"
    assert post(mm, cy).json["status"] == "paired"
    refused = mm.delete(f"/matchmaking/tickets/{paired['id']}", headers=bearer(bob["token"]))
    assert refused.status_code == 409 and refused.json["code"] == "ticket_paired"
    assert mm.delete(f"/matchmaking/tickets/{paired['id']}", headers=bearer(cy["token"])).status_code == 404


def test_a_ticket_never_pairs_with_its_own_player_even_when_the_rows_fit(mm_app, store, clock):
    """Only the store could hold two fitting tickets of one player (one waiting per kind):
    two rows of one player with the same fit text are never paired with each other."""
    client = mm_app.test_client()
    ann = guest(client, "Ann")
    player = uuid.UUID(ann["id"])
    same = '{"same": "fit"}'
    spec = {"rules": {}, "rated": True}
    with store.connection() as conn:
        one = rows.insert(conn, uuid.uuid4(), player, "live", same, spec, 1500.0, clock())
        two = rows.insert(conn, uuid.uuid4(), player, "correspondence", same, spec, 1500.0, clock())
    matchmaking: Matchmaking = mm_app.extensions["gin_rummy"].matchmaking
    assert matchmaking.pair(one.id) is None and matchmaking.pair(two.id) is None


def test_a_casual_match_is_recorded_unrated_and_never_rated(mm, store):
    for rated in (False, True):
        ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
        body = {"rated": rated, "single_hand": True}
        a = post(mm, ann, body).json
        b = post(mm, bob, body).json
        match_id = b["match"]["id"]
        seats = {b["match"]["seat"]: Player(mm, match_id, b["match"]["token"])}
        mine = poll(mm, ann, a["id"]).json["match"]
        seats[mine["seat"]] = Player(mm, match_id, mine["token"])
        events = mm.get(f"/matches/{match_id}/events", headers=bearer(ann["token"])).json["events"]
        assert events[0]["data"].get("rated", True) is rated and a["rated"] is rated
        assert play_to_the_end(seats)["status"] == "finished"
        with store.connection() as conn:
            found = ratings.rated_players(conn, uuid.UUID(match_id))
        assert (found is not None) is rated
        settle(mm)  # the ratings fold every match end stored
        matches = [mm.get(f"/players/{p['id']}").json["matches"] for p in (ann, bob)]
        assert matches == ([1, 1] if rated else [0, 0])


# --- races ------------------------------------------------------------------------------


@pytest.fixture
def replicas(database_url, clock):
    """Two replicas of the service on one database, each with its own pool."""
    apps = []
    for _ in range(2):
        store = EventStore(connect(database_url, min_size=1, max_size=6))
        apps.append(create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED}))
    yield apps
    for app in apps:
        app.extensions["gin_rummy"].hub.shutdown()
        app.extensions["gin_rummy"].store.pool.close()


def test_200_players_racing_on_two_replicas_make_exactly_100_matches_each_player_in_one(replicas, store):
    clients = [app.test_client() for app in replicas]
    players = [guest(clients[0], f"P{i}") for i in range(200)]
    # Pair i's two tickets ask for target score 10 + i: each fits only its partner's.
    bodies = [{"rules": {"target_score": 10 + i // 2}} for i in range(200)]
    order = list(range(200))
    random.Random(7).shuffle(order)
    start = threading.Barrier(8)

    def run(worker: int) -> None:
        client = clients[worker % 2]
        start.wait()
        for i in order[worker::8]:
            r = post(client, players[i], bodies[i])
            assert r.status_code == 201, r.json
            tickets[i] = r.json["id"]

    tickets: dict[int, str] = {}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(run, range(8)))
    # Two tickets posted at once may each pass over the other (locked): a poll pairs them.
    answers: dict[int, dict] = {}

    def look(i: int) -> None:
        answers[i] = poll(clients[i % 2], players[i], tickets[i]).json

    for _ in range(5):
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(look, [i for i in range(200) if answers.get(i, {}).get("status") != "paired"]))
    assert Counter(a["status"] for a in answers.values()) == {"paired": 200}
    by_match = Counter(a["match"]["id"] for a in answers.values())
    assert len(by_match) == 100 and set(by_match.values()) == {2}
    with store.connection() as conn:
        seated = conn.execute(
            "SELECT player_id, count(*) FROM match_players WHERE match_id = ANY(%s) GROUP BY player_id",
            ([uuid.UUID(m) for m in by_match],),
        ).fetchall()
        started = conn.execute(
            "SELECT count(*) FROM events WHERE type = 'match_started' AND match_id = ANY(%s) AND data->'paired' = 'true'",
            ([uuid.UUID(m) for m in by_match],),
        ).fetchone()[0]
    assert len(seated) == 200 and {count for _, count in seated} == {1} and started == 100
    for i in range(0, 200, 2):  # each with its partner
        assert answers[i]["match"]["id"] == answers[i + 1]["match"]["id"]


def race_cancel_and_pairing(clients, ann: dict, bob: dict, body: dict, delay: float) -> dict:
    """Ann's waiting ticket cancelled on one replica ``delay`` seconds after Bob's
    fitting one is posted on the other; the two answers."""
    ticket = post(clients[0], ann, body).json
    both = threading.Barrier(2)
    answers = {"ticket": ticket}

    def cancel() -> None:
        both.wait()
        time.sleep(delay)
        answers["cancel"] = clients[0].delete(f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"]))

    def pair() -> None:
        both.wait()
        answers["post"] = post(clients[1], bob, body)

    threads = [threading.Thread(target=cancel), threading.Thread(target=pair)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_a_cancel_racing_a_pairing_ends_paired_or_cancelled_never_both(replicas, store):
    clients = [app.test_client() for app in replicas]
    outcomes: Counter[str] = Counter()
    for round_ in range(30):
        ann, bob = guest(clients[0], f"A{round_}"), guest(clients[0], f"B{round_}")
        # From at once to 15 ms later (a post takes a few ms): both endings happen.
        delay = (round_ % 6) * 0.003
        answers = race_cancel_and_pairing(clients, ann, bob, {"rules": {"target_score": 500 + round_}}, delay)
        final = poll(clients[0], ann, answers["ticket"]["id"]).json
        with store.connection() as conn:
            held = conn.execute(
                "SELECT count(*) FROM match_players WHERE player_id = %s", (uuid.UUID(ann["id"]),)
            ).fetchone()[0]
        if answers["cancel"].status_code == 200:
            assert answers["cancel"].json["status"] == "cancelled" and final["status"] == "cancelled"
            assert held == 0 and answers["post"].json["status"] == "waiting"
        else:
            assert answers["cancel"].status_code == 409 and answers["cancel"].json["code"] == "ticket_paired"
            assert final["status"] == "paired" and held == 1
            assert answers["post"].json["match"]["id"] == final["match"]["id"]
        outcomes[final["status"]] += 1
        theirs = answers["post"].json
        if theirs["status"] == "waiting":
            clients[1].delete(f"/matchmaking/tickets/{theirs['id']}", headers=bearer(bob["token"]))
    assert sum(outcomes.values()) == 30
    print("cancel races:", dict(outcomes))


def test_a_cancel_arriving_while_a_pairing_holds_the_ticket_waits_and_finds_it_paired(mm_app, store, clock):
    """The pairing's transaction holds the row (as it does while it writes the match):
    the cancel waits for it, then changes nothing, and is 409 ticket_paired."""
    client = mm_app.test_client()
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    ticket = post(client, ann).json
    theirs = post(client, bob, {"turn_seconds": 31}).json  # fits nothing: paired by hand below
    answer = {}
    with store.transaction() as conn:
        mine = rows.lock_waiting(conn, uuid.UUID(ticket["id"]), clock() - timedelta(seconds=30))
        assert mine is not None
        # Another replica's pairing passes over the locked row instead of waiting.
        with store.connection() as other:
            with other.transaction():
                assert rows.lock_waiting(other, mine.id, clock() - timedelta(seconds=30)) is None
        canceller = threading.Thread(
            target=lambda: answer.update(r=client.delete(f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"])))
        )
        canceller.start()
        canceller.join(0.5)
        assert canceller.is_alive()  # waiting for the pairing's lock
        rows.mark_paired(conn, mine.id, uuid.uuid4(), 0, b"\0" * 32, clock())
        rows.mark_paired(conn, uuid.UUID(theirs["id"]), uuid.uuid4(), 1, b"\0" * 32, clock())
    canceller.join(5)
    assert answer["r"].status_code == 409 and answer["r"].json["code"] == "ticket_paired"
    with store.connection() as conn:
        assert rows.get(conn, mine.id).status == "paired"


def test_a_ticket_that_passes_over_a_held_fitting_one_tries_again_after_a_pause_and_pairs(mm_app, store, clock, monkeypatch):
    """Bob's ticket is held by another transaction (its own pairing) when Ann's is
    posted: Ann's pairing passes over it, pauses, and on the next try takes both."""
    import service.application.matchmaking as use_case

    client = mm_app.test_client()
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    theirs = post(client, bob).json
    assert theirs["status"] == "waiting"
    with store.connection() as conn:
        holding = conn.transaction()
        holding.__enter__()
        assert rows.lock_waiting(conn, uuid.UUID(theirs["id"]), clock() - timedelta(seconds=30)) is not None
        pauses: list[float] = []

        def pause(seconds: float) -> None:  # the other pairing ends (here: gives the row back)
            pauses.append(seconds)
            if len(pauses) == 1:
                holding.__exit__(None, None, None)

        monkeypatch.setattr(mm_app.extensions["gin_rummy"].matchmaking, "pause", pause)
        mine = post(client, ann).json
    assert len(pauses) == 1 and use_case.PASSED_PAUSE <= pauses[0] < 2 * use_case.PASSED_PAUSE
    assert mine["status"] == "paired"
    assert poll(client, bob, theirs["id"]).json["match"]["id"] == mine["match"]["id"]


def test_a_ticket_whose_fitting_one_stays_held_tries_three_times_then_waits(mm_app, store, clock, monkeypatch):
    import service.application.matchmaking as use_case

    client = mm_app.test_client()
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    theirs = post(client, bob).json
    pauses: list[float] = []
    monkeypatch.setattr(mm_app.extensions["gin_rummy"].matchmaking, "pause", pauses.append)
    with store.connection() as conn, conn.transaction():
        assert rows.lock_waiting(conn, uuid.UUID(theirs["id"]), clock() - timedelta(seconds=30)) is not None
        mine = post(client, ann).json
    assert mine["status"] == "waiting" and len(pauses) == use_case.PASSED_TRIES - 1 == 2
    assert poll(client, ann, mine["id"]).json["status"] == "paired"  # the next poll pairs them
    assert len(pauses) == 2  # nothing passed over then: no pause


def test_a_background_round_pairs_correspondence_tickets_that_passed_each_other_and_lapses_the_left(mm_app, store, clock):
    """Two tickets posted at once may each pass over the other (locked by its own
    pairing); correspondence players need not poll, so the round pairs them."""
    client = mm_app.test_client()
    ann, bob, cy = guest(client, "Ann"), guest(client, "Bob"), guest(client, "Cy")
    kind, rules = ticket_rules({"kind": "correspondence"})
    fit, spec = fit_of(kind, rules, True), {"rules": rules, "rated": True}
    with store.connection() as conn:
        for player in (ann, bob):
            rows.insert(conn, uuid.uuid4(), uuid.UUID(player["id"]), kind, fit, spec, 1500.0, clock())
    left = post(client, cy).json  # live, then never polled
    clock.advance(31)
    matchmaking: Matchmaking = mm_app.extensions["gin_rummy"].matchmaking
    assert matchmaking.pair_waiting() == 1
    with store.connection() as conn:
        statuses = dict(conn.execute("SELECT player_id, status FROM matchmaking_tickets").fetchall())
        matches = conn.execute("SELECT count(DISTINCT match_id) FROM matchmaking_tickets WHERE status = 'paired'").fetchone()[0]
    assert statuses == {uuid.UUID(ann["id"]): "paired", uuid.UUID(bob["id"]): "paired", uuid.UUID(cy["id"]): "lapsed"}
    assert matches == 1 and poll(client, cy, left["id"]).json["status"] == "lapsed"
    assert matchmaking.pair_waiting() == 0


def test_the_background_rounds_run_until_stopped(mm_app, store, clock):
    client = mm_app.test_client()
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    kind, rules = ticket_rules({"kind": "correspondence"})
    fit, spec = fit_of(kind, rules, True), {"rules": rules, "rated": True}
    with store.connection() as conn:
        for player in (ann, bob):
            rows.insert(conn, uuid.uuid4(), uuid.UUID(player["id"]), kind, fit, spec, 1500.0, clock())
    stop = pair_periodically(mm_app.extensions["gin_rummy"].matchmaking, every=0.05)
    try:
        for _ in range(100):
            with store.connection() as conn:
                statuses = [s for (s,) in conn.execute("SELECT status FROM matchmaking_tickets").fetchall()]
            if statuses == ["paired", "paired"]:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"the background round did not pair the tickets: {statuses}")
    finally:
        stop.set()


def test_both_players_of_a_pairing_are_told_match_found_in_their_feeds(mm):
    ann, bob = guest(mm, "Ann"), guest(mm, "Bob")
    first = post(mm, ann, {"turn_seconds": 45, "single_hand": True})
    second = post(mm, bob, {"turn_seconds": 45, "single_hand": True})
    match_id = second.json["match"]["id"]
    for player in (ann, bob):
        feed = mm.get("/players/me/notifications", headers=bearer(player["token"]))
        assert feed.status_code == 200, feed.json
        found = [n for n in feed.json["items"] if n["kind"] == "match_found"]
        assert [n["match"] for n in found] == [match_id], feed.json
    assert first.json["id"] != second.json["id"]
