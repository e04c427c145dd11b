"""Replaying recorded events: every legal match replays, every tampering is caught
at its event with the rule it breaks."""

import copy
import hashlib

import pytest

from service.engine import PRESETS, deadwood
from service.records.format import build_record, digest_of
from service.records.hands import audit, hand_detail, split_hands
from service.records.records import RecordError, check_record
from service.records.replay import ReplayError, replay
from service.store.upcasting import current_version
from tests.factories import MatchFactory, StartMatchFactory


def recorded(match):
    """A played factory match as record events (seq, schema_version, recorded_at)."""
    return [
        {"seq": i + 1, "type": e.type, "schema_version": current_version(e.type),
         "recorded_at": "2026-11-30T12:00:00+00:00", "data": copy.deepcopy(e.data)}
        for i, e in enumerate(match.events)
    ]


def record_of(match):
    return build_record(str(match.match_id), match.state, recorded(match))


@pytest.fixture(params=sorted(PRESETS))
def match(request):
    return MatchFactory.build(start=StartMatchFactory(rules=(
        # Random play almost never goes Gin: Straight Gin's match is played with knocks.
        {"preset": "straight", "knock_limit": 10, "target_score": 40} if request.param == "straight" else {"preset": request.param, "target_score": 40}
    )))


def first(events, etype, where=lambda e: True):
    return next(i for i, e in enumerate(events) if e["type"] == etype and where(e))


def refused(events, rule):
    with pytest.raises(ReplayError) as err:
        replay(events)
    assert err.value.rule == rule, err.value
    return err.value


def test_every_event_of_a_played_match_replays_to_the_same_state(match):
    assert replay(recorded(match)).state == match.state
    assert check_record(record_of(match))[2] == match.state


def test_a_drawn_card_that_is_not_on_top_is_refused_at_its_event(match):
    events = recorded(match)
    i = first(events, "card_drawn", lambda e: e["data"]["source"] == "stock")
    hand_cards = set(events[1]["data"]["deck"][:20])
    events[i]["data"]["card"] = next(iter(hand_cards))
    assert refused(events, "card_not_on_top").index == i


def test_discarding_a_card_not_in_the_hand_is_refused(match):
    events = recorded(match)
    i = first(events, "card_discarded")
    seat = events[i]["data"]["seat"]
    opponent_card = events[1]["data"]["deck"][10 if events[1]["data"]["starter"] == seat else 0]
    events[i]["data"]["card"] = opponent_card
    assert refused(events, "card_not_in_hand").index == i


def test_a_knock_over_the_limit_is_refused(match):
    events = recorded(match)
    # Turn the first plain discard into a knock: random hands are far over 10.
    i = first(events, "card_discarded")
    d = events[i]["data"]
    events[i] = {**events[i], "type": "knocked", "data": {**d, "gin": False, "melds": [], "deadwood_cards": [], "deadwood": 5}}
    assert refused(events, "knock_limit").index == i


def test_a_deck_that_is_not_52_distinct_cards_is_refused(match):
    events = recorded(match)
    deck = events[1]["data"]["deck"]
    deck[5] = deck[6]
    err = refused(events, "invalid_deck")
    assert err.index == 1


def test_a_score_that_does_not_follow_from_the_play_is_refused(match):
    events = recorded(match)
    i = first(events, "hand_ended", lambda e: e["data"]["winner"] is not None)
    events[i]["data"]["points"] += 1
    assert refused(events, "score_mismatch").index == i


def test_an_unknown_rules_parameter_is_refused_at_the_first_event(match):
    events = recorded(match)
    events[0]["data"]["rules"]["big_gin"] = 31
    assert refused(events, "invalid_rules").index == 0


def test_an_event_nobody_could_cause_is_refused(match):
    events = recorded(match)
    i = first(events, "hand_ended")
    events.insert(3, copy.deepcopy(events[i]))
    assert refused(events, "unexpected_event").index == 3


def test_a_wrong_digest_refuses_the_record():
    match = MatchFactory.build()
    record = record_of(match)
    record["digest"]["value"] = "0" * 64
    with pytest.raises(RecordError) as err:
        check_record(record)
    assert err.value.code == "digest_mismatch"


def test_a_tampered_record_with_a_matching_digest_is_still_caught_by_the_replay():
    match = MatchFactory.build()
    record = record_of(match)
    i = first(record["events"], "hand_ended", lambda e: e["data"]["winner"] is not None)
    record["events"][i]["data"]["points"] += 10
    record["digest"]["value"] = digest_of(record["events"])
    with pytest.raises(RecordError) as err:
        check_record(record)
    assert (err.value.code, err.value.index, err.value.rule) == ("illegal_event", i, "score_mismatch")


def test_a_record_that_breaks_its_schema_names_the_place():
    record = record_of(MatchFactory.build())
    record["events"][2]["data"]["seat"] = 7
    with pytest.raises(RecordError) as err:
        check_record(record)
    assert err.value.code == "invalid_record" and err.value.index == 2 and "events/2" in str(err.value)


