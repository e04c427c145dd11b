"""The bots under the variants: the hand's knock limit (Oklahoma's upcard, Straight Gin's
0), Big Gin, and a doubled hand."""

from __future__ import annotations

import random

import pytest

from service.bots import LEVELS, choose_action
from service.bots.common import Options
from service.bots.hard import Hard
from service.bots.knowledge import read
from service.engine import State, deadwood, decide, fold, hand_history, seat_view
from service.engine.deals import shuffled_deck
from tests.support.arena import hand_events, play_match

from .helpers import SEATS, assert_legal, position

#: Seat 0's hand melds all eleven cards with the JH (A-2-3-4C, 5-6-7-8D, 9-10-JH).
BIG_GIN_HAND = ["AC", "2C", "3C", "4C", "5D", "6D", "7D", "8D", "9H", "TH"]
OTHER = ["KS", "QS", "2S", "4S", "6S", "8H", "2H", "KD", "QC", "9C"]
TAKE = {"type": "draw", "source": "discard", "seat": 0}


def test_under_straight_the_bots_never_knock_and_every_hand_ends_in_gin_big_gin_or_dead():
    ends: dict[str, int] = {}
    big_gins = [0]

    def check(state, seat, view, action):
        assert_legal(view, action)
        assert view["knock_limit"] == 0
        assert not any(a["type"] == "knock" for a in view["legal_actions"])
        assert action["type"] != "knock"
        if {"type": "big_gin"} in view["legal_actions"]:
            assert action == {"type": "big_gin"}, "Big Gin (31) pays more than Gin (25)"
            big_gins[0] += 1

    hands = 0
    i = 0
    while hands < 60:
        levels = (LEVELS[i % 3], LEVELS[(i + 1) % 3])
        record = play_match(levels, {"preset": "straight"}, f"straight-{i}", (i, i + 3), check=check)
        for hand in record.hands:
            ends[hand.result] = ends.get(hand.result, 0) + 1
        hands += len(record.hands)
        i += 1
    assert set(ends) <= {"gin", "dead"}, ends
    assert ends.get("gin", 0) > hands // 2


def single_hand(deck: list[str], rules: dict, levels: tuple[str, str], seed: int):
    """One hand dealt from ``deck``, played by ``levels``: every (seat, view, history, action)."""
    seats = [{**s, "level": lv} for s, lv in zip(SEATS, levels)]
    state = fold(decide(State(), {"type": "start_match", "rules": {**rules, "single_hand": True}, "seats": seats}))
    new = decide(state, {"type": "deal", "deck": deck, "salt": "00"})
    hand = hand_events([], state.version, new)
    state = fold(new, state)
    out = []
    while not state.finished:
        seat = state.turn
        view = seat_view(state, seat)
        history = hand_history(hand, state, seat)
        action = choose_action(view, history, levels[seat], random.Random(f"{seed}:{state.version}"))
        out.append((seat, view, history, action))
        new = decide(state, {**action, "seat": seat})
        hand = hand_events(hand, state.version, new)
        state = fold(new, state)
    return out, state


def deck_with_upcard(rng: random.Random, rank: str) -> list[str]:
    """A shuffled deck whose first upcard (``deck[20]``) has ``rank``."""
    deck = shuffled_deck(rng)
    j = next(i for i, c in enumerate(deck) if c[0] == rank)
    deck[20], deck[j] = deck[j], deck[20]
    return deck


@pytest.mark.parametrize("rank, limit", [("A", 0), ("3", 3)])
def test_under_oklahoma_the_upcard_sets_the_limit_the_bots_play(rank, limit):
    """An ace upcard: no knock is ever listed and none is made (only Gin, Big Gin or a
    dead hand end it); a 3: every knock, by every level, is with 3 deadwood or less."""
    rng = random.Random(f"oklahoma-{rank}")
    knocks = 0
    for game in range(24):
        levels = ("hard", LEVELS[game % 3]) if game % 2 else (LEVELS[game % 3], "hard")
        decisions, state = single_hand(deck_with_upcard(rng, rank), {"preset": "oklahoma"}, levels, game)
        for _seat, view, history, action in decisions:
            assert view["knock_limit"] == limit and read(view, history).knock_limit == limit
            assert_legal(view, action)
            listed = [a for a in view["legal_actions"] if a["type"] == "knock"]
            if limit == 0:
                assert not listed and action["type"] != "knock"
            if action["type"] == "knock":
                knocks += 1
                assert deadwood([c for c in view["hand"] if c != action["card"]]) <= limit
        assert state.last_hand is not None
        if limit == 0:
            assert state.last_hand["result"] in ("gin", "dead"), state.last_hand
    if limit:
        assert knocks > 0


def test_hard_weighs_the_hands_limit_not_the_rules_one():
    # The 3D upcard: limit 3.  Both seats pass it and seat 0 draws the AH.
    view, history = position(
        ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "KH"],
        OTHER,
        "3D",
        ["AH"],
        moves=[{"type": "pass", "seat": 0}, {"type": "pass", "seat": 1}, {"type": "draw", "source": "stock", "seat": 0}],
        rules={"preset": "oklahoma"},
    )
    know = read(view, history)
    assert (view["knock_limit"], know.knock_limit, view["rules"]["knock_limit"]) == (3, 3, 10)
    assert Hard(know, random.Random(0)).limit == 3
    # AH and KH loose: throwing the KH leaves 1 deadwood, within 3: a knock is listed.
    assert {"type": "knock", "card": "KH"} in view["legal_actions"]
    for level in LEVELS:
        action = choose_action(view, history, level, random.Random(1))
        assert_legal(view, action)


def test_an_ace_upcard_leaves_only_gin_and_a_spade_doubles():
    view, history = position(
        ["2C", "3C", "4C", "5D", "5H", "5C", "9H", "TH", "JH", "KH"], OTHER, "AS", moves=[TAKE], rules={"preset": "oklahoma"}
    )
    know = read(view, history)
    assert (know.knock_limit, know.doubled, know.multiplier) == (0, True, 2)
    assert view["doubled"] is True
    # One deadwood after throwing the KH, which would knock under any other upcard.
    assert not any(a["type"] in ("knock", "gin") for a in view["legal_actions"])
    for level in LEVELS:
        action = choose_action(view, history, level, random.Random(2))
        assert_legal(view, action)
        assert action["type"] == "discard"


@pytest.mark.parametrize("rules, best", [({"preset": "straight"}, {"type": "big_gin"}), (
    {"preset": "classic", "upcard_offer": True, "big_gin_bonus": 10}, None
)])
def test_every_level_goes_gin_the_better_way(rules, best):
    """Straight's Big Gin (31) beats Gin (25); a Big Gin bonus of 10 does not."""
    view, history = position(BIG_GIN_HAND, OTHER, "JH", moves=[TAKE], rules=rules)
    assert {"type": "big_gin"} in view["legal_actions"]
    options = Options(view["legal_actions"])
    assert options.big_gin == {"type": "big_gin"} and options.gins and options.can_gin
    for level in LEVELS:
        action = choose_action(view, history, level, random.Random(3))
        assert_legal(view, action)
        if best is not None:
            assert action == best, level
        else:
            assert action["type"] == "gin", (level, action)


def test_a_big_gin_in_the_history_is_read_as_no_discard():
    view, history = position(BIG_GIN_HAND, OTHER, "JH", moves=[TAKE], rules={"preset": "straight"})
    knocked = {"seq": 99, "type": "knocked", "data": {"seat": 1, "card": "JH", "gin": True, "big_gin": True}}
    know = read(view, [*history, knocked])
    assert know.opp_discards == [] and know.pile == read(view, history).pile
