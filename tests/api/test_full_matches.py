"""Complete matches through HTTP under every preset, every refusal, and no leaks."""

import re

import pytest

from service.engine import DECK, PRESETS
from tests.support.matches import greedy_action_on_view, play_to_the_end

from .conftest import bearer

PRESET_NAMES = sorted(PRESETS)


def cards_in(obj) -> set:
    if isinstance(obj, str):
        return {obj} if obj in DECK else set()
    if isinstance(obj, dict):
        return set().union(set(), *(cards_in(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(set(), *(cards_in(v) for v in obj))
    return set()


NAMED_CARD = re.compile(r"(10|[2-9AJQK])([♣♦♥♠])")


def named_cards(text: str) -> set:
    """The cards a hint's reason names as known to the seat: every card it writes (7♠,
    10♦), except those it names as still live (not seen by anyone at the table)."""
    named = set()
    for clause in text.split("; "):
        if "still live" in clause:
            clause = clause.split(":")[0]
        for rank, suit in NAMED_CARD.findall(clause):
            named.add(("T" if rank == "10" else rank) + "CDHS"["♣♦♥♠".index(suit)])
    return named


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_person_plays_a_complete_match_against_the_computer(new_match, preset):
    _, players = new_match({"rules": {"preset": preset, "target_score": 30}, "seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]})
    final = play_to_the_end(players)
    assert final["status"] == "finished"
    if final["games"]:  # Hollywood: the winner won more of the three games (each decided at 30)
        assert all(g["winner"] is not None and max(g["scores"]) >= 30 for g in final["games"])
        won = [sum(1 for g in final["games"] if g["winner"] == seat) for seat in (0, 1)]
        assert final["winner"] == won.index(max(won)) and max(won) >= 2
    else:
        assert max(final["scores"]) >= 30
        assert final["winner"] == final["scores"].index(max(final["scores"]))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_two_people_on_one_device_play_a_complete_match(new_match, preset):
    _, players = new_match({"rules": {"preset": preset, "target_score": 25}, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    final = play_to_the_end(players)
    assert final["status"] == "finished" and max(final["scores"]) >= 25


def test_every_refusal_is_a_problem_document_and_writes_nothing(client, new_match, operator):
    data, players = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    url = f"/matches/{data['id']}/actions"
    ann, bob = players[0].headers, players[1].headers
    version = data["version"]
    hand = players[0].view()["hand"]
    json_headers = {**ann, "Content-Type": "application/json"}
    cases = [
        ("no token", dict(json={"type": "draw", "source": "stock"}), 401, "unauthorized"),
        ("wrong token", dict(json={"type": "draw", "source": "stock"}, headers=bearer("gr1.0000.x")), 401, "invalid_token"),
        ("the other seat's turn", dict(json={"type": "draw", "source": "stock"}, headers=bob), 409, "illegal_move"),
        ("discard before drawing", dict(json={"type": "discard", "card": hand[0]}, headers=ann), 409, "illegal_move"),
        ("stale version", dict(json={"type": "draw", "source": "stock"}, headers={**ann, "If-Match": '"1"'}), 412, "version_mismatch"),
        ("malformed JSON", dict(data="{", headers=json_headers), 400, "malformed_json"),
        ("unknown card code", dict(json={"type": "discard", "card": "1X"}, headers=ann), 422, "invalid_request"),
        ("wrong type", dict(json={"type": "draw", "source": 5}, headers=ann), 422, "invalid_request"),
        ("unknown action", dict(json={"type": "steal"}, headers=ann), 422, "invalid_request"),
        ("extra field", dict(json={"type": "pass", "card": "AS"}, headers=ann), 422, "invalid_request"),
        ("oversized body", dict(data='{"type": "pass", "x": "' + "y" * 70_000 + '"}', headers=json_headers), 413, "body_too_large"),
        ("not JSON", dict(data="type=pass", headers={**ann, "Content-Type": "text/plain"}), 415, "unsupported_media_type"),
    ]
    for name, kwargs, status, code in cases:
        r = client.post(url, **kwargs)
        assert (r.status_code, r.mimetype, r.json["code"]) == (status, "application/problem+json", code), name
        assert r.json["status"] == status and r.json["detail"], name
    # Illegal moves once it is Ann's discard: each names its rule.
    drew = client.post(url, json={"type": "draw", "source": "stock"}, headers=ann)
    assert drew.status_code == 200
    version += 1
    # (A card Ann does not hold now: the one first picked may be the card she just drew.)
    not_held = next(c for c in DECK if c not in drew.json["view"]["hand"])
    for action, rule in [
        ({"type": "discard", "card": not_held}, "card_not_in_hand"),
        ({"type": "draw", "source": "stock"}, "wrong_phase"),
        ({"type": "gin", "card": hand[0]}, "not_gin"),
        ({"type": "defend"}, "wrong_phase"),
    ]:
        r = client.post(url, json=action, headers=ann)
        assert (r.status_code, r.json["rule"]) == (409, rule), (action, r.json)
    events = client.get(f"/matches/{data['id']}/events", headers=operator).json["events"]
    assert len(events) == version  # nothing but the one legal draw was written


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_no_response_or_event_feed_holds_a_card_the_seat_cannot_know(client, new_match, operator, preset):
    # A whole match, not one hand: a greedy hand may end after a few turns.
    data, players = new_match({"rules": {"preset": preset}, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    mid = data["id"]
    checked = 0
    for _ in range(3000):
        truth = client.get(f"/matches/{mid}", headers=operator).json
        if truth["status"] == "finished" or checked > 60:
            break
        hidden = truth["hidden"]
        for seat, player in players.items():
            opponent_hand = set(hidden["hands"][1 - seat])
            view = player.view()
            secret = set(hidden["stock"]) | (opponent_hand - set(view["opponent"]["known_cards"]))
            if view["phase"] == "defense":
                secret -= cards_in(view["knock"])
            live = {k: v for k, v in view.items() if k != "last_hand"}
            assert not cards_in(live) & secret, (seat, cards_in(live) & secret)
            feed = client.get(f"/matches/{mid}/events", headers=player.headers).json["events"]
            start = max(i for i, e in enumerate(feed) if e["type"] == "hand_dealt")
            current = feed[start:]
            if not any(e["type"] == "hand_ended" for e in current):
                assert not cards_in(current) & secret, (seat, cards_in(current) & secret)
            checked += 1
        turn = truth["turn"]
        if turn is None:
            continue
        if truth["phase"] in ("upcard_offer", "draw", "discard"):
            # A hint names the seat's own cards, the pile and what the opponent showed only.
            view = players[turn].view()
            hint = client.get(f"/matches/{mid}/hint", headers=players[turn].headers)
            assert hint.status_code == 200, hint.json
            seen = set(view["hand"]) | set(view["discard_pile"]) | set(view["opponent"]["known_cards"])
            assert cards_in(hint.json["action"]) <= seen and named_cards(hint.json["reason"]) <= seen, hint.json
        r = players[turn].act(greedy_action_on_view(players[turn].view()))
        assert r.status_code == 200, r.json
        other = set(hidden["hands"][1 - turn]) - set(r.json["view"]["opponent"]["known_cards"])
        if r.json["view"]["phase"] not in ("awaiting_deal", "match_over", "defense") and r.json["view"]["hand_number"] == truth["hand_number"]:
            assert not cards_in(r.json["events"]) & (set(hidden["stock"]) - set(r.json["view"]["hand"]) - set(r.json["view"]["discard_pile"]))
            assert not cards_in({k: v for k, v in r.json["view"].items() if k != "last_hand"}) & other
    assert checked > 60
