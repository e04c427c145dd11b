"""Online play through the API: open seats and invites, joining (and racing to join),
the lobby, resigning, clocks and timeout claims, calling a match off, rematches, and
who is connected."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from service.api import create_app
from tests.support.matches import greedy_action_on_view

from .conftest import OPERATOR, UNLIMITED, Player, bearer, plays

START = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)


class Clock:
    """The service's clock in these tests: moved by hand, never by waiting."""

    def __init__(self, now: datetime = START):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def app(store, clock):
    app = create_app(
        {"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, "PRESENCE_CACHE_SECONDS": 0, **UNLIMITED}
    )
    yield app
    app.extensions["gin_rummy"].hub.shutdown()


def invite(client, *, public=False, rules=None, single_hand=True, name="Ann"):
    """A match with Ann on seat 0 and an open seat: (created body, Ann)."""
    body = {"seats": [{"name": name}, {"kind": "open"}], "single_hand": single_hand, "public": public}
    if rules:
        body["rules"] = rules
    r = client.post("/matches", json=body)
    assert r.status_code == 201, r.json
    created = r.json
    return created, Player(client, created["id"], created["seats"][0]["token"])


def join(client, created, name="Bob", code=None):
    return client.post(f"/matches/{created['id']}/join", json={"code": code or created["invite"]["code"], "name": name})


def joined(client, created, name="Bob"):
    r = join(client, created, name)
    assert r.status_code == 201, r.json
    return Player(client, created["id"], r.json["token"]), r.json


def play_one_turn(players: dict) -> None:
    """The seat to play plays once (its plays of the cards, greedily)."""
    for player in players.values():
        view = player.view()
        if plays(view):
            assert player.act(greedy_action_on_view(view)).status_code == 200
            return
    raise AssertionError("nobody could play")


# --- invites and joining ------------------------------------------------------------------


def test_a_match_with_an_open_seat_waits_and_answers_an_invite(client):
    created, ann = invite(client)
    code = created["invite"]["code"]
    assert len(code) >= 22 and created["invite"]["url"].endswith(f"#/join/{created['id']}/{code}")
    assert created["seats"][1] == {"seat": 1, "name": None, "kind": "open", "level": None, "player": None, "token": None}
    view = ann.view()
    assert (view["phase"], view["status"], view["hand"], view["hand_number"]) == ("waiting_for_players", "waiting", [], 0)
    assert view["legal_actions"] == [{"type": "abort"}]
    assert ann.act({"type": "draw", "source": "stock"}).json["rule"] == "waiting_for_players"


def test_invite_then_join_then_a_complete_match_then_a_rematch_from_both_sides(client):
    created, ann = invite(client, single_hand=False, rules={"target_score": 25})
    bob, answer = joined(client, created)
    assert answer["seat"] == 1 and answer["view"]["seat"] == 1 and answer["view"]["phase"] in ("draw", "upcard_offer")
    events = client.get(f"/matches/{created['id']}/events", headers=ann.headers).json["events"]
    joins = [e for e in events if e["type"] == "seat_joined"]
    assert [e["data"] for e in joins] == [{"seat": 1, "name": "Bob"}] and events[2]["type"] == "hand_dealt"
    assert ann.view()["seats"][1] == {"seat": 1, "name": "Bob", "kind": "human", "level": None, "player": None}

    players = {0: ann, 1: bob}
    for _ in range(3000):
        view = ann.view()
        if view["status"] == "finished":
            break
        play_one_turn(players)
    assert view["status"] == "finished" and view["end_reason"] == "score" and max(view["scores"]) >= 25
    assert view["rematch"] is None and "resign" not in [a["type"] for a in view["legal_actions"]]

    first = client.post(f"/matches/{created['id']}/rematch", headers=bob.headers)
    assert first.status_code == 201, first.json
    rematch = first.json
    # The seats swapped: Bob (seat 1) is seat 0 of the rematch, and seat 0 starts.
    assert rematch["seat"] == 0 and rematch["token"] and rematch["view"]["seats"][0]["name"] == "Bob"
    assert rematch["view"]["rules"]["target_score"] == 25 and rematch["view"]["starter"] == 0
    assert ann.view()["rematch"] == rematch["id"]
    second = client.post(f"/matches/{created['id']}/rematch", headers=ann.headers)
    assert second.status_code == 200 and second.json["id"] == rematch["id"] and second.json["seat"] == 1
    assert second.json["token"] and second.json["token"] != rematch["token"]
    again = client.post(f"/matches/{created['id']}/rematch", headers=ann.headers)
    assert again.status_code == 200 and again.json["id"] == rematch["id"] and again.json["token"] is None
    ann2, bob2 = Player(client, rematch["id"], second.json["token"]), Player(client, rematch["id"], rematch["token"])
    assert ann2.view()["seat"] == 1 and bob2.view()["seat"] == 0
    assert ann.view()["rematch"] == rematch["id"] and ann.view()["seats"][0]["name"] == "Ann"


def test_a_rematch_needs_a_finished_match(client):
    created, ann = invite(client)
    r = client.post(f"/matches/{created['id']}/rematch", headers=ann.headers)
    assert (r.status_code, r.json["code"]) == (409, "no_rematch")
    assert client.post(f"/matches/{created['id']}/rematch", headers=bearer(OPERATOR)).status_code == 403


def test_a_wrong_or_missing_invite_code_is_refused_and_writes_nothing(client):
    created, ann = invite(client)
    version = ann.view()["version"]
    wrong = join(client, created, code="not-the-code")
    assert (wrong.status_code, wrong.json["code"]) == (403, "invalid_invite")
    missing = client.post(f"/matches/{created['id']}/join", json={"name": "Bob"})
    assert (missing.status_code, missing.json["code"]) == (403, "invite_required")
    assert client.post(f"/matches/{created['id']}/join", json={"code": "x"}).status_code == 422  # no name
    unknown = client.post("/matches/00000000-0000-4000-8000-000000000000/join", json={"code": "x", "name": "Bob"})
    assert (unknown.status_code, unknown.json["code"]) == (404, "match_not_found")
    assert ann.view()["version"] == version


def test_a_public_match_is_joined_without_a_code_but_a_wrong_code_is_refused(client):
    created, ann = invite(client, public=True)
    r = client.post(f"/matches/{created['id']}/join", json={"name": "Bob", "code": "not-the-code"})
    assert r.status_code == 403 and r.json["code"] == "invalid_invite"
    r = client.post(f"/matches/{created['id']}/join", json={"name": "Bob"})
    assert r.status_code == 201 and r.json["seat"] == 1


def test_a_views_etag_changes_with_what_changes_it_without_a_move(app, client, clock):
    """A browser revalidates a view with If-None-Match: a timeout that became claimable,
    an opponent who connected or a rematch must not be answered 304."""
    created, ann = invite(client, rules={"turn_seconds": 30})
    bob, _ = joined(client, created)
    players = {0: ann, 1: bob}
    mid = created["id"]
    waiter = players[1 - ann.view()["turn"]]

    def get(player, tag=None):
        return client.get(f"/matches/{mid}", headers={**player.headers, **({"If-None-Match": tag} if tag else {})})

    first = get(waiter)
    tag = first.headers["ETag"]
    assert tag == f'"{first.json["version"]}"' and first.headers["Cache-Control"] == "private, no-cache"
    assert get(waiter, tag).status_code == 304
    clock.advance(31)  # the opponent's time runs out: the same version, another view
    late = get(waiter, tag)
    assert late.status_code == 200 and late.headers["ETag"] == f'"{first.json["version"]}.t"'
    assert {"type": "claim_timeout"} in late.json["legal_actions"]
    assert get(waiter, late.headers["ETag"]).status_code == 304
    # If-Match takes the view's ETag as it is.
    r = waiter.act({"type": "claim_timeout"}, **{"If-Match": late.headers["ETag"]})
    assert r.status_code == 200, r.json
    loser = players[1 - (0 if waiter is ann else 1)]
    ended = get(loser)
    assert client.post(f"/matches/{mid}/rematch", headers=waiter.headers).status_code == 201
    again = get(loser, ended.headers["ETag"])
    assert again.status_code == 200 and again.json["rematch"] and again.headers["ETag"].startswith(f'"{ended.json["version"]}.r')


def test_a_full_match_answers_seat_taken(client, new_match):
    created, ann = invite(client)
    joined(client, created)
    again = join(client, created, "Carol")
    assert (again.status_code, again.json["code"]) == (409, "seat_taken")
    data, _ = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    r = client.post(f"/matches/{data['id']}/join", json={"code": "x", "name": "Carol"})
    assert (r.status_code, r.json["code"]) == (409, "seat_taken")


def test_twenty_players_racing_for_the_last_seat_one_wins_and_no_event_is_doubled(app, client):
    created, ann = invite(client)
    results = []
    barrier = threading.Barrier(20)

    def race(n):
        own = app.test_client()
        barrier.wait()
        r = own.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"], "name": f"P{n}"})
        results.append((r.status_code, r.json.get("code"), r.json.get("token")))

    threads = [threading.Thread(target=race, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201] + [409] * 19, results
    assert all(code == "seat_taken" for status, code, _ in results if status == 409)
    events = client.get(f"/matches/{created['id']}/events", headers=ann.headers).json["events"]
    assert [e["type"] for e in events].count("seat_joined") == 1
    assert [e["type"] for e in events].count("hand_dealt") == 1
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    winner = next(token for status, _, token in results if status == 201)
    assert Player(client, created["id"], winner).view()["seat"] == 1


def test_the_creator_may_call_off_a_match_nobody_joined(client):
    created, ann = invite(client)
    r = ann.act({"type": "abort"})
    assert r.status_code == 200, r.json
    assert [(e["type"], e["data"]["reason"]) for e in r.json["events"]] == [("match_ended", "aborted")]
    view = r.json["view"]
    assert (view["status"], view["end_reason"], view["winner"], view["legal_actions"]) == ("finished", "aborted", None, [])
    assert join(client, created).json["code"] == "seat_taken"
    assert client.post(f"/matches/{created['id']}/rematch", headers=ann.headers).json["code"] == "no_rematch"


def test_a_begun_match_cannot_be_called_off(client):
    created, ann = invite(client)
    joined(client, created)
    r = ann.act({"type": "abort"})
    assert (r.status_code, r.json["rule"]) == (409, "match_begun")


# --- the lobby ------------------------------------------------------------------------------


def test_the_lobby_lists_public_waiting_matches_newest_first_in_pages(client, clock):
    made = []
    for n in range(5):
        created, _ = invite(client, public=True, name=f"Host{n}", rules={"preset": "bonus-20-10", "turn_seconds": 30})
        made.append(created["id"])
    private, _ = invite(client, public=False)
    full, _ = invite(client, public=True)
    joined(client, full)
    page = client.get("/lobby?limit=3").json
    assert [m["id"] for m in page["items"]] == made[::-1][:3] and page["next_cursor"] == "3"
    assert page["items"][0]["creator"] == "Host4" and page["items"][0]["rules"]["turn_seconds"] == 30
    ids = [m["id"] for m in page["items"]]
    cursor = page["next_cursor"]
    while cursor is not None:
        page = client.get(f"/lobby?limit=3&cursor={cursor}").json
        ids += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
    assert ids[:5] == made[::-1] and private["id"] not in ids and full["id"] not in ids
    assert client.get("/lobby?limit=101").status_code == 422


# --- resigning --------------------------------------------------------------------------------


def two_people(client, **rules):
    created, ann = invite(client, single_hand=False, rules=rules or None)
    bob, _ = joined(client, created)
    return {0: ann, 1: bob}


def resign_and_check(players, seat):
    before = players[seat].view()
    r = players[seat].act({"type": "resign"})
    assert r.status_code == 200, r.json
    (ended,) = r.json["events"]
    assert ended["type"] == "match_ended" and ended["data"] == {
        "winner": 1 - seat, "scores": before["scores"], "reason": "resigned", "seat": seat
    }
    view = players[1 - seat].view()
    assert (view["status"], view["end_reason"], view["winner"], view["scores"]) == (
        "finished", "resigned", 1 - seat, before["scores"]
    )
    return view


@pytest.mark.parametrize("in_turn", [True, False])
def test_a_player_resigns_in_the_draw_step_in_turn_or_not(client, in_turn):
    players = two_people(client)
    view = players[0].view()
    assert {"type": "resign"} in view["legal_actions"] and {"type": "resign"} in players[1].view()["legal_actions"]
    seat = view["turn"] if in_turn else 1 - view["turn"]
    resign_and_check(players, seat)


@pytest.mark.parametrize("in_turn", [True, False])
def test_a_player_resigns_in_the_discard_step_in_turn_or_not(client, in_turn):
    players = two_people(client)
    mover = players[0].view()["turn"]
    assert players[mover].act({"type": "draw", "source": "stock"}).status_code == 200
    assert players[mover].view()["phase"] == "discard"
    resign_and_check(players, mover if in_turn else 1 - mover)


@pytest.mark.parametrize("who", ["defender", "knocker"])
def test_a_player_resigns_during_the_defense(client, who):
    players = two_people(client, preset="bonus-20-10")  # the defender confirms: the defense waits
    for _ in range(400):
        views = [players[0].view(), players[1].view()]
        if views[0]["phase"] == "defense":
            break
        play_one_turn(players)
    else:
        pytest.fail("nobody knocked")
    defender = views[0]["turn"]
    seat = defender if who == "defender" else 1 - defender
    resign_and_check(players, seat)


def test_the_computer_never_resigns_and_a_person_may_resign_against_it(client, new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer"}]})
    r = client.post(f"/matches/{data['id']}/actions", json={"type": "resign"}, headers=players[0].headers)
    assert r.status_code == 200 and r.json["view"]["winner"] == 1 and r.json["view"]["end_reason"] == "resigned"


# --- clocks -----------------------------------------------------------------------------------------


def test_a_timeout_is_claimed_only_once_the_deadline_has_passed(client, clock):
    players = two_people(client, turn_seconds=30)
    view = players[0].view()
    mover, waiter = view["turn"], 1 - view["turn"]
    assert view["deadline"] == "2026-12-01T09:00:30.000+00:00"  # 30 s from the deal, at the join
    assert players[waiter].view()["deadline"] == view["deadline"]  # both seats see it

    clock.advance(29.999)
    assert {"type": "claim_timeout"} not in players[waiter].view()["legal_actions"]
    early = players[waiter].act({"type": "claim_timeout"})
    assert (early.status_code, early.json["rule"]) == (409, "not_timed_out")
    assert players[mover].act({"type": "claim_timeout"}).json["rule"] == "not_their_turn"

    clock.advance(0.001)  # exactly at the deadline
    assert {"type": "claim_timeout"} in players[waiter].view()["legal_actions"]
    assert {"type": "claim_timeout"} not in players[mover].view()["legal_actions"]
    r = players[waiter].act({"type": "claim_timeout"})
    assert r.status_code == 200, r.json
    assert r.json["events"][0]["data"] == {
        "winner": waiter, "scores": [0, 0], "reason": "timeout", "seat": waiter, "at": "2026-12-01T09:00:30.000+00:00"
    }
    assert players[mover].view()["end_reason"] == "timeout"


def test_each_move_restarts_the_clock_of_the_seat_it_hands_the_turn_to(client, clock):
    players = two_people(client, turn_seconds=30)
    mover = players[0].view()["turn"]
    clock.advance(20)
    players[mover].act({"type": "draw", "source": "stock"})
    view = players[mover].view()
    assert view["deadline"] == (START + timedelta(seconds=30)).isoformat(timespec="milliseconds")  # still its turn
    clock.advance(5)
    discard = next(a for a in plays(view) if a["type"] == "discard")
    answer = players[mover].act(discard).json
    assert [e["data"]["at"] for e in answer["events"]] == ["2026-12-01T09:00:25.000+00:00"]
    assert answer["view"]["deadline"] == "2026-12-01T09:00:55.000+00:00"  # 30 s from the discard
    clock.advance(29)
    assert players[mover].act({"type": "claim_timeout"}).json["rule"] == "not_timed_out"


def test_without_a_clock_there_is_no_deadline_and_nothing_to_claim(client, clock):
    players = two_people(client)
    view = players[0].view()
    assert view["deadline"] is None and view["rules"]["turn_seconds"] is None
    clock.advance(10**7)
    waiter = 1 - view["turn"]
    assert players[waiter].act({"type": "claim_timeout"}).json["rule"] == "no_clock"
    events = client.get(f"/matches/{view['match_id']}/events", headers=players[0].headers).json["events"]
    assert not any("at" in e["data"] for e in events)  # no time in the record of an unclocked match


def test_the_computer_never_times_out(client, clock, new_match):
    data, players = new_match({"rules": {"turn_seconds": 30}, "seats": [{"name": "Ann"}, {"kind": "computer"}]})
    clock.advance(3600)
    r = players[0].act({"type": "claim_timeout"})
    assert r.status_code == 409 and r.json["rule"] in ("not_their_turn", "computer_never_times_out")


# --- who is there -----------------------------------------------------------------------------------


def test_the_view_shows_whether_the_opponent_follows_the_match_live(app, client):
    players = two_people(client)
    assert players[0].view()["opponent"]["connected"] is False
    match_id = players[0].match_id
    stream = app.test_client().get(f"/matches/{match_id}/stream?wait=30", headers=players[1].headers, buffered=False)
    assert stream.status_code == 200
    assert players[0].view()["opponent"]["connected"] is True
    assert players[1].view()["opponent"]["connected"] is False  # Ann follows nothing
    stream.close()
    assert players[0].view()["opponent"]["connected"] is False


def test_a_move_stored_before_the_database_fails_is_answered_200_not_503(app, client):
    import psycopg

    created, ann = invite(client)
    bob, _ = joined(client, created)
    players = {0: ann, 1: bob}
    mover = next(p for p in players.values() if plays(p.view()))
    before = mover.view()
    version = before["version"]
    presence = app.extensions["gin_rummy"].presence

    def down(conn, match_id):  # the database goes away right after the move is stored
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    presence.seats, kept = down, presence.seats
    try:
        r = mover.act(greedy_action_on_view(before))
    finally:
        presence.seats = kept
    assert r.status_code == 200 and r.json["view"]["version"] > version
    assert r.json["view"]["opponent"]["connected"] is False  # not known this once
    assert mover.view()["version"] == r.json["view"]["version"]


def test_a_move_answered_after_the_database_failed_reads_the_same_as_its_retry(store, monkeypatch):
    import psycopg

    from service.application import views as api_matches

    made = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    created = made.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer"}]}).json
    # Another instance, which has not read this match yet, takes the move.
    client = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    ann = Player(client, created["id"], created["seats"][0]["token"])
    action = greedy_action_on_view(made.get(f"/matches/{created['id']}", headers=ann.headers).json)
    stored = []
    append, read = type(store).append, api_matches.provenance_of

    def appended(self, *args, **kwargs):
        stored.append(True)
        return append(self, *args, **kwargs)

    def provenance_of(conn, match_id):  # the database goes away once the move is stored
        if stored:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return read(conn, match_id)

    monkeypatch.setattr(type(store), "append", appended)
    monkeypatch.setattr(api_matches, "provenance_of", provenance_of)
    first = ann.act(action, **{"Idempotency-Key": "k-1"})
    monkeypatch.undo()
    assert first.status_code == 200 and first.json["view"]["provenance"]["origin"] == "played", first.json
    retry = ann.act(action, **{"Idempotency-Key": "k-1"})
    assert retry.headers.get("Idempotent-Replayed") == "true" and retry.json == first.json


def test_a_computer_opponent_is_neither_connected_nor_away(new_match):
    _, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer"}]})
    assert players[0].view()["opponent"]["connected"] is None


# --- the leak walk, online ------------------------------------------------------------------------


def test_no_answer_of_online_play_holds_a_hidden_card_an_invite_code_or_another_token(store, clock):
    from .test_full_matches import cards_in
    from .test_hygiene import Recorder

    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED})
    recorder = Recorder()
    recorder.install(app)
    client = app.test_client()
    created, ann = invite(client, public=True, single_hand=False, rules={"turn_seconds": 60})
    code = created["invite"]["code"]
    bob, answer = joined(client, created)
    players = {0: ann, 1: bob}
    tokens = [created["seats"][0]["token"], answer["token"]]
    issued = {created["id"]: len(recorder.responses)}  # responses so far issued the secrets
    secrets_ = [code, *tokens, *(t.split(".")[-1] for t in tokens)]
    mid = created["id"]
    op = bearer(OPERATOR)
    checked = 0
    for _ in range(40):
        truth = client.get(f"/matches/{mid}", headers=op).json
        if truth["status"] == "finished":
            break
        hidden = truth["hidden"]
        for seat, player in players.items():
            view = player.view()
            secret = set(hidden["stock"]) | (set(hidden["hands"][1 - seat]) - set(view["opponent"]["known_cards"]))
            if view["phase"] == "defense":
                secret -= cards_in(view["knock"])
            feed = client.get(f"/matches/{mid}/events", headers=player.headers).json["events"]
            stream = client.get(f"/matches/{mid}/stream?wait=0", headers=player.headers)
            text = stream.get_data(as_text=True)
            stream.close()
            start = max(i for i, e in enumerate(feed) if e["type"] == "hand_dealt")
            current = feed[start:]
            streamed = [line for line in text.splitlines() if line.startswith("data: ")]
            assert len(streamed) == len(feed)
            live = {k: v for k, v in view.items() if k != "last_hand"}
            assert not cards_in(live) & secret
            if not any(e["type"] == "hand_ended" for e in current):
                assert not cards_in(current) & secret
                assert not cards_in([__import__("json").loads(line[6:]) for line in streamed[start:]]) & secret
            for secret_text in secrets_:
                assert secret_text not in text
            checked += 1
        client.get("/lobby")
        play_one_turn(players)
        clock.advance(1)
    assert checked >= 40
    assert bob.act({"type": "resign"}).status_code == 200
    first = client.post(f"/matches/{mid}/rematch", headers=ann.headers).json
    second = client.post(f"/matches/{mid}/rematch", headers=bob.headers).json
    record = client.get(f"/matches/{mid}/export", headers=ann.headers).get_data(as_text=True)
    for secret_text in secrets_:
        assert secret_text not in record  # events never hold a code or a token
    # No answer but the one that issued it holds a code or a token; a rematch answer
    # holds only its caller's new token.
    new_tokens = [first["token"], second["token"]]
    for i, (method, path, auth, _status, body) in enumerate(recorder.responses):
        if i < issued[mid]:
            continue
        for secret_text in secrets_:
            assert secret_text not in body, (method, path)
        if path.endswith("/rematch"):
            own = first["token"] if ann.headers["Authorization"] == auth else second["token"]
            assert [t for t in new_tokens if t in body] == [own]
        else:
            assert not any(t in body for t in new_tokens), (method, path)
