"""Creating, viewing and playing matches through the REST API."""

import json
import threading

import pytest

from tests.support.matches import play_to_the_end

from .conftest import bearer

PROBLEM = "application/problem+json"


def test_an_empty_body_creates_a_classic_match_against_the_computer(client):
    r = client.post("/matches", json={})
    assert r.status_code == 201
    body = r.json
    assert r.headers["ETag"] == f'"{body["version"]}"'
    assert r.headers["Location"].endswith(f"/matches/{body['id']}")
    assert body["rules"]["preset"] == "classic"
    human, computer = body["seats"]
    assert human["kind"] == "human" and human["token"]
    assert computer == {"seat": 1, "name": "Computer (medium)", "kind": "computer", "level": "medium", "player": None, "token": None}
    view = body["view"]
    assert view["seat"] == 0 and len(view["hand"]) == 10 and view["phase"] == "draw"
    assert view["legal_actions"] == [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}, {"type": "resign"}]


def test_a_full_body_sets_rules_single_hand_and_seats(client):
    body = {
        "rules": {"preset": "bonus-20-10", "gin_bonus": 30},
        "single_hand": True,
        "seats": [{"name": "Ann", "kind": "human"}, {"kind": "computer", "level": "hard"}],
    }
    r = client.post("/matches", json=body)
    assert r.status_code == 201, r.json
    rules = r.json["rules"]
    assert (rules["preset"], rules["gin_bonus"], rules["undercut_bonus"], rules["single_hand"]) == ("bonus-20-10", 30, 10, True)
    assert r.json["seats"][0]["name"] == "Ann" and r.json["seats"][1]["level"] == "hard"
    assert r.json["view"]["phase"] == "upcard_offer"


def test_bad_input_gets_a_problem_document_naming_the_field(client):
    cases = [
        ({"rules": {"knock_limit": 11}}, "rules"),
        ({"rules": {"preset": "gulf"}}, "rules"),
        ({"colour": "red"}, "colour"),
        ({"seats": [{"kind": "human"}]}, "seats"),
        ({"seats": [{"kind": "human", "level": "hard"}, {"kind": "computer"}]}, "seats"),
        ({"single_hand": "yes"}, "single_hand"),
    ]
    for body, field in cases:
        r = client.post("/matches", json=body)
        assert r.status_code == 422, body
        assert r.mimetype == PROBLEM
        assert r.json["code"] == "invalid_request" and field in r.json["errors"], r.json


def test_at_least_one_seat_must_be_human(client):
    r = client.post("/matches", json={"seats": [{"kind": "computer"}, {"kind": "computer"}]})
    assert r.status_code == 422 and r.json["errors"] == {"seats": ["at least one human seat"]}


def test_malformed_and_non_json_bodies_are_refused_cleanly(client):
    r = client.post("/matches", data="{not json", content_type="application/json")
    assert (r.status_code, r.json["code"]) == (400, "malformed_json")
    r = client.post("/matches", data="x=1", content_type="application/x-www-form-urlencoded")
    assert (r.status_code, r.json["code"]) == (415, "unsupported_media_type")
    r = client.post("/matches", json=[1, 2])
    assert r.status_code == 422
    r = client.post("/matches", data=json.dumps({"seats": ["x" * 100_000]}), content_type="application/json")
    assert r.status_code == 413 and r.mimetype == PROBLEM


def test_reading_a_match_needs_its_seat_token_or_the_operator(client, new_match, operator):
    data, players = new_match()
    url = f"/matches/{data['id']}"
    r = client.get(url)
    assert r.status_code == 401 and r.mimetype == PROBLEM and "Bearer" in r.headers["WWW-Authenticate"]
    assert client.get(url, headers=bearer("nonsense")).status_code == 401
    other, other_players = new_match()
    r = client.get(url, headers=other_players[0].headers)
    assert (r.status_code, r.json["code"]) == (403, "forbidden")
    r = client.get(url, headers=operator)
    assert r.status_code == 200 and len(r.json["hidden"]["stock"]) == r.json["stock_count"]
    mine = players[0].view()
    assert "hidden" not in mine and mine["opponent"]["card_count"] == 10


def test_an_unknown_match_is_404(client, operator):
    assert client.get("/matches/00000000-0000-0000-0000-000000000000", headers=operator).status_code == 404
    assert client.get("/matches/not-a-uuid", headers=operator).json["code"] == "match_not_found"


