"""Every decision of a match's hands weighed, from its events alone.

The events are folded one by one; before each decision of a seat (a pass or a take of
the upcard, a draw, a discard, a knock, Gin or Big Gin) the seat's view and its redacted events
of the hand are rebuilt exactly as the seat had them, and ``assess`` weighs the play
made against the best.  Hints shown are skipped (they change nothing), and so are
the defender's layoffs (the engine suggests the best defense).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import fold
from service.engine.views import hand_history, seat_view

from . import CLASSES, assess, classify, score

DECISIONS = ("upcard_passed", "card_drawn", "card_discarded", "knocked")


def played_action(event: Mapping[str, Any]) -> dict:
    """The play that caused a decision event, as a legal action names it."""
    etype, data = event["type"], event["data"]
    if etype == "upcard_passed":
        return {"type": "pass"}
    if etype == "card_drawn":
        return {"type": "draw", "source": data["source"]}
    if etype == "card_discarded":
        return {"type": "discard", "card": data["card"]}
    if data.get("big_gin"):
        return {"type": "big_gin"}  # all eleven cards laid down: no card thrown
    return {"type": "gin" if data.get("gin") else "knock", "card": data["card"]}


def analyse(events: Sequence[Mapping[str, Any]], match_id: str, hands: set[int] | None = None) -> dict[int, list[dict]]:
    """The decisions of each hand (of ``hands``, else every hand), in order: hand number
    -> [{seq, seat, kind, played, best, cost, class, reason}]."""
    out: dict[int, list[dict]] = {}
    state = None
    for i, event in enumerate(events):
        if (
            state is not None
            and event["type"] in DECISIONS
            and state.turn == event["data"].get("seat")
            and (hands is None or state.hand_number in hands)
        ):
            entry = _decision(events, i, state, match_id)
            if entry is not None:
                out.setdefault(state.hand_number, []).append(entry)
        state = fold([event], state)
        if hands is not None and state.hand_number > max(hands, default=0) and state.phase != "awaiting_deal":
            break
    return out


def _decision(events, i: int, state, match_id: str) -> dict | None:
    event = events[i]
    seat = event["data"]["seat"]
    view = seat_view(state, seat)
    history = hand_history(events[state.hand_start_version : i], state, seat)
    played = played_action(event)
    assessment = assess(view, history, match_id, taken=played)
    if assessment is None:
        return None
    cost = assessment.cost(played)
    return {
        "seq": i + 1,
        "seat": seat,
        "kind": assessment.kind,
        "played": played,
        "best": {k: v for k, v in assessment.best.items() if k != "melds"},
        "cost": round(cost, 2),
        "class": classify(cost),
        "reason": assessment.reason,
    }


def summary(decisions: Sequence[Mapping[str, Any]]) -> dict:
    """Per seat: the accuracy (the mean decision score, 100 for a play that costs
    nothing, 10 less per point of cost, at least 0; null without decisions) and the
    count of each class."""
    accuracy: list[float | None] = []
    counts = []
    for seat in (0, 1):
        mine = [d for d in decisions if d["seat"] == seat]
        accuracy.append(round(sum(score(d["cost"]) for d in mine) / len(mine), 1) if mine else None)
        counts.append({name: sum(1 for d in mine if d["class"] == name) for name in CLASSES})
    return {"accuracy": accuracy, "counts": counts}
