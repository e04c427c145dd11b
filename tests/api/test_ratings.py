"""Ratings: Glicko-2 numbers checked against the library and against Glickman's
formulas computed here by hand, which matches count, the leaderboard, and a rebuild
from the events that gives exactly the same numbers."""

from __future__ import annotations

import json
import math
import threading
import uuid
from datetime import UTC, datetime, timedelta

import glicko2
import pytest

from service import ratings
from service.api import create_app
from service.cli import main as cli
from service.ratings import glicko2_game
from service.records.format import digest_of
from service.store import EventStore, connect
from service.store.migrate import scratch_database
from tests.support.matches import greedy_action_on_view

from .conftest import OPERATOR, UNLIMITED, bearer

SCALE = 173.7178  # Glicko-2's scale: rating 1500 + 173.7178 μ, deviation 173.7178 φ
TAU = 0.5


def by_hand(player, games):
    """A player's (rating, deviation, volatility) after one rating period of ``games``,
    ``(opponent, score)`` pairs, by the steps of Glickman's "Example of the Glicko-2
    system" (2013), with ε = 0.000001."""
    mu, phi, sigma = (player[0] - 1500) / SCALE, player[1] / SCALE, player[2]
    g = [1 / math.sqrt(1 + 3 * (o[1] / SCALE) ** 2 / math.pi**2) for o, _ in games]  # step 3
    e = [1 / (1 + math.exp(-g_j * (mu - (o[0] - 1500) / SCALE))) for g_j, (o, _) in zip(g, games)]
    v = 1 / sum(g_j**2 * e_j * (1 - e_j) for g_j, e_j in zip(g, e))
    improvement = sum(g_j * (s - e_j) for g_j, e_j, (_, s) in zip(g, e, games))
    delta = v * improvement  # step 4
    a = math.log(sigma**2)  # step 5: the new volatility, by the Illinois algorithm

    def f(x):
        return math.exp(x) * (delta**2 - phi**2 - v - math.exp(x)) / (2 * (phi**2 + v + math.exp(x)) ** 2) - (x - a) / TAU**2

    big_a = a
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * TAU) < 0:
            k += 1
        big_b = a - k * TAU
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > 0.000001:
        c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = c, f_c
    sigma_new = math.exp(big_a / 2)
    phi_star = math.sqrt(phi**2 + sigma_new**2)  # step 6
    phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)  # step 7
    mu_new = mu + phi_new**2 * improvement
    return 1500 + SCALE * mu_new, SCALE * phi_new, sigma_new


def one_game(player, opponent, score):
    return by_hand(player, [(opponent, score)])


def by_the_library(player, opponent, score):
    p = glicko2.Player(rating=player[0], rd=player[1], vol=player[2])
    p.update_player([opponent[0]], [opponent[1]], [score])
    return p.rating, p.rd, p.vol


def test_the_hand_computation_gives_the_papers_example():
    # Glickman's example: 1500/200/0.06 beats 1400/30, loses to 1550/100 and to 1700/300
    # (the paper, rounding each step to a few digits, prints 1464.06).
    rating, deviation, volatility = by_hand((1500, 200, 0.06), [((1400, 30), 1), ((1550, 100), 0), ((1700, 300), 0)])
    assert (round(rating, 2), round(deviation, 2), round(volatility, 6)) == (1464.05, 151.52, 0.059996)


START = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def app(store, clock):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED})
    yield app
    app.extensions["gin_rummy"].hub.shutdown()


def guest(client, name):
    r = client.post("/players", json={"name": name})
    assert r.status_code == 201
    return r.json["id"], bearer(r.json["token"])


def face_off(client, first, second, rules=None, moves=True):
    """A match of ``first`` (seat 0, creator) against ``second`` (seat 1): its id.  With
    ``moves``, each seat then makes a move of its own (``a_move_each``), so that the
    match is rated however it ends."""
    body = {"seats": [{"kind": "human"}, {"kind": "open"}], **({"rules": rules} if rules else {})}
    created = client.post("/matches", json=body, headers=first).json
    r = client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=second)
    assert r.status_code == 201, r.json
    if moves:
        a_move_each(client, created["id"], first, second)
    return created["id"]


