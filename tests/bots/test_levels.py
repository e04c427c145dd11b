"""Each level plays the way it promises, on positions built card by card."""

from __future__ import annotations

import random

from service.bots import LEVELS, choose_action
from service.bots.hard import Hard
from service.bots.knowledge import mask_of, read
from service.bots.opponent import OpponentModel
from service.engine.cards import CARD_INDEX

from .helpers import position

OTHER = ["3D", "4D", "6D", "TS", "TC", "JC", "JH", "QH", "2S", "6H"]
DRAW = {"type": "draw", "source": "stock", "seat": 0}


def loose_cards_position():
    """Seat 0 holds 2-3-4C and three 5s, and loose KS QD 9C AH, then draws 2H."""
    hand = ["2C", "3C", "4C", "5D", "5H", "5S", "KS", "QD", "9C", "AH"]
    return position(hand, OTHER, "JS", ["2H"], [DRAW])


def knock_at_eight_position():
    """Seat 0 holds three melds and 8C, draws KS: throwing KS leaves 8 and allows a knock."""
    hand = ["2C", "3C", "4C", "5D", "5H", "5S", "7H", "8H", "9H", "8C"]
    return position(hand, OTHER, "JS", ["KS"], [DRAW])


def test_easy_keeps_picture_cards_that_medium_throws_first():
    view, history = loose_cards_position()
    for seed in range(20):
        easy = choose_action(view, history, "easy", random.Random(seed))
        medium = choose_action(view, history, "medium", random.Random(seed))
        assert easy == {"type": "discard", "card": "9C"}
        assert medium["type"] == "discard" and medium["card"] in ("KS", "QD")


def test_medium_takes_the_upcard_only_when_it_melds():
    hand = ["7C", "7S", "2D", "3H", "5S", "9C", "JD", "QC", "4H", "AC"]
    view, history = position(hand, OTHER, "7D")
    assert choose_action(view, history, "medium", random.Random(0)) == {"type": "draw", "source": "discard"}
    view, history = position(hand, OTHER, "KH")
    assert choose_action(view, history, "medium", random.Random(0)) == {"type": "draw", "source": "stock"}


def test_medium_knocks_early_but_not_with_eight_once_the_stock_runs_low():
    view, history = knock_at_eight_position()
    assert choose_action(view, history, "medium", random.Random(0)) == {"type": "knock", "card": "KS"}
    late = {**view, "stock_count": 8}
    assert choose_action(late, history, "medium", random.Random(0)) == {"type": "discard", "card": "KS"}


def test_easy_waits_with_eight_early_and_knocks_late_without_fearing_an_undercut():
    view, history = knock_at_eight_position()
    assert choose_action(view, history, "easy", random.Random(0))["type"] == "discard"
    late = {**view, "stock_count": 8}
    assert choose_action(late, history, "easy", random.Random(0)) == {"type": "knock", "card": "KS"}


def test_every_level_goes_gin_when_it_can():
    hand = ["2C", "3C", "4C", "5D", "5H", "5S", "7H", "8H", "9H", "KS"]
    view, history = position(hand, OTHER, "JS", ["TH"], [DRAW])
    for level in LEVELS:
        assert choose_action(view, history, level, random.Random(1)) == {"type": "gin", "card": "KS"}


def test_the_same_inputs_and_seed_give_the_same_decision():
    view, history = loose_cards_position()
    for level in LEVELS:
        first = choose_action(view, history, level, random.Random(5))
        assert all(choose_action(view, history, level, random.Random(5)) == first for _ in range(3))


def test_hard_leaves_the_choice_among_layouts_of_the_least_deadwood_to_the_engine():
    """5-6-7-8S with 8H 8D 8C, or the four eights beside 5-6-7S: deadwood 6 either way.
    The engine, knowing the defender's hand, lays out the one that leaves it the most,
    so hard names neither and weighs both."""
    hand = ["5S", "6S", "7S", "8S", "8H", "8D", "8C", "AC", "2D", "3H"]
    moves = [{"type": "pass", "seat": 0}, {"type": "pass", "seat": 1}, DRAW]
    view, history = position(hand, OTHER, "JS", ["KC"], moves, rules={"preset": "bonus-20-10"})
    hard = Hard(read(view, history), random.Random(0))
    layouts, named, deadwood, _ = hard.knock_melds(mask_of(hand))
    assert not named and deadwood == 6
    assert sorted(sorted(sorted(m.codes()) for m in melds) for melds in layouts) == [
        [["5S", "6S", "7S"], ["8C", "8D", "8H", "8S"]],
        [["5S", "6S", "7S", "8S"], ["8C", "8D", "8H"]],
    ]


