"""Matchmaking: a player's ticket, and the pairing of two tickets that fit into one match.

A **ticket** says what its player accepts: the rules (a preset and overrides, one hand
or to the target), the clock -- ``live`` (``turn_seconds`` a turn) or
``correspondence`` (``days_per_move``) -- rated or casual, and a rating range around
the player's rating that widens while it waits (``WIDENING``): ±100 points at first,
+50 every 10 seconds for a live ticket (every hour for a correspondence one), at most
±500.  Two tickets fit when they ask for the same kind, rules and rating choice, belong
to two different players, and each player's rating is within the other ticket's range.

A player has at most one waiting ticket per kind (409 ``ticket_open``).  A live ticket
must be polled (its owner's GET) at least every ``Settings.matchmaking_poll_seconds``
(30), else it lapses: its player has left.  A correspondence ticket waits until it is
paired or cancelled.

**Pairing** runs when a ticket is posted and each time it is polled, and in a background
round every ``Settings.matchmaking_round_seconds`` (``pair_periodically``, over waiting
tickets drawn at random), never on the path of a match's actions.  One transaction takes the polled ticket and the fitting one
nearest in rating, each ``FOR UPDATE SKIP LOCKED`` (rows, not an advisory lock: a ticket is a row with
one owner, and a row lock names exactly what is taken, lets every other pair proceed at
once on any replica, and is released by the commit that writes the match), and in it
writes the match (its events: ``match_started`` with ``paired: true``, and
``rated: false`` for a casual one), binds both seats to their players (as a join binds
one), stores the seat tokens' hashes and marks both tickets paired.  So two replicas
never pair one ticket twice (the second passes over the locked row, then finds it
paired; two fitting tickets that pass each other try again after a short random
pause, and one takes both), a ticket never pairs with its own player's, and a cancel
racing a pairing waits for it and then finds the ticket paired (409 ``ticket_paired``): a ticket ends
paired or cancelled, never both.  The match itself is events; the tickets are not.

Each **seat token** is sealed in its ticket's row (``Retries.seal_bound``, with the
retry secret) and shown only to the ticket's owner, in the answer to its GET (or POST),
for ``TOKEN_SHOWN`` (an hour) after the pairing; then it is forgotten.  The player needs
it only as a convenience: the seat is bound to the player, whose own token acts for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from service import ratings
from service.engine.rules import RulesError, resolve_rules
from service.store import EventStore
from service.store import matchmaking as rows
from service.store import players as store_players
from service.store.matchmaking import OpenTicket, Ticket, Widening
from service.store.periodic import run_periodically

from .callers import Callers
from .errors import Conflict, Invalid, NotFound
from .matches import MatchService
from .retries import Retries
from .unit_of_work import Immediate, UnitOfWork

log = logging.getLogger(__name__)

LIVE, CORRESPONDENCE = "live", "correspondence"
KINDS = (LIVE, CORRESPONDENCE)
#: How a ticket's rating range widens with its age, by kind.
WIDENING = {LIVE: Widening(100, 50, 10, 500), CORRESPONDENCE: Widening(100, 50, 3600, 500)}
#: How long after the pairing a ticket's owner is shown its seat token.
TOKEN_SHOWN = timedelta(hours=1)
#: Tries of a pairing that passed a fitting ticket over (``pair``), a pause of one to two
#: PASSED_PAUSE seconds drawn at random between them.
PASSED_TRIES = 3
PASSED_PAUSE = 0.01
DEFAULT_TURN_SECONDS = 30
DEFAULT_DAYS_PER_MOVE = 3
DAY = 86_400


def ticket_not_found(ticket_id: object) -> NotFound:
    return NotFound(f"no ticket {ticket_id} of this player", code="ticket_not_found")


def ticket_rules(spec: Mapping[str, Any]) -> tuple[str, dict]:
    """The kind and the complete rules (with the clock) a ticket's body asks for; Invalid
    with a code when they cannot be played."""
    kind = spec.get("kind", LIVE)
    asked = dict(spec.get("rules") or {})
    if "turn_seconds" in asked:
        raise Invalid(
            "the clock is the ticket's turn_seconds (live) or days_per_move (correspondence), not a rule",
            code="clock_in_rules", errors={"rules": {"turn_seconds": ["give turn_seconds or days_per_move instead"]}},
        )
    other = "days_per_move" if kind == LIVE else "turn_seconds"
    if other in spec:
        raise Invalid(f"a {kind} ticket has no {other}", code="clock_mismatch", errors={other: [f"not for a {kind} ticket"]})
    if kind == LIVE:
        asked["turn_seconds"] = spec.get("turn_seconds", DEFAULT_TURN_SECONDS)
    else:
        asked["turn_seconds"] = spec.get("days_per_move", DEFAULT_DAYS_PER_MOVE) * DAY
    if "single_hand" in spec:
        asked["single_hand"] = spec["single_hand"]
    try:
        rules = resolve_rules(asked)
    except RulesError as exc:
        raise Invalid(str(exc), code="invalid_rules") from None
    return kind, rules.to_json(complete=True)


def fit_of(kind: str, rules: Mapping[str, Any], rated: bool) -> str:
    """What two tickets must share to be paired: the SHA-256 of the choices as canonical
    JSON (short, so that its index stays small and is used)."""
    text = json.dumps({"kind": kind, "rules": rules, "rated": rated}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Matchmaking:
    def __init__(
        self, store: EventStore, callers: Callers, matches: MatchService, retries: Retries, clock: Callable[[], datetime],
        *, poll_seconds: int = 30, rated_players: str = "all", pause: Callable[[float], None] = time.sleep,
    ):
        self.store = store
        self.callers = callers
        self.matches = matches
        self.retries = retries
        self.clock = clock
        self.poll = timedelta(seconds=max(1, poll_seconds))
        self.rated_players = rated_players
        self.pause = pause  # between tries of a pairing that passed a fitting ticket over

    # --- a player's tickets -----------------------------------------------------------

    def post(self, token: str, spec: Mapping[str, Any]) -> dict:
        """A new waiting ticket of the calling player, paired at once if one fits."""
        kind, rules = ticket_rules(spec)
        rated = bool(spec.get("rated", True))
        fit = fit_of(kind, rules, rated)
        ratings.catch_up_quietly(self.store, self.rated_players)
        now = self.clock()
        ticket_id = uuid.uuid4()
        with UnitOfWork(self.store) as uow:
            player = self.callers.player(uow, token)
            found = store_players.rating_of(uow.conn, player)
            rating = found.rating if found is not None else ratings.START[0]
            uow.write(lambda conn: rows.lapse(conn, player_id=player, stale_before=now - self.poll, now=now))
            made = uow.write(lambda conn: rows.insert(
                conn, ticket_id, player, kind, fit, {"rules": rules, "rated": rated}, rating, now,
            ))
            try:
                uow.commit()
            except OpenTicket:
                waiting = rows.waiting_of(uow.conn, player, kind)
                raise Conflict(
                    f"this player has a {kind} ticket waiting already: poll it, or cancel it first",
                    code="ticket_open", extra={"ticket_id": str(waiting.id) if waiting else None},
                ) from None
        self.pair(made.value.id)
        return self._answer(player, ticket_id)

    def get(self, token: str, ticket_id: uuid.UUID) -> dict:
        """The caller's ticket, polled: a waiting live one is kept for another while (or
        lapses, when its last poll is too old), and pairing is tried again."""
        now = self.clock()
        with UnitOfWork(self.store) as uow:
            player = self.callers.player(uow, token)
            ticket = self._own(uow, player, ticket_id)
            if ticket.status == "waiting":
                if ticket.kind == LIVE and ticket.polled_at < now - self.poll:
                    uow.write(lambda conn: rows.lapse(conn, player_id=player, stale_before=now - self.poll, now=now), alone=True)
                else:
                    uow.write(lambda conn: rows.polled(conn, ticket_id, now), alone=True)
                uow.commit()
        self.pair(ticket_id)
        return self._answer(player, ticket_id)

    def cancel(self, token: str, ticket_id: uuid.UUID) -> dict:
        """Cancel the caller's waiting ticket (one that lapsed or was cancelled stays so);
        a paired one is 409 ``ticket_paired``."""
        now = self.clock()
        with UnitOfWork(self.store) as uow:
            player = self.callers.player(uow, token)
            self._own(uow, player, ticket_id)
            uow.write(lambda conn: rows.cancel(conn, ticket_id, now), alone=True)
            uow.commit()
            ticket = self._own(uow, player, ticket_id)
        if ticket.status == "paired":
            raise Conflict(
                f"ticket {ticket_id} was paired: its match is {ticket.match_id} (GET the ticket for its seat)",
                code="ticket_paired", extra={"ticket_id": str(ticket_id)},
            )
        return self._answer(player, ticket_id)

    def _own(self, uow: UnitOfWork, player: uuid.UUID, ticket_id: uuid.UUID) -> Ticket:
        ticket = rows.get(uow.conn, ticket_id)
        # Another player's ticket is not found either: its id tells nothing of it.
        if ticket is None or ticket.player_id != player:
            raise ticket_not_found(ticket_id)
        return ticket

    def _answer(self, player: uuid.UUID, ticket_id: uuid.UUID) -> dict:
        now = self.clock()
        with UnitOfWork(self.store) as uow:
            ticket = self._own(uow, player, ticket_id)
            token = None
            if ticket.status == "paired" and ticket.sealed_token is not None and ticket.ended_at is not None:
                if now < ticket.ended_at + TOKEN_SHOWN:
                    assert ticket.match_id is not None and ticket.seat is not None, "a paired ticket names its seat"
                    secret = self.retries.secret(uow.conn)
                    token = self.retries.unseal_bound(secret, _binding(ticket.id), ticket.sealed_token, ticket.match_id)
        return ticket_json(ticket, token, now, self.poll)

    # --- pairing ----------------------------------------------------------------------

    def pair(self, ticket_id: uuid.UUID) -> uuid.UUID | None:
        """Pair the ticket with the one nearest in rating that fits, if it waits and one
        does; the match made, or None.  Safe on any number of replicas at once (see above).

        Two fitting tickets paired at the same moment each hold their own row and pass
        over the other's: both would end unpaired until a later poll or round.  So when
        a fitting ticket was passed over, the pairing is tried again (``PASSED_TRIES``
        in all) after a short random pause, and one of the two then takes both."""
        for attempt in range(PASSED_TRIES):
            made, passed = self._pair_once(ticket_id)
            if made is not None or not passed:
                return made
            if attempt + 1 < PASSED_TRIES:
                self.pause(PASSED_PAUSE * (1 + secrets.randbelow(1000) / 1000))
        return None

    def _pair_once(self, ticket_id: uuid.UUID) -> tuple[uuid.UUID | None, bool]:
        now = self.clock()
        fresh = now - self.poll
        inner: list[UnitOfWork] = []  # the match's writes, inside the transaction
        passed = False
        with UnitOfWork(self.store) as uow:
            secret = self.retries.secret(uow.conn)  # read before the transaction (Retries.secret)

            def take(conn) -> uuid.UUID | None:
                nonlocal passed
                mine = rows.lock_waiting(conn, ticket_id, fresh)
                if mine is None:
                    return None
                other, passed = rows.lock_fitting(conn, mine, WIDENING[mine.kind], now, fresh)
                if other is None:
                    return None
                tickets = [mine, other] if secrets.randbelow(2) == 0 else [other, mine]
                names = []
                for ticket in tickets:
                    known = store_players.get_player(conn, ticket.player_id)
                    assert known is not None, "a ticket's player exists (players are never deleted)"
                    names.append((ticket.player_id, known.name))
                inner.append(Immediate(self.store, conn))
                match_id, seat_tokens = self.matches.stage_paired_match(
                    inner[-1], names, mine.spec["rules"], rated=mine.spec["rated"],
                )
                for seat, ticket in enumerate(tickets):
                    sealed = self.retries.seal_bound(secret, _binding(ticket.id), seat_tokens[seat])
                    rows.mark_paired(conn, ticket.id, match_id, seat, sealed, now)
                return match_id

            made = uow.write(take)
            uow.commit()
        for written in inner:
            self.matches.play.stored(written)  # committed: into both players' feeds (match found)
        return made.value, passed

    def pair_waiting(self, limit: int = 100) -> int:
        """One round over up to ``limit`` waiting tickets drawn at random (the
        background loop's); the matches made.  Also lapses the live tickets left
        unpolled and forgets the seat tokens shown long enough."""
        now = self.clock()
        with UnitOfWork(self.store) as uow:
            ids = rows.waiting_ids(uow.conn, limit)
            uow.write(lambda conn: rows.lapse(conn, stale_before=now - self.poll, now=now), alone=True)
            uow.write(lambda conn: rows.forget_tokens(conn, now - TOKEN_SHOWN), alone=True)
            uow.commit()
        return sum(1 for ticket_id in ids if self.pair(ticket_id) is not None)


def pair_periodically(matchmaking: Matchmaking, every: float) -> threading.Event:
    """Run ``pair_waiting`` in a daemon thread every ``every`` seconds; set the returned
    event to stop.  Two tickets that passed each other on every try (``PASSED_TRIES``)
    and correspondence tickets whose players do not poll are paired by it."""

    def round_() -> None:
        made = matchmaking.pair_waiting()
        if made:
            log.info("matchmaking round made %d matches", made)

    return run_periodically("matchmaking round", every, round_)


def _binding(ticket_id: uuid.UUID) -> tuple[str, ...]:
    return ("ticket-seat-token", str(ticket_id))


def ticket_json(ticket: Ticket, token: str | None, now: datetime, poll: timedelta) -> dict:
    widening = WIDENING[ticket.kind]
    waiting = ticket.status == "waiting"
    width = widening.width((now - ticket.created_at).total_seconds())
    live = ticket.kind == LIVE
    match = None
    if ticket.status == "paired":
        assert ticket.ended_at is not None
        match = {
            "id": str(ticket.match_id), "seat": ticket.seat, "token": token,
            "token_until": (ticket.ended_at + TOKEN_SHOWN).isoformat(timespec="milliseconds") if token else None,
        }
    return {
        "id": str(ticket.id),
        "status": ticket.status,
        "kind": ticket.kind,
        "rules": ticket.spec["rules"],
        "rated": ticket.spec["rated"],
        "rating": ticket.rating,
        "rating_range": {"low": ticket.rating - width, "high": ticket.rating + width} if waiting else None,
        "created_at": ticket.created_at.isoformat(timespec="milliseconds"),
        "poll_within_seconds": int(poll.total_seconds()) if live else None,
        "lapses_at": (ticket.polled_at + poll).isoformat(timespec="milliseconds") if live and waiting else None,
        "match": match,
    }
