"""Players: guests and signed-in people, their matches, profiles and the leaderboard."""

from __future__ import annotations

import json
import uuid

from flask import Blueprint, Response, request, stream_with_context

from service.application.players import ESTABLISHED_DEVIATION, LEADERBOARD_MIN_MATCHES, player_not_found

from . import schemas as s
from .docs import operation
from .http import NO_STORE, app, bearer_token, cursor_offset, with_etag

bp = Blueprint("players", __name__)

PLAYER_PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema}


@bp.post("/players")
@operation(
    summary="Become a guest player",
    tags=["players"],
    body=s.PlayerSpecSchema,
    responses={201: s.PlayerCreatedSchema, 422: s.ProblemSchema, 429: s.ProblemSchema},
    auth=False,
    description=(
        "A player outlives a match: with its token (`Authorization: Bearer <token>`) a person creates and joins "
        "matches, and reads and acts on the seats they hold from any device. The token is shown only this once. "
        "Guests made are limited per client address (429 `rate_limited` with Retry-After)."
    ),
)
def create_player(body: dict):
    made = app().players.create_guest(body["name"], address=request.remote_addr)
    return with_etag(s.shared(s.PlayerCreatedSchema).dump(made), 0, 201, NO_STORE)


@bp.get("/players/me")
@operation(summary="The calling player", tags=["players"], responses={200: s.PlayerSchema, **PLAYER_PROBLEMS})
def me():
    return s.shared(s.PlayerSchema).dump(app().players.me(bearer_token()))


