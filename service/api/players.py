"""Players: guests and signed-in people, their matches, profiles and the leaderboard."""

from __future__ import annotations

import uuid

from flask import Blueprint, current_app

from service import ratings
from service.engine.game import deadline
from service.matches import public_seats, status_of
from service.players import create_guest
from service.store import players as store_players

from . import schemas as s
from .auth import identify
from .docs import operation
from .errors import Problem
from .matches import _cursor_offset, json_body, query_args, with_etag

bp = Blueprint("players", __name__)

#: Rated matches a player needs to appear on the leaderboard.
LEADERBOARD_MIN_MATCHES = 5

PLAYER_PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema}


def _store():
    return current_app.extensions["gin_rummy"].store


def _me(conn) -> uuid.UUID:
    caller = identify(conn)
    if caller.role != "player":
        raise Problem(403, "forbidden", "this needs a player's token (POST /players), or a sign-in token of the front end")
    return caller.player_id


def _rating(conn, player_id: uuid.UUID) -> store_players.Rating:
    return store_players.rating_of(conn, player_id) or store_players.Rating(*ratings.START, 0, 0)


def _player_json(player: store_players.Player, rating: store_players.Rating) -> dict:
    return {
        "id": str(player.id),
        "name": player.name,
        "signed_in": player.signed_in,
        "created_at": player.created_at.isoformat(),
        "rating": {"rating": rating.rating, "deviation": rating.deviation, "matches": rating.matches, "wins": rating.wins},
    }


def _profile(player_id, name: str, rating: store_players.Rating) -> dict:
    return {
        "id": str(player_id), "name": name, "rating": rating.rating, "deviation": rating.deviation,
        "matches": rating.matches, "wins": rating.wins,
    }


@bp.post("/players")
@operation(
    summary="Become a guest player",
    tags=["players"],
    body=s.PlayerSpecSchema,
    responses={201: s.PlayerCreatedSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "A player outlives a match: with its token (`Authorization: Bearer <token>`) a person creates and joins "
        "matches, and reads and acts on the seats they hold from any device. The token is shown only this once."
    ),
)
def create_player():
    body = json_body(s.PlayerSpecSchema)
    with _store().transaction() as conn:
        player, token = create_guest(conn, body["name"])
    answer = {"id": str(player.id), "name": player.name, "token": token}
    return with_etag(s.shared(s.PlayerCreatedSchema).dump(answer), 0, 201, {"Cache-Control": "no-store"})


@bp.get("/players/me")
@operation(summary="The calling player", tags=["players"], responses={200: s.PlayerSchema, **PLAYER_PROBLEMS})
def me():
    ratings.catch_up_quietly(_store())
    with _store().connection() as conn:
        player = store_players.get_player(conn, _me(conn))
        return s.shared(s.PlayerSchema).dump(_player_json(player, _rating(conn, player.id)))


@bp.patch("/players/me")
@operation(
    summary="Rename the calling player",
    tags=["players"],
    body=s.PlayerSpecSchema,
    responses={200: s.PlayerSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description="The new name is used for matches created or joined from now on; seats already taken keep theirs.",
)
def rename_me():
    body = json_body(s.PlayerSpecSchema)
    with _store().connection() as conn:
        player = store_players.rename(conn, _me(conn), body["name"])
        return s.shared(s.PlayerSchema).dump(_player_json(player, _rating(conn, player.id)))


@bp.get("/players/me/matches")
@operation(
    summary="The calling player's matches",
    tags=["players"],
    query=s.MatchListQuerySchema,
    responses={200: s.PlayerMatchListSchema, 422: s.ProblemSchema, **PLAYER_PROBLEMS},
    description="Newest first, each with the opponent, whose turn it is (`your_turn`), the deadline under a clock, and the score.",
)
def my_matches():
    args = query_args(s.MatchListQuerySchema)
    offset = _cursor_offset(args.get("cursor"))
    store = _store()
    with store.connection() as conn:
        player_id = _me(conn)
        rows = store_players.matches_of(conn, player_id, status=args.get("status"), limit=args["limit"] + 1, offset=offset)
        items = []
        for row in rows[: args["limit"]]:
            state = store.load(row.match_id, conn=conn)
            seat = row.seat
            if state.turn is not None and state.turn != seat and state.seats[state.turn].get("player") == str(player_id):
                seat = state.turn  # the same player on both seats
            due = deadline(state)
            items.append({
                "id": str(row.match_id),
                "status": status_of(state),
                "seat": seat,
                "opponent": public_seats(state)[1 - seat],
                "turn": state.turn,
                "your_turn": state.turn == seat,
                "deadline": due.isoformat(timespec="milliseconds") if due is not None else None,
                "scores": list(state.scores),
                "hand_number": state.hand_number,
                "winner": state.winner,
                "end_reason": state.end_reason,
                "version": state.version,
                "created_at": row.created_at.isoformat(),
            })
    more = len(rows) > args["limit"]
    body = {"items": items, "next_cursor": str(offset + len(items)) if more else None}
    return s.shared(s.PlayerMatchListSchema).dump(body)


@bp.get("/players/<player_id>")
@operation(
    summary="A player's public profile",
    tags=["players"],
    responses={200: s.ProfileSchema, 404: s.ProblemSchema},
    auth=False,
    description="The name, the Glicko-2 rating and its deviation, rated matches and wins. No token needed.",
)
def profile(player_id: str):
    try:
        pid = uuid.UUID(player_id)
    except ValueError:
        raise Problem(404, "player_not_found", f"no player {player_id!r}") from None
    ratings.catch_up_quietly(_store())
    with _store().connection() as conn:
        player = store_players.get_player(conn, pid)
        if player is None:
            raise Problem(404, "player_not_found", f"no player {pid}")
        return s.shared(s.ProfileSchema).dump(_profile(player.id, player.name, _rating(conn, pid)))


@bp.get("/leaderboard")
@operation(
    summary="The best rated players",
    tags=["players"],
    query=s.LobbyQuerySchema,
    responses={200: s.LeaderboardSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        f"Players with at least {LEADERBOARD_MIN_MATCHES} rated matches, by rating, in pages. A match is rated "
        "when two different players held its seats (not the computer), it used no hints, and it was played (not "
        "called off); a resignation or a timeout is a loss."
    ),
)
def leaderboard():
    args = query_args(s.LobbyQuerySchema)
    offset = _cursor_offset(args.get("cursor"))
    ratings.catch_up_quietly(_store())
    with _store().connection() as conn:
        rows = store_players.leaderboard(conn, min_matches=LEADERBOARD_MIN_MATCHES, limit=args["limit"] + 1, offset=offset)
    items = [
        {"rank": offset + i + 1, **_profile(row.player_id, row.name, row.rating)} for i, row in enumerate(rows[: args["limit"]])
    ]
    more = len(rows) > args["limit"]
    body = {"items": items, "next_cursor": str(offset + len(items)) if more else None, "min_matches": LEADERBOARD_MIN_MATCHES}
    return s.shared(s.LeaderboardSchema).dump(body)
