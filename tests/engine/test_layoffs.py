"""The defender's best defense: own melds and chained layoffs searched together."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import DECK, best_defense, best_melds, check_defense, deadwood, meld_kind
from service.engine.layoffs import LayoffError


def brute_force_defense(knocker_melds, hand):
    """Least deadwood over every reachable set of single layoffs, each onto a meld
    that is legal with it, then the best own melds of what is left."""
    best = deadwood(hand)
    seen = set()
    frontier = [(tuple(tuple(m) for m in knocker_melds), frozenset())]
    while frontier:
        melds, laid = frontier.pop()
        if laid in seen:
            continue
        seen.add(laid)
        left = [c for c in hand if c not in laid]
        best = min(best, deadwood(left) if left else 0)
        for card in left:
            for i, meld in enumerate(melds):
                if meld_kind(list(meld) + [card]):
                    grown = melds[:i] + (meld + (card,),) + melds[i + 1 :]
                    frontier.append((grown, laid | {card}))
    return best


def knock_and_hand(draw):
    cards = draw(st.permutations(DECK))
    knocker = best_melds(cards[:10])
    return knocker, cards[10:20]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_best_defense_equals_brute_force_over_all_layoff_choices(data):
    cards = data.draw(st.permutations(DECK))
    # Knocker hands rich in melds make layoffs likely: use its best melds whatever its deadwood.
    knocker = best_melds(cards[:12])
    hand = cards[12:22]
    defense = best_defense(knocker.melds, hand)
    assert defense.deadwood == brute_force_defense(knocker.melds, hand)
    again = check_defense(knocker.melds, hand, defense.melds, defense.layoffs)
    assert again.deadwood == defense.deadwood


def test_chained_layoffs_onto_both_ends_of_a_run_and_a_fourth_card_onto_a_set():
    knocker = [("5S", "6S", "7S"), ("KC", "KD", "KH")]
    hand = ["8S", "9S", "4S", "KS", "2C", "2D", "2H", "AC", "QH", "JH"]
    d = best_defense(knocker, hand)
    assert sorted(d.layoffs) == [("4S", 0), ("8S", 0), ("9S", 0), ("KS", 1)]
    assert d.deadwood == 1 + 10 + 10  # AC QH JH, after the set of twos


def test_a_layoff_card_kept_in_own_meld_when_that_leaves_less_deadwood():
    # 8S could go onto 5S-6S-7S, but 8S 8C 8D as the defender's own set leaves less.
    knocker = [("5S", "6S", "7S")]
    hand = ["8S", "8C", "8D", "9S", "KH", "QH", "2C", "3D", "4H", "AD"]
    d = best_defense(knocker, hand)
    # Laying off 8S then 9S leaves 8C 8D loose (16 more); keeping the set of 8s and
    # laying off nothing leaves 9S loose (9 more): the search must see that.
    assert d.deadwood == 10 + 10 + 2 + 3 + 4 + 1 + 9
    assert d.layoffs == ()


def test_no_layoff_onto_a_set_of_four():
    d = best_defense([("KC", "KD", "KH", "KS")], ["QS", "JS", "2C", "3C", "4D", "5D", "6H", "7H", "8D", "9D"])
    assert d.layoffs == ()


@pytest.mark.parametrize(
    ("layoffs", "message"),
    [
        ([("9S", 0)], "cannot be laid off"),  # 9S without 8S leaves a gap
        ([("8S", 1)], "cannot be laid off"),  # 8S is no king
        ([("8S", 2)], "names meld 2"),
        ([("2C", 0)], "not in the defender's hand"),
        ([("8S", 0), ("8S", 0)], "given twice"),
    ],
)
def test_an_explicit_layoff_must_fit_the_meld(layoffs, message):
    knocker = [("5S", "6S", "7S"), ("KC", "KD", "KH")]
    hand = ["8S", "9S", "KS", "3C", "3D", "3H", "AD", "QH", "JH", "4D"]
    with pytest.raises(LayoffError, match=message):
        check_defense(knocker, hand, [], layoffs)


def test_a_card_cannot_be_laid_off_and_kept_in_own_meld():
    knocker = [("5S", "6S", "7S")]
    hand = ["8S", "8C", "8D", "9S", "KH", "QH", "2C", "3D", "4H", "AD"]
    with pytest.raises(LayoffError):
        check_defense(knocker, hand, [["8S", "8C", "8D"]], [("8S", 0)])
