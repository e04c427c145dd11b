"""The coach: a hint for the seat to play, and the analysis of every decision of a hand."""

from __future__ import annotations

import uuid

from flask import Blueprint, request

from . import schemas as s
from .docs import operation
from .http import NO_STORE, PROBLEMS, app, asked_seat, bearer_token, with_etag

bp = Blueprint("coach", __name__)

COSTS = (
    "A hand's analysis, once computed, is kept for every later request; computing one is charged the CPU-seconds "
    "it takes to the caller and to the client address: once a budget is spent, 429 `cpu_budget_spent` with "
    "Retry-After; while the instance is computing others, 503 `busy` with Retry-After."
)


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
def get_hint(match_id: uuid.UUID):
    hint = app().coaching.hint(bearer_token(), match_id, asked_seat())
    body = {"action": hint.action, "reason": hint.reason, "seq": hint.seq, "version": hint.version, "new": hint.new}
    return with_etag(body, hint.version, headers=NO_STORE)


@bp.get("/matches/<match_id>/hands/<int:number>/analysis")
@operation(
    summary="Every decision of a hand weighed: the play, the best play, what it cost",
    tags=["coach"],
    responses={200: s.HandAnalysisSchema, 429: s.ProblemSchema, 503: s.ProblemSchema, **PROBLEMS},
    description=(
        "For each decision of each seat (take or pass the upcard, the draw's source, the discard with knocking, "
        "Gin or playing on): the play made, the analyser's best play, and the expected points the play cost, "
        "estimated from what that seat knew at that moment (never the hidden cards), classed `good` (below 1.5), "
        "`inaccuracy` (below 4), `mistake` (below 10) or `blunder`; per seat an accuracy figure. Seats see a hand's "
        "analysis once it is over; the operator any hand. The same record always gives the same analysis. "
        + COSTS
    ),
)
def hand_analysis(match_id: uuid.UUID, number: int):
    body, version = app().coaching.hand_analysis(bearer_token(), match_id, asked_seat(), number, address=request.remote_addr)
    return with_etag(body, version)


@bp.get("/matches/<match_id>/analysis")
@operation(
    summary="The accuracy of each seat, hand by hand and over the match",
    tags=["coach"],
    responses={200: s.MatchAnalysisSchema, 429: s.ProblemSchema, 503: s.ProblemSchema, **PROBLEMS},
    description=(
        "The hands over so far (for the operator, also the one being played), each with the seats' accuracy and "
        "the count of each class of decision, and the same over all of them. Each hand's decisions: "
        "`GET /matches/{id}/hands/{n}/analysis`. " + COSTS
    ),
)
def match_analysis(match_id: uuid.UUID):
    body, version = app().coaching.match_analysis(bearer_token(), match_id, asked_seat(), address=request.remote_addr)
    return with_etag(body, version)
