"""The knocker's layout, the defense with layoffs only, and who starts each hand."""

import random
from itertools import combinations

import pytest

from service.engine import DECK, IllegalMoveError, best_defense, best_melds, card_value, meld_kind
from service.engine.layoffs import best_layout
from service.engine.melds import lowest_arrangements

from .scenarios import Table

# --- a defense with layoffs but no melds ---------------------------------------------

# The knocker's melds: 9C-9H-9S (meld 0), 2C-3C-4C (meld 1), 5D-6D-7D (meld 2); AH loose.
KNOCKER = ["2C", "3C", "4C", "5D", "6D", "7D", "9H", "9S", "9C", "AH"]
# TC-JC-QC, KH-KS-KD and 2H-3H-4H, and 8D, which goes onto 5D-6D-7D.
DEFENDER = ["8D", "TC", "JC", "QC", "KH", "KS", "KD", "2H", "3H", "4H"]


def knocked_under_bonus_20_10():
    t = Table({"preset": "bonus-20-10"})
    t.deal(KNOCKER, DEFENDER, "5S", ["KC"])
    t.seat(0, "pass")
    t.seat(1, "pass")
    t.seat(0, "draw", source="stock")
    t.seat(0, "knock", card="KC")
    assert t.state.knock["melds"] == [["9C", "9H", "9S"], ["2C", "3C", "4C"], ["5D", "6D", "7D"]]
    assert t.state.knock["deadwood"] == 1
    return t


def ended(events):
    d = next(e for e in events if e.type == "hand_ended").data
    return d["result"], d["winner"], d["points"]


def test_the_suggested_defense_lays_off_8d_and_undercuts_for_1_plus_10():
    t = knocked_under_bonus_20_10()
    assert ended(t.seat(1, "defend")) == ("undercut", 1, 11)


def test_layoffs_without_melds_keep_the_defenders_best_melds_of_the_rest():
    t = knocked_under_bonus_20_10()
    events = t.seat(1, "defend", layoffs=[{"card": "8D", "meld": 2}])
    defended = events[0].data
    assert defended["melds"] == [["KD", "KH", "KS"], ["TC", "JC", "QC"], ["2H", "3H", "4H"]]
    assert defended["layoffs"] == [{"card": "8D", "meld": 2}]
    assert (defended["deadwood"], defended["automatic"]) == (0, False)
    assert ended(events) == ("undercut", 1, 11)  # 1 - 0 + 10, not the knocker's 69 - 1


def test_no_layoffs_and_no_melds_named_keeps_the_best_melds_and_8d_loose():
    t = knocked_under_bonus_20_10()
    events = t.seat(1, "defend", layoffs=[])
    assert events[0].data["deadwood"] == 8
    assert ended(events) == ("knock", 0, 7)  # 8 - 1


def test_melds_given_as_none_at_all_still_mean_none():
    t = knocked_under_bonus_20_10()
    events = t.seat(1, "defend", melds=[], layoffs=[{"card": "8D", "meld": 2}])
    assert events[0].data["deadwood"] == 30 + 30 + 9  # TC JC QC, KH KS KD, 2H 3H 4H
    assert ended(events) == ("knock", 0, 68)


def test_a_layoff_that_does_not_fit_is_refused_without_melds_too():
    t = knocked_under_bonus_20_10()
    with pytest.raises(IllegalMoveError) as err:
        t.seat(1, "defend", layoffs=[{"card": "8D", "meld": 1}])
    assert err.value.rule == "invalid_layoff"


# --- the knocker's layout ----------------------------------------------------------

# AH AS 2S 3S 2H 2D 4C 5C 6C 7C: 4C-5C-6C-7C, and A-2-3S (2H 2D AH loose) or the three
# twos (AH AS 3S loose): 5 either way.  The defender's 4S goes onto A-2-3S only.
LAYOUT_KNOCKER = ["AH", "AS", "2S", "3S", "2H", "2D", "4C", "5C", "6C", "7C"]
LAYOUT_DEFENDER = ["3D", "3H", "4S", "5D", "6D", "6S", "9C", "TS", "JS", "QS"]
RUN_LAYOUT = [["4C", "5C", "6C", "7C"], ["AS", "2S", "3S"]]
SET_LAYOUT = [["2D", "2H", "2S"], ["4C", "5C", "6C", "7C"]]