@bp.patch("/players/me")
@operation(
    summary="Rename the calling player",
    tags=["players"],
    body=s.PlayerSpecSchema,
    responses={200: s.PlayerSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description="The new name is used for matches created or joined from now on; seats already taken keep theirs.",
)
def rename_me(body: dict):
    return s.shared(s.PlayerSchema).dump(app().players.rename(bearer_token(), body["name"]))


DELETION = (
    "Afterwards no answer, event feed, stream, export, audit, list or log names the player or links them to their "
    "matches: their seats show a deleted player (\"Deleted player\" and four hex digits, one pseudonym per seat), "
    "the matches and their results stand, the opponents' ratings stand. Their tokens stop working at once, on every "
    "instance; their profile, rating history, leaderboard entry, notifications and tickets go. The events themselves "
    "are never changed; a record exported before the deletion is out of the service's hands."
)


@bp.delete("/players/me")
@operation(
    summary="Delete the calling player",
    tags=["players"],
    responses={200: s.PlayerDeletedSchema, **PLAYER_PROBLEMS},
    description="A guest's token or a sign-in token. " + DELETION,
)
def delete_me():
    return s.shared(s.PlayerDeletedSchema).dump(app().erasure.delete_me(bearer_token())), 200, NO_STORE


@bp.delete("/players")
@operation(
    summary="Delete the player of a sign-in subject (operator)",
    tags=["players"],
    query=s.SubjectQuerySchema,
    responses={200: s.PlayerDeletedSchema, 404: s.ProblemSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description=(
        "For the front end's backend, when a user deletes their account there: the operator token, and the `sub` "
        "of that user's sign-in tokens; 404 `player_not_found` when no player signed in so. " + DELETION
    ),
)
def delete_subject(query: dict):
    issuer = app().settings.jwt_issuer
    return s.shared(s.PlayerDeletedSchema).dump(app().erasure.delete_subject(bearer_token(), issuer, query["subject"])), 200, NO_STORE


@bp.get("/players/me/matches")
@operation(
    summary="The calling player's matches",
    tags=["players"],
    query=s.MatchListQuerySchema,
    responses={200: s.PlayerMatchListSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description=(
        "The matches waiting for the player's move first, then the others, each group newest first; each with the "
        "opponent, whose turn it is (`your_turn`), the deadline under a clock, and the score."
    ),
)
def my_matches(query: dict):
    offset = cursor_offset(query.get("cursor"))
    page = app().players.matches(bearer_token(), query.get("status"), query["limit"], offset)
    return s.shared(s.PlayerMatchListSchema).dump({"items": page.items, "next_cursor": page.next_cursor})


@bp.get("/players/me/notifications")
@operation(
    summary="The calling player's notifications since a cursor",
    tags=["players"],
    query=s.NotificationsQuerySchema,
    responses={200: s.NotificationPageSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description=(
        "In the order they were stored, after the cursor `after` (0: from the first), at most `limit` of them: "
        "`your_move` (with the deadline under a clock), `match_found`, `invite_accepted`, `rematch_offered`, "
        "`match_ended` (with the result) and `reminder` (a move's deadline is near, under a clock of days). Pass "
        "`next_cursor` as `after` for what follows: an app that was closed asks for what it missed. "
        "`GET /players/me/stream` sends the same ones live."
    ),
)
def my_notifications(query: dict):
    page = app().players.notifications(bearer_token(), query["after"], query["limit"])
    return s.shared(s.NotificationPageSchema).dump({"items": page.items, "next_cursor": page.next_cursor})


@bp.get("/players/me/data")
@operation(
    summary="Everything held about the calling player, in one download",
    tags=["players"],
    responses={200: s.JsonLines(s.PersonalDataLineSchema, "One line of JSON per thing held"), **PLAYER_PROBLEMS},
    content_type="application/x-ndjson",
    description=(
        "Lines of JSON, each `{\"type\": T, T: {...}}`: `player` (as `GET /players/me`), then each `rating_change` (as "
        "`GET /players/{id}/ratings`, newest first), each `match` the player holds a seat in (newest first, with "
        "`id`, `seat` and `status`: a finished one's signed `record` as its export, an unfinished one's `events` as the "
        "seat may see them), each `notification` (oldest first) and each matchmaking `ticket`. Tokens are not in it "
        "(only their hashes are kept). Sent as an attachment, `gin-rummy-player-<id>.ndjson`."
    ),
)
def my_data():
    player_id, lines = app().personal.export(bearer_token())

    def encoded():
        for line in lines:
            yield json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"

    response = Response(stream_with_context(encoded()), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = f'attachment; filename="gin-rummy-player-{player_id}.ndjson"'
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/players/<player_id>")
@operation(
    summary="A player's public profile",
    tags=["players"],
    responses={200: s.ProfileSchema, 404: s.ProblemSchema},
    auth=False,
    description=(
        "The name, the Glicko-2 rating and its deviation, whether it is established (deviation at most "
        f"{ESTABLISHED_DEVIATION:g}), rated matches, wins and distinct established opponents. No token needed."
    ),
)
def profile(player_id: str):
    try:
        pid = uuid.UUID(player_id)
    except ValueError:
        raise player_not_found(repr(player_id)) from None
    return s.shared(s.ProfileSchema).dump(app().players.profile(pid))


@bp.get("/players/<player_id>/ratings")
@operation(
    summary="A player's rating history",
    tags=["players"],
    query=s.RatingHistoryQuerySchema,
    responses={200: s.RatingHistorySchema, 404: s.ProblemSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "Every rated match of the player, newest first: when it ended, the result, the opponent (id and name), "
        "the Glicko-2 rating before and after it and the deviation after it. A read model of the match ends, "
        "folded again by `gin-rummy projections rebuild`. No token needed; 404 `player_not_found`."
    ),
)
def rating_history(player_id: str, query: dict):
    try:
        pid = uuid.UUID(player_id)
    except ValueError:
        raise player_not_found(repr(player_id)) from None
    page = app().players.rating_history(pid, query.get("before"), query["limit"])
    return s.shared(s.RatingHistorySchema).dump({"items": page.items, "next_cursor": page.next_cursor})


@bp.get("/leaderboard")
@operation(
    summary="The best rated players",
    tags=["players"],
    query=s.LobbyQuerySchema,
    responses={200: s.LeaderboardSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        f"Players with an established rating (deviation at most {ESTABLISHED_DEVIATION:g}), at least "
        f"{LEADERBOARD_MIN_MATCHES} rated matches and at least `min_opponents` distinct opponents who were established "
        "when played, by rating, in pages. A match is rated when two different players held its seats (not the "
        "computer; only signed-in players when the service rates only those), it used no hints, it was not called "
        "off, and each seat made a move of its own (a draw, a discard, a pass of the upcard, a knock or a defense it "
        "chose) before the end: a match resigned or timed out before one of its seats moved counts for neither. "
        "A resignation or a timeout is otherwise a loss."
    ),
)
def leaderboard(query: dict):
    page = app().players.leaderboard(query["limit"], cursor_offset(query.get("cursor")))
    body = {
        "items": page.items, "next_cursor": page.next_cursor, "min_matches": LEADERBOARD_MIN_MATCHES,
        "max_deviation": ESTABLISHED_DEVIATION, "min_opponents": app().players.min_opponents,
    }
    return s.shared(s.LeaderboardSchema).dump(body)
