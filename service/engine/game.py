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

This module is the door to the game: everything it names lives in one of the modules
behind it, and is imported from here.

- ``state``: ``Event``, ``State`` (and its snapshot ``FIELDS``), the phases
- ``evolvers``: ``evolve`` and ``fold``, and the facts each event records
- ``deciders``: ``decide`` and ``execute``, and each command's decider, from
  ``match`` (start, join, deal, abort, resign, timeout), ``turns`` (the plays of a
  hand) and ``hints``
- ``commands``: a command's fields, checked
- ``clock``: ``deadline``, ``parse_time`` and the times commands carry
- ``seats``: names, player ids and seat specs
- ``legal``: ``legal_actions`` and ``plays``
"""

from .clock import TIME, TIME_YEARS, deadline, parse_time
from .deciders import DECIDERS, PLAY_COMMANDS, decide, execute
from .evolvers import EVOLVERS, evolve, fold
from .hints import HINT_PHASES, HINT_REASON_LENGTH, check_hint, default_hints, hints_allowed
from .legal import legal_actions, plays
from .match import commitment_of, next_starter
from .seats import LEVELS, MAX_SEED, NAME_LENGTH, SEAT_FIELDS, name_problem
from .state import (
    AWAITING_DEAL,
    DEFENSE,
    DISCARD,
    DRAW,
    END_REASONS,
    FIELDS,
    MATCH_OVER,
    NEW,
    PLAYING,
    SEATS,
    UPCARD_OFFER,
    WAITING,
    Event,
    State,
)

__all__ = [
    "AWAITING_DEAL",
    "DECIDERS",
    "DEFENSE",
    "DISCARD",
    "DRAW",
    "END_REASONS",
    "EVOLVERS",
    "FIELDS",
    "HINT_PHASES",
    "HINT_REASON_LENGTH",
    "LEVELS",
    "MATCH_OVER",
    "MAX_SEED",
    "NAME_LENGTH",
    "NEW",
    "PLAYING",
    "PLAY_COMMANDS",
    "SEATS",
    "SEAT_FIELDS",
    "TIME",
    "TIME_YEARS",
    "UPCARD_OFFER",
    "WAITING",
    "Event",
    "State",
    "check_hint",
    "commitment_of",
    "deadline",
    "decide",
    "default_hints",
    "evolve",
    "execute",
    "fold",
    "hints_allowed",
    "legal_actions",
    "name_problem",
    "next_starter",
    "parse_time",
    "plays",
]
