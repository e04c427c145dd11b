"""An independent cross-check of the rules engine against DeepMind OpenSpiel's
``gin_rummy`` (``pyspiel``, the test extra's ``open_spiel``).

Thousands of seeded random hands are played on both engines at once
(``tests/support/openspiel.py`` drives them): the same 52-card order is dealt into
OpenSpiel through its chance outcomes (our starter is its player 0, who acts first) and
every move chosen on our side is mirrored into it.  Compared exactly, at every decision:
whose turn and which step it is, both hands, the discard pile, the stock size, the hand's
knock limit (Oklahoma: the first upcard's), the moves on offer, and in the discard step
the discards that allow a knock and those that make Gin.  At a knock our knocker's layout
is replayed with OpenSpiel's meld actions and our defender's layoffs and melds with its
layoff and meld actions (each must be legal there), and both deadwoods and the hand's
winner and points must equal OpenSpiel's returns.  Two figures are recomputed from
OpenSpiel's own actions alone, by search: the defender's least reachable deadwood (our
``best_defense``) and the knocker's best layout of least deadwood (our ``best_layout``).

OpenSpiel's rules differ in a few places; those are compared exactly but counted apart
(``KNOWN`` in the support module, which explains each): a knock tied on deadwood scores
0 there, not an undercut; its "wall" lets a player knock with the discard that left two
stock cards, where our hand is dead; its Knock action is offered from an 11-card deadwood
shortcut that sometimes hides a legal knock or Gin; it allows discarding (and knocking
with) the card just taken from the pile; it has no spade double (our doubled points are
compared halved).  The rulesets: ``upcard-offer`` and Oklahoma without the spade double
(OpenSpiel's defaults and ``oklahoma=True``), and smaller runs of Oklahoma with it and of
Gin 20 / undercut 10.  About 25 s of one core in all.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pyspiel", reason="OpenSpiel (open_spiel, in the test extra) is not installed")

from service.engine.cards import DECK  # noqa: E402
from service.engine.melds import discard_deadwoods  # noqa: E402
from service.engine.rules import hand_knock_limit, resolve_rules  # noqa: E402
from tests.support.openspiel import (  # noqa: E402
    KNOWN,
    RULESETS,
    UTILS,
    CrossCheck,
    Report,
    cross_check,
    from_os,
    os_initial_state,
    split_meld,
    to_os,
)

HANDS = {"upcard-offer": 1000, "oklahoma": 2000, "oklahoma-spades": 300, "bonus-20-10": 300}


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", sorted(HANDS))
def test_random_hands_agree_with_openspiel(ruleset):
    report = cross_check(ruleset, HANDS[ruleset], seed=f"openspiel-{ruleset}")
    assert not report.mismatches, report.describe()
    assert report.hands == HANDS[ruleset]
    assert set(report.known) <= set(KNOWN)
    # Every ending was played and compared, knocks and Gins among them.
    assert set(report.endings) == {"knock", "undercut", "gin", "dead"}, report.endings
    if HANDS[ruleset] >= 1000:
        assert report.known["tie_no_undercut"] and report.known["wall_knock"], report.known


def test_cards_map_to_openspiel_indexes_in_its_suit_order():
    assert sorted(map(to_os, DECK)) == list(range(52))
    for card in DECK:
        assert from_os(to_os(card)) == card
        assert UTILS.card_string(to_os(card)) == card[0] + card[1].lower()  # e.g. "Td", "As"
    # OpenSpiel's suits run spades, clubs, diamonds, hearts; ours clubs, diamonds, hearts, spades.
    assert [to_os(c) for c in ("AS", "KS", "AC", "AD", "AH", "KH")] == [0, 12, 13, 26, 39, 51]


def test_openspiel_deals_the_first_ten_to_the_player_who_acts_first():
    deck = random.Random("deal").sample(DECK, 52)
    check = CrossCheck("upcard-offer", 0, deck, random.Random(0), Report())
    assert check.starter == 0 and check.os.current_player() == 0
    assert sorted(map(from_os, check.os.hands()[0])) == sorted(deck[:10]) == sorted(check.state.hands[0])
    assert sorted(map(from_os, check.os.hands()[1])) == sorted(deck[10:20])
    assert from_os(check.os.upcard()) == deck[20] and check.os.stock_size() == 31


@pytest.mark.parametrize("rank", "A23456789TJQK")
def test_the_oklahoma_knock_card_of_every_upcard_is_ours(rank):
    upcard = rank + "D"
    deck = [c for c in DECK if c != upcard]
    deck.insert(20, upcard)
    state = os_initial_state("oklahoma").clone()
    for card in deck[:21]:
        state.apply_action(to_os(card))
    ours = hand_knock_limit(resolve_rules(RULESETS["oklahoma"][0]), upcard)
    assert state.knock_card() == ours == {"A": 0, "T": 10, "J": 10, "Q": 10, "K": 10}.get(rank, "A23456789".find(rank) + 1)


def test_openspiel_overstates_some_11_card_deadwoods_so_its_knock_is_hidden():
    """Its ``MinDeadwood`` of 11 cards takes the best meld group of all eleven and drops
    the highest unmelded card; throwing the 3D leaves Gin, but it reports 1, so with
    an Oklahoma ace (knock card 0) OpenSpiel would not offer the Knock at all."""
    hand = ["2C", "2D", "2H", "2S", "3D", "AD", "AH", "AS", "QC", "QH", "QS"]
    assert min(discard_deadwoods(hand).values()) == 0
    assert UTILS.min_deadwood([to_os(c) for c in hand]) == 1
    assert [from_os(c) for c in UTILS.legal_discards([to_os(c) for c in hand], 0)] == ["3D"]


def test_long_runs_are_laid_as_openspiel_melds_of_three_to_five():
    run = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"]
    pieces = split_meld(run)
    assert [len(p) for p in pieces] == [3, 3, 4] and sum(pieces, []) == run
    assert split_meld(run[:5]) == [run[:5]]
