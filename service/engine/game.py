"""The game as a decider: ``decide(state, command) -> events``, ``evolve(state, event) -> state``.

``decide`` holds every rule and refuses what breaks one; ``evolve`` only records the
facts an event states, so folding a stored stream never needs a rule check, a clock
or a random generator.  The shuffle comes in as data: a ``deal`` command carries the
deck order (and a salt for the deal's commitment), and the event that deals keeps it.

A deal gives the starter ``deck[0:10]``, the other seat ``deck[10:20]``, turns
``deck[20]`` face up, and leaves ``deck[21:]`` as the stock, top first.

Commands are dicts.  Seat commands carry ``seat`` (0 or 1), set by the caller from
whoever is authenticated:

- ``{"type": "draw", "source": "stock" | "discard"}``
- ``{"type": "pass"}`` (declining the upcard, when the rules offer it)
- ``{"type": "discard", "card": "KS"}``
- ``{"type": "knock", "card": "KS", "melds": [...]}`` (``melds`` optional: omitted, of
  the knocker's arrangements with the least deadwood the one that leaves the defender
  the most after its best defense; sent, any legal arrangement within the knock limit
  under ``knocker_arranges``, otherwise one of the least deadwood)
- ``{"type": "gin", "card": "KS", "melds": [...]}`` (``melds`` optional)
- ``{"type": "defend", "melds": [...], "layoffs": [{"card": "8S", "meld": 0}]}``
  (both optional: both omitted means the suggested best defense; ``melds`` omitted, the
  best melds of the cards left after the layoffs; ``layoffs`` omitted, none)

- ``{"type": "resign"}`` (at any time while the match is being played, in turn or not:
  the other seat wins the match)
- ``{"type": "claim_timeout", "at": time}`` (the other seat's clock has run out)
- ``{"type": "abort"}`` (a match still waiting for players is called off)

and those the service issues: ``{"type": "start_match", "rules": {...}, "seats": [...]}``
(a seat ``{"kind": "open"}`` waits for a player), ``{"type": "join", "name": ...}`` (a
player takes an open seat) and ``{"type": "deal", "deck": [52 codes], "salt": "hex"}``.

Time is data too.  Under rules with a clock (``turn_seconds``) every command carries
``at``, the ISO 8601 time the service received it, and every event it causes records
that time in its data (``at``); a seat's deadline is ``turn_seconds`` after the time of
the event that gave it the turn, and a timeout claim is judged by the claim's own
``at``.  The engine never reads a clock.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from .cards import CARD_INDEX, CARD_VALUE, CardError, check_card, parse_cards
from .errors import CommandError, IllegalMoveError
from .layoffs import Defense, LayoffError, best_defense, best_layout, check_defense
from .melds import ArrangementError, best_melds, check_arrangement, deadwood_of_mask
from .rules import Rules, RulesError, resolve_rules, rules_from_json

SEATS = (0, 1)


class Event(NamedTuple):
    """A fact: its type (past tense, snake_case) and its JSON data."""

    type: str
    data: dict

    def to_json(self) -> dict:
        return {"type": self.type, "data": self.data}


# Phases of a match.
NEW = "new"  # no match_started yet
WAITING = "waiting_for_players"  # a seat is open: no hand is dealt until it is taken
AWAITING_DEAL = "awaiting_deal"  # the service deals next
UPCARD_OFFER = "upcard_offer"
DRAW = "draw"
DISCARD = "discard"
DEFENSE = "defense"
MATCH_OVER = "match_over"
#: While a match is being played (a player may resign; a clock may run).
PLAYING = frozenset({AWAITING_DEAL, UPCARD_OFFER, DRAW, DISCARD, DEFENSE})

#: How a match ended (``match_ended``'s ``reason``): the scores decided it (a total
#: reached the target, or the single hand was played), a seat resigned, a seat's clock
#: ran out and the other claimed the match, or it was called off before it began.
END_REASONS = ("score", "resigned", "timeout", "aborted")


class State:
    """A match as folded from its events.  Treat as immutable: ``evolve`` copies."""

    # A plain __dict__ (not __slots__) so that copying a state is one dict copy:
    # evolve copies on every event, and folding a long match must stay cheap.

    def __init__(self) -> None:
        self.version = 0
        self.rules: Rules | None = None
        self.seats: tuple = ()
        self.phase = NEW
        self.hand_number = 0
        self.starter: int | None = None
        self.turn: int | None = None
        self.deck: tuple[str, ...] = ()
        self.commitment: str | None = None
        self.salt = ""
        self.hands: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.stock_pos = 21
        self.discard_pile: tuple[str, ...] = ()
        self.taken_from_discard: str | None = None
        self.stock_only = False
        self.known: tuple[frozenset, frozenset] = (frozenset(), frozenset())
        self.knock: dict | None = None
        self.defense: dict | None = None
        self.scores = (0, 0)
        self.last_hand: dict | None = None
        self.winner: int | None = None
        self.end_reason: str | None = None
        self.hand_start_version = 0
        # Under a clock: the time of the last event, and of the one that gave the turn.
        self.last_at: str | None = None
        self.turn_since: str | None = None

    def copy(self) -> State:
        new = object.__new__(State)
        new.__dict__.update(self.__dict__)
        return new

    @property
    def stock_count(self) -> int:
        return len(self.deck) - self.stock_pos if self.deck else 0

    @property
    def stock(self) -> tuple[str, ...]:
        return self.deck[self.stock_pos :]

    @property
    def finished(self) -> bool:
        return self.phase == MATCH_OVER

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.__dict__ == other.__dict__

    def __repr__(self) -> str:
        return (
            f"State(version={self.version}, phase={self.phase!r}, hand={self.hand_number}, "
            f"turn={self.turn}, scores={self.scores})"
        )

    # Snapshots: a JSON image of the state, read back exactly.
    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            if name == "rules":
                value = value.to_json() if value else None
            elif name == "known":
                value = [sorted(k) for k in value]
            elif isinstance(value, tuple):
                value = _lists(value)
            out[name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        state = cls()
        for name in FIELDS:
            value = data[name]
            if name == "rules":
                value = rules_from_json(value) if value else None
            elif name == "known":
                value = tuple(frozenset(k) for k in value)
            elif name in ("seats",):
                value = tuple(value)
            elif isinstance(value, list):
                value = _tuples(value)
            setattr(state, name, value)
        return state


FIELDS = tuple(State().__dict__)


def _lists(value):
    return [_lists(v) if isinstance(v, tuple) else v for v in value]


def _tuples(value):
    return tuple(_tuples(v) if isinstance(v, list) else v for v in value)


# --- evolve: record facts ---------------------------------------------------------


def _remove(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1 :]


def _with_seat(pair: tuple, seat: int, value) -> tuple:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def _on_match_started(s: State, d: dict) -> None:
    s.rules = rules_from_json(d["rules"])
    s.seats = tuple(d["seats"])
    s.phase = WAITING if any(seat["kind"] == "open" for seat in s.seats) else AWAITING_DEAL


def _on_seat_joined(s: State, d: dict) -> None:
    seat = d["seat"]
    taken = {"name": d["name"], "kind": "human"}
    if "player" in d:
        taken["player"] = d["player"]
    s.seats = _with_seat(s.seats, seat, taken)
    if not any(x["kind"] == "open" for x in s.seats):
        s.phase = AWAITING_DEAL


def _on_hand_dealt(s: State, d: dict) -> None:
    deck = tuple(d["deck"])
    starter = d["starter"]
    s.hand_number = d["hand"]
    s.starter = starter
    s.turn = starter
    s.deck = deck
    s.commitment = d["commitment"]
    s.salt = d["salt"]
    first, second = deck[0:10], deck[10:20]
    s.hands = (first, second) if starter == 0 else (second, first)
    s.discard_pile = (deck[20],)
    s.stock_pos = 21
    s.taken_from_discard = None
    s.stock_only = False
    s.known = (frozenset(), frozenset())
    s.knock = None
    s.defense = None
    s.phase = UPCARD_OFFER if s.rules.upcard_offer else DRAW
    s.hand_start_version = s.version - 1  # the version just before this deal


def _on_upcard_passed(s: State, d: dict) -> None:
    seat = d["seat"]
    if seat == s.starter:
        s.turn = 1 - seat
    else:
        s.turn = s.starter
        s.phase = DRAW
        s.stock_only = True


def _on_card_drawn(s: State, d: dict) -> None:
    seat, card = d["seat"], d["card"]
    first, second = s.hands
    s.hands = (first + (card,), second) if seat == 0 else (first, second + (card,))
    if d["source"] == "discard":
        s.discard_pile = s.discard_pile[:-1]
        s.taken_from_discard = card
        s.known = _with_seat(s.known, seat, s.known[seat] | {card})
    else:
        s.stock_pos += 1
        s.taken_from_discard = None
    s.stock_only = False
    s.turn = seat
    s.phase = DISCARD


def _discard(s: State, seat: int, card: str) -> None:
    hand = s.hands[seat]
    i = hand.index(card)
    hand = hand[:i] + hand[i + 1 :]
    s.hands = (hand, s.hands[1]) if seat == 0 else (s.hands[0], hand)
    s.discard_pile += (card,)
    if card in s.known[seat]:
        s.known = _with_seat(s.known, seat, s.known[seat] - {card})
    s.taken_from_discard = None


def _on_card_discarded(s: State, d: dict) -> None:
    seat = d["seat"]
    _discard(s, seat, d["card"])
    s.turn = 1 - seat
    s.phase = DRAW


def _on_knocked(s: State, d: dict) -> None:
    seat = d["seat"]
    _discard(s, seat, d["card"])
    s.knock = d
    s.turn = 1 - seat
    s.phase = DEFENSE


def _on_defended(s: State, d: dict) -> None:
    s.defense = d
    s.turn = None


def _on_hand_ended(s: State, d: dict) -> None:
    s.scores = tuple(d["scores"])
    s.last_hand = {
        "hand": d["hand"],
        "result": d["result"],
        "winner": d["winner"],
        "points": d["points"],
        "knock": s.knock,
        "defense": s.defense,
        "hands": [list(h) for h in s.hands],
    }
    s.turn = None
    s.phase = AWAITING_DEAL


def _on_hint_shown(s: State, d: dict) -> None:
    """A hint changes nothing in the play (only the version)."""


def _on_match_ended(s: State, d: dict) -> None:
    s.winner = d["winner"]
    s.scores = tuple(d["scores"])
    s.end_reason = d["reason"]
    s.turn = None
    s.phase = MATCH_OVER


EVOLVERS = {
    "match_started": _on_match_started,
    "seat_joined": _on_seat_joined,
    "hand_dealt": _on_hand_dealt,
    "upcard_passed": _on_upcard_passed,
    "card_drawn": _on_card_drawn,
    "card_discarded": _on_card_discarded,
    "knocked": _on_knocked,
    "defended": _on_defended,
    "hand_ended": _on_hand_ended,
    "match_ended": _on_match_ended,
    "hint_shown": _on_hint_shown,
}


def evolve(state: State, event: Event | Mapping[str, Any]) -> State:
    """The state after one more event.  ``state`` itself is left unchanged."""
    if isinstance(event, Event):
        etype, data = event
    else:
        etype, data = event["type"], event["data"]
    return fold([(etype, data)], state)


def fold(events: Iterable[Event | Mapping[str, Any]], state: State | None = None) -> State:
    """Fold a stream of events (from the start, or onto ``state``, left unchanged).

    One copy serves the whole stream: the evolvers replace fields, never mutate the
    tuples they hold, so nothing is shared with ``state`` that could change under it.
    """
    new = state.copy() if state is not None else State()
    evolvers = EVOLVERS
    version = new.version
    for event in events:
        # Events from the engine are (type, data) tuples; stored ones may be dicts.
        etype, data = event if type(event) in (Event, tuple) else (event["type"], event["data"])
        new.version = version = version + 1
        turn = new.turn
        evolvers[etype](new, data)
        at = data.get("at")
        if at is not None:  # a clocked match: the turn's clock starts when it changes hands
            new.last_at = at
            if new.turn != turn:
                new.turn_since = at
    return new


# --- decide: apply the rules --------------------------------------------------------


def commitment_of(deck: Sequence[str], salt: str) -> str:
    """SHA-256 over ``salt:`` and the deck codes joined by commas (see the README)."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode()).hexdigest()