def ready_to_knock(preset):
    t = Table({"preset": preset})
    t.deal(LAYOUT_KNOCKER, LAYOUT_DEFENDER, "KH", ["KD"])
    if t.state.rules.upcard_offer:
        t.seat(0, "pass")
        t.seat(1, "pass")
    t.seat(0, "draw", source="stock")
    return t


def knock(t, **fields):
    events = t.seat(0, "knock", card="KD", **fields)
    if t.state.phase == "defense":
        events += t.seat(1, "defend")
    return events


@pytest.mark.parametrize("preset", ["classic", "short-stock", "upcard-offer", "bonus-20-10"])
def test_the_automatic_layout_is_the_one_that_leaves_no_layoff(preset):
    t = ready_to_knock(preset)
    events = knock(t)
    assert t.state.knock["melds"] == SET_LAYOUT and t.state.knock["deadwood"] == 5
    assert t.state.defense["layoffs"] == []
    assert t.state.defense["deadwood"] == 36  # 9C 3D 5D 6D 3H 4S 6S; TS-JS-QS melded
    assert ended(events) == ("knock", 0, 31)


@pytest.mark.parametrize("preset", ["classic", "short-stock", "upcard-offer", "bonus-20-10"])
def test_the_knocker_may_lay_out_another_arrangement_of_the_same_deadwood(preset):
    t = ready_to_knock(preset)
    events = knock(t, melds=RUN_LAYOUT)
    assert t.state.knock["melds"] == RUN_LAYOUT and t.state.knock["deadwood"] == 5
    assert t.state.defense["layoffs"] == [{"card": "4S", "meld": 1}]
    assert t.state.defense["deadwood"] == 32
    assert ended(events) == ("knock", 0, 27)


def test_more_deadwood_than_the_least_is_refused_unless_the_knocker_arranges():
    # The three twos and 5C-6C-7C leave AH AS 3S 4C: 9, within the limit but not the least (5).
    melds = [["2D", "2H", "2S"], ["5C", "6C", "7C"]]
    t = ready_to_knock("classic")
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "knock", card="KD", melds=melds)
    assert err.value.rule == "arrangement_not_allowed" and "(5)" in str(err.value)
    t = ready_to_knock("bonus-20-10")
    t.seat(0, "knock", card="KD", melds=melds)
    assert t.state.knock["deadwood"] == 9


def test_without_a_difference_the_layout_stays_the_lowest_deadwood_one_of_best_melds():
    cards = LAYOUT_KNOCKER
    assert best_layout(cards, ["KC", "KH", "KS", "QD", "QH", "JD", "JH", "9D", "8D", "7D"]) == best_melds(cards)


def _brute_force_layouts(cards):
    """Every arrangement of ``cards`` with the least deadwood, by trying every set of
    disjoint melds."""
    melds = [frozenset(combo) for n in range(3, 11) for combo in combinations(cards, n) if meld_kind(combo)]
    found = []

    def walk(start, used, chosen):
        found.append((sum(card_value(c) for c in cards if c not in used), chosen))
        for i in range(start, len(melds)):
            if not melds[i] & used:
                walk(i + 1, used | melds[i], chosen + (melds[i],))

    walk(0, frozenset(), ())
    least = min(d for d, _ in found)
    return least, {frozenset(chosen) for d, chosen in found if d == least}


