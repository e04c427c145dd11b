"""Each house-rule difference between the seeds, under the presets it belongs to."""

import pytest

from service.engine import CommandError, IllegalMoveError
from service.engine.game import plays

from .scenarios import Table

# Hands with no meld and far from a knock, so play just goes on.
LOOSE_0 = ["AC", "3C", "5C", "7C", "9C", "JC", "KD", "2D", "4D", "6D"]
LOOSE_1 = ["AH", "3H", "5H", "7H", "9H", "JH", "KS", "2S", "4S", "6S"]
# Loose too, and clear of the knocker's 2C-3C-4C, 5D-5H-5S, 9H-TH-JH below.
LOOSE_2 = ["AD", "3D", "6D", "8D", "TD", "QD", "KS", "2S", "4S", "6S"]


def fresh(preset, **rules):
    t = Table({"preset": preset, **rules})
    t.deal(LOOSE_0, LOOSE_1, "QC")
    return t


def illegal(rule, fn, *args, **kwargs):
    with pytest.raises(IllegalMoveError) as err:
        fn(*args, **kwargs)
    assert err.value.rule == rule, err.value
    return err.value


# --- the upcard offer (seeds 002 and 004) -------------------------------------------


@pytest.mark.parametrize("preset", ["upcard-offer", "bonus-20-10"])
def test_upcard_offer_starter_then_other_may_take_or_pass(preset):
    t = fresh(preset)
    assert t.state.phase == "upcard_offer" and t.state.turn == 0
    assert plays(t.state, 0) == [{"type": "draw", "source": "discard"}, {"type": "pass"}]
    illegal("upcard_offer", t.seat, 0, "draw", source="stock")
    t.seat(0, "pass")
    assert t.state.turn == 1 and t.state.phase == "upcard_offer"
    t.seat(1, "draw", source="discard")  # the other player takes it
    assert "QC" in t.state.hands[1]
    t.seat(1, "discard", card="KS")
    assert t.state.turn == 0 and t.state.phase == "draw"  # then the starter plays on


@pytest.mark.parametrize("preset", ["upcard-offer", "bonus-20-10"])
def test_if_both_pass_the_starter_must_draw_from_the_stock(preset):
    t = fresh(preset)
    t.seat(0, "pass")
    t.seat(1, "pass")
    assert t.state.turn == 0 and t.state.phase == "draw"
    assert plays(t.state, 0) == [{"type": "draw", "source": "stock"}]
    illegal("stock_only", t.seat, 0, "draw", source="discard")
    t.seat(0, "draw", source="stock")
    assert len(t.state.hands[0]) == 11


@pytest.mark.parametrize("preset", ["classic", "short-stock"])
def test_without_the_offer_the_first_player_draws_stock_or_upcard(preset):
    t = fresh(preset)
    assert t.state.phase == "draw" and t.state.turn == 0
    assert plays(t.state, 0) == [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
    illegal("wrong_phase", t.seat, 0, "pass")
    t.seat(0, "draw", source="discard")
    assert "QC" in t.state.hands[0]


# --- the dead hand: stock empty (000, 003) or two cards left (001, 002, 004) --------


def play_out_from_stock(t):
    """Both seats draw from the stock and throw the card back until the hand ends."""
    draws = 0
    while t.state.phase in ("draw", "upcard_offer"):
        seat = t.state.turn
        if t.state.phase == "upcard_offer":
            t.seat(seat, "pass")
            continue
        t.seat(seat, "draw", source="stock")
        draws += 1
        events = t.seat(seat, "discard", card=t.state.hands[seat][-1])
    return draws, events


@pytest.mark.parametrize(("preset", "draws", "left"), [("classic", 31, 0), ("short-stock", 29, 2), ("upcard-offer", 29, 2), ("bonus-20-10", 29, 2)])
def test_the_hand_is_dead_when_the_stock_runs_down_to_the_preset_limit(preset, draws, left):
    t = fresh(preset)
    made, events = play_out_from_stock(t)
    assert made == draws and t.state.stock_count == left
    assert [e.type for e in events] == ["card_discarded", "hand_ended"]
    ended = events[-1].data
    assert (ended["result"], ended["winner"], ended["points"], ended["scores"]) == ("dead", None, 0, [0, 0])


def test_a_knock_on_the_last_discard_beats_the_dead_hand():
    t = Table({"preset": "short-stock"})
    knocker = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "7S"]
    t.deal(knocker, LOOSE_2, "QC")
    for _ in range(14):  # 28 stock draws, the 29th leaves two cards
        for seat in (0, 1):
            t.seat(seat, "draw", source="stock")
            t.seat(seat, "discard", card=t.state.hands[seat][-1])
    t.seat(0, "draw", source="stock")
    assert t.state.stock_count == 2
    events = t.seat(0, "knock", card=t.state.hands[0][-1])
    assert events[0].type == "knocked" and events[-1].data["result"] in ("knock", "undercut")


