"""The deciders of the match around its hands: starting it, a player joining, the
deal (and who starts each hand), and the endings that are not a score: a match called
off, a resignation, a timeout claimed."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .cards import CardError, parse_cards
from .clock import deadline, time_field
from .commands import command_field, seat_of, summary
from .errors import CommandError, IllegalMoveError
from .hints import default_hints
from .rules import RulesError, resolve_rules
from .seats import checked_name, checked_player, seat_from_spec
from .state import AWAITING_DEAL, NEW, PLAYING, SEATS, WAITING, Event, State


def commitment_of(deck: Sequence[str], salt: str) -> str:
    """SHA-256 over ``salt:`` and the deck codes joined by commas (see the README)."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode()).hexdigest()


#: The optional facts of ``match_started``, each recorded only with this value.
MATCH_FLAGS = {"paired": True, "rated": False}


def start_match(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != NEW:
        raise IllegalMoveError("already_started", "the match has already started")
    try:
        rules = resolve_rules(command.get("rules"))
    except RulesError as exc:
        raise CommandError(str(exc), "invalid_rules") from None
    seats = command.get("seats") or [{}, {}]
    if not isinstance(seats, list) or len(seats) != 2 or not all(isinstance(x, Mapping) for x in seats):
        raise CommandError("seats must be a list of two objects", "invalid_seats")
    seats = [seat_from_spec(i, spec) for i, spec in enumerate(seats)]
    if all(seat["kind"] == "open" for seat in seats):
        raise CommandError("at least one seat must be taken: the player who waits for the other", "invalid_seats")
    if rules.hints is None:
        rules = replace(rules, hints=default_hints(seats))
    started: dict[str, Any] = {"rules": rules.to_json(), "seats": seats}
    # Facts of how the match came to be, kept only when they hold (a record without
    # them reads as before): paired by matchmaking, and played unrated (casual).
    for flag, value in MATCH_FLAGS.items():
        given = command.get(flag)
        if given is None:
            continue
        if given is not value:
            raise CommandError(f"{flag} is {value} or left out, got {given!r}", "invalid_match_flag")
        if any(seat["kind"] != "human" or "player" not in seat for seat in seats):
            raise CommandError(f"{flag}: only a match between two players' seats is {flag}={value}", "invalid_match_flag")
        started[flag] = value
    return [Event("match_started", started)]


def join(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != WAITING:
        raise IllegalMoveError("seat_taken", "no seat is open: every seat of the match is taken")
    name = checked_name(command_field(command, "name"), "join")
    open_seats = [i for i, seat in enumerate(state.seats) if seat["kind"] == "open"]
    seat = command.get("seat", open_seats[0])
    if seat not in SEATS or isinstance(seat, bool):
        raise CommandError(f"seat must be 0 or 1, got {seat!r}", "invalid_seat")
    if seat not in open_seats:
        raise IllegalMoveError("seat_taken", f"seat {seat} is taken")
    joined = {"seat": seat, "name": name}
    if command.get("player") is not None:
        joined["player"] = checked_player(command["player"], "join")
    return [Event("seat_joined", joined)]


def _match_ends(state: State, reason: str, seat: int, winner: int | None, **extra: object) -> list[Event]:
    return [Event("match_ended", {"winner": winner, "scores": list(state.scores), "reason": reason, "seat": seat, **extra})]


def _player_seat(state: State, command: Mapping[str, Any]) -> int:
    seat = seat_of(command)
    if state.seats[seat]["kind"] != "human":
        raise IllegalMoveError("not_a_player", f"seat {seat} is not a person's seat")
    return seat


def abort(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    if state.phase != WAITING:
        raise IllegalMoveError("match_begun", "only a match still waiting for players can be called off")
    return _match_ends(state, "aborted", seat, None)


def resign(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    if state.phase not in PLAYING:
        raise IllegalMoveError("not_playing", f"there is nothing to resign in phase {state.phase!r}")
    return _match_ends(state, "resigned", seat, 1 - seat)


def claim_timeout(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    assert state.rules is not None  # the seats are set: the match has started
    if state.rules.turn_seconds is None:
        raise IllegalMoveError("no_clock", "this match is played without a clock")
    if state.phase not in PLAYING or state.turn != 1 - seat:
        raise IllegalMoveError("not_their_turn", f"the other seat is not to act {summary(state)}")
    if state.seats[1 - seat]["kind"] != "human":
        raise IllegalMoveError("computer_never_times_out", "the computer never runs out of time")
    at = time_field(command)
    due = deadline(state)
    if due is None or at < due:
        raise IllegalMoveError(
            "not_timed_out", f"seat {1 - seat} has until {due.isoformat() if due else 'no deadline'}; the claim came at {at.isoformat()}"
        )
    return _match_ends(state, "timeout", seat, seat)


def deal(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != AWAITING_DEAL:
        raise IllegalMoveError("wrong_phase", f"no deal is due in phase {state.phase!r}")
    deck = command_field(command, "deck")
    try:
        deck = parse_cards(deck if isinstance(deck, list) else [deck])
    except CardError as exc:
        raise CommandError(f"deck: {exc}", "invalid_deck") from None
    if len(deck) != 52:
        raise CommandError(f"a deck holds 52 distinct cards, got {len(deck)}", "invalid_deck")
    salt = command.get("salt", "")
    if not isinstance(salt, str):
        raise CommandError("salt must be a string", "invalid_deck")
    starter = next_starter(state)
    return [
        Event(
            "hand_dealt",
            {
                "hand": state.hand_number + 1,
                "starter": starter,
                "deck": list(deck),
                "salt": salt,
                "commitment": commitment_of(deck, salt),
            },
        )
    ]


def next_starter(state: State) -> int:
    """The seat that starts the next hand, under the rules' ``starter``: seat 0 starts
    the first hand; then ``alternate`` swaps, ``seat_0`` keeps seat 0, and ``loser`` gives
    the hand to the loser of the last one (after a dead hand, nobody lost: the same seat
    starts again)."""
    if state.hand_number == 0:
        return 0
    assert state.rules is not None and state.starter is not None  # set by the first deal
    rule = state.rules.starter
    if rule == "seat_0":
        return 0
    if rule == "loser":
        winner = state.last_hand["winner"] if state.last_hand else None
        return state.starter if winner is None else 1 - winner
    return 1 - state.starter