def _field(command: Mapping[str, Any], name: str) -> Any:
    if name not in command:
        raise CommandError(f"{command.get('type')!r} command needs a {name!r} field", "missing_field")
    return command[name]


def _card_field(command: Mapping[str, Any], name: str = "card") -> str:
    value = _field(command, name)
    if isinstance(value, str) and value in CARD_INDEX:
        return value
    try:
        check_card(value)
    except CardError as exc:
        raise CommandError(str(exc), "invalid_card") from None
    raise AssertionError("unreachable")


def _seat_of(command: Mapping[str, Any]) -> int:
    seat = command.get("seat")
    if seat not in SEATS or isinstance(seat, bool):
        raise CommandError(f"seat must be 0 or 1, got {seat!r}", "invalid_seat")
    return seat


def _summary(state: State) -> str:
    return f"(hand {state.hand_number}, phase {state.phase}, turn of seat {state.turn})"


def _require_turn(state: State, seat: int, *phases: str) -> None:
    if state.phase not in phases:
        raise IllegalMoveError(
            "wrong_phase",
            f"cannot do that in phase {state.phase!r}; allowed in {', '.join(phases)} {_summary(state)}",
        )
    if state.turn != seat:
        raise IllegalMoveError("not_your_turn", f"it is seat {state.turn}'s turn, not seat {seat}'s {_summary(state)}")