# --- turns, the no-return rule, the knock limit -------------------------------------


def test_a_card_taken_from_the_discard_pile_cannot_go_back_the_same_turn():
    t = fresh("classic")
    t.seat(0, "draw", source="discard")
    assert {"type": "discard", "card": "QC"} not in plays(t.state, 0)
    illegal("no_return", t.seat, 0, "discard", card="QC")
    illegal("no_return", t.seat, 0, "knock", card="QC")


def test_a_card_drawn_from_the_stock_may_be_discarded_at_once():
    t = fresh("classic")
    t.seat(0, "draw", source="stock")
    drawn = t.state.hands[0][-1]
    t.seat(0, "discard", card=drawn)
    assert t.state.discard_pile[-1] == drawn


def test_a_seat_never_acts_out_of_turn_or_with_a_card_it_lacks():
    t = fresh("classic")
    illegal("not_your_turn", t.seat, 1, "draw", source="stock")
    illegal("wrong_phase", t.seat, 0, "discard", card="AC")
    t.seat(0, "draw", source="stock")
    illegal("card_not_in_hand", t.seat, 0, "discard", card="AH")


def test_knocking_over_the_limit_is_refused_with_the_deadwood_named():
    t = Table({"preset": "classic"})
    knocker = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "8S"]
    t.deal(knocker, LOOSE_2, "QC", ["3H"])
    t.seat(0, "draw", source="stock")
    err = illegal("knock_limit", t.seat, 0, "knock", card="2C")
    assert "10 or less" in str(err)
    actions = plays(t.state, 0)
    assert {"type": "knock", "card": "8S"} in actions and {"type": "knock", "card": "3H"} in actions


def test_knock_limit_can_be_lowered():
    t = Table({"preset": "classic", "knock_limit": 2})
    knocker = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "8S"]
    t.deal(knocker, LOOSE_2, "QC", ["3H"])
    t.seat(0, "draw", source="stock")
    illegal("knock_limit", t.seat, 0, "knock", card="8S")  # 3H left: 3 > 2


def test_malformed_commands_are_command_errors_not_moves():
    t = fresh("classic")
    for command in (
        {"type": "fly"}, {"type": "draw", "seat": 0}, {"type": "draw", "seat": 0, "source": "floor"},
        {"type": "draw", "seat": 2, "source": "stock"},
    ):
        with pytest.raises(CommandError):
            t.do(command)
    t.seat(0, "draw", source="stock")
    with pytest.raises(CommandError) as err:
        t.seat(0, "discard", card="10D")
    assert "'10D'" in str(err.value)


# --- who starts, single hand ---------------------------------------------------------


def test_the_starter_alternates_hand_by_hand():
    t = fresh("classic")
    play_out_from_stock(t)
    t.deal(LOOSE_1, LOOSE_0, "QC")
    assert t.state.hand_number == 2 and t.state.starter == 1 and t.state.turn == 1
    assert sorted(t.state.hands[1]) == sorted(LOOSE_1)
    play_out_from_stock(t)
    t.deal(LOOSE_0, LOOSE_1, "QC")
    assert t.state.starter == 0


