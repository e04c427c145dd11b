"""Records: export, import, past states, the hands in full and the audit.

An import is checked completely before anything is written (``check_record``: the JSON
Schema, the record's own consistency, a replay of every event through the rules, the
computer's moves made again when the record names this service's ``BOTS_VERSION``;
then its signature).  A valid record becomes a match, written by the code that writes
every new match (``MatchService.stage_new_match``): the events with their original
times and schema versions, then what is due before a person acts (a record cut after a
hand, or on the computer's turn, continues with the next deal or the computer's move),
the seat tokens, the provenance and, when a seat is open, an invite -- all or nothing.

Where it is stored: a record whose signature verifies (by this service's key or a
trusted one) under its own match id; any other record -- unsigned, or signed by a key
nobody here knows -- under an id derived from its id and its digest (``home_of``), so
that an unverified copy never takes the id a genuine record will claim, and the same
record always lands in the same place.  Importing a record again returns the match
already there: as it is now when it is that very record, and otherwise (the match went
on since) only what the record itself holds -- its state, and what this import checked
-- so that a record anyone could rebuild (a lobby entry's first event, say) tells
nothing of how the match went on.

A seat sees a record, a past state, a hand in full or the audit only where it shows
no card the seat may not see yet; the operator sees everything.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from service.engine import Event, State, fold
from service.engine.game import WAITING, parse_time
from service.records.format import build_record, digest_of
from service.records.hands import (
    audit,
    hand_detail,
    hand_is_over,
    hand_summary,
    split_hands,
)
from service.records.records import (
    RecordError,
    checked_record,
    stored_event_json,
    upcast_events,
)
from service.records.signing import SignatureInvalid, Signer
from service.store import ConcurrencyError, EventStore, MatchNotFound
from service.store.provenance import Provenance, provenance_of

from . import tokens
from .callers import Caller, Callers
from .costs import Costs, Payer
from .errors import ApplicationError, Forbidden, HiddenUntilOver, Invalid, NotFound
from .matches import MatchService
from .play import Play
from .reads import Reads
from .unit_of_work import UnitOfWork
from .views import Views


class RecordRefused(ApplicationError):
    """A record that cannot be imported: ``code`` says why, ``index`` names the event."""

    def __init__(self, error: RecordError):
        self.index = error.index
        extra = {} if error.index is None else {"index": error.index, "seq": error.index + 1}
        super().__init__(str(error), code=error.code, rule=error.rule, errors=error.errors, extra=extra)
        self.kind = "conflict" if error.code == "match_exists" else "invalid"


@dataclass
class Imported:
    match_id: uuid.UUID
    #: The id the record names (match_id unless the record's signature is not verified here).
    record_id: uuid.UUID
    state: State
    created: bool
    tokens: dict[int, str]
    #: A fresh invite code when the match waits for a player (the record holds none).
    invite: str | None
    provenance: dict


def hand_not_found(count: int, number: int) -> NotFound:
    return NotFound(f"the match has {count} hand(s), not a hand {number}", code="hand_not_found")


def match_events(store: EventStore, uow: UnitOfWork, match_id: uuid.UUID) -> list[dict]:
    """Every event of the match as a record holds it (MatchNotFound when there is none)."""
    events = [stored_event_json(e) for e in store.read(match_id, conn=uow.conn)]
    if not events:
        raise MatchNotFound(match_id)
    return events


#: The namespace of the ids of matches imported from unverified records (``home_of``).
UNVERIFIED_RECORDS = uuid.UUID("6f1d0e6c-3b0e-5a43-9d76-2b1f6a0c9e51")


def home_of(recorded_id: uuid.UUID, digest: str, verified: bool) -> uuid.UUID:
    """Where a record is stored: its own id when its signature verifies, else an id
    derived from its id and its digest (the same record, the same place; a changed copy
    elsewhere, never at the id the genuine record claims).

    >>> record_id = uuid.UUID(int=1)
    >>> home_of(record_id, "ab", True) == record_id, home_of(record_id, "ab", False) == home_of(record_id, "ab", False)
    (True, True)
    >>> home_of(record_id, "ab", False) in (record_id, home_of(record_id, "ac", False))
    False
    """
    return recorded_id if verified else uuid.uuid5(UNVERIFIED_RECORDS, f"{recorded_id}:{digest}")


def full_state(state: State) -> dict:
    """Everything in a state, hidden cards included (operator, or finished hands)."""
    return {
        "version": state.version,
        "phase": state.phase,
        "turn": state.turn,
        "hand_number": state.hand_number,
        "starter": state.starter,
        "scores": list(state.scores),
        "winner": state.winner,
        "hands": [list(h) for h in state.hands],
        "stock": list(state.stock),
        "discard_pile": list(state.discard_pile),
        "no_return": state.taken_from_discard,
        "commitment": state.commitment,
        "knock": state.knock,
        "defense": state.defense,
        "last_hand": state.last_hand,
    }


class Records:
    def __init__(
        self, store: EventStore, callers: Callers, views: Views, matches: MatchService, play: Play, signer: Signer,
        costs: Costs, reads: Reads | None = None,
    ):
        self.store = store
        self.reads = reads or Reads(store)
        self.callers = callers
        self.views = views
        self.matches = matches
        self.play = play
        self.signer = signer
        self.costs = costs

    # --- export ---------------------------------------------------------------------------

    def record_of(self, match_id: uuid.UUID, *, signed: bool = True, uow: UnitOfWork | None = None) -> tuple[dict, State]:
        """The record of a match (MatchNotFound if there is none) and its final state;
        signed by this service unless ``signed`` is false.  Read in ``uow``, else where
        heavy reads are made (``Reads``)."""

        def read(work: UnitOfWork) -> tuple[list[dict], Provenance]:
            # As stored: an imported record's older schema versions are exported as they came.
            events = [stored_event_json(e) for e in self.store.read(match_id, raw=True, conn=work.conn)]
            if not events:
                raise MatchNotFound(match_id)
            return events, provenance_of(work.conn, match_id)

        events, where = self.reads.run(read) if uow is None else read(uow)
        state = fold(upcast_events(events))
        record = build_record(str(match_id), state, events)
        computer = any(seat.get("kind") == "computer" for seat in state.seats)
        record["bots_version"] = where.bots_version if computer else None
        record["provenance"] = where.to_json()
        return (self.signer.sign(record) if signed else record), state

    def records(self, status: str | None = None, batch: int = 100) -> Iterator[dict]:
        """Every match's record (optionally only active or finished ones), oldest first."""
        offset = 0
        while True:
            rows = self.store.summaries(status=status, limit=batch, offset=offset, newest_first=False)
            for row in rows:
                yield self.record_of(row.match_id)[0]
            if len(rows) < batch:
                return
            offset += batch

    def export(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> tuple[dict, State]:
        """A seat's export of its finished match, or the operator's of any match."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            # Refused before every event is read: the state is a snapshot and a few events.
            if not caller.is_operator and not self.store.load(match_id, conn=uow.conn).finished:
                raise HiddenUntilOver("the record of an unfinished match")
        return self.record_of(match_id)

    def export_every(self, token: str, status: str | None) -> Iterator[dict]:
        """Every match's record, for the operator only (checked before the first is read)."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.identify(uow, token)
        if not caller.is_operator:
            raise Forbidden("only the operator exports every match")
        return self.records(status)

    # --- import ---------------------------------------------------------------------------

    def import_record(self, record: Any, *, address: str | None = None) -> Imported:
        """Import a record as a match with the same id (RecordRefused, all or nothing);
        its check's CPU-seconds are charged to ``address`` (``costs``)."""
        try:
            return self._import(record, Payer(address))
        except RecordError as exc:
            raise RecordRefused(exc) from None

    def _import(self, record: Any, payer: Payer) -> Imported:
        # A replay of the whole record: off the event loop, which serves meanwhile.
        (recorded_id, events, state), checked = self.costs.heavy(payer, checked_record, record)
        try:
            signature = self.signer.check(record)
        except SignatureInvalid as exc:
            raise RecordError("signature_invalid", str(exc)) from None
        if not state.finished and not any(seat.get("kind") in ("human", "open") for seat in state.seats):
            raise RecordError(
                "cannot_continue", "an unfinished match between two computers cannot be continued here: nobody could act in it"
            )
        match_id = home_of(recorded_id, record["digest"]["value"], signature["status"] == "verified")
        provenance = Provenance("imported", record.get("bots_version"), checked["computer_moves"], signature, None)
        existing = self._existing(match_id, recorded_id, record, state, provenance)
        if existing is not None:
            return existing
        seat_tokens = {i: tokens.seat_token(match_id) for i, seat in enumerate(state.seats) if seat.get("kind") == "human"}
        recorded_at = [parse_time(e["recorded_at"]) for e in events]
        appends = [{
            "expected_version": 0, "events": events, "actor": "import", "recorded_at": recorded_at, "state": state,
            "stored_as": [(e["schema_version"], e["data"]) for e in record["events"]],
        }]
        after = state
        if not state.finished:
            after, more = self.play.autoplay(match_id, state, [Event(e["type"], e["data"]) for e in events])
            if more:
                last = recorded_at[-1]
                assert last is not None, "check_record refuses a recorded_at that is not a time"
                now = max(datetime.now(UTC), last)
                appends.append({
                    "expected_version": len(events), "events": more, "actor": "system", "recorded_at": [now] * len(more),
                    "state": after,
                })
        invite = tokens.new_invite() if after.phase == WAITING else None
        try:
            with UnitOfWork(self.store) as uow:
                # An imported match binds no seat to a player: a record could name anyone.
                self.matches.stage_new_match(
                    uow, match_id, appends, seat_tokens=seat_tokens, players={}, provenance=provenance, invite=invite
                )
                uow.commit()
                where = self.views.provenance(uow.conn, match_id)
        except ConcurrencyError:
            # Imported by a concurrent request a moment ago: the same record, or another.
            existing = self._existing(match_id, recorded_id, record, state, provenance)
            if existing is not None:
                return existing
            raise RecordError("match_exists", f"a different match with id {match_id} already exists here") from None
        return Imported(match_id, recorded_id, after, True, seat_tokens, invite, where)

    def _existing(
        self, match_id: uuid.UUID, recorded_id: uuid.UUID, record: Mapping, state: State, checked: Provenance
    ) -> Imported | None:
        """The match already here at ``match_id``, if the record is its beginning (RecordError
        ``match_exists`` if it is another match): as it is when the record is all of it;
        else, the match having gone on since, only what the record holds (its ``state``)
        and what this import ``checked``."""
        try:
            with UnitOfWork(self.store) as uow:
                existing, now = self.record_of(match_id, signed=False, uow=uow)
                where = self.views.provenance(uow.conn, match_id)
        except MatchNotFound:
            return None
        count = len(record["events"])
        if digest_of(existing["events"][:count]) != record["digest"]["value"]:
            raise RecordError("match_exists", f"a different match with id {match_id} already exists here")
        if len(existing["events"]) == count:
            return Imported(match_id, recorded_id, now, False, {}, None, where)
        return Imported(match_id, recorded_id, state, False, {}, None, checked.to_json())

    # --- the match's history --------------------------------------------------------------

    def _read(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> tuple[Caller, list[dict]]:
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
        return caller, self.reads.run(lambda uow: match_events(self.store, uow, match_id))

    def state_at(self, token: str, match_id: uuid.UUID, asked_seat: str | None, version: int | None) -> tuple[dict, int]:
        """The full state at ``version`` (default: the last)."""
        caller, events = self._read(token, match_id, asked_seat)
        version = len(events) if version is None else version
        if version > len(events):
            raise Invalid(f"the match has {len(events)} events", errors={"version": [f"at most {len(events)}"]})
        if not caller.is_operator and events[-1]["type"] != "match_ended":
            last_end = max((e["seq"] for e in events if e["type"] == "hand_ended"), default=0)
            if version > last_end:
                raise HiddenUntilOver(f"version {version} lies in the hand being played; it")
        return full_state(fold(events[:version])), version

    def hands(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> tuple[dict, int]:
        _, events = self._read(token, match_id, asked_seat)
        return {"match_id": str(match_id), "hands": [hand_summary(h) for h in split_hands(events)]}, len(events)

    def hand(self, token: str, match_id: uuid.UUID, asked_seat: str | None, number: int) -> tuple[dict, int]:
        caller, events = self._read(token, match_id, asked_seat)
        every = split_hands(events)
        if not 1 <= number <= len(every):
            raise hand_not_found(len(every), number)
        chosen = every[number - 1]
        if not caller.is_operator and not hand_is_over(chosen):
            raise HiddenUntilOver("a hand still being played")
        return hand_detail(chosen), len(events)

    def audit(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> tuple[dict, int]:
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            # Refused before every event is read: the state is a snapshot and a few events.
            if not caller.is_operator and not self.store.load(match_id, conn=uow.conn).finished:
                raise HiddenUntilOver("the audit of an unfinished match")
        events = self.reads.run(lambda uow: match_events(self.store, uow, match_id))
        return {"match_id": str(match_id), **audit(events)}, len(events)

