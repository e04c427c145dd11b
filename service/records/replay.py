"""Replay a recorded event list through the engine, refusing the first event that does
not follow from the rules.

Each recorded event that a player or the dealer caused is turned back into the command
that would cause it (a ``card_drawn`` into a draw from its source, a ``knocked`` into a
knock with its card and melds, ...); the engine decides that command on the state so
far, and every event it produces must equal the next recorded events exactly.  So a
drawn card that is not the top of the stock, a knock over the limit, a deck that is not
52 distinct cards, a score that does not follow from the play, or an event nobody could
cause is reported with its index and the rule broken.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.engine import (
    CommandError,
    Event,
    IllegalMoveError,
    State,
    decide,
    fold,
    hand_history,
)
from service.engine.match import MATCH_FLAGS


def plain(value: Any) -> str:
    """A recorded value as a sentence shows it (a person reads these, so never Python's
    repr): a string bare, a list of cards "2D 4C 7H", a list of melds "[7C 7D 7H] [AS 2S 3S]",
    null, true and false as JSON writes them, an object as compact JSON."""
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, list):
        if not value:
            return "none"
        if all(isinstance(v, list) for v in value):
            return " ".join(f"[{plain(v)}]" for v in value)
        return " ".join(plain(v) for v in value) if all(isinstance(v, str) for v in value) else ", ".join(plain(v) for v in value)
    if isinstance(value, (dict, bool)) or value is None:
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


class ReplayError(ValueError):
    """The record's event at ``index`` (0-based) does not follow from the play so far."""

    def __init__(self, index: int, rule: str, message: str):
        super().__init__(f"events[{index}] (seq {index + 1}): {message}")
        self.index = index
        self.rule = rule


#: The command that ends a match for each reason a seat may end it for.
ENDING_COMMANDS = {"resigned": "resign", "timeout": "claim_timeout", "aborted": "abort"}


def command_for(event: Mapping[str, Any], state: State) -> dict | None:
    """The command that causes ``event`` as the first event of its decision, or None
    for events that only ever follow another (``defended`` when automatic,
    ``hand_ended``, ``match_ended`` by the score).  Under a clock the command carries the
    event's time (``at``), which the engine checks and records again."""
    command = _command_for(event, state)
    if command is not None and "at" in event["data"]:
        command["at"] = event["data"]["at"]
    return command


def _command_for(event: Mapping[str, Any], state: State) -> dict | None:
    etype, data = event["type"], event["data"]
    if etype == "seat_joined":
        command = {"type": "join", "seat": data.get("seat"), "name": data.get("name")}
        if "player" in data:
            command["player"] = data["player"]
        return command
    if etype == "match_ended" and data.get("reason") in ENDING_COMMANDS:
        return {"type": ENDING_COMMANDS[data["reason"]], "seat": data.get("seat")}
    if etype == "match_started":
        command = {"type": "start_match", "rules": data.get("rules"), "seats": data.get("seats")}
        command.update({flag: data[flag] for flag in MATCH_FLAGS if flag in data})
        return command
    if etype == "hand_dealt":
        return {"type": "deal", "deck": data.get("deck"), "salt": data.get("salt", "")}
    if etype == "upcard_passed":
        return {"type": "pass", "seat": data.get("seat")}
    if etype == "card_drawn":
        return {"type": "draw", "seat": data.get("seat"), "source": data.get("source")}
    if etype == "card_discarded":
        return {"type": "discard", "seat": data.get("seat"), "card": data.get("card")}
    if etype == "knocked" and data.get("big_gin"):
        return {"type": "big_gin", "seat": data.get("seat")}
    if etype == "knocked":
        # With the melds laid out: any knocker may choose its layout (among those of the
        # least deadwood, or any under knocker_arranges), and a record made before the
        # automatic layout weighed the defender's hand keeps the one it laid out then.
        return {
            "type": "gin" if data.get("gin") else "knock", "seat": data.get("seat"), "card": data.get("card"),
            "melds": data.get("melds"),
        }
    if etype == "hint_shown":
        return {"type": "hint", "seat": data.get("seat"), "action": data.get("action"), "reason": data.get("reason")}
    if etype == "defended" and not data.get("automatic", True):
        return {"type": "defend", "seat": data.get("seat"), "melds": data.get("melds"), "layoffs": data.get("layoffs")}
    return None


@dataclass
class Replayed:
    state: State
    #: The state just after each recorded event, index for index (only if asked for).
    states: list[State] | None = None


#: ``computer(state, history) -> action``: the computer's move for the seat whose turn it
#: is, given the seat's redacted events of the hand (``service.bots.computer_decision``).
Computer = Callable[[State, list[dict]], dict]