def _start_match(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != NEW:
        raise IllegalMoveError("already_started", "the match has already started")
    try:
        rules = resolve_rules(command.get("rules"))
    except RulesError as exc:
        raise CommandError(str(exc), "invalid_rules") from None
    seats = command.get("seats") or [{}, {}]
    if not isinstance(seats, list) or len(seats) != 2 or not all(isinstance(x, Mapping) for x in seats):
        raise CommandError("seats must be a list of two objects", "invalid_seats")
    seats = [_seat(i, spec) for i, spec in enumerate(seats)]
    if all(seat["kind"] == "open" for seat in seats):
        raise CommandError("at least one seat must be taken: the player who waits for the other", "invalid_seats")
    if rules.hints is None:
        rules = replace(rules, hints=default_hints(seats))
    return [Event("match_started", {"rules": rules.to_json(), "seats": seats})]


def default_hints(seats: Sequence[Mapping[str, Any]]) -> bool:
    """Hints, unless set: on against the computer and for two people on one device; off
    when a seat waits for a player to join, or the two seats are held by two players."""
    if any(seat["kind"] == "open" for seat in seats):
        return False
    held = [seat["player"] for seat in seats if "player" in seat]
    return not (len(held) == 2 and held[0] != held[1])


def hints_allowed(state: State) -> bool:
    """Whether a seat may ask for hints.  A match made before the ``hints`` parameter
    existed allows them against the computer only."""
    if state.rules is None:
        return False
    if state.rules.hints is not None:
        return state.rules.hints
    return any(seat["kind"] == "computer" for seat in state.seats)


#: The phases whose plays a hint may suggest (not the defense: the best one is listed).
HINT_PHASES = (UPCARD_OFFER, DRAW, DISCARD)


def check_hint(state: State, seat: int) -> None:
    """Raise IllegalMoveError unless ``seat`` may be given a hint now: hints allowed,
    and its turn to take or pass the upcard, draw or discard."""
    if state.phase == MATCH_OVER:
        raise IllegalMoveError("match_over", "the match is over")
    if not hints_allowed(state):
        raise IllegalMoveError("hints_off", "this match is played without hints (rules: hints false)")
    if state.turn != seat or state.phase not in HINT_PHASES:
        raise IllegalMoveError("not_your_turn", f"a hint is for the seat to play: seat {seat} has no play to make now {_summary(state)}")


#: The longest reason a hint may give.
HINT_REASON_LENGTH = 300


def _hint(state: State, command: Mapping[str, Any]) -> list[Event]:
    """A hint shown to the seat to act: one of its legal plays and why.  It changes
    nothing in the play; the event says that help was used (a hinted match is not rated)."""
    seat = _seat_of(command)
    check_hint(state, seat)
    action = command.get("action")
    if action not in plays(state, seat):
        raise IllegalMoveError("hint_not_legal", f"a hint names one of the seat's legal plays, not {action!r}")
    reason = command.get("reason")
    if not isinstance(reason, str) or not 0 < len(reason) <= HINT_REASON_LENGTH or not reason.isprintable():
        raise CommandError(f"a hint's reason is printable text of 1 to {HINT_REASON_LENGTH} characters", "invalid_hint")
    return [Event("hint_shown", {"seat": seat, "action": dict(action), "reason": reason})]


def _join(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != WAITING:
        raise IllegalMoveError("seat_taken", "no seat is open: every seat of the match is taken")
    name = _name(_field(command, "name"), "join")
    open_seats = [i for i, seat in enumerate(state.seats) if seat["kind"] == "open"]
    seat = command.get("seat", open_seats[0])
    if seat not in SEATS or isinstance(seat, bool):
        raise CommandError(f"seat must be 0 or 1, got {seat!r}", "invalid_seat")
    if seat not in open_seats:
        raise IllegalMoveError("seat_taken", f"seat {seat} is taken")
    joined = {"seat": seat, "name": name}
    if command.get("player") is not None:
        joined["player"] = _player(command["player"], "join")
    return [Event("seat_joined", joined)]


def _match_ends(state: State, reason: str, seat: int, winner: int | None, **extra) -> list[Event]:
    return [Event("match_ended", {"winner": winner, "scores": list(state.scores), "reason": reason, "seat": seat, **extra})]


def _player_seat(state: State, command: Mapping[str, Any]) -> int:
    seat = _seat_of(command)
    if state.seats[seat]["kind"] != "human":
        raise IllegalMoveError("not_a_player", f"seat {seat} is not a person's seat")
    return seat


def _abort(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    if state.phase != WAITING:
        raise IllegalMoveError("match_begun", "only a match still waiting for players can be called off")
    return _match_ends(state, "aborted", seat, None)


def _resign(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    if state.phase not in PLAYING:
        raise IllegalMoveError("not_playing", f"there is nothing to resign in phase {state.phase!r}")
    return _match_ends(state, "resigned", seat, 1 - seat)


def deadline(state: State) -> datetime | None:
    """When the seat to act runs out of time, under a clock (None: no clock running)."""
    seconds = state.rules.turn_seconds if state.rules is not None else None
    if seconds is None or state.phase not in PLAYING or state.turn is None or state.turn_since is None:
        return None
    return datetime.fromisoformat(state.turn_since) + timedelta(seconds=seconds)


def _claim_timeout(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _player_seat(state, command)
    if state.rules.turn_seconds is None:
        raise IllegalMoveError("no_clock", "this match is played without a clock")
    if state.phase not in PLAYING or state.turn != 1 - seat:
        raise IllegalMoveError("not_their_turn", f"the other seat is not to act {_summary(state)}")
    if state.seats[1 - seat]["kind"] != "human":
        raise IllegalMoveError("computer_never_times_out", "the computer never runs out of time")
    at = _time_field(command)
    due = deadline(state)
    if due is None or at < due:
        raise IllegalMoveError(
            "not_timed_out", f"seat {1 - seat} has until {due.isoformat() if due else 'no deadline'}; the claim came at {at.isoformat()}"
        )
    return _match_ends(state, "timeout", seat, seat)


#: An RFC 3339 time: seconds, at most microseconds, and its offset (Z, or at most ±14:00).
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-](?:0\d|1[0-3]):[0-5]\d|[+-]14:00)")
#: The years a time may fall in (so that any deadline after it can still be written).
TIME_YEARS = (2000, 9000)


def parse_time(value: object) -> datetime | None:
    """``value`` as an aware datetime if it is an RFC 3339 time (see TIME) between the
    years TIME_YEARS, else None."""
    if not isinstance(value, str) or not TIME.fullmatch(value):
        return None
    try:
        at = datetime.fromisoformat(value)
        year = at.astimezone(timezone.utc).year
    except (ValueError, OverflowError):
        return None
    return at if TIME_YEARS[0] <= year <= TIME_YEARS[1] else None


def _time_field(command: Mapping[str, Any]) -> datetime:
    value = _field(command, "at")
    at = parse_time(value)
    if at is None:
        raise CommandError(
            f"at must be an RFC 3339 time with its offset, e.g. 2026-12-01T09:30:00.000+00:00; got {value!r}", "invalid_time"
        )
    return at


def _stamped(state: State, command: Mapping[str, Any], events: list[Event]) -> list[Event]:
    """Under a clock, every event records the time of its command (never earlier than
    the match's last event)."""
    rules = state.rules
    if rules is None and events and events[0].type == "match_started":
        rules = rules_from_json(events[0].data["rules"])
    if rules is None or rules.turn_seconds is None:
        return events
    at = _time_field(command)
    if state.last_at is not None and at < datetime.fromisoformat(state.last_at):
        raise IllegalMoveError("time_went_back", f"at {command['at']} is before the match's last event ({state.last_at})")
    stamp = command["at"]
    return [Event(e.type, {**e.data, "at": stamp}) for e in events]


LEVELS = ("easy", "medium", "hard")
#: Seeds stay exact as JSON numbers in every language (JavaScript: below 2**53).
MAX_SEED = 2**53 - 1
SEAT_FIELDS = {"name", "kind", "level", "seed", "player"}
#: The longest name of a seat.
NAME_LENGTH = 40


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot be a name (None: it can).  A name is 1 to NAME_LENGTH
    characters, without spaces around it and without control or format characters
    (which would let a name rewrite a terminal or reorder the text around it)."""
    if not isinstance(value, str) or not 1 <= len(value) <= NAME_LENGTH:
        return f"a name is 1 to {NAME_LENGTH} characters"
    if value != value.strip():
        return "a name has no spaces before or after it"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for c in value):
        return "a name holds no control or formatting characters"
    return None


def _name(value: object, what: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise CommandError(f"{what}: {problem}", "invalid_name")
    return value


def _player(value: object, what: str) -> str:
    """A player id as recorded: a UUID in its canonical form."""
    try:
        if isinstance(value, str) and str(uuid.UUID(value)) == value:
            return value
    except ValueError:
        pass
    raise CommandError(f"{what}: a player is named by its id, a UUID", "invalid_seats")


def _seat(index: int, spec: Mapping[str, Any]) -> dict:
    """A seat as recorded: a name, human or computer, and a computer's level and seed;
    or open, waiting for a player to join."""
    unknown = sorted(set(spec) - SEAT_FIELDS)
    if unknown:
        raise CommandError(f"seat {index}: unknown field(s) {', '.join(unknown)}", "invalid_seats")
    kind = spec.get("kind", "human")
    if kind not in ("human", "computer", "open"):
        raise CommandError(f"seat {index}: kind must be 'human', 'computer' or 'open', got {kind!r}", "invalid_seats")
    if kind == "open":
        if len(spec) > 1:
            raise CommandError(f"seat {index}: an open seat has only its kind: the player who joins names it", "invalid_seats")
        return {"kind": "open"}
    name = spec.get("name")
    if name is not None:
        _name(name, f"seat {index}")
    if kind == "human":
        if "level" in spec or "seed" in spec:
            raise CommandError(f"seat {index}: only a computer seat has a level and a seed", "invalid_seats")
        seat = {"name": name or f"Player {index + 1}", "kind": kind}
        if "player" in spec:
            seat["player"] = _player(spec["player"], f"seat {index}")
        return seat
    if "player" in spec:
        raise CommandError(f"seat {index}: only a person's seat is held by a player", "invalid_seats")
    level = spec.get("level", "medium")
    if level not in LEVELS:
        raise CommandError(f"seat {index}: level must be one of {', '.join(LEVELS)}, got {level!r}", "invalid_seats")
    seed = spec.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise CommandError(
            f"seat {index}: a computer seat needs the seed of its decisions, a whole number from 0 to 2**53 - 1", "invalid_seats"
        )
    return {"name": name or f"Computer ({level})", "kind": kind, "level": level, "seed": seed}


def _deal(state: State, command: Mapping[str, Any]) -> list[Event]:
    if state.phase != AWAITING_DEAL:
        raise IllegalMoveError("wrong_phase", f"no deal is due in phase {state.phase!r}")
    deck = _field(command, "deck")
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
    rule = state.rules.starter
    if rule == "seat_0":
        return 0
    if rule == "loser":
        winner = state.last_hand["winner"] if state.last_hand else None
        return state.starter if winner is None else 1 - winner
    return 1 - state.starter


def _pass(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _seat_of(command)
    _require_turn(state, seat, UPCARD_OFFER)
    return [Event("upcard_passed", {"seat": seat})]


def _draw(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _seat_of(command)
    source = _field(command, "source")
    if source not in ("stock", "discard"):
        raise CommandError(f"source must be 'stock' or 'discard', got {source!r}", "invalid_source")
    if state.phase == UPCARD_OFFER:
        _require_turn(state, seat, UPCARD_OFFER)
        if source == "stock":
            raise IllegalMoveError(
                "upcard_offer", "the upcard is on offer: take it (draw from the discard pile) or pass"
            )
    else:
        _require_turn(state, seat, DRAW)
        if source == "discard" and state.stock_only:
            raise IllegalMoveError("stock_only", "both players passed the upcard: the starter draws from the stock")
    if source == "stock":
        card = state.deck[state.stock_pos]
    else:
        card = state.discard_pile[-1]
    return [Event("card_drawn", {"seat": seat, "source": source, "card": card})]


def _check_discard(state: State, seat: int, card: str) -> tuple[str, ...]:
    _require_turn(state, seat, DISCARD)
    hand = state.hands[seat]
    if card not in hand:
        raise IllegalMoveError("card_not_in_hand", f"{card} is not in seat {seat}'s hand ({' '.join(sorted(hand))})")
    if card == state.taken_from_discard:
        raise IllegalMoveError(
            "no_return", f"{card} was taken from the discard pile this turn and cannot be discarded now"
        )
    return _remove(hand, card)


def _after_hand_events(state: State, result: str, winner: int | None, points: int) -> list[Event]:
    scores = list(state.scores)
    if winner is not None:
        scores[winner] += points
    events = [
        Event(
            "hand_ended",
            {
                "hand": state.hand_number,
                "result": result,
                "winner": winner,
                "points": points,
                "scores": scores,
                # The reveal that lets anyone check the deal's commitment.
                "deck": list(state.deck),
                "salt": state.salt,
            },
        )
    ]
    rules = state.rules
    if rules.single_hand or (winner is not None and scores[winner] >= rules.target_score):
        events.append(Event("match_ended", {"winner": winner, "scores": scores, "reason": "score"}))
    return events


def _discard_cmd(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _seat_of(command)
    card = _card_field(command)
    _check_discard(state, seat, card)
    events = [Event("card_discarded", {"seat": seat, "card": card})]
    if state.stock_count <= state.rules.dead_hand_stock:
        events += _after_hand_events(state, "dead", None, 0)
    return events


def _arrangement_field(command: Mapping[str, Any], name: str) -> list | None:
    value = command.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(m, list) for m in value):
        raise CommandError(f"{name} must be a list of melds, each a list of card codes", "invalid_arrangement")
    return value


def _knock(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _seat_of(command)
    card = _card_field(command)
    melds = _arrangement_field(command, "melds")
    remaining = _check_discard(state, seat, card)
    rules = state.rules
    defender = 1 - seat
    if melds is None:
        arrangement = best_melds(remaining)
        if 0 < arrangement.deadwood <= rules.knock_limit:
            # Of the layouts with this deadwood, the one that leaves the defender most
            # (the engine knows both hands when it resolves the knock).
            arrangement = best_layout(remaining, state.hands[defender])
    else:
        try:
            arrangement = check_arrangement(remaining, melds)
        except (ArrangementError, CardError) as exc:
            raise IllegalMoveError("invalid_meld", f"knocker's melds: {exc}") from None
        least = deadwood_of_mask(sum(1 << CARD_INDEX[c] for c in remaining))
        if not rules.knocker_arranges and least < arrangement.deadwood and least <= rules.knock_limit:
            raise IllegalMoveError(
                "arrangement_not_allowed",
                f"under these rules the knocker lays out one of its arrangements of the least deadwood ({least}); "
                f"these melds leave {arrangement.deadwood} ({', '.join(arrangement.unmelded)})",
            )
    gin = arrangement.deadwood == 0
    if command["type"] == "gin" and not gin:
        raise IllegalMoveError(
            "not_gin", f"Gin needs 0 deadwood; discarding {card} leaves {arrangement.deadwood} {_summary(state)}"
        )
    if arrangement.deadwood > rules.knock_limit:
        raise IllegalMoveError(
            "knock_limit",
            f"knocking needs deadwood of {rules.knock_limit} or less; discarding {card} leaves "
            f"{arrangement.deadwood} ({', '.join(arrangement.unmelded)})",
        )
    knocked = Event(
        "knocked",
        {
            "seat": seat,
            "card": card,
            "gin": gin,
            "melds": [list(m) for m in arrangement.melds],
            "deadwood_cards": list(arrangement.unmelded),
            "deadwood": arrangement.deadwood,
        },
    )
    if not gin and rules.defender_arranges:
        return [knocked]
    after_knock = evolve(state, knocked)
    if gin:
        own = best_melds(state.hands[defender])
        defense = Defense(own.melds, (), own.unmelded, own.deadwood)
    else:
        defense = best_defense(arrangement.melds, state.hands[defender])
    return [knocked] + _settle(after_knock, defense, automatic=True)


def _settle(state: State, defense: Defense, automatic: bool) -> list[Event]:
    knock = state.knock
    knocker = knock["seat"]
    defender = 1 - knocker
    defended = Event("defended", {"seat": defender, "automatic": automatic, **defense.to_json()})
    k, d = knock["deadwood"], defense.deadwood
    rules = state.rules
    if knock["gin"]:
        result, winner, points = "gin", knocker, d + rules.gin_bonus
    elif d <= k:
        result, winner, points = "undercut", defender, k - d + rules.undercut_bonus
    else:
        result, winner, points = "knock", knocker, d - k
    return [defended] + _after_hand_events(evolve(state, defended), result, winner, points)


def _defend(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = _seat_of(command)
    _require_turn(state, seat, DEFENSE)
    melds = _arrangement_field(command, "melds")
    layoffs = command.get("layoffs")
    knocker_melds = state.knock["melds"]
    hand = state.hands[seat]
    if melds is None and layoffs is None:
        return _settle(state, best_defense(knocker_melds, hand), automatic=False)
    if layoffs is None:
        layoffs = []
    if not isinstance(layoffs, list) or not all(isinstance(x, dict) and {"card", "meld"} <= set(x) for x in layoffs):
        raise CommandError('layoffs must be a list of {"card": code, "meld": index}', "invalid_arrangement")
    try:
        # Melds left out: the best melds of the cards the layoffs leave.
        defense = check_defense(knocker_melds, hand, melds, [(x["card"], x["meld"]) for x in layoffs])
    except (LayoffError, ArrangementError) as exc:
        raise IllegalMoveError("invalid_layoff", f"defense: {exc}") from None
    return _settle(state, defense, automatic=False)


DECIDERS = {
    "start_match": _start_match,
    "join": _join,
    "abort": _abort,
    "resign": _resign,
    "claim_timeout": _claim_timeout,
    "deal": _deal,
    "pass": _pass,
    "draw": _draw,
    "discard": _discard_cmd,
    "knock": _knock,
    "gin": _knock,
    "defend": _defend,
    "hint": _hint,
}

#: The commands that play the cards (the others end the match).
PLAY_COMMANDS = ("draw", "pass", "discard", "knock", "gin", "defend")


def decide(state: State, command: Mapping[str, Any]) -> list[Event]:
    """The events a command causes, or ``CommandError`` / ``IllegalMoveError``."""
    if not isinstance(command, (dict, Mapping)):
        raise CommandError("a command is a JSON object with a 'type'", "invalid_command")
    ctype = command.get("type")
    decider = DECIDERS.get(ctype) if isinstance(ctype, str) else None
    if decider is None:
        raise CommandError(
            f"unknown command type {ctype!r}; the types are {', '.join(DECIDERS)}", "unknown_command"
        )
    if state.phase == MATCH_OVER:
        raise IllegalMoveError("match_over", "the match is over")
    if state.phase == WAITING and ctype in PLAY_COMMANDS:
        raise IllegalMoveError("waiting_for_players", "the match waits for a player to take the open seat")
    return _stamped(state, command, decider(state, command))


def execute(state: State, command: Mapping[str, Any]) -> tuple[State, list[Event]]:
    """Decide and fold in one step: the new state and the events."""
    events = decide(state, command)
    return fold(events, state), events


# --- legal actions ----------------------------------------------------------------


def legal_actions(state: State, seat: int, now: datetime | None = None) -> list[dict]:
    """Every command the seat may send now, each complete as it could be posted: its
    plays when it is its turn, then those that end the match (``resign``, while it is
    played; ``abort``, while it waits for players; ``claim_timeout``, once the other
    seat's deadline is past ``now``, when given).

    In the defense step only the suggested best defense is listed; any other legal
    arrangement may be sent in the same shape.  A knock or Gin is listed without melds
    (the best layout is laid out); the knocker may add its own.
    """
    actions = _plays(state, seat) if state.turn == seat else []
    if state.seats and state.seats[seat]["kind"] == "human":
        if state.phase == WAITING:
            actions.append({"type": "abort"})
        elif state.phase in PLAYING:
            actions.append({"type": "resign"})
            due = deadline(state) if now is not None and state.turn == 1 - seat else None
            if due is not None and now >= due and state.seats[1 - seat]["kind"] == "human":
                actions.append({"type": "claim_timeout"})
    return actions


def plays(state: State, seat: int) -> list[dict]:
    """The seat's legal plays of the cards (no resign, abort or timeout claim)."""
    return _plays(state, seat) if state.turn == seat else []


def _plays(state: State, seat: int) -> list[dict]:
    phase = state.phase
    if phase == UPCARD_OFFER:
        return [{"type": "draw", "source": "discard"}, {"type": "pass"}]
    if phase == DRAW:
        if state.stock_only:
            return [{"type": "draw", "source": "stock"}]
        return [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
    if phase == DISCARD:
        return _discard_actions(state, seat)
    if phase == DEFENSE:
        suggestion = best_defense(state.knock["melds"], state.hands[seat]).to_json()
        return [{"type": "defend", "melds": suggestion["melds"], "layoffs": suggestion["layoffs"]}]
    return []


def _discard_actions(state: State, seat: int) -> list[dict]:
    hand = state.hands[seat]
    limit = state.rules.knock_limit
    taken = state.taken_from_discard
    ordered = sorted(hand, key=CARD_INDEX.__getitem__)
    actions = [{"type": "discard", "card": card} for card in ordered if card != taken]
    mask = 0
    for card in hand:
        mask |= 1 << CARD_INDEX[card]
    # Discarding c leaves at least deadwood(all 11) - value(c): adding c back as
    # deadwood to the best 10-card arrangement gives an 11-card one.  So most hands
    # are ruled out of knocking by one search instead of eleven.
    eleven = deadwood_of_mask(mask)
    if eleven - 10 > limit:
        return actions
    for card in ordered:
        if card == taken or eleven - CARD_VALUE[card] > limit:
            continue
        left = deadwood_of_mask(mask & ~(1 << CARD_INDEX[card]))
        if left <= limit:
            # Without melds: the knock lays out the best layout against the defender's
            # hand, which no suggestion listed here could know.
            actions.append({"type": "gin" if left == 0 else "knock", "card": card})
    return actions


__all__ = [
    "Event",
    "State",
    "decide",
    "evolve",
    "execute",
    "fold",
    "legal_actions",
    "plays",
]