def a_move_each(client, match_id, first, second):
    """The seats play greedily, in turn, until each has made a move of its own (the
    starter draws and discards, then the other draws)."""
    moved = set()
    while moved != {0, 1}:
        view = client.get(f"/matches/{match_id}", headers=first).json
        seat = view["turn"]
        headers = (first, second)[seat]
        view = client.get(f"/matches/{match_id}", headers=headers).json
        r = client.post(f"/matches/{match_id}/actions", json=greedy_action_on_view(view), headers=headers)
        assert r.status_code == 200, r.json
        moved.add(seat)


def resign(client, match_id, loser):
    r = client.post(f"/matches/{match_id}/actions", json={"type": "resign"}, headers=loser)
    assert r.status_code == 200, r.json


def settle(client, timeout=20.0):
    """Wait until every match end stored is folded into the ratings.  The projection
    reads below the oldest transaction open on the server (service/ratings.py), and
    other databases' sessions on the same server may hold that back for a moment."""
    import time

    store = client.application.extensions["gin_rummy"].store
    with store.connection() as conn:
        last = conn.execute("SELECT max(position) FROM events WHERE type = 'match_ended'").fetchone()[0]
    deadline = time.monotonic() + timeout
    while last is not None and not ratings.folded(store, last):
        assert time.monotonic() < deadline, "the ratings did not fold the last match end"
        client.get("/leaderboard?limit=1")  # a reader catches up
        time.sleep(0.05)