def test_every_deal_commitment_checks_out_by_hand():
    match = MatchFactory.build()
    for hand in split_hands(recorded(match)):
        dealt = hand[0]["data"]
        by_hand = hashlib.sha256(f"{dealt['salt']}:{','.join(dealt['deck'])}".encode()).hexdigest()
        assert by_hand == dealt["commitment"]
        ended = next(e for e in hand if e["type"] == "hand_ended")
        assert ended["data"]["deck"] == dealt["deck"] and ended["data"]["salt"] == dealt["salt"]


def test_the_audit_recomputes_every_hand_and_reports_a_mismatch():
    match = MatchFactory.build(start=StartMatchFactory(rules={"target_score": 40}))
    events = recorded(match)
    report = audit(events)
    assert report["ok"] and len(report["hands"]) == match.state.hand_number
    assert all(h["commitment_valid"] for h in report["hands"])
    i = first(events, "hand_ended", lambda e: e["data"]["winner"] is not None)
    events[i]["data"]["points"] += 3
    bad = audit(events)
    assert not bad["ok"] and bad["problems"][0]["rule"] == "score_mismatch" and bad["problems"][0]["seq"] == i + 1


def test_a_hand_in_full_shows_deal_plays_knock_arrangements_and_score():
    match = MatchFactory.build(start=StartMatchFactory(rules={"single_hand": True}))
    events = recorded(match)
    (hand,) = split_hands(events)
    detail = hand_detail(hand)
    assert detail["status"] == "over" and detail["deal"]["commitment_valid"]
    deal = detail["deal"]
    assert sorted(deal["hands"][0] + deal["hands"][1] + [deal["upcard"]] + deal["stock"]) == sorted(events[1]["data"]["deck"])
    draws = [p for p in detail["plays"] if p["action"] == "draw"]
    assert draws and all("card" in p for p in draws)
    if detail["knock"]:
        k = detail["knock"]
        assert deadwood(k["deadwood_cards"]) == k["deadwood"]


def test_a_record_from_before_the_best_layout_replays_to_its_own_result():
    """Before the automatic layout weighed the defender's hand, it was best_melds's:
    A-2-3S (4S laid off, knocker +27) where the set of twos now leaves nothing to lay
    off (+31).  The old knock named no melds; its record still replays as played."""
    from tests.engine.scenarios import Table

    knocker = ["AH", "AS", "2S", "3S", "2H", "2D", "4C", "5C", "6C", "7C"]
    defender = ["3D", "3H", "4S", "5D", "6D", "6S", "9C", "TS", "JS", "QS"]
    t = Table({"preset": "classic", "single_hand": True})
    t.deal(knocker, defender, "KH", ["KD"])
    t.seat(0, "draw", source="stock")
    automatic = [e.data for e in t.do({"type": "knock", "seat": 0, "card": "KD"}) if e.type == "hand_ended"]
    assert automatic[0]["points"] == 31
    # What the earlier service recorded for the same knock without melds: best_melds's layout.
    old = Table({"preset": "classic", "single_hand": True})
    old.deal(knocker, defender, "KH", ["KD"])
    old.seat(0, "draw", source="stock")
    old.seat(0, "knock", card="KD", melds=[["4C", "5C", "6C", "7C"], ["AS", "2S", "3S"]])
    events = [
        {"seq": i + 1, "type": e.type, "schema_version": current_version(e.type),
         "recorded_at": "2026-11-30T12:00:00+00:00", "data": copy.deepcopy(e.data)}
        for i, e in enumerate(old.events)
    ]
    knocked = next(e["data"] for e in events if e["type"] == "knocked")
    assert knocked["melds"] == [["4C", "5C", "6C", "7C"], ["AS", "2S", "3S"]]
    state = replay(events).state
    assert state == old.state
    assert (state.last_hand["result"], state.last_hand["winner"], state.last_hand["points"]) == ("knock", 0, 27)
    record = build_record("00000000-0000-4000-8000-000000000027", old.state, events)
    assert check_record(record)[2] == old.state


@pytest.mark.parametrize("starter", ["seat_0", "loser"])
def test_a_match_under_another_starter_rule_replays_and_a_changed_starter_is_refused(starter):
    match = MatchFactory.build(start=StartMatchFactory(rules={"preset": "classic", "target_score": 60, "starter": starter}))
    events = recorded(match)
    assert events[0]["data"]["rules"]["starter"] == starter
    assert replay(events).state == match.state
    assert check_record(record_of(match))[2] == match.state
    deals = [i for i, e in enumerate(events) if e["type"] == "hand_dealt"]
    assert len(deals) >= 3
    if starter == "seat_0":
        assert all(events[i]["data"]["starter"] == 0 for i in deals)
    else:
        starters = [events[i]["data"]["starter"] for i in deals]
        winners = [e["data"]["winner"] for e in events if e["type"] == "hand_ended"]
        for k in range(1, len(starters)):  # the loser of hand k starts hand k + 1; after a dead hand, the same seat
            assert starters[k] == (starters[k - 1] if winners[k - 1] is None else 1 - winners[k - 1])
    i = deals[1]
    events[i]["data"]["starter"] = 1 - events[i]["data"]["starter"]
    assert refused(events, "starter").index == i
