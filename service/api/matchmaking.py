"""Matchmaking: a player's tickets (post, poll, cancel); pairing happens in the application."""

from __future__ import annotations

import uuid

from flask import Blueprint

from service.application.matchmaking import ticket_not_found

from . import schemas as s
from .docs import operation
from .http import NO_STORE, app, bearer_token

bp = Blueprint("matchmaking", __name__)

PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema}
OWNER_ONLY = "Only the ticket's owner (its player's token, or the player's sign-in token) finds it; anyone else gets 404 `ticket_not_found`."


def _ticket_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise ticket_not_found(repr(raw)) from None


def _ticket(body: dict, status: int = 200):
    return s.shared(s.TicketSchema).dump(body), status, NO_STORE


@bp.post("/matchmaking/tickets")
@operation(
    summary="Ask to be paired with another player",
    tags=["matchmaking"],
    body=s.TicketSpecSchema,
    responses={201: s.TicketSchema, 409: s.ProblemSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "A ticket with what the calling player accepts: the rules, the clock (live `turn_seconds`, or "
        "correspondence `days_per_move`), rated or casual, and a rating range that widens while it waits (±100 at "
        "first, +50 every 10 seconds live or every hour by correspondence, at most ±500). When another player's "
        "ticket fits, one match is made with both seated (`match_started` says `paired: true`), at once or when "
        "either ticket is polled. A live ticket must be polled (GET) at least every `poll_within_seconds` (30 by "
        "default) or it lapses; a correspondence ticket waits until paired or cancelled. One waiting ticket per "
        "player and kind: a second is 409 `ticket_open` (with the waiting one's `ticket_id`). Refused bodies are "
        "422: `invalid_request` (a field), `clock_in_rules` (turn_seconds among the rules), `clock_mismatch` (the "
        "other kind's clock), `invalid_rules`."
    ),
)
def post_ticket(body: dict):
    return _ticket(app().matchmaking.post(bearer_token(), body), 201)


@bp.get("/matchmaking/tickets/<ticket_id>")
@operation(
    summary="Poll a ticket",
    tags=["matchmaking"],
    responses={200: s.TicketSchema, 404: s.ProblemSchema, **PROBLEMS},
    description=(
        "The ticket, kept waiting for another `poll_within_seconds` (live), and paired if another ticket fits now. "
        "Once paired it names the match, the seat and the seat token (shown for an hour after the pairing). "
        + OWNER_ONLY
    ),
)
def get_ticket(ticket_id: str):
    return _ticket(app().matchmaking.get(bearer_token(), _ticket_id(ticket_id)))


@bp.delete("/matchmaking/tickets/<ticket_id>")
@operation(
    summary="Cancel a ticket",
    tags=["matchmaking"],
    responses={200: s.TicketSchema, 404: s.ProblemSchema, 409: s.ProblemSchema, **PROBLEMS},
    description=(
        "A waiting ticket is cancelled (a lapsed or cancelled one is answered as it is). A ticket paired first, "
        "even a moment before, is 409 `ticket_paired`: it ends paired or cancelled, never both. " + OWNER_ONLY
    ),
)
def cancel_ticket(ticket_id: str):
    return _ticket(app().matchmaking.cancel(bearer_token(), _ticket_id(ticket_id)))
