"""The coach through HTTP: hints (recorded, redacted for the other seat, off between two
players online, never rated), and the analysis of hands (who may see it, and that a
seat following every hint makes no mistake)."""

from __future__ import annotations

from .conftest import OPERATOR, Player, bearer, plays
from .test_ratings import face_off, guest, profile, resign

OP = bearer(OPERATOR)


def hint(player: Player):
    return player.client.get(f"/matches/{player.match_id}/hint", headers=player.headers)


def follow_hints(player: Player, hand: int) -> int:
    """Play seat ``player``'s every turn of ``hand`` by its hint; the number followed."""
    followed = 0
    while True:
        view = player.view()
        if view["hand_number"] != hand or view["status"] == "finished" or view["phase"] == "awaiting_deal":
            return followed
        if view["phase"] == "defense":
            assert player.act(plays(view)[0]).status_code == 200
            continue
        r = hint(player)
        assert r.status_code == 200, r.json
        assert r.json["action"] in view["legal_actions"] and r.json["reason"]
        assert player.act(r.json["action"]).status_code == 200
        followed += 1


def test_a_seat_that_follows_every_hint_makes_no_mistake_in_that_hand(client, new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "hard"}]})
    assert data["rules"]["hints"] is True  # on against the computer
    ann = players[0]
    hand = 1
    while follow_hints(ann, hand) < 3:  # a hand the computer ends at once says little
        hand += 1
        assert ann.view()["status"] != "finished"
    r = client.get(f"/matches/{data['id']}/hands/{hand}/analysis", headers=ann.headers)
    assert r.status_code == 200, r.json
    mine = [d for d in r.json["decisions"] if d["seat"] == 0]
    assert len(mine) >= 3
    assert all(d["cost"] == 0 and d["class"] == "good" and d["played"] == d["best"] for d in mine), mine
    assert r.json["accuracy"][0] == 100.0 and r.json["counts"][0]["mistake"] == r.json["counts"][0]["blunder"] == 0
    # The match's figures: the same hand, and its totals.
    match = client.get(f"/matches/{data['id']}/analysis", headers=ann.headers).json
    assert match["hands"][hand - 1]["hand"] == hand and match["hands"][hand - 1]["accuracy"] == r.json["accuracy"]


def test_a_hint_is_recorded_said_once_and_hidden_from_the_other_seat(client, new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    assert data["rules"]["hints"] is True  # two people on one device
    ann, bob = players[0], players[1]
    first = hint(ann)
    assert first.status_code == 200 and first.json["new"] is True
    again = hint(ann)
    assert again.json == {**first.json, "new": False}  # asked again: the same hint, no new event
    assert ann.view()["version"] == first.json["version"] == first.json["seq"]
    mine = client.get(f"/matches/{data['id']}/events", headers=ann.headers).json["events"][-1]
    theirs = client.get(f"/matches/{data['id']}/events", headers=bob.headers).json["events"][-1]
    assert mine["type"] == theirs["type"] == "hint_shown"
    assert mine["data"] == {"seat": 0, "action": first.json["action"], "reason": first.json["reason"]}
    assert theirs["data"] == {"seat": 0}
    # Not Bob's turn; the operator is not a seat.
    r = hint(bob)
    assert r.status_code == 409 and r.json["rule"] == "not_your_turn", r.json
    assert client.get(f"/matches/{data['id']}/hint", headers=OP).status_code == 403
    # The hint is a legal play: following it works.
    assert ann.act(first.json["action"]).status_code == 200


def test_hints_are_off_between_two_players_online_unless_the_rules_say_otherwise(client):
    (_, a), (_, b) = guest(client, "Ann"), guest(client, "Bob")
    mid = face_off(client, a, b)
    view = client.get(f"/matches/{mid}", headers=a).json
    assert view["rules"]["hints"] is False
    seat = a if view["turn"] == 0 else b
    r = client.get(f"/matches/{mid}/hint", headers=seat)
    assert r.status_code == 409 and r.json["rule"] == "hints_off", r.json
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}).json
    assert created["rules"]["hints"] is False  # a seat waits for a player to join
    r = client.post("/matches", json={"rules": {"hints": "yes"}})
    assert r.status_code == 422 and r.json["errors"]["rules"]["hints"], r.json


def test_a_match_with_a_hint_shown_is_never_rated(client):
    (ann, a), (bob, b) = guest(client, "Ann"), guest(client, "Bob")
    mid = face_off(client, a, b, rules={"hints": True})
    view = client.get(f"/matches/{mid}", headers=a).json
    to_play = a if view["turn"] == 0 else b
    assert client.get(f"/matches/{mid}/hint", headers=to_play).status_code == 200
    resign(client, mid, b)
    assert profile(client, ann) == (1500.0, 350.0, 0, 0) and profile(client, bob)[2:] == (0, 0)
    resign(client, face_off(client, a, b, rules={"hints": True}), b)  # hints allowed, none asked: rated
    assert profile(client, ann)[2:] == (1, 1)


def test_a_hand_being_played_is_analysed_for_the_operator_only(client, new_match):
    data, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "hard"}]})
    ann = players[0]
    view = ann.view()
    assert ann.act(plays(view)[0]).status_code == 200
    r = client.get(f"/matches/{data['id']}/hands/1/analysis", headers=ann.headers)
    assert r.status_code == 403 and r.json["code"] == "hidden_until_over", r.json
    r = client.get(f"/matches/{data['id']}/hands/1/analysis", headers=OP)
    assert r.status_code == 200 and r.json["over"] is False and r.json["decisions"], r.json
    assert client.get(f"/matches/{data['id']}/hands/2/analysis", headers=OP).json["code"] == "hand_not_found"
    assert client.get(f"/matches/{data['id']}/analysis", headers=ann.headers).json["hands"] == []
    assert [h["hand"] for h in client.get(f"/matches/{data['id']}/analysis", headers=OP).json["hands"]] == [1]