def test_an_action_answers_with_the_new_view_and_every_event_including_the_computers_reply(new_match):
    data, players = new_match({"rules": {"preset": "classic"}})
    me = players[0]
    assert me.view()["discard_deadwood"] is None  # only in the seat's own discard step
    r = me.act({"type": "draw", "source": "stock"})
    assert r.status_code == 200, r.json
    assert r.headers["ETag"] == f'"{r.json["view"]["version"]}"'
    assert [e["type"] for e in r.json["events"]] == ["card_drawn"]
    assert r.json["events"][0]["data"]["card"] in r.json["view"]["hand"]
    previews = r.json["view"]["discard_deadwood"]
    assert set(previews) == set(r.json["view"]["hand"])
    from service.engine import deadwood

    hand = r.json["view"]["hand"]
    assert all(previews[c] == deadwood([x for x in hand if x != c]) for c in hand)
    discard = next(a for a in r.json["view"]["legal_actions"] if a["type"] == "discard")
    r = me.act(discard)
    assert r.status_code == 200, r.json
    types = [e["type"] for e in r.json["events"]]
    assert types[0] == "card_discarded" and "card_drawn" in types[1:]  # the computer played at once
    view = r.json["view"]
    assert view["turn"] == 0 or view["phase"] in ("awaiting_deal", "match_over")
    computer_draw = next(e for e in r.json["events"] if e["type"] == "card_drawn")
    if computer_draw["data"]["source"] == "stock":
        assert "card" not in computer_draw["data"]  # the computer's stock card stays hidden


def test_an_illegal_move_is_409_naming_the_rule(new_match):
    _, players = new_match()
    r = players[0].act({"type": "discard", "card": "AS"})
    assert r.status_code == 409 and r.mimetype == PROBLEM
    assert (r.json["code"], r.json["rule"]) == ("illegal_move", "wrong_phase")
    r = players[0].act({"type": "draw"})
    assert r.status_code == 422 and "source" in r.json["errors"]
    r = players[0].act({"type": "discard", "card": "10D"})
    assert r.status_code == 422 and "card" in r.json["errors"]


def test_a_stale_if_match_is_412_and_nothing_is_written(new_match):
    data, players = new_match()
    me = players[0]
    version = data["version"]
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{version + 5}"'})
    assert r.status_code == 412 and r.json["current_version"] == version and r.headers["ETag"] == f'"{version}"'
    assert me.view()["version"] == version
    r = me.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{version}"'})
    assert r.status_code == 200


def test_a_retried_action_with_the_same_idempotency_key_acts_once(new_match):
    _, players = new_match()
    me = players[0]
    first = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k-1"})
    again = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k-1"})
    assert first.status_code == again.status_code == 200
    assert again.json == first.json and again.headers["Idempotent-Replayed"] == "true"
    assert me.view()["version"] == first.json["view"]["version"]  # drew once
    other = me.act({"type": "draw", "source": "discard"}, **{"Idempotency-Key": "k-1"})
    assert (other.status_code, other.json["code"]) == (422, "idempotency_key_reused")


def test_a_retry_whose_action_is_legal_again_gets_the_first_answer_and_acts_once(new_match):
    _, players = new_match()  # against the computer: my draw comes round again
    me = players[0]
    first = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k-2"})
    assert first.status_code == 200
    hand = first.json["view"]["hand"]
    discard = me.act({"type": "discard", "card": hand[0]})
    assert discard.status_code == 200
    view = me.view()
    if {"type": "draw", "source": "stock"} not in view["legal_actions"]:
        pytest.skip("the hand ended with the computer's turn")  # a knock or Gin at once
    again = me.act({"type": "draw", "source": "stock"}, **{"Idempotency-Key": "k-2"})
    assert (again.status_code, again.json) == (200, first.json)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert me.view()["version"] == view["version"]  # the retry drew nothing


def test_two_clients_racing_on_one_match_never_double_a_move(client, new_match):
    data, players = new_match({"seats": [{"kind": "human"}, {"kind": "human"}]})
    me = players[0]
    results = []
    barrier = threading.Barrier(6)

    def go(i):
        barrier.wait()
        results.append(me.act({"type": "draw", "source": "stock"}, **{"If-Match": f'"{data["version"]}"'}).status_code)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results).count(200) == 1 and all(code in (200, 409, 412) for code in results), results
    view = me.view()
    assert len(view["hand"]) == 11 and view["version"] == data["version"] + 1


def test_the_operator_reads_but_never_acts(new_match, client, operator):
    data, _ = new_match()
    r = client.post(f"/matches/{data['id']}/actions", json={"type": "draw", "source": "stock"}, headers=operator)
    assert r.status_code == 403


def test_a_seat_token_never_acts_for_the_other_seat(new_match):
    data, players = new_match({"seats": [{"kind": "human"}, {"kind": "human"}]})
    r = players[1].act({"type": "draw", "source": "stock"})
    assert (r.status_code, r.json["rule"]) == (409, "not_your_turn")