def test_a_single_hand_match_ends_after_one_hand_even_dead():
    t = fresh("bonus-20-10", single_hand=True)
    _, events = play_out_from_stock(t)
    assert [e.type for e in events][-1] == "match_ended"
    assert t.state.finished and t.state.winner is None
    illegal("match_over", t.do, {"type": "deal", "deck": []})


def test_a_dead_hand_does_not_end_a_match_to_a_target():
    t = fresh("classic")
    play_out_from_stock(t)
    assert t.state.phase == "awaiting_deal" and not t.state.finished


# --- choosing arrangements (seed 004) ---------------------------------------------


def knock_ready(preset):
    t = Table({"preset": preset})
    knocker = ["2C", "3C", "4C", "5C", "5D", "5H", "9H", "TH", "JH", "AS"]
    defender = ["QH", "6C", "2S", "3S", "4S", "8D", "8S", "KC", "KD", "7D"]
    t.deal(knocker, defender, "KS", ["QD"])
    if t.state.rules.upcard_offer:
        t.seat(0, "pass")
        t.seat(1, "pass")
    t.seat(0, "draw", source="stock")
    return t


def test_the_knocker_may_choose_another_legal_arrangement_under_bonus_20_10():
    t = knock_ready("bonus-20-10")
    # Best: 2C-5C run, 5D? no: 2C 3C 4C 5C + 9H TH JH, deadwood 5D 5H AS = 11 > 10;
    # or 2C 3C 4C + 5C 5D 5H + 9H TH JH, deadwood AS = 1.  Choose the run of four instead:
    melds = [["2C", "3C", "4C", "5C"], ["9H", "TH", "JH"]]
    illegal("knock_limit", t.seat, 0, "knock", card="QD", melds=melds)
    t.seat(0, "knock", card="QD")  # suggested best
    assert t.state.knock["deadwood"] == 1 and t.state.phase == "defense" and t.state.turn == 1


def test_an_illegal_chosen_arrangement_is_refused():
    t = knock_ready("bonus-20-10")
    illegal("invalid_meld", t.seat, 0, "knock", card="QD", melds=[["2C", "3C", "5C"]])
    illegal("invalid_meld", t.seat, 0, "knock", card="QD", melds=[["QD", "QH", "QS"]])


def test_classic_rules_refuse_a_layout_with_more_than_the_least_deadwood():
    t = knock_ready("classic")
    illegal("arrangement_not_allowed", t.seat, 0, "knock", card="QD", melds=[["2C", "3C", "4C"]])
    t.seat(0, "knock", card="QD", melds=[["2C", "3C", "4C"], ["5C", "5D", "5H"], ["9H", "TH", "JH"]])
    assert t.state.knock["deadwood"] == 1


def test_the_defender_may_choose_its_own_defense_under_bonus_20_10():
    t = knock_ready("bonus-20-10")
    t.seat(0, "knock", card="QD")
    (suggested,) = plays(t.state, 1)
    assert suggested["type"] == "defend"
    assert {"card": "QH", "meld": 2} in suggested["layoffs"] and {"card": "6C", "meld": 1} not in suggested["layoffs"]
    # The defender declines to lay off QH: legal, just worse.
    events = t.seat(1, "defend", melds=[["2S", "3S", "4S"]], layoffs=[])
    defended, ended = events[0].data, events[1].data
    assert defended["deadwood"] == 10 + 6 + 8 + 8 + 10 + 10 + 7  # QH 6C 8D 8S KC KD 7D
    assert ended["result"] == "knock" and ended["points"] == defended["deadwood"] - 1


def test_an_illegal_chosen_defense_is_refused():
    t = knock_ready("bonus-20-10")
    t.seat(0, "knock", card="QD")
    illegal("invalid_layoff", t.seat, 1, "defend", melds=[], layoffs=[{"card": "8D", "meld": 0}])
    illegal("not_your_turn", t.seat, 0, "defend")