def readable(store, timeout=20.0):
    """Wait until every match end stored is below the projection's horizon."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        with store.connection() as conn:
            held = conn.execute(
                "SELECT count(*) FROM events WHERE type = 'match_ended' AND tx >= pg_snapshot_xmin(pg_current_snapshot())"
            ).fetchone()[0]
        if not held:
            return
        assert time.monotonic() < deadline, "a transaction open elsewhere held the match ends back"
        time.sleep(0.05)


def profile(client, player_id, settled=True):
    if settled:
        settle(client)
    body = client.get(f"/players/{player_id}").json
    return body["rating"], body["deviation"], body["matches"], body["wins"]


def test_a_small_worked_example_equals_the_library_and_the_hand_computation(client, clock):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    # Match 1: Bob resigns. Both start at 1500, deviation 350, volatility 0.06.
    resign(client, face_off(client, a, b), b)
    ann1, bob1 = one_game(ratings.START, ratings.START, 1), one_game(ratings.START, ratings.START, 0)
    # By hand: g(φ=2.0148) = 0.6690, E = 0.5, v = 8.9374, μ' = φ'² g / 2 = 0.9342 -> 1662.31, φ' -> 290.32.
    assert (round(ann1[0], 2), round(ann1[1], 2), round(bob1[0], 2)) == (1662.31, 290.32, 1337.69)
    rating, deviation, matches, wins = profile(client, ann)
    assert (matches, wins) == (1, 1) and profile(client, bob)[2:] == (1, 0)
    assert rating == pytest.approx(ann1[0], abs=1e-9) and deviation == pytest.approx(ann1[1], abs=1e-9)
    assert profile(client, bob)[0] == pytest.approx(bob1[0], abs=1e-9)
    library = by_the_library(ratings.START, ratings.START, 1)
    assert rating == pytest.approx(library[0], abs=1e-4) and deviation == pytest.approx(library[1], abs=1e-4)
    # Match 2: on a 30-second clock Ann lets her time run out and Bob claims it: a loss
    # for Ann like any other, against the ratings both had after match 1.
    mid = face_off(client, a, b, rules={"turn_seconds": 30})
    for _ in range(4):  # Bob plays until it is Ann's turn
        view = client.get(f"/matches/{mid}", headers=b).json
        if view["turn"] == 0:
            break
        assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=b).status_code == 200
    assert view["turn"] == 0
    clock.now += timedelta(seconds=31)
    r = client.post(f"/matches/{mid}/actions", json={"type": "claim_timeout"}, headers=b)
    assert r.status_code == 200 and r.json["view"]["end_reason"] == "timeout", r.json
    ann_before, bob_before = (ann1[0], ann1[1], ann1[2]), (bob1[0], bob1[1], bob1[2])
    ann2, bob2 = one_game(ann_before, bob_before, 0), one_game(bob_before, ann_before, 1)
    rating, deviation, matches, wins = profile(client, ann)
    assert (matches, wins) == (2, 1) and profile(client, bob)[2:] == (2, 1)
    assert rating == pytest.approx(ann2[0], abs=1e-9) and deviation == pytest.approx(ann2[1], abs=1e-9)
    assert profile(client, bob)[0] == pytest.approx(bob2[0], abs=1e-9)
    assert rating == pytest.approx(by_the_library(ann_before, bob_before, 0)[0], abs=1e-3)
    assert bob2[0] > ann2[0]  # Bob, who came back from the lower rating, is now above


def test_only_matches_between_two_different_players_that_were_played_are_rated(client):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    # Against the computer.
    created = client.post("/matches", json={}, headers=a).json
    resign(client, created["id"], a)
    # One player on both seats.
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=a).json
    assert client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=a).status_code == 201
    resign(client, created["id"], a)
    # Against someone who joined with a name only (no player).
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=a).json
    anonymous = client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"], "name": "Cy"}).json
    resign(client, created["id"], bearer(anonymous["token"]))
    # Called off before anyone joined.
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=a).json
    assert client.post(f"/matches/{created['id']}/actions", json={"type": "abort"}, headers=a).status_code == 200
    assert profile(client, ann) == (1500.0, 350.0, 0, 0)
    # A match between Ann and Bob is.
    resign(client, face_off(client, b, a), a)
    assert profile(client, ann)[2:] == (1, 0) and profile(client, bob)[2:] == (1, 1)


def test_a_farm_of_six_guests_resigning_before_a_card_is_played_leaves_the_farmer_unrated_and_off_the_leaderboard(client):
    """The finding: a player made 6 guests, started a match against each and had each
    resign before a card was played; 6 wins made 1914 and first place.  Now none of the
    6 is rated: the farmer stays at 1500, deviation 350, 0 matches, provisional."""
    farmer, f = guest(client, "Farmer")
    for i in range(6):
        crony, c = guest(client, f"Crony {i}")
        mid = face_off(client, f, c, moves=False)
        resign(client, mid, c)
        assert client.get(f"/matches/{mid}", headers=f).json["winner"] == 0  # the match did end: a win, unrated
        assert profile(client, crony) == (1500.0, 350.0, 0, 0)
    assert profile(client, farmer) == (1500.0, 350.0, 0, 0)
    shown = client.get(f"/players/{farmer}").json
    assert (shown["established"], shown["established_opponents"]) == (False, 0)
    settle(client)
    assert farmer not in [e["id"] for e in everyone_on_the_board(client)]
    # What the farm made before: six wins in a row from 1500/350, each over a 1500/350 crony.
    farmed = ratings.START
    for _ in range(6):
        farmed = glicko2_game(farmed, ratings.START, 1)
    assert round(farmed[0]) == 1914


def test_six_wins_over_fresh_guests_who_played_leave_the_farmer_provisional_and_off_the_leaderboard(client):
    """The same farm with a move from each crony before it resigns: the 6 matches are
    rated (1914, deviation 198.8, as in the test above), but the rating is provisional (above 110) and none of
    the cronies was established: 0 established opponents, off the leaderboard."""
    farmer, f = guest(client, "Farmer")
    for i in range(6):
        crony, c = guest(client, f"Crony {i}")
        resign(client, face_off(client, f, c), c)
        assert profile(client, crony)[2:] == (1, 0)
    rating, deviation, matches, wins = profile(client, farmer)
    assert (round(rating), round(deviation, 1), matches, wins) == (1914, 198.8, 6, 6)
    shown = client.get(f"/players/{farmer}").json
    assert (shown["established"], shown["established_opponents"]) == (False, 0)
    settle(client)
    assert farmer not in [e["id"] for e in everyone_on_the_board(client)]


def test_a_match_is_rated_only_when_each_seat_made_a_move_of_its_own(client, clock):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")

    def the_starter_moves(mid):
        """The seat to play first draws and discards; the other has not moved."""
        view = client.get(f"/matches/{mid}", headers=a).json
        starter = view["turn"]
        headers = (a, b)[starter]
        for _ in range(2):
            view = client.get(f"/matches/{mid}", headers=headers).json
            assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=headers).status_code == 200
        return starter

    # The seat that never moved resigns; then the seat that moved resigns.
    for resigner in ("idle", "mover"):
        mid = face_off(client, a, b, moves=False)
        starter = the_starter_moves(mid)
        seat = 1 - starter if resigner == "idle" else starter
        resign(client, mid, (a, b)[seat])
        assert profile(client, ann) == (1500.0, 350.0, 0, 0) and profile(client, bob)[2:] == (0, 0)
    # On a clock, the seat that never moved lets its time run out: not rated either.
    mid = face_off(client, a, b, rules={"turn_seconds": 30}, moves=False)
    starter = the_starter_moves(mid)
    clock.now += timedelta(seconds=31)
    r = client.post(f"/matches/{mid}/actions", json={"type": "claim_timeout"}, headers=(a, b)[starter])
    assert r.status_code == 200 and r.json["view"]["end_reason"] == "timeout", r.json
    assert profile(client, ann)[2:] == (0, 0) and profile(client, bob)[2:] == (0, 0)
    # Once the other seat has drawn too, a resignation is rated.
    mid = face_off(client, a, b, moves=False)
    starter = the_starter_moves(mid)
    other = (a, b)[1 - starter]
    view = client.get(f"/matches/{mid}", headers=other).json
    assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=other).status_code == 200
    resign(client, mid, other)
    assert profile(client, (ann, bob)[starter])[2:] == (1, 1) and profile(client, (ann, bob)[1 - starter])[2:] == (1, 0)


def test_an_imported_record_naming_players_binds_no_seat_and_is_not_rated(client):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    mid = face_off(client, a, b)
    resign(client, mid, b)
    before = profile(client, ann), profile(client, bob)
    record = client.get(f"/matches/{mid}/export", headers=a).json
    # The same match under another id: a record anyone could write, naming Ann and Bob.
    record["match_id"] = str(uuid.uuid4())
    record["digest"]["value"] = digest_of(record["events"])
    del record["signature"]  # this service's signature would no longer verify (tests/records/test_signing.py)
    r = client.post("/matches/import", json=record)
    assert r.status_code == 201, (r.json["detail"], r.json.get("rule"), r.json.get("index"))
    assert [s["player"] for s in r.json["seats"]] == [ann, bob]  # as the record says
    assert (profile(client, ann), profile(client, bob)) == before
    mine = client.get("/players/me/matches", headers=a).json["items"]
    assert [m["id"] for m in mine] == [mid]
    assert client.get(f"/matches/{record['match_id']}", headers=a).status_code == 403


def test_concurrent_catch_ups_count_each_match_once(client, store):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    ratings.catch_up(store)
    mids = [face_off(client, a, b) for _ in range(6)]
    with store.transaction() as conn:  # hold the projection: the ends pile up unfolded
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (ratings.LOCK_KEY,))
        for mid in mids:
            resign(client, mid, b)
        assert client.get(f"/players/{ann}").json["matches"] == 0
        readable(store)  # every end is below the horizon (and none folded: the lock is held)
    folded = []
    threads = [threading.Thread(target=lambda: folded.append(ratings.catch_up(store))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(folded) == 6
    assert profile(client, ann)[2:] == (6, 6) and profile(client, bob)[2:] == (6, 0)


def rows(store):
    with store.connection() as conn:
        return (
            conn.execute("SELECT * FROM player_ratings ORDER BY player_id").fetchall(),
            conn.execute("SELECT * FROM match_players ORDER BY match_id, seat").fetchall(),
            conn.execute("SELECT * FROM rated_opponents ORDER BY player_id, opponent_id").fetchall(),
            conn.execute("SELECT * FROM rating_history ORDER BY player_id, position").fetchall(),
        )


def test_projections_rebuild_reproduces_the_ratings_and_the_seats_exactly(client, store, database_url, monkeypatch, capsys):
    players = [guest(client, name) for name in ("Ann", "Bob", "Cy")]
    for i in range(7):
        (_, first), (_, second) = players[i % 3], players[(i + 1) % 3]
        resign(client, face_off(client, first, second), second if i % 2 else first)
        # Between the rated ones, a match resigned before a card was played: unrated, by a rebuild too.
        resign(client, face_off(client, first, second, moves=False), second)
    settle(client)
    before = rows(store)
    assert len(before[0]) >= 3
    readable(store)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert cli(["projections", "rebuild"]) == 0
    assert "ratings of" in capsys.readouterr().out
    assert rows(store) == before  # float for float, row for row
    # Under GIN_RUMMY_RATED_PLAYERS=signed-in a rebuild rates no match between guests;
    # rebuilt again under the default, every number is back.
    monkeypatch.setenv("GIN_RUMMY_RATED_PLAYERS", "signed-in")
    assert cli(["projections", "rebuild"]) == 0
    assert "ratings of" in capsys.readouterr().out  # (other tests' matches between signed-in players stay rated)
    assert [profile(client, pid) for pid, _ in players] == [(1500.0, 350.0, 0, 0)] * 3
    monkeypatch.setenv("GIN_RUMMY_RATED_PLAYERS", "all")
    assert cli(["projections", "rebuild"]) == 0
    assert rows(store) == before


def test_with_rated_players_signed_in_only_matches_between_two_signed_in_players_are_rated(store, tmp_path):
    from .test_players import Issuer, signed_in_app

    issuer = Issuer()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(issuer.jwks()))
    app = signed_in_app(store, JWT_JWKS_FILE=str(jwks), RATED_PLAYERS="signed-in")
    client = app.test_client()
    dana, eli = (bearer(issuer.token(sub=f"rated-{uuid.uuid4()}", name=name)) for name in ("Dana", "Eli"))
    dana_id, eli_id = (client.get("/players/me", headers=h).json["id"] for h in (dana, eli))
    ann, a = guest(client, "Ann")
    resign(client, face_off(client, dana, a), a)  # a signed-in player beats a guest: unrated
    assert profile(client, dana_id)[2:] == (0, 0) and profile(client, ann)[2:] == (0, 0)
    resign(client, face_off(client, dana, eli), eli)  # two signed-in players: rated
    assert [round(x, 2) for x in profile(client, dana_id)[:2]] == [1662.31, 290.32]
    assert profile(client, dana_id)[2:] == (1, 1) and profile(client, eli_id)[2:] == (1, 0)
    app.extensions["gin_rummy"].hub.shutdown()


def everyone_on_the_board(client):
    items, cursor = [], None
    while True:
        page = client.get("/leaderboard?limit=100" + (f"&cursor={cursor}" if cursor else "")).json
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


@pytest.fixture
def board_database(server):
    """A database of its own: the leaderboard of this test only."""
    with scratch_database(server.admin_url, "gin_rummy_board") as url:
        pool = connect(url, min_size=1, max_size=4)
        try:
            yield EventStore(pool)
        finally:
            pool.close()


def test_the_leaderboard_lists_established_players_with_enough_established_opponents_by_rating_in_pages(board_database):
    """Ann, Bob, Cy and Dee play each other in rounds: the first name wins every match of
    the odd rounds, the second every match of the even ones.  After 5 rounds (15
    matches each) all four are established (deviations 107.8, 105.1, 103.7 and 103.4,
    by glicko2_game), but they were established only during round 5, so they count 0,
    0, 1 and 2 established opponents: none is listed, and Dee alone under a least of 2.
    After round 6 each has 3 and all four are listed, by rating (Dee 1518, Cy 1499, Bob
    1478, Ann 1449), each with 18 matches and 9 wins."""
    store = board_database
    app = create_app({"STORE": store, "TESTING": True, **UNLIMITED})
    client = app.test_client()
    names = ("Ann", "Bob", "Cy", "Dee")
    players = dict(zip(names, (guest(client, name) for name in names)))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    expected = {name: ratings.START for name in names}

    def round_of(number):
        for first, second in pairs:
            winner, loser = (first, second) if number % 2 else (second, first)
            resign(client, face_off(client, players[first][1], players[second][1]), players[loser][1])
            before = expected[winner], expected[loser]
            expected[winner], expected[loser] = glicko2_game(*before, 1), glicko2_game(*before[::-1], 0)

    for number in range(1, 6):
        round_of(number)
    settle(client)
    shown = {name: client.get(f"/players/{players[name][0]}").json for name in names}
    assert [round(shown[name]["deviation"], 1) for name in names] == [107.8, 105.1, 103.7, 103.4]
    assert all(shown[name]["established"] for name in names)
    assert [shown[name]["established_opponents"] for name in names] == [0, 0, 1, 2]
    board = client.get("/leaderboard").json
    assert board["items"] == [] and (board["min_matches"], board["max_deviation"], board["min_opponents"]) == (5, 110, 3)
    lenient = create_app({"STORE": store, "TESTING": True, "LEADERBOARD_MIN_OPPONENTS": 2, **UNLIMITED})
    assert [e["name"] for e in everyone_on_the_board(lenient.test_client())] == ["Dee"]
    lenient.extensions["gin_rummy"].hub.shutdown()

    round_of(6)
    settle(client)
    board = client.get("/leaderboard?limit=2").json
    assert [(e["rank"], e["name"], e["matches"], e["wins"], e["established_opponents"]) for e in board["items"]] == [
        (1, "Dee", 18, 9, 3), (2, "Cy", 18, 9, 3),
    ]
    rest = client.get(f"/leaderboard?limit=2&cursor={board['next_cursor']}").json
    assert [(e["rank"], e["name"]) for e in rest["items"]] == [(3, "Bob"), (4, "Ann")] and rest["next_cursor"] is None
    everyone = board["items"] + rest["items"]
    assert [round(e["rating"]) for e in everyone] == [1518, 1499, 1478, 1449]
    for entry in everyone:
        assert entry["rating"] == pytest.approx(expected[entry["name"]][0], abs=1e-9)
        assert entry["deviation"] == pytest.approx(expected[entry["name"]][1], abs=1e-9)
    assert everyone[0] == {**client.get(f"/players/{players['Dee'][0]}").json, "rank": 1}
    # The projection folded again from nothing gives the same rows, opponents included.
    before = rows(store)
    readable(store)
    assert ratings.rebuild(store) == 36 and rows(store) == before
    app.extensions["gin_rummy"].hub.shutdown()


def test_a_match_end_held_back_by_a_transaction_open_elsewhere_is_folded_once_it_closes(client, store, server):
    """The projection reads below the oldest open transaction on the server; a match that
    ends while one is open is folded in the background as soon as it closes."""
    import time

    import psycopg

    (ann, a), (_, b) = guest(client, "Ann"), guest(client, "Bob")
    mid = face_off(client, a, b)
    with psycopg.connect(server.admin_url) as elsewhere:  # another database, same server
        elsewhere.execute("SELECT txid_current()")  # a transaction, left open
        resign(client, mid, b)
        assert profile(client, ann, settled=False)[2] == 0  # not readable yet, even by a reader's catch-up
    def rated_matches():  # read directly: reading a profile would catch up by itself
        with store.connection() as conn:
            row = conn.execute("SELECT matches FROM player_ratings WHERE player_id = %s", (uuid.UUID(ann),)).fetchone()
        return row[0] if row else 0

    deadline = time.monotonic() + 10
    while rated_matches() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rated_matches() == 1 and profile(client, ann)[2:] == (1, 1)


def test_the_rating_history_lists_each_rated_match_with_the_numbers_before_and_after(client):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    first = face_off(client, a, b)
    resign(client, first, b)  # Ann wins from 1500 each: 1662.31 / 1337.69 (the worked example above)
    resign(client, face_off(client, a, b, moves=False), b)  # no move each: not rated, not listed
    second = face_off(client, b, a)
    resign(client, second, b)  # Ann wins again
    settle(client)
    ann1 = one_game(ratings.START, ratings.START, 1)
    bob1 = one_game(ratings.START, ratings.START, 0)
    ann2 = one_game(ann1, bob1, 1)
    page = client.get(f"/players/{ann}/ratings").json
    assert page["next_cursor"] is None
    assert [(h["match"], h["result"], h["opponent"]) for h in page["items"]] == [
        (second, "won", {"id": bob, "name": "Bob"}), (first, "won", {"id": bob, "name": "Bob"}),
    ]
    newest, oldest = page["items"]
    assert (oldest["rating_before"], round(oldest["rating"], 2), round(oldest["deviation"], 2)) == (1500.0, 1662.31, 290.32)
    assert newest["rating_before"] == oldest["rating"] and newest["rating"] == pytest.approx(ann2[0], abs=1e-9)
    assert newest["change"] == pytest.approx(ann2[0] - ann1[0], abs=1e-9) and newest["change"] > 0
    assert newest["rating"] == client.get(f"/players/{ann}").json["rating"]
    bobs = client.get(f"/players/{bob}/ratings?limit=1").json
    assert [h["result"] for h in bobs["items"]] == ["lost"] and round(bobs["items"][0]["rating_before"], 2) == 1337.69
    older = client.get(f"/players/{bob}/ratings?limit=1&before={bobs['next_cursor']}").json
    assert [(h["match"], h["rating_before"]) for h in older["items"]] == [(first, 1500.0)] and older["next_cursor"] is None
    r = client.get(f"/players/{uuid.uuid4()}/ratings")
    assert r.status_code == 404 and r.json["code"] == "player_not_found"
    assert client.get(f"/players/{ann}/ratings?limit=0").status_code == 422