def test_a_single_hand_against_the_computer_plays_to_the_end(new_match):
    data, players = new_match({"single_hand": True, "rules": {"preset": "upcard-offer"}})
    final = play_to_the_end(players)
    assert final["phase"] == "match_over" and final["last_hand"]["result"] in ("knock", "undercut", "gin", "dead")
    assert final["legal_actions"] == []


def test_two_people_on_one_device_play_a_hand_with_two_tokens(new_match):
    data, players = new_match({"single_hand": True, "seats": [{"name": "Ann"}, {"name": "Bob"}], "rules": {"preset": "bonus-20-10"}})
    assert set(players) == {0, 1}
    final = play_to_the_end(players)
    assert final["status"] == "finished"


def test_the_event_feed_is_redacted_for_each_seat(client, new_match, operator):
    data, players = new_match({"seats": [{"kind": "human"}, {"kind": "human"}]})
    players[0].act({"type": "draw", "source": "stock"})
    url = f"/matches/{data['id']}/events"
    mine = client.get(url, headers=players[0].headers).json["events"]
    theirs = client.get(url, headers=players[1].headers).json["events"]
    full = client.get(url, headers=operator).json["events"]
    assert [e["type"] for e in mine] == ["match_started", "hand_dealt", "card_drawn"]
    assert "deck" in full[1]["data"] and "deck" not in mine[1]["data"] and "salt" not in mine[1]["data"]
    assert mine[1]["data"]["cards"] != theirs[1]["data"]["cards"]
    assert mine[2]["data"]["card"] == full[2]["data"]["card"] and "card" not in theirs[2]["data"]
    after = client.get(url + "?after=2", headers=players[1].headers).json
    assert [e["seq"] for e in after["events"]] == [3] and after["version"] == 3
    assert client.get(url + "?after=-1", headers=operator).status_code == 422


def test_the_live_stream_sends_events_as_server_sent_events(client, new_match):
    data, players = new_match()
    r = client.get(f"/matches/{data['id']}/stream?wait=0", headers=players[0].headers)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    text = r.get_data(as_text=True)
    assert "event: match_started" in text and "id: 2\nevent: hand_dealt" in text
    r = client.get(f"/matches/{data['id']}/stream?wait=0", headers={**players[0].headers, "Last-Event-ID": "1"})
    assert "match_started" not in r.get_data(as_text=True)


def test_the_list_shows_the_operator_everything_and_a_seat_its_own_match(client, new_match, operator):
    made = [new_match()[0]["id"] for _ in range(3)]
    _, players = new_match()
    page = client.get("/matches?limit=2", headers=operator).json
    assert len(page["items"]) == 2 and page["next_cursor"] == "2"
    ids, cursor = {m["id"] for m in page["items"]}, page["next_cursor"]
    while cursor is not None:  # to the last page, however many matches other tests made
        rest = client.get(f"/matches?limit=100&cursor={cursor}", headers=operator).json
        ids |= {m["id"] for m in rest["items"]}
        cursor = rest["next_cursor"]
    assert set(made) <= ids and len(rest["items"]) <= 100
    own = client.get("/matches", headers=players[0].headers).json["items"]
    assert len(own) == 1 and own[0]["id"] == players[0].match_id and own[0]["status"] == "active"
    assert client.get("/matches?status=finished", headers=players[0].headers).json["items"] == []
    assert client.get("/matches?limit=1000", headers=operator).status_code == 422


def test_tokens_never_reach_event_data(client, new_match, operator):
    data, players = new_match({"seats": [{"kind": "human"}, {"kind": "human"}]})
    tokens = [s["token"] for s in data["seats"]]
    events = client.get(f"/matches/{data['id']}/events", headers=operator).get_data(as_text=True)
    assert not any(t in events or t.split(".")[-1] in events for t in tokens)


def test_the_computer_sees_its_seats_redacted_history_of_the_current_hand(new_match, monkeypatch):
    from service import bots

    seen = []
    real = bots.choose_action

    def spy(view, history, level, rng):
        seen.append((view, history))
        return real(view, history, level, rng)

    monkeypatch.setattr(bots, "choose_action", spy)
    _, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]})
    me = players[0]
    for _ in range(3):  # three of Ann's turns, each answered by the computer
        me.act({"type": "draw", "source": "stock"})
        view = me.view()
        if view["phase"] != "discard":
            break
        me.act({"type": "discard", "card": min(view["discard_deadwood"], key=view["discard_deadwood"].get)})
    assert seen
    for view, history in seen:
        seqs = [e["seq"] for e in history]
        assert history[0]["type"] == "hand_dealt" and history[0]["data"]["hand"] == view["hand_number"]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[-1] == view["version"]
        assert all("deck" not in e["data"] for e in history)
        assert all("card" not in e["data"] for e in history if e["type"] == "card_drawn" and e["data"]["seat"] == 0 and e["data"]["source"] == "stock")
