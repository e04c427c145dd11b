"""Matches: create, join, view, act, list, play again; and the lobby of public matches
waiting for a player.  (Following a match, its events and its live stream: ``streams``.)

Each route parses its request, calls one use case of the application, and encodes
what it returns."""

from __future__ import annotations

import uuid

from flask import Blueprint, Response, request, url_for

from service.application.views import public_seats

from . import schemas as s
from .docs import operation
from .http import (
    NO_STORE,
    PROBLEMS,
    VIEW_CACHE,
    app,
    asked_seat,
    bearer_token,
    checked_idempotency_key,
    cursor_offset,
    optional_bearer,
    parse_if_match,
    with_etag,
)

bp = Blueprint("matches", __name__)

IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "schema": {"type": "string"},
    "description": 'The version the client acted on (its ETag, e.g. "12"); a stale one gets 412.',
}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": (
        "Any unique string of printable characters per intended action; a retry with the same key returns the "
        "first answer, marked `Idempotent-Replayed: true`: the same view and events as then (a timeout claim "
        "due since, or a rematch made since, is not in it), except `opponent.connected`, which is as now. The "
        "same key with another body is 422 `idempotency_key_reused`."
    ),
}


def idempotency_key() -> str | None:
    """The request's Idempotency-Key, or None; 400 when it is not 1 to 200 printable characters."""
    return checked_idempotency_key(request.headers.get("Idempotency-Key"))


def replayed(again: bool) -> dict:
    return {"Idempotent-Replayed": "true"} if again else {}


def invite_json(match_id: uuid.UUID, code: str | None) -> dict | None:
    """The invite: its code and the join page's link, at GIN_RUMMY_PUBLIC_URL when set,
    else at the address asked (behind trusted proxies, the forwarded one)."""
    if code is None:
        return None
    base = app().settings.public_url
    root = f"{base.rstrip('/')}/" if base else request.host_url
    return {"code": code, "url": f"{root}#/join/{match_id}/{code}"}


def seats_with_tokens(seats: list[dict], tokens: dict[int, str]) -> list[dict]:
    return [dict(seat, token=tokens.get(seat["seat"])) for seat in seats]


# --- create ------------------------------------------------------------------------


@bp.post("/matches")
@operation(
    summary="Create a match",
    tags=["matches"],
    body=s.CreateMatchSchema,
    responses={201: s.MatchCreatedSchema, 422: s.ProblemSchema, 429: s.ProblemSchema},
    auth=False,
    description=(
        "Every field has a default: `{}` creates a classic match between a person and a medium computer. "
        "The answer holds one bearer token per human seat, shown only this once. To play someone on another "
        "device, make their seat `{\"kind\": \"open\"}`: the answer then carries an `invite` (a code and a link "
        "to the web client's join page) for them, the match waits for them (phase `waiting_for_players`, no "
        "hand dealt) and `public: true` also lists it in the lobby. Matches with an open seat are limited per "
        "client address (429 `rate_limited` with Retry-After), and a player's public matches waiting in the lobby "
        "at once (429 `too_many_public_matches`)."
    ),
)
def create_match(body: dict):
    public = body.pop("public", False)
    created = app().matches.create(optional_bearer(), body, public=public, address=request.remote_addr)
    state = created.state
    assert state.rules is not None, "a match is created started: it has its rules"
    answer = {
        "id": str(created.match_id),
        "version": state.version,
        "rules": state.rules.to_json(complete=True),
        "seats": seats_with_tokens(public_seats(state), created.tokens),
        "view": created.view,
        "public": public,
        "invite": invite_json(created.match_id, created.invite),
    }
    location = url_for("matches.get_match", match_id=str(created.match_id))
    return with_etag(answer, state.version, 201, {"Location": location, **NO_STORE})


@bp.post("/matches/<match_id>/join")
@operation(
    summary="Take the open seat of a match",
    tags=["matches"],
    body=s.JoinSchema,
    headers=[IDEMPOTENCY_KEY],
    responses={201: s.JoinedSchema, 400: s.ProblemSchema, 403: s.ProblemSchema, 404: s.ProblemSchema, 409: s.ProblemSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "With the match's invite `code` (not needed for a public match) and the player's `name`. Answers the "
        "seat taken and its bearer token, shown only this once; the first hand is dealt once every seat is "
        "taken. 403 `invalid_invite` for a wrong code (`invite_required` without one); 409 `seat_taken` when "
        "every seat is taken, also when another player took the last one first. Send an `Idempotency-Key` "
        "(a random one, such as a UUID: with the same code and name it takes the token again) to retry safely: "
        "a retry within a day gets the same seat and token, the first answer as it was."
    ),
)
def join(match_id: uuid.UUID, body: dict):
    key = idempotency_key()
    joined = app().matches.join(optional_bearer(), match_id, body.get("code"), body.get("name"), key)
    answer = {"match_id": str(match_id), "seat": joined.seat, "token": joined.token, "view": joined.view}
    return with_etag(answer, joined.state.version, 201, {**NO_STORE, **replayed(joined.replayed)})


