"""No hidden card reaches a bot: games that differ only in what the seat cannot see
(the opponent's unknown cards, the order of the stock) get the same decision."""

from __future__ import annotations

import random

import pytest

from service.application.views import view_for
from service.bots import LEVELS, choose_action
from service.engine import State, decide, fold, redact_event
from service.engine.deals import shuffled_deck
from tests.support.play import short_rules

from .helpers import MATCH_ID, SEATS


def replay(commands: list[dict]) -> tuple[State, list[dict]]:
    """The state after ``commands`` and every event, numbered as the store would."""
    state, events = State(), []
    for command in commands:
        new = decide(state, command)
        for event in new:
            events.append({"seq": len(events) + 1, "type": event.type, "data": event.data})
        state = fold(new, state)
    return state, events


def seat_inputs(state: State, events: list[dict], seat: int) -> tuple[dict, list[dict]]:
    first = state.hand_start_version
    return view_for(state, seat, MATCH_ID), [redact_event(e, seat) for e in events[first:]]


def hidden_cards(state: State, seat: int) -> set[str]:
    """What ``seat`` has never seen: the opponent's cards not taken from the pile, and the stock."""
    opponent = 1 - seat
    return (set(state.hands[opponent]) - state.known[opponent]) | set(state.stock)


def without_commitment(view: dict, history: list[dict]) -> tuple[dict, list[dict]]:
    """The deal's commitment hashes the whole deck, so it differs; it names no card."""
    view = {k: v for k, v in view.items() if k != "commitment"}
    history = [
        {**e, "data": {k: v for k, v in e["data"].items() if k != "commitment"}} if e["type"] == "hand_dealt" else e
        for e in history
    ]
    return view, history


def positions(seed: int, preset: str):
    """Decision points of a medium-vs-medium hand: (commands so far, deck, seat to act)."""
    rng = random.Random(seed)
    deck = shuffled_deck(rng)
    commands = [
        {"type": "start_match", "rules": short_rules(preset), "seats": SEATS},
        {"type": "deal", "deck": deck, "salt": "00"},
    ]
    state, events = replay(commands)
    while not state.finished and state.turn is not None and state.phase != "defense":
        yield list(commands), deck, state.turn
        view, history = seat_inputs(state, events, state.turn)
        action = choose_action(view, history, "medium", random.Random(len(commands)))
        command = {**action, "seat": state.turn}
        commands.append(command)
        state, events = replay(commands)


@pytest.mark.parametrize("preset", ["classic", "bonus-20-10", "oklahoma", "straight", "hollywood"])
def test_games_differing_only_in_hidden_cards_get_the_same_decision_from_every_level(preset):
    compared = 0
    for seed in range(6):
        for commands, deck, seat in positions(seed, preset):
            if len(commands) % 3:
                continue  # every third position keeps the test quick
            state, events = replay(commands)
            hidden = sorted(hidden_cards(state, seat))
            rng = random.Random(f"{seed}:{len(commands)}")
            shuffled = hidden[:]
            while shuffled == hidden:
                rng.shuffle(shuffled)
            swap = dict(zip(hidden, shuffled))
            other_deck = [swap.get(c, c) for c in deck]
            other_state, other_events = replay(commands[:1] + [{**commands[1], "deck": other_deck}] + commands[2:])
            assert other_state.hands[1 - seat] != state.hands[1 - seat] or other_state.stock != state.stock

            view, history = seat_inputs(state, events, seat)
            other_view, other_history = seat_inputs(other_state, other_events, seat)
            assert view["commitment"] != other_view["commitment"]
            assert without_commitment(view, history) == without_commitment(other_view, other_history)
            for level in LEVELS:
                here = choose_action(view, history, level, random.Random(99))
                there = choose_action(other_view, other_history, level, random.Random(99))
                assert here == there, (level, view["hand"], here, there)
            compared += 1
    assert compared > 40
