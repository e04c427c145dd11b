"""Melds and deadwood, checked by hand and against an exhaustive search."""

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import DECK, best_discards, best_melds, card_value, check_arrangement, deadwood, meld_kind
from service.engine.melds import ArrangementError


def brute_force_deadwood(cards):
    """Least deadwood over every set of disjoint legal melds: no cleverness at all."""
    cards = list(cards)
    melds = [
        frozenset(combo)
        for n in range(3, len(cards) + 1)
        for combo in combinations(cards, n)
        if meld_kind(list(combo))
    ]
    total = sum(card_value(c) for c in cards)
    best = total

    def search(start, used, melded_value):
        nonlocal best
        best = min(best, total - melded_value)
        for i in range(start, len(melds)):
            if not melds[i] & used:
                search(i + 1, used | melds[i], melded_value + sum(card_value(c) for c in melds[i]))

    search(0, frozenset(), 0)
    return best


hands = st.integers(min_value=1, max_value=11).flatmap(
    lambda n: st.lists(st.sampled_from(DECK), min_size=n, max_size=n, unique=True)
)


@settings(max_examples=400, deadline=None)
@given(hands)
def test_best_melds_equals_exhaustive_search(cards):
    arrangement = best_melds(cards)
    assert arrangement.deadwood == brute_force_deadwood(cards)
    # The arrangement it reports is itself legal and adds up.
    checked = check_arrangement(cards, arrangement.melds)
    assert checked.deadwood == arrangement.deadwood
    assert sorted(checked.unmelded) == sorted(arrangement.unmelded)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=11, max_size=11, unique=True))
def test_best_discards_are_every_discard_that_ties_for_least_deadwood(cards):
    discards, least = best_discards(cards)
    by_card = {c: brute_force_deadwood([x for x in cards if x != c]) for c in cards}
    assert least == min(by_card.values())
    assert sorted(discards) == sorted(c for c, d in by_card.items() if d == least)


def test_sets_and_runs_scored_by_hand():
    a = best_melds(["AS", "2S", "3S", "7H", "7D", "7C", "KD", "QH", "4C", "9D"])
    assert sorted(map(sorted, a.melds)) == [["2S", "3S", "AS"], ["7C", "7D", "7H"]]
    assert a.deadwood == 4 + 9 + 10 + 10


def test_ace_is_low_only_queen_king_ace_is_no_run():
    assert meld_kind(["QS", "KS", "AS"]) is None
    assert meld_kind(["AS", "2S", "3S"]) == "run"
    assert best_melds(["QS", "KS", "AS"]).deadwood == 21
    assert best_melds(["KH", "AH", "2H"]).deadwood == 13  # no wrap-around either


def test_a_card_belongs_to_one_meld_the_lowest_deadwood_choice_wins():
    # 7S can complete the set of sevens or the spade run 5S-6S-7S, not both.
    cards = ["7C", "7D", "7H", "7S", "5S", "6S", "5C", "6C", "8C", "9C"]
    a = best_melds(cards)
    # Best: run 5C-9C (with 7C), set 7D 7H 7S, deadwood 5S 6S = 11.
    assert a.deadwood == 11
    assert sorted(a.unmelded) == ["5S", "6S"]


def test_four_of_a_kind_may_lend_one_card_to_a_run():
    cards = ["8C", "8D", "8H", "8S", "9S", "TS", "KC", "KD", "2H", "3C"]
    # 8C 8D 8H as a set, 8S-9S-TS as a run: deadwood 10+10+2+3 = 25.
    assert best_melds(cards).deadwood == 25


def test_gin_hand_has_zero_deadwood():
    assert deadwood(["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "QH"]) == 0


@pytest.mark.parametrize(
    ("melds", "message"),
    [
        ([["QS", "KS", "AS"]], "neither a set"),
        ([["2C", "3C", "4C"], ["4C", "4D", "4H"]], "reuses 4C"),
        ([["2C", "3C", "4C", "5C"]], "not in the hand"),
        ([["2C", "3C"]], "neither a set"),
    ],
)
def test_an_explicit_arrangement_must_be_legal_and_held(melds, message):
    hand = ["2C", "3C", "4C", "4D", "4H", "QS", "KS", "AS", "9D", "TD"]
    with pytest.raises(ArrangementError, match=message):
        check_arrangement(hand, melds)
