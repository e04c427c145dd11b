"""Players of whole matches on engine states, for tests and benchmarks: a random one
and a plain greedy one, each fed by a seeded generator.

The random player is a plain legal-move one: it ends the hand whenever it may (Gin
before a knock), otherwise picks uniformly among its legal actions.  The generator is
an input, so a seed gives the same match every time.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from service.engine import Event, State, decide, fold
from service.engine.deals import deal_command
from service.engine.game import AWAITING_DEAL, plays
from service.engine.melds import deadwood, discard_deadwoods


def random_action(state: State, rng: random.Random) -> dict:
    """A legal command for the seat whose turn it is (with its ``seat``)."""
    seat = state.turn
    actions = plays(state, seat)
    enders = [a for a in actions if a["type"] in ("big_gin", "gin", "knock")]
    if enders:
        gins = [a for a in enders if a["type"] != "knock"]
        action = rng.choice(gins or enders)
    else:
        action = rng.choice(actions)
    return {**action, "seat": seat}


def short_rules(preset: str) -> dict[str, Any]:
    """The shortest match of a preset: a single hand, or under Hollywood scoring (three
    games, never one hand) games to 1 point, decided in three hands won or more."""
    if preset == "hollywood":
        return {"preset": preset, "target_score": 1}
    return {"preset": preset, "single_hand": True}


def play_match(
    rng: random.Random,
    rules: Mapping[str, Any] | None = None,
    seats: list | None = None,
    max_events: int = 100_000,
    choose: Callable[[State, random.Random], dict] = random_action,
) -> tuple[State, list[Event]]:
    """Play one complete match at random (or by ``choose``); return the final state and
    every event."""
    start = {"type": "start_match", "rules": dict(rules or {})}
    if seats is not None:
        start["seats"] = seats
    events = decide(State(), start)
    state = fold(events)
    while not state.finished and len(events) < max_events:
        command = deal_command(rng) if state.phase == AWAITING_DEAL else choose(state, rng)
        new = decide(state, command)
        state = fold(new, state)
        events.extend(new)
    return state, events


def greedy_action_on_state(state: State) -> dict:
    """A plain greedy player's command for the seat whose turn it is: end the hand when
    it may, take the pile's top card when that lowers its deadwood, throw the card that
    leaves the least deadwood.  Its matches have realistic lengths (benchmarks)."""
    seat = state.turn
    actions = plays(state, seat)
    hand = list(state.hands[seat])
    enders = sorted((a for a in actions if a["type"] in ("big_gin", "gin", "knock")), key=lambda a: a["type"] == "knock")
    if len(actions) == 1 or enders:
        action = (enders or actions)[0]
    elif state.phase == "discard":
        left = discard_deadwoods(hand)
        action = min((a for a in actions if a["type"] == "discard"), key=lambda a: left[a["card"]])
    elif (
        state.discard_pile
        and {"type": "draw", "source": "discard"} in actions
        and min(discard_deadwoods(hand + [state.discard_pile[-1]]).values()) < deadwood(hand)
    ):
        action = {"type": "draw", "source": "discard"}
    else:
        action = next(a for a in actions if a.get("source") == "stock" or a["type"] == "pass")
    return {**action, "seat": seat}


def play_greedy_match(rng: random.Random, rules: Mapping[str, Any] | None = None, seats: list | None = None) -> list[Event]:
    """Every event of one complete match between two greedy players."""
    start = {"type": "start_match", "rules": dict(rules or {})}
    if seats is not None:
        start["seats"] = seats
    events = decide(State(), start)
    state = fold(events)
    while not state.finished:
        command = deal_command(rng) if state.phase == AWAITING_DEAL else greedy_action_on_state(state)
        new = decide(state, command)
        state = fold(new, state)
        events.extend(new)
    return events