def test_hard_names_a_layout_of_more_deadwood_only_where_the_knocker_may_arrange():
    """A-2-3-4-5S and 9C 9D 9H leave 3 (AC 2C); with the 6S and the 7S surely in the
    defender's hand, 13 points would go onto the run.  Keeping 5S loose (deadwood 8)
    leaves the run A-4S nothing to take: 8 beats 3 + 13, under bonus-20-10 only."""
    hand = ["AS", "2S", "3S", "4S", "5S", "9C", "9D", "9H", "2C", "AC"]
    for preset, named_expected in (("bonus-20-10", True), ("classic", False)):
        moves = [{"type": "pass", "seat": 0}, {"type": "pass", "seat": 1}, DRAW] if preset == "bonus-20-10" else [DRAW]
        other = ["3D", "4D", "6D", "TS", "TC", "JC", "JH", "QH", "KS", "6H"]
        view, history = position(hand, other, "QS", ["KC"], moves, rules={"preset": preset})
        hard = Hard(read(view, history), random.Random(0))
        hard.model.chance = [0.0] * 52
        hard.model.chance[CARD_INDEX["6S"]] = hard.model.chance[CARD_INDEX["7S"]] = 1.0
        layouts, named, deadwood, exposure = hard.knock_melds(mask_of(hand))
        assert named is named_expected, preset
        if named:
            assert (deadwood, exposure) == (8, 0.0)
            assert sorted(sorted(m.codes()) for m in layouts[0]) == [["2S", "3S", "4S", "AS"], ["9C", "9D", "9H"]]
        else:
            assert (deadwood, exposure) == (3, 13.0)


def test_the_history_tells_what_the_opponent_took_threw_and_declined():
    hand = ["2C", "3C", "4C", "5D", "5H", "5S", "7H", "8H", "9H", "KS"]
    moves = [
        DRAW,
        {"type": "discard", "card": "KS", "seat": 0},
        {"type": "draw", "source": "stock", "seat": 1},  # declines KS
        {"type": "discard", "card": "TC", "seat": 1},
        DRAW,
        {"type": "discard", "card": "9H", "seat": 0},
        {"type": "draw", "source": "discard", "seat": 1},  # takes 9H
        {"type": "discard", "card": "JC", "seat": 1},
        DRAW,
    ]
    view, history = position(hand, OTHER, "QS", ["6C", "7C", "AD", "AS"], moves)
    know = read(view, history)
    index = CARD_INDEX.__getitem__
    assert know.opp_taken == [index("9H")]
    assert know.opp_declined == [index("KS")]
    assert know.opp_discards == [(index("TC"), "stock"), (index("JC"), "discard")]
    assert know.opp_known == mask_of(["9H"]) and know.opp_unknown == 9


def test_a_card_next_to_one_the_opponent_took_is_counted_dangerous():
    hand = ["2C", "3C", "4C", "5D", "5H", "5S", "7H", "8H", "9D", "8C"]
    moves = [
        DRAW,
        {"type": "discard", "card": "7H", "seat": 0},
        {"type": "draw", "source": "discard", "seat": 1},
        {"type": "discard", "card": "TC", "seat": 1},
        DRAW,
    ]
    view, history = position(hand, OTHER, "QS", ["KD", "6C"], moves)
    model = OpponentModel(read(view, history))
    assert model.feeds(CARD_INDEX["8H"]) > 2 * model.feeds(CARD_INDEX["8C"])


def test_medium_counts_the_live_cards_that_meld_with_a_loose_card():
    """5H 6H and KS KC are loose (in no meld); 7C 8C 9C is a run.  Live: 4H and 7H
    finish a run with 5H 6H, KD and KH a set with the kings: 4 outs.  3H and 8H need two
    more hearts, TC extends a run of no loose card, 5S meets a single five: none."""
    from service.bots.handeval import Deadwood
    from service.bots.medium import live_outs

    hand = mask_of(["5H", "6H", "KS", "KC", "7C", "8C", "9C", "2D"])
    live = mask_of(["4H", "7H", "KD", "KH", "3H", "8H", "TC", "5S"])
    assert live_outs(Deadwood(), hand, live) == 4


def _outs_one_by_one(hand: int, live: int) -> int:
    """The count by its definition: each live card, and each pair of held cards it would
    make a meld with, one of them loose (in no meld of a least deadwood arrangement)."""
    from service.bots.handeval import Deadwood
    from service.bots.knowledge import VALUE

    dw = Deadwood()
    now = dw(hand)
    held = [c for c in range(52) if hand >> c & 1]
    loose = {c for c in held if dw(hand & ~(1 << c)) == now - VALUE[c]}

    def melds(cards: list[int]) -> bool:
        ranks, suits = {c % 13 for c in cards}, {c // 13 for c in cards}
        in_a_row = len(suits) == 1 and max(ranks) - min(ranks) == 2 and len(ranks) == 3
        return len(ranks) == 1 or in_a_row

    return sum(
        1 for u in range(52) if live >> u & 1
        and any(melds([u, a, b]) and (a in loose or b in loose) for i, a in enumerate(held) for b in held[i + 1:])
    )


def test_medium_live_outs_agree_with_the_count_card_by_card_on_random_hands():
    from service.bots.handeval import Deadwood
    from service.bots.medium import live_outs

    rng = random.Random(11)
    for _ in range(400):
        cards = rng.sample(range(52), 10 + rng.randint(5, 30))
        if rng.random() < 0.3:  # a rank held three times (the arrangement has a choice of sets)
            rank = rng.randrange(13)
            cards = [s * 13 + rank for s in range(3)] + [c for c in cards if c % 13 != rank]
        hand = sum(1 << c for c in cards[:10])
        live = sum(1 << c for c in cards[10:])
        assert live_outs(Deadwood(), hand, live) == _outs_one_by_one(hand, live)
