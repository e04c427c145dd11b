"""What happens between a person's moves: the deals, and the computer's turns.

Randomness lives here, never in the engine: a deal's deck order and salt come from the
operating system's generator (``deal_rng``) and are recorded in the ``hand_dealt``
event; each computer seat has a seed in ``match_started``, and its decisions draw from
a generator seeded by that seed and the match's version (``bots.computer_decision``),
so replays and tests are stable.

So does the clock: every command is stamped with the time the service received it
(``stamp``: from ``clock``, never earlier than the match's last event), which the
engine records in the events of a match played under a clock and judges deadlines by.
Tests give the service a clock of their own.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from service import bots, feed
from service.cooperative import off_loop
from service.engine import Event, State, decide, fold, hand_history
from service.engine.deals import deal_command
from service.engine.game import AWAITING_DEAL, MATCH_OVER
from service.store import EventStore

from .hooks import Hooks
from .unit_of_work import UnitOfWork

#: The computer's levels whose decisions run off the event loop (service.cooperative).
SLOW_LEVELS = frozenset({"hard"})

#: Upper bound on events one request may cause (a whole computer-only hand is far less).
MAX_EVENTS_PER_REQUEST = 2_000


def system_clock() -> datetime:
    return datetime.now(UTC)


class Play:
    def __init__(
        self, store: EventStore, hooks: Hooks, clock: Callable[[], datetime] = system_clock, deal_rng: random.Random | None = None,
        feeds: feed.Folder | None = None,
    ):
        self.store = store
        #: Folds what a use case stored into the players' notifications.
        self.feeds = feeds
        self.hooks = hooks
        self.clock = clock
        # The OS generator by default: deals must not be predictable from earlier ones.
        self.deal_rng = deal_rng or random.SystemRandom()

    def stamp(self, state: State) -> str:
        """The time of a command on ``state``: now, or the match's last event's time if
        this server's clock is behind it (times in a match never go back)."""
        now = self.clock().astimezone(UTC)
        if state.last_at is not None:
            now = max(now, datetime.fromisoformat(state.last_at))
        return now.isoformat(timespec="milliseconds")

    def autoplay(
        self, match_id: uuid.UUID, state: State, pending: list[Event], start: State | None = None, conn=None,
        moves: list[str] | None = None,
    ) -> tuple[State, list[Event]]:
        """Deal when a deal is due and play computer turns until a person must act.

        ``pending`` are this request's events not yet stored, which follow ``start``
        (the stored state the request began from; None for a new match).  The type of
        each computer move is added to ``moves``, for the hooks once it is stored."""
        new: list[Event] = []
        stored: list[dict] | None = None  # the stored events of start's hand, fetched once
        at = None
        while state.phase != MATCH_OVER and len(new) < MAX_EVENTS_PER_REQUEST:
            at = at or self.stamp(state)  # one time for the request's every event
            if state.phase == AWAITING_DEAL:
                command = {**deal_command(self.deal_rng), "at": at}
            elif state.turn is not None and state.seats[state.turn]["kind"] == "computer":
                base = start.version if start is not None else 0
                if stored is None:
                    # base is start's version: non-zero only with a start.
                    stored = self.store.hand_events(match_id, start, conn=conn) if start is not None and base else []
                unstored = [{"seq": base + i + 1, "type": e.type, "data": e.data} for i, e in enumerate(pending + new)]
                history = hand_history(stored + unstored, state, state.turn)
                command = {**self.computer_action(state, history), "seat": state.turn, "at": at}
                if moves is not None:
                    moves.append(command["type"])
            else:
                break
            events = decide(state, command)
            state = fold(events, state)
            new += events
        return state, new

    def computer_action(self, state: State, history: list[dict]) -> dict:
        assert state.turn is not None, "asked on a computer seat's turn"
        level = state.seats[state.turn]["level"]
        started = time.perf_counter()
        if level in SLOW_LEVELS:
            # Tens of milliseconds at times: off the event loop, which serves meanwhile.
            action = off_loop(bots.computer_decision, state, history)
        else:
            action = bots.computer_decision(state, history)
        self.hooks.bot_decided(level, time.perf_counter() - started)
        return action

    def stored(self, uow: UnitOfWork) -> None:
        """After a use case's commit: its events into the players' feeds (soon, if the
        global order's horizon holds them back; a failure only delays them: readers
        of a feed catch up too)."""
        if self.feeds is not None and uow.appended:
            self.feeds.fold(max(e.position for e in uow.appended))

    def report(self, computer_moves: list[str], person_move: str | None = None) -> None:
        if person_move is not None:
            self.hooks.action_applied(person_move, "person")
        for move in computer_moves:
            self.hooks.action_applied(move, "computer")
