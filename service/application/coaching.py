"""The coach's use cases: a hint for the seat to play, and the analysis of a hand's decisions.

A hint is the coach's best play from what the seat knows (its view and its history of
the hand), recorded as a ``hint_shown`` event; asked again before anything else happens,
the same hint is answered without another event.  An analysis weighs every decision of
the hands over so far, from the events alone; a finished hand's is kept in PostgreSQL
(``hand_analyses``: by match, hand, the analyser's version and seat, every worker
finding it), since the same record always gives the same one. Only hands that are over
are kept, whose cards every seat may see: the operator's analysis of a hand being played
is computed for the operator alone and never kept. Computing one is a heavy job
(``costs``): its CPU-seconds are charged to the caller and to the client address.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from service import coach
from service.bots import BOTS_VERSION
from service.coach.analysis import analyse, summary
from service.cooperative import off_loop
from service.engine import State, check_hint, decide, fold, hand_history, seat_view
from service.records.hands import hand_is_over, split_hands
from service.store import ConcurrencyError, EventStore
from service.store import limits as kept

from .callers import Caller, Callers
from .costs import Costs, Payer
from .errors import Conflict, Forbidden, HiddenUntilOver
from .play import Play
from .reads import Reads
from .records import hand_not_found, match_events
from .unit_of_work import UnitOfWork


@dataclass
class Hint:
    action: dict
    reason: str
    #: The ``hint_shown`` event's seq.
    seq: int
    version: int
    #: False when the same hint was shown before (no event was added).
    new: bool


class Coaching:
    def __init__(self, store: EventStore, callers: Callers, play: Play, costs: Costs, reads: Reads | None = None):
        self.store = store
        self.callers = callers
        self.play = play
        self.costs = costs
        self.reads = reads or Reads(store)

    def hint(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> Hint:
        """A hint for the caller's seat, the seat to act (IllegalMoveError ``hints_off``,
        ``not_your_turn`` otherwise)."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            if caller.seat is None:
                raise Forbidden("a hint is for a seat's own play: use the seat's token")
            for attempt in range(2):
                try:
                    return self._hint(uow, match_id, caller.seat)
                except ConcurrencyError:
                    if attempt:
                        raise Conflict("another request changed the match first; reload it and retry") from None
        raise AssertionError("unreachable")

    def _hint(self, uow: UnitOfWork, match_id: uuid.UUID, seat: int) -> Hint:
        state = self.store.load(match_id, conn=uow.conn)
        check_hint(state, seat)  # before the coach's work (the hint command checks it again)
        stored = self.store.hand_events(match_id, state, conn=uow.conn)
        last = stored[-1] if stored else None
        if last is not None and last["type"] == "hint_shown" and last["data"]["seat"] == seat:
            return Hint(last["data"]["action"], last["data"]["reason"], last["seq"], state.version, False)
        history = hand_history(stored, state, seat)
        view = seat_view(state, seat)
        assessment = off_loop(coach.assess, view, history, str(match_id))
        if assessment is None:  # one play only: it is the hint
            only = next(a for a in view["legal_actions"] if a["type"] in coach.PLAYS)
            assessment = coach.Assessment(coach.KINDS[state.phase], only, {coach.key_of(only): 0.0}, "it is the only play")
        command = {
            "type": "hint", "seat": seat, "action": assessment.best, "reason": assessment.reason,
            "at": self.play.stamp(state),
        }
        events = decide(state, command)
        after: State = fold(events, state)
        appended = uow.append(match_id, state.version, events, actor=f"seat:{seat}", state=after)
        uow.commit()
        shown = events[0].data
        return Hint(shown["action"], shown["reason"], appended.events[0].seq, after.version, True)

    # --- analysis -----------------------------------------------------------------------

    def hand_analysis(
        self, token: str, match_id: uuid.UUID, asked_seat: str | None, number: int, *, address: str | None = None
    ) -> tuple[dict, int]:
        """Every decision of hand ``number`` weighed, and the version it was read at."""
        caller, events, over = self._hands(token, match_id, asked_seat)
        if number not in over:
            raise hand_not_found(len(over), number)
        if not caller.is_operator and not over[number]:
            raise HiddenUntilOver("the analysis of a hand still being played")
        decisions = self._analysed(payer_of(caller, address), match_id, events, [number], over)[number]
        body = {
            "match_id": str(match_id), "hand": number, "over": over[number], "analyser": BOTS_VERSION,
            "decisions": decisions, **summary(decisions),
        }
        return body, len(events)

    def match_analysis(
        self, token: str, match_id: uuid.UUID, asked_seat: str | None, *, address: str | None = None
    ) -> tuple[dict, int]:
        """Each seat's accuracy, hand by hand (those over; the operator's: all) and over all."""
        caller, events, over = self._hands(token, match_id, asked_seat)
        numbers = [n for n in over if over[n] or caller.is_operator]
        analysed = self._analysed(payer_of(caller, address), match_id, events, numbers, over)
        hands = [{"hand": n, "over": over[n], **summary(analysed[n])} for n in numbers]
        every = [d for n in numbers for d in analysed[n]]
        body = {"match_id": str(match_id), "analyser": BOTS_VERSION, "hands": hands, **summary(every)}
        return body, len(events)

    def _hands(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> tuple[Caller, list[dict], dict[int, bool]]:
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
        events = self.reads.run(lambda uow: match_events(self.store, uow, match_id))
        hands = split_hands(events)
        return caller, events, {n: hand_is_over(h) for n, h in enumerate(hands, start=1)}

    def _analysed(
        self, payer: Payer, match_id: uuid.UUID, events: list[dict], numbers: list[int], over: dict[int, bool]
    ) -> dict[int, list[dict]]:
        """Each hand's decisions: kept ones (hands over) read, the others computed
        (a heavy job, charged to ``payer``), and those of hands over kept."""
        finished = [n for n in numbers if over[n]]
        out = self.reads.run(lambda uow: kept.analyses(uow.conn, match_id, BOTS_VERSION, finished)) if finished else {}
        missing = {n for n in numbers if n not in out}
        if missing:
            # Seconds of CPU for a long match: off the event loop, within the payer's budget.
            fresh = self.costs.heavy(payer, analyse, events, str(match_id), missing)
            for n in missing:
                out[n] = fresh.get(n, [])
            keep = {n: out[n] for n in missing if over[n]}  # never a hand being played
            if keep:
                with UnitOfWork(self.store) as uow:
                    uow.write(lambda conn: kept.save_analyses(conn, match_id, BOTS_VERSION, keep), alone=True)
                    uow.commit()
        return out


def payer_of(caller: Caller, address: str | None) -> Payer:
    """Who an analysis is charged to: the address, and the caller by what it is."""
    if caller.is_operator:
        return Payer(address, "operator")
    if caller.player_id is not None:
        return Payer(address, f"player:{caller.player_id}")
    return Payer(address, f"seat:{caller.match_id}:{caller.seat}")
