"""The coach on constructed hands: known errors are caught, a hint is what the analysis
rates best, and neither depends on a card the seat cannot know."""

from __future__ import annotations

import math
import random

import pytest

from service.bots import choose_action
from service.coach import assess, classify
from service.coach.analysis import analyse
from service.engine import State, decide, fold, redact_event
from service.engine.cards import DECK
from service.engine.views import hand_history, seat_view
from tests.support.play import greedy_action_on_state

MATCH_ID = "00000000-0000-4000-8000-00000000c0ac"


def deck_for(starter_hand: list[str], other_hand: list[str], upcard: str, stock_top: list[str]) -> list[str]:
    """A deck dealing ``starter_hand`` to the starter (seat 0 in the first hand), then
    ``other_hand``, the upcard, and ``stock_top`` on top of the stock; the rest in order."""
    chosen = starter_hand + other_hand + [upcard] + stock_top
    assert len(set(chosen)) == len(chosen)
    return chosen + [c for c in DECK if c not in chosen]


class Table:
    """A match played command by command through the engine; its events as the store keeps them."""

    def __init__(self, deck: list[str], rules: dict | None = None):
        self.events: list[dict] = []
        self.state = State()
        self.do({"type": "start_match", "rules": rules or {}, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
        self.do({"type": "deal", "deck": deck, "salt": "0123456789abcdef"})

    def do(self, command: dict) -> None:
        for event in decide(self.state, command):
            self.events.append({"seq": len(self.events) + 1, "type": event.type, "data": event.data})
            self.state = fold([event], self.state)

    def play(self, seat: int, **action) -> None:
        self.do({**action, "seat": seat})

    def decision(self, seq: int) -> dict:
        (entry,) = [d for d in analyse(self.events, MATCH_ID)[1] if d["seq"] == seq]
        return entry


MELDED_AND_LOOSE = ["7S", "8S", "9S", "2H", "2D", "2C", "KC", "QD", "JH", "5C"]
OTHER = ["AD", "3D", "5H", "6D", "8C", "9D", "TC", "7H", "6S", "KD"]


def test_discarding_a_card_of_a_complete_meld_while_deadwood_is_left_is_a_blunder():
    # Ann holds 7-8-9S and three 2s beside K, Q, J and 5 of deadwood; she draws the 6H
    # (it melds with nothing) and throws the 9S, breaking her run.
    table = Table(deck_for(MELDED_AND_LOOSE, OTHER, "3C", ["6H"]))
    table.play(0, type="draw", source="stock")
    table.play(0, type="discard", card="9S")
    entry = table.decision(len(table.events))
    assert entry["played"] == {"type": "discard", "card": "9S"}
    assert entry["best"]["card"] in ("KC", "QD", "JH")  # a 10-point loose card
    assert entry["class"] in ("mistake", "blunder") and entry["cost"] >= 4, entry


GIN_READY = ["AC", "2C", "3C", "4D", "4H", "4S", "9H", "TH", "JH", "KS"]


def test_throwing_away_gin_is_a_blunder_and_not_declaring_it_is_a_mistake():
    # A-2-3C, three 4s, 9-10-JH and the KS: the QH from the stock makes 9-10-J-QH, and
    # throwing the KS is Gin.
    for thrown, worst in (("3C", "blunder"), ("KS", "mistake")):
        table = Table(deck_for(GIN_READY, OTHER, "5D", ["QH"]))
        table.play(0, type="draw", source="stock")
        assert {"type": "gin", "card": "KS"} in seat_view(table.state, 0)["legal_actions"]
        table.play(0, type="discard", card=thrown)
        entry = table.decision(len(table.events))
        assert entry["best"] == {"type": "gin", "card": "KS"}
        assert entry["class"] in ("mistake", "blunder"), entry
        if worst == "blunder":
            assert entry["class"] == "blunder" and entry["cost"] >= 10, entry


ONE_SHORT = ["AC", "2C", "3C", "4D", "4H", "4S", "9H", "TH", "JH", "QS"]


def test_passing_an_upcard_that_completes_a_meld_and_gives_gin_is_caught():
    # The upcard QH makes 9-10-J-QH; with the QS thrown the hand is Gin.  Drawing from
    # the stock instead (classic), or passing the offer (upcard-offer), is caught.
    table = Table(deck_for(ONE_SHORT, OTHER, "QH", ["6C"]))
    table.play(0, type="draw", source="stock")
    entry = table.decision(len(table.events))
    assert entry["kind"] == "draw" and entry["best"] == {"type": "draw", "source": "discard"}
    assert entry["class"] in ("mistake", "blunder"), entry
    assert "Gin" in entry["reason"]

    offered = Table(deck_for(ONE_SHORT, OTHER, "QH", ["6C"]), {"preset": "upcard-offer"})
    offered.play(0, type="pass")
    entry = offered.decision(len(offered.events))
    assert entry["kind"] == "upcard" and entry["best"] == {"type": "draw", "source": "discard"}
    assert entry["class"] in ("mistake", "blunder"), entry


def test_the_same_record_gives_the_same_analysis():
    table = played_hand(random.Random(5))
    assert analyse(table.events, MATCH_ID) == analyse(table.events, MATCH_ID)


def played_hand(rng: random.Random, stop_before_knock: bool = False) -> Table:
    deck = list(DECK)
    rng.shuffle(deck)
    table = Table(deck)
    while table.state.hand_number == 1 and table.state.phase != "awaiting_deal":
        command = greedy_action_on_state(table.state)
        if stop_before_knock and command["type"] in ("knock", "gin"):
            break
        table.do(command)
    return table


def seen_positions(table: Table, seat: int) -> set[int]:
    """The deck positions whose cards seat 0 has seen, or whose place the opponent's plays
    fix: its own hand, the upcard, its stock draws, and every card the opponent threw."""
    deck = table.events[1]["data"]["deck"]
    where = {card: i for i, card in enumerate(deck)}
    fixed = set(range(0, 10)) | {20}  # seat 0 starts the first hand
    for e in table.events:
        data = e["data"]
        if e["type"] == "card_drawn" and data["seat"] == seat and data["source"] == "stock":
            fixed.add(where[data["card"]])
        if e["type"] in ("card_discarded", "knocked") and data["seat"] != seat:
            fixed.add(where[data["card"]])
    return fixed


@pytest.mark.parametrize("seed", range(6))
def test_hints_and_analysis_do_not_change_when_the_hidden_cards_are_swapped(seed):
    """The opponent's unseen cards and the stock dealt otherwise, consistently with all
    seat 0 saw (the opponent's throws stay where they were, so the same plays are
    legal): every hint and every analysis entry of seat 0 stays the same."""
    rng = random.Random(seed)
    table = played_hand(rng, stop_before_knock=True)
    deck = table.events[1]["data"]["deck"]
    free = sorted(set(range(52)) - seen_positions(table, 0))
    moved = [deck[i] for i in free]
    rng.shuffle(moved)
    other_deck = list(deck)
    for i, card in zip(free, moved, strict=True):
        other_deck[i] = card
    assert other_deck != deck
    other = Table(other_deck)
    for e in table.events[2:]:
        other.do(_command(e))
    assert other.state.hands[0] == table.state.hands[0] and other.state.hands[1] != table.state.hands[1]

    def seat0(t: Table):
        out, state = [], None
        for i, e in enumerate(t.events):
            if state is not None and state.turn == 0 and e["type"] in ("upcard_passed", "card_drawn", "card_discarded"):
                view = {k: v for k, v in seat_view(state, 0).items() if k != "commitment"}
                history = [redact_event(x, 0) for x in t.events[state.hand_start_version : i]]
                a = assess(view, history, MATCH_ID)
                if a is not None:
                    out.append((a.best, a.reason, sorted(a.values.items())))
            state = fold([e], state)
        return out

    hints = seat0(table)
    assert len(hints) >= 4
    assert seat0(other) == hints
    strip = lambda entries: [d for d in entries if d["seat"] == 0]  # noqa: E731
    assert strip(analyse(other.events, MATCH_ID)[1]) == strip(analyse(table.events, MATCH_ID)[1])


def _command(event: dict) -> dict:
    etype, data = event["type"], event["data"]
    if etype == "card_drawn":
        return {"type": "draw", "seat": data["seat"], "source": data["source"]}
    if etype == "upcard_passed":
        return {"type": "pass", "seat": data["seat"]}
    if etype == "card_discarded":
        return {"type": "discard", "seat": data["seat"], "card": data["card"]}
    raise AssertionError(f"unexpected {etype}")


def test_the_classes_follow_the_documented_thresholds():
    assert [classify(c) for c in (0, 1.49, 1.5, 3.99, 4, 9.99, 10, 50)] == [
        "good", "good", "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder", "blunder"
    ]


# --- the variants: Big Gin, Oklahoma's limits, Straight Gin, Hollywood ---------------

#: Seat 0 melds all eleven cards with the JH upcard (A-2-3-4C, 5-6-7-8D, 9-10-JH).
BIG_GIN_HAND = ["AC", "2C", "3C", "4C", "5D", "6D", "7D", "8D", "9H", "TH"]
FAR = ["KS", "QS", "2S", "4S", "6S", "8H", "2H", "KD", "QC", "9C"]


def test_a_big_gin_is_analysed_and_gin_instead_of_it_costs_the_bonus_difference():
    table = Table(deck_for(BIG_GIN_HAND, FAR, "JH", []), {"preset": "straight"})
    table.play(0, type="draw", source="discard")
    assert {"type": "big_gin"} in seat_view(table.state, 0)["legal_actions"]
    hint = assess(seat_view(table.state, 0), hand_history(table.events, table.state, 0), MATCH_ID)
    assert hint is not None and hint.best == {"type": "big_gin"} and "Big Gin" in hint.reason
    table.play(0, type="big_gin")
    (knocked,) = [e for e in table.events if e["type"] == "knocked"]
    assert knocked["data"]["card"] == "JH" and knocked["data"]["big_gin"] is True  # the card drawn: none thrown
    entry = table.decision(knocked["seq"])
    assert entry["played"] == {"type": "big_gin"} and entry["best"] == {"type": "big_gin"} and entry["cost"] == 0
    assert "31-point bonus" in entry["reason"]

    gin = Table(deck_for(BIG_GIN_HAND, FAR, "JH", []), {"preset": "straight"})
    gin.play(0, type="draw", source="discard")
    gin.play(0, type="gin", card="AC")
    (entry,) = [d for d in analyse(gin.events, MATCH_ID)[1] if d["played"]["type"] == "gin"]
    assert entry["best"] == {"type": "big_gin"} and entry["cost"] == pytest.approx(31 - 25, abs=0.01)


OKLAHOMA_HAND = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH", "KH"]


def test_under_oklahoma_the_reasons_use_the_hands_limit():
    # The 3D upcard sets the limit to 3: with the 4H drawn, 4 deadwood cannot knock.
    table = Table(deck_for(OKLAHOMA_HAND, FAR, "3D", ["4H"]), {"preset": "oklahoma"})
    for seat in (0, 1):
        table.play(seat, type="pass")
    table.play(0, type="draw", source="stock")
    view = seat_view(table.state, 0)
    assert view["knock_limit"] == 3 and not any(a["type"] == "knock" for a in view["legal_actions"])
    hint = assess(view, hand_history(table.events, table.state, 0), MATCH_ID)
    assert hint is not None and hint.best == {"type": "discard", "card": "KH"}, hint
    assert "this hand's limit is 3, set by the 3♦ upcard" in hint.reason, hint.reason

    # The AH drawn instead: 1 deadwood, within 3; a knock's reason names the limit.
    table = Table(deck_for(OKLAHOMA_HAND, FAR, "3D", ["AH"]), {"preset": "oklahoma"})
    for seat in (0, 1):
        table.play(seat, type="pass")
    table.play(0, type="draw", source="stock")
    view = seat_view(table.state, 0)
    assert {"type": "knock", "card": "KH"} in view["legal_actions"]
    hint = assess(view, hand_history(table.events, table.state, 0), MATCH_ID)
    assert hint is not None and hint.best in view["legal_actions"]
    if hint.best["type"] == "knock":
        assert "this hand's limit is 3" in hint.reason


def test_an_ace_upcard_and_straight_gin_are_explained_as_gin_only():
    table = Table(deck_for(OKLAHOMA_HAND, FAR, "AD", ["4H"]), {"preset": "oklahoma"})
    for seat in (0, 1):
        table.play(seat, type="pass")
    table.play(0, type="draw", source="stock")
    hint = assess(seat_view(table.state, 0), hand_history(table.events, table.state, 0), MATCH_ID)
    assert hint is not None and "only Gin ends this hand (the A♦ upcard allows Gin only)" in hint.reason
    straight = Table(deck_for(OKLAHOMA_HAND, FAR, "AD", ["4H"]), {"preset": "straight"})
    for seat in (0, 1):
        straight.play(seat, type="pass")
    straight.play(0, type="draw", source="stock")
    hint = assess(seat_view(straight.state, 0), hand_history(straight.events, straight.state, 0), MATCH_ID)
    assert hint is not None and "only Gin ends this hand (Straight Gin: no knocking)" in hint.reason


@pytest.mark.parametrize("preset", ["oklahoma", "straight", "hollywood"])
def test_hints_and_analysis_work_over_random_hands_of_each_variant(preset):
    """Bots play random deals; before every decision the hint is one of the legal
    plays, and the analysis of the whole record weighs every play made."""
    rng = random.Random(f"coach-{preset}")
    hinted = analysed = 0
    for game in range(3):
        deck = list(DECK)
        rng.shuffle(deck)
        table = Table(deck, {"preset": preset})
        levels = ("hard", "medium") if game % 2 else ("medium", "hard")
        while table.state.hand_number <= 2 and not table.state.finished:
            state = table.state
            if state.phase == "awaiting_deal":
                rest = list(DECK)
                rng.shuffle(rest)
                table.do({"type": "deal", "deck": rest, "salt": "0123456789abcdef"})
                continue
            seat = state.turn
            view = seat_view(state, seat)
            history = hand_history(table.events, state, seat)
            hint = assess(view, history, MATCH_ID)
            if hint is not None:
                assert hint.best in view["legal_actions"], (hint.best, view["legal_actions"])
                assert hint.reason and all(math.isfinite(v) for v in hint.values.values())
                hinted += 1
            plays = [a for a in view["legal_actions"] if a["type"] != "resign"]  # the seats are people's
            action = choose_action({**view, "legal_actions": plays}, history, levels[seat], random.Random(state.version))
            table.play(seat, **action)
        for decisions in analyse(table.events, MATCH_ID).values():
            for d in decisions:
                assert d["class"] in ("good", "inaccuracy", "mistake", "blunder") and d["cost"] >= 0 and d["reason"]
                analysed += 1
    assert hinted > 20 and analysed >= hinted // 2