def replay(events: Sequence[Mapping[str, Any]], *, keep_states: bool = False, computer: Computer | None = None) -> Replayed:
    """Replay ``events`` (each ``{"type", "data"}``) from an empty match; raise
    ReplayError at the first one that does not follow from the rules.

    With ``computer``, every move of a computer seat is made again and must be the one
    recorded (rule ``computer_move_mismatch``)."""
    state = State()
    states: list[State] | None = [] if keep_states else None
    i = 0
    while i < len(events):
        event = events[i]
        if not isinstance(event, Mapping) or not isinstance(event.get("data"), Mapping):
            raise ReplayError(i, "malformed_event", "an event is an object with a type and a data object")
        command = command_for(event, state)
        if command is None:
            raise ReplayError(
                i, "unexpected_event", f"{plain(event.get('type'))} cannot happen here: nothing the players did causes it"
            )
        if computer is not None and _by_computer(command, state):
            _check_computer_move(i, events, state, command, computer)
        try:
            produced = decide(state, command)
        except IllegalMoveError as exc:
            raise ReplayError(i, exc.rule, f"{event['type']}: {exc}") from None
        except CommandError as exc:
            raise ReplayError(i, exc.code, f"{event['type']}: {exc}") from None
        for k, expected in enumerate(produced):
            j = i + k
            if j >= len(events):
                raise ReplayError(j, "missing_event", f"the play requires a {expected.type} event here")
            _compare(j, events[j], expected)
            state = fold([expected], state)
            if states is not None:
                states.append(state)
        i += len(produced)
    return Replayed(state, states)


def _by_computer(command: Mapping[str, Any], state: State) -> bool:
    seat = command.get("seat")
    return (
        command["type"] in SEAT_MOVES and seat in (0, 1) and seat == state.turn and len(state.seats) == 2
        and state.seats[seat].get("kind") == "computer"
    )


def _check_computer_move(i: int, events, state: State, command: dict, computer: Computer) -> None:
    """The computer's move made again from the record so far must be the recorded one."""
    seat = command["seat"]
    history = hand_history(events[state.hand_start_version : i], state, seat)
    try:
        action = computer(state, history)
        made = {**action, "seat": seat, **({"at": command["at"]} if "at" in command else {})}
        again = decide(state, made)
    except (CommandError, IllegalMoveError, ValueError, KeyError) as exc:
        raise ReplayError(i, "computer_move_mismatch", f"the computer's move cannot be made again here: {exc}") from None
    recorded = [(e.get("type"), e.get("data")) for e in events[i : i + len(again)]]
    if recorded != [(e.type, e.data) for e in again]:
        level = state.seats[seat].get("level")
        raise ReplayError(
            i, "computer_move_mismatch",
            f"the computer ({level}, seat {seat}) plays {_move_text(action)} here, not the recorded "
            f"{events[i].get('type')} {_move_text(command)}",
        )


def _move_text(move: Mapping[str, Any]) -> str:
    return " ".join(str(move[k]) for k in ("type", "source", "card") if k in move)


#: The commands a seat's player (a person or the computer) decides.
SEAT_MOVES = {"pass", "draw", "discard", "knock", "gin", "big_gin", "defend"}


def _compare(index: int, recorded: Mapping[str, Any], expected: Event) -> None:
    if recorded.get("type") != expected.type:
        raise ReplayError(
            index, "unexpected_event", f"the play requires a {expected.type} event here, not {plain(recorded.get('type'))}"
        )
    data = recorded.get("data")
    if data == expected.data:
        return
    # replay's callers give events checked by the record's schema, or stored ones: data is an object.
    assert isinstance(data, Mapping), "an event's data is an object"
    wrong = sorted(k for k in set(data) | set(expected.data) if data.get(k) != expected.data.get(k))
    rule = RULE_OF_FIELD.get((expected.type, wrong[0]), "does_not_follow")
    detail = "; ".join(f"{k}: recorded {plain(data.get(k))}, the play gives {plain(expected.data.get(k))}" for k in wrong[:3])
    raise ReplayError(index, rule, f"{expected.type} does not follow from the play ({detail})")


#: The rule a mismatching field breaks, for clearer reports.
RULE_OF_FIELD = {
    ("card_drawn", "card"): "card_not_on_top",
    ("hand_dealt", "commitment"): "commitment_mismatch",
    ("hand_dealt", "hand"): "hand_number",
    ("hand_dealt", "starter"): "starter",
    ("hand_ended", "points"): "score_mismatch",
    ("hand_ended", "scores"): "score_mismatch",
    ("hand_ended", "winner"): "score_mismatch",
    ("hand_ended", "result"): "score_mismatch",
    ("knocked", "deadwood"): "deadwood_mismatch",
    ("knocked", "melds"): "melds_mismatch",
    ("defended", "deadwood"): "deadwood_mismatch",
    ("defended", "layoffs"): "layoffs_mismatch",
    ("defended", "melds"): "melds_mismatch",
    ("match_ended", "winner"): "score_mismatch",
    ("match_ended", "scores"): "score_mismatch",
    ("match_ended", "reason"): "does_not_follow",
}