@bp.post("/matches/<match_id>/rematch")
@operation(
    summary="Play a finished match again",
    tags=["matches"],
    headers=[IDEMPOTENCY_KEY],
    responses={201: s.RematchSchema, 200: s.RematchSchema, 400: s.ProblemSchema, 409: s.ProblemSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "By a seat of a finished match: a new match with the same seats, names and rules, the seats swapped so "
        "that the other one starts. The first seat to ask makes it (201); the other gets the same match (200). "
        "Each gets its seat token in the rematch when it first asks (later: null), and again when it asks again with "
        "the same `Idempotency-Key` within a day (the first answer as it was). The finished match's views "
        "then name it (`rematch`). 409 `no_rematch` while the match is not over, or when it was called off."
    ),
)
def rematch(match_id: uuid.UUID):
    made = app().matches.rematch(bearer_token(), match_id, asked_seat(), idempotency_key())
    answer = {"id": str(made.match_id), "seat": made.seat, "token": made.token, "view": made.view}
    return with_etag(answer, made.state.version, 201 if made.created else 200, {**NO_STORE, **replayed(made.replayed)})


@bp.get("/lobby")
@operation(
    summary="Public matches waiting for a player",
    tags=["matches"],
    query=s.LobbyQuerySchema,
    responses={200: s.LobbySchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "Newest first. A match leaves the lobby once its seats are taken, when it is called off, or an hour "
        "after it was made. Join one with POST /matches/{id}/join (no code needed)."
    ),
)
def get_lobby(query: dict):
    page = app().matches.lobby(query["limit"], cursor_offset(query.get("cursor")))
    return s.shared(s.LobbySchema).dump({"items": page.items, "next_cursor": page.next_cursor})


@bp.get("/matches")
@operation(
    summary="Matches the caller may see",
    tags=["matches"],
    query=s.MatchListQuerySchema,
    responses={200: s.MatchListSchema, 401: s.ProblemSchema, 422: s.ProblemSchema},
    description="The operator sees every match, newest first; a seat token sees its own match; a player the matches it holds a seat in.",
)
def list_matches(query: dict):
    offset = cursor_offset(query.get("cursor"))
    page = app().matches.visible(bearer_token(), query.get("status"), query["limit"], offset)
    items = [s.shared(s.MatchSummarySchema).dump(item) for item in page.items]
    return s.shared(s.MatchListSchema).dump({"items": items, "next_cursor": page.next_cursor})


# --- read and act ------------------------------------------------------------------------


@bp.get("/matches/<match_id>")
@operation(
    summary="The caller's view of a match",
    tags=["matches"],
    seat_query=s.ViewQuerySchema,
    responses={200: s.SeatViewSchema, 304: "Not modified (If-None-Match matched the view's ETag)", **PROBLEMS},
    description=(
        "A seat sees its own view with its legal actions. The operator sees seat 0's view "
        "(or `?seat=1`) plus a `hidden` object with both hands and the stock. The ETag is the version, "
        "followed after a dot by what changes the view without a move (`t`: a timeout may be claimed; `c`: "
        "the opponent follows the match live; `r` and an id: the rematch), e.g. `\"12.c\"`; If-None-Match "
        "with it answers 304 while the view is the same, and If-Match on an action accepts either form."
    ),
)
def get_match(match_id: uuid.UUID):
    answer = app().actions.view(bearer_token(), match_id, asked_seat())
    cache = {"ETag": answer.etag, "Cache-Control": VIEW_CACHE}
    if request.headers.get("If-None-Match") == answer.etag:
        return Response(status=304, headers=cache)
    return with_etag(answer.body(), answer.version, headers=cache)


@bp.post("/matches/<match_id>/actions")
@operation(
    summary="Send one action for the caller's seat",
    tags=["matches"],
    body=s.ActionSchema,
    headers=[IF_MATCH, IDEMPOTENCY_KEY],
    responses={
        200: s.ActionResultSchema,
        409: s.ProblemSchema,
        412: s.ProblemSchema,
        422: s.ProblemSchema,
        **PROBLEMS,
    },
    description=(
        "Post any entry of the view's `legal_actions` as is. The computer's replies (and the next deal) are "
        "played in the same request and returned among the events. 409 `illegal_move` names the `rule` broken; "
        "409 `conflict` means another request changed the match first (reload and retry); 412 `version_mismatch` "
        "answers a stale If-Match."
    ),
)
def act(match_id: uuid.UUID, body: dict):
    expected = parse_if_match(request.headers.get("If-Match"))
    key = idempotency_key()
    result = app().actions.act(bearer_token(), match_id, asked_seat(), body, expected_version=expected, key=key)
    return with_etag(result.body, result.version, result.status, replayed(result.replayed))