def test_the_layouts_are_every_arrangement_of_the_least_deadwood_and_the_pick_the_best():
    rng = random.Random(2026)
    checked = 0
    while checked < 40:
        deck = list(DECK)
        rng.shuffle(deck)
        # Hands rich in melds: ten cards from a few ranks and suits.
        pool = [c for c in deck if c[0] in "A2345678" and c[1] in "CDS"]
        knocker, defender = pool[:10], [c for c in deck if c not in pool[:10]][:10]
        least, brute = _brute_force_layouts(knocker)
        layouts = lowest_arrangements(knocker)
        assert {frozenset(frozenset(m) for m in a.melds) for a in layouts} == brute
        assert all(a.deadwood == least for a in layouts) and layouts[0] == best_melds(knocker)
        if least == 0 or least > 10:
            continue
        picked = best_layout(knocker, defender)
        most = max(best_defense(a.melds, defender).deadwood for a in layouts)
        assert best_defense(picked.melds, defender).deadwood == most
        checked += 1


# --- who starts each hand ----------------------------------------------------------

# The starter knocks with 2C-3C-4C 5D-6D-7D 9C-9H-9S (AH loose) against 73 and wins.
WINNER = ["2C", "3C", "4C", "5D", "6D", "7D", "9H", "9S", "9C", "AH"]
LOSER = ["8H", "TC", "JD", "QS", "KH", "KS", "3D", "2H", "4S", "6H"]


def play_hand(t, knocker_wins: bool | str):
    """The starter draws KC and knocks with it, holding WINNER; the other holds LOSER.
    ``knocker_wins`` False: the hand is played out dead instead; "other": the starter
    holds LOSER and throws the QD it draws, and the other seat draws KC and knocks."""
    if knocker_wins == "other":
        t.deal(LOSER, WINNER, "5S", ["QD", "KC"])
        starter = t.state.starter
        t.seat(starter, "draw", source="stock")
        t.seat(starter, "discard", card="QD")
        t.seat(1 - starter, "draw", source="stock")
        t.seat(1 - starter, "knock", card="KC")
        assert t.state.last_hand["winner"] == 1 - starter
        return starter
    t.deal(WINNER, LOSER, "5S", ["KC"])
    starter = t.state.starter
    if knocker_wins:
        t.seat(starter, "draw", source="stock")
        t.seat(starter, "knock", card="KC")
        return starter
    while t.state.phase == "draw":
        seat = t.state.turn
        t.seat(seat, "draw", source="stock")
        drawn = t.state.hands[seat][-1]
        t.seat(seat, "discard", card=drawn)
    assert t.state.last_hand["result"] == "dead"
    return starter


def starters(rule, plan):
    """The starter of each hand, playing ``plan`` (True: the starter knocks and wins;
    False: a dead hand)."""
    spec = {"preset": "short-stock", "target_score": 1000}
    if rule is not None:
        spec["starter"] = rule
    t = Table(spec)
    return [play_hand(t, wins) for wins in plan]


PLAN = [True, True, False, True]


def test_by_default_the_starter_alternates():
    assert starters(None, PLAN) == [0, 1, 0, 1]
    assert starters("alternate", PLAN) == [0, 1, 0, 1]


def test_seat_0_starts_every_hand():
    assert starters("seat_0", PLAN) == [0, 0, 0, 0]


def test_the_loser_starts_and_after_a_dead_hand_the_same_seat_again():
    # Hand 1: seat 0 starts and wins, so seat 1 (the loser) starts hand 2 and wins; seat 0
    # starts hand 3, which is dead: seat 0 starts hand 4 again.
    assert starters("loser", PLAN) == [0, 1, 0, 0]
    # A starter who loses starts again: seat 0 loses hands 1 and 2 to seat 1's knock,
    # then starts hand 3 and wins it, so seat 1 starts hand 4; alternating would differ.
    plan = ["other", "other", True, True]
    assert starters("loser", plan) == [0, 0, 0, 1]
    assert starters("alternate", plan) == [0, 1, 0, 1]


def test_the_starter_rule_is_recorded_only_when_it_is_not_the_default():
    t = Table({"starter": "loser"})
    assert t.events[0].data["rules"]["starter"] == "loser"
    t = Table({"starter": "alternate"})
    assert "starter" not in t.events[0].data["rules"]
