"""Bots against bots on the engine itself, with no database: for benchmarks and tests.

Each decision gets exactly what the service gives it: the seat's view and its redacted
events of the current hand (``hand_history``).  Deals come from a seeded generator
per (deal seed, hand number), so a match replayed with the seats swapped deals the
same cards, and the same seeds replay the same match.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from service.bots import choose_action
from service.engine import State, decide, fold, hand_history, seat_view
from service.engine.deals import shuffled_deck
from service.engine.game import AWAITING_DEAL


@dataclass
class HandRecord:
    result: str  # knock, gin, undercut, dead
    winner: int | None
    points: int
    knocker: int | None


@dataclass
class MatchRecord:
    levels: tuple[str, str]
    winner: int | None
    scores: tuple[int, int]
    hands: list[HandRecord] = field(default_factory=list)
    #: CPU seconds of the deciding thread per decision, by level (``time.thread_time``:
    #: other programs busy on the machine do not count against a bot).
    times: dict[str, list[float]] = field(default_factory=dict)


def deal_for(deal_seed: str, hand: int) -> dict:
    rng = random.Random(f"{deal_seed}:deal:{hand}")
    return {"type": "deal", "deck": shuffled_deck(rng), "salt": f"{rng.getrandbits(64):016x}"}


def hand_events(hand: list[dict], version: int, events: list) -> list[dict]:
    """The events of the current hand (``{"seq", "type", "data"}``) after ``events`` (the
    first of them numbered ``version + 1``); a deal starts the list afresh."""
    for i, event in enumerate(events):
        if event.type == "hand_dealt":
            hand = []
        hand.append({"seq": version + i + 1, "type": event.type, "data": event.data})
    return hand


Chooser = Callable[[Mapping[str, Any], list, str, random.Random], dict]


def play_match(
    levels: tuple[str, str],
    rules: Mapping[str, Any],
    deal_seed: str,
    bot_seeds: tuple[int, int] = (1, 2),
    *,
    check: Callable[[State, int, dict, dict], None] | None = None,
    chooser: Chooser = choose_action,
    max_hands: int = 200,
) -> MatchRecord:
    """Play one match between ``levels[0]`` (seat 0) and ``levels[1]`` (seat 1).

    ``check(state, seat, view, action)`` is called on every decision (tests use it).
    """
    seats = [{"name": f"bot {i}", "kind": "computer", "level": lv, "seed": bot_seeds[i]} for i, lv in enumerate(levels)]
    events = decide(State(), {"type": "start_match", "rules": dict(rules), "seats": seats})
    state = fold(events)
    hand: list[dict] = []
    # (*x,): a tuple of whatever sequence was given, as tuple(x), of the pair's type.
    record = MatchRecord(levels=(*levels,), winner=None, scores=(0, 0), times={lv: [] for lv in levels})
    while not state.finished and state.hand_number <= max_hands:
        if state.phase == AWAITING_DEAL:
            command = deal_for(deal_seed, state.hand_number + 1)
        else:
            seat = state.turn
            assert seat is not None, "a match being played, not awaiting a deal, is some seat's turn"
            view = seat_view(state, seat)
            rng = random.Random(f"{bot_seeds[seat]}:{state.version}")
            start = time.thread_time()
            action = chooser(view, hand_history(hand, state, seat), levels[seat], rng)
            record.times[levels[seat]].append(time.thread_time() - start)
            if check is not None:
                check(state, seat, view, action)
            command = {**action, "seat": seat}
        new = decide(state, command)
        hand = hand_events(hand, state.version, new)
        state = fold(new, state)
        for event in new:
            if event.type == "hand_ended":
                knock = state.last_hand["knock"] if state.last_hand else None
                d = event.data
                record.hands.append(HandRecord(d["result"], d["winner"], d["points"], knock["seat"] if knock else None))
    record.winner = state.winner
    record.scores = (*state.scores,)
    return record
