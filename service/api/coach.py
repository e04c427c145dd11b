"""The coach: a hint for the seat to play, and the analysis of every decision of a hand."""

from __future__ import annotations

import uuid

from flask import Blueprint, current_app

from service.bots import BOTS_VERSION
from service.coach.analysis import analyse, summary
from service.records.hands import hand_is_over, split_hands
from service.serving import off_loop
from service.store import ConcurrencyError

from . import schemas as s
from .auth import caller_for_match
from .docs import operation
from .errors import Problem
from .matches import PROBLEMS, Memo, parse_match_id, with_etag
from .records import _events, _seat_may_not_see

bp = Blueprint("coach", __name__)

NO_STORE = {"Cache-Control": "no-store"}


def _services():
    return current_app.extensions["gin_rummy"]


@bp.get("/matches/<match_id>/hint")
@operation(
    summary="A hint for the seat to play: the coach's best play and why",
    tags=["coach"],
    responses={200: s.HintSchema, 409: s.ProblemSchema, **PROBLEMS},
    description=(
        "For the seat whose turn it is to take or pass the upcard, draw, or discard (409 `illegal_move`, rule "
        "`not_your_turn`, otherwise). The play is one of the view's `legal_actions`, chosen from what the seat "
        "knows only. Each hint shown is recorded as a `hint_shown` event (the other seat sees only that a hint "
        "was shown), and a match with a hint is never rated. Asked again before anything else happens, the same "
        "hint is answered (`new: false`) without another event. Under rules with `hints: false` "
        "(the default between two players online) the answer is 409 with rule `hints_off`."
    ),
)
def get_hint(match_id: str):
    mid = parse_match_id(match_id)
    services = _services()
    with services.store.connection() as conn:
        caller = caller_for_match(conn, mid)
        if caller.seat is None:
            raise Problem(403, "forbidden", "a hint is for a seat's own play: use the seat's token")
        for attempt in range(2):
            try:
                hint, state, seq, new = services.matches.hint(conn, mid, caller.seat)
                break
            except ConcurrencyError:
                if attempt:
                    raise Problem(409, "conflict", "another request changed the match first; reload it and retry") from None
    body = {"action": hint["action"], "reason": hint["reason"], "seq": seq, "version": state.version, "new": new}
    return with_etag(body, state.version, headers=NO_STORE)


def _analysed(mid: uuid.UUID, events: list[dict], numbers: list[int], over: dict[int, bool]) -> dict[int, list[dict]]:
    """Each hand's decisions, from the memo where it holds them (hands that are over)."""
    memo: Memo = current_app.extensions["gin_rummy_analyses"]
    out = {n: memo.get((mid, n, BOTS_VERSION)) for n in numbers}
    missing = {n for n, found in out.items() if found is None}
    if missing:
        fresh = off_loop(analyse, events, str(mid), missing)  # seconds for a long match: not on the event loop
        for n in missing:
            out[n] = fresh.get(n, [])
            if over[n]:
                memo.put((mid, n, BOTS_VERSION), out[n])
    return out


def _hands(mid: uuid.UUID):
    with _services().store.connection() as conn:
        caller = caller_for_match(conn, mid)
        events = _events(conn, mid)
    hands = split_hands(events)
    over = {n: hand_is_over(h) for n, h in enumerate(hands, start=1)}
    return caller, events, over


@bp.get("/matches/<match_id>/hands/<int:number>/analysis")
@operation(
    summary="Every decision of a hand weighed: the play, the best play, what it cost",
    tags=["coach"],
    responses={200: s.HandAnalysisSchema, **PROBLEMS},
    description=(
        "For each decision of each seat (take or pass the upcard, the draw's source, the discard with knocking, "
        "Gin or playing on): the play made, the analyser's best play, and the expected points the play cost, "
        "estimated from what that seat knew at that moment (never the hidden cards), classed `good` (below 1.5), "
        "`inaccuracy` (below 4), `mistake` (below 10) or `blunder`; per seat an accuracy figure. Seats see a hand's "
        "analysis once it is over; the operator any hand. The same record always gives the same analysis."
    ),
)
def hand_analysis(match_id: str, number: int):
    mid = parse_match_id(match_id)
    caller, events, over = _hands(mid)
    if number not in over:
        raise Problem(404, "hand_not_found", f"the match has {len(over)} hand(s), not a hand {number}")
    if not caller.is_operator and not over[number]:
        raise _seat_may_not_see(caller, "the analysis of a hand still being played")
    decisions = _analysed(mid, events, [number], over)[number]
    body = {
        "match_id": str(mid), "hand": number, "over": over[number], "analyser": BOTS_VERSION,
        "decisions": decisions, **summary(decisions),
    }
    return with_etag(body, len(events))


@bp.get("/matches/<match_id>/analysis")
@operation(
    summary="The accuracy of each seat, hand by hand and over the match",
    tags=["coach"],
    responses={200: s.MatchAnalysisSchema, **PROBLEMS},
    description=(
        "The hands over so far (for the operator, also the one being played), each with the seats' accuracy and "
        "the count of each class of decision, and the same over all of them. Each hand's decisions: "
        "`GET /matches/{id}/hands/{n}/analysis`."
    ),
)
def match_analysis(match_id: str):
    mid = parse_match_id(match_id)
    caller, events, over = _hands(mid)
    numbers = [n for n in over if over[n] or caller.is_operator]
    analysed = _analysed(mid, events, numbers, over)
    hands = [{"hand": n, "over": over[n], **summary(analysed[n])} for n in numbers]
    every = [d for n in numbers for d in analysed[n]]
    body = {"match_id": str(mid), "analyser": BOTS_VERSION, "hands": hands, **summary(every)}
    return with_etag(body, len(events))
