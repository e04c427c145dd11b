"""Players: guests and signed-in people, their matches, profiles and the leaderboard.

A player outlives a match: a guest with a player token (``tokens.player_token``; only
its hash is kept), or a person signed in by the front end's identity provider
(``signin``).  Ratings are a read model folded from match ends (``service.ratings``);
every read of them catches up first, so a rating shown follows every match stored.  A
rating shows whether it is ``established`` and how many distinct established opponents
it was played against; the leaderboard lists only established ratings with enough of
them (``Settings.leaderboard_min_opponents``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from service import feed, ratings
from service.engine.game import deadline
from service.store import EventStore
from service.store import players as store_players

from . import tokens
from .callers import Callers
from .costs import Costs
from .errors import NotFound
from .matches import Page
from .play import system_clock
from .reads import Reads
from .unit_of_work import UnitOfWork
from .views import public_seats, status_of

#: Rated matches a player needs to appear on the leaderboard.
LEADERBOARD_MIN_MATCHES = 5
#: The largest deviation of an established rating (the leaderboard lists only those).
ESTABLISHED_DEVIATION = ratings.ESTABLISHED_DEVIATION


def _rating(conn, player_id: uuid.UUID) -> store_players.Rating:
    return store_players.rating_of(conn, player_id) or store_players.Rating(*ratings.START, 0, 0)


def rating_json(rating: store_players.Rating) -> dict:
    return {
        "rating": rating.rating, "deviation": rating.deviation, "matches": rating.matches, "wins": rating.wins,
        "established": rating.deviation <= ratings.ESTABLISHED_DEVIATION, "established_opponents": rating.opponents,
    }


def player_json(player: store_players.Player, rating: store_players.Rating) -> dict:
    return {
        "id": str(player.id),
        "name": player.name,
        "signed_in": player.signed_in,
        "created_at": player.created_at.isoformat(),
        "rating": rating_json(rating),
    }


def profile_json(player_id: uuid.UUID, name: str, rating: store_players.Rating) -> dict:
    return {"id": str(player_id), "name": name, **rating_json(rating)}


def player_not_found(player: object) -> NotFound:
    return NotFound(f"no player {player}", code="player_not_found")


class Players:
    def __init__(
        self, store: EventStore, callers: Callers, costs: Costs, rated_players: str = "all", min_opponents: int = 3, *,
        clock: Callable[[], datetime] = system_clock, reminder_before: float = 12 * 3600.0, reads: Reads | None = None,
    ):
        self.store = store
        self.reads = reads or Reads(store)
        self.clock = clock
        #: How long before a deadline a player is reminded of a move (``feed.sweep``).
        self.reminder_before = timedelta(seconds=reminder_before)
        self.callers = callers
        self.costs = costs
        self.rated_players = rated_players
        #: Distinct established opponents a player needs to be on the leaderboard.
        self.min_opponents = min_opponents

    def create_guest(self, name: str, *, address: str | None = None) -> dict:
        """A new guest: its id, its name and its token (shown only this once); guests
        made are counted per client address (RateLimited before any write)."""
        self.costs.guest(address)
        player_id = uuid.uuid4()
        token = tokens.player_token(player_id)
        with UnitOfWork(self.store) as uow:
            made = uow.write(lambda conn: store_players.create_guest(conn, player_id, name, tokens.hash_token(token)), alone=True)
            uow.commit()
        return {"id": str(made.value.id), "name": made.value.name, "token": token}

    def me(self, token: str) -> dict:
        ratings.catch_up_quietly(self.store, self.rated_players)
        with UnitOfWork(self.store) as uow:
            player = store_players.get_player(uow.conn, self.callers.player(uow, token))
            assert player is not None, "the caller's player exists (players are never deleted)"
            return player_json(player, _rating(uow.conn, player.id))

    def rename(self, token: str, name: str) -> dict:
        """The new name is used for matches created or joined from now on."""
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
            renamed = uow.write(lambda conn: store_players.rename(conn, player_id, name), alone=True)
            uow.commit()
            assert renamed.value is not None, "the caller's player exists (players are never deleted)"
            return player_json(renamed.value, _rating(uow.conn, player_id))

    def matches(self, token: str, status: str | None, limit: int, offset: int) -> Page:
        """The calling player's matches, those waiting for the player's move first (as
        folded into ``match_turns``: caught up first), then newest first, each with
        whose turn it is."""
        feed.catch_up_quietly(self.store)
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
            rows = store_players.matches_of(uow.conn, player_id, status=status, limit=limit + 1, offset=offset)
            items = []
            for row in rows[:limit]:
                state = self.store.load(row.match_id, conn=uow.conn)
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
        return Page(items, str(offset + len(items)) if len(rows) > limit else None)

    def notifications(self, token: str, after: int, limit: int) -> Page:
        """The calling player's notifications after the cursor ``after``, in order;
        the page's cursor is the last one's id (the same when there is none)."""
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
        feed.catch_up_quietly(self.store)
        with UnitOfWork(self.store) as uow:
            rows = feed.read(self.store, player_id, after, limit, uow.conn)
        return Page([row.to_json() for row in rows], str(rows[-1].seq if rows else after))

    def sweep(self) -> int:
        """The reminders due now (``feed.sweep``); how many were made."""
        return feed.sweep(self.store, self.clock(), self.reminder_before)

    def sweep_periodically(self, every: float) -> None:
        feed.sweep_periodically(self.store, every, self.reminder_before, self.clock)

    def profile(self, player_id: uuid.UUID) -> dict:
        ratings.catch_up_quietly(self.store, self.rated_players)
        with UnitOfWork(self.store) as uow:
            player = store_players.get_player(uow.conn, player_id)
            if player is None:
                raise player_not_found(player_id)
            return profile_json(player.id, player.name, _rating(uow.conn, player_id))

    def rating_history(self, player_id: uuid.UUID, before: int | None, limit: int) -> Page:
        """The player's rated matches, newest first: the rating before and after each,
        the opponent (its id, and its name now) and the result; the cursor: pass it as
        ``before`` for older ones."""
        ratings.catch_up_quietly(self.store, self.rated_players)
        with UnitOfWork(self.store) as uow:
            if store_players.get_player(uow.conn, player_id) is None:
                raise player_not_found(player_id)
            rows = store_players.rating_history(uow.conn, player_id, before, limit + 1)
        items = [
            {
                "match": str(row.match_id), "rated_at": row.rated_at.isoformat(), "result": row.result,
                "opponent": {"id": str(row.opponent_id), "name": row.opponent_name},
                "rating_before": row.rating_before, "rating": row.rating, "change": row.rating - row.rating_before,
                "deviation": row.deviation,
            }
            for row in rows[:limit]
        ]
        return Page(items, str(rows[limit - 1].position) if len(rows) > limit else None)

    def leaderboard(self, limit: int, offset: int) -> Page:
        ratings.catch_up_quietly(self.store, self.rated_players)  # folds and writes: on the primary
        rows = self.reads.run(lambda uow: store_players.leaderboard(
            uow.conn, min_matches=LEADERBOARD_MIN_MATCHES, max_deviation=ratings.ESTABLISHED_DEVIATION,
            min_opponents=self.min_opponents, limit=limit + 1, offset=offset,
        ))
        items = [
            {"rank": offset + i + 1, **profile_json(row.player_id, row.name, row.rating)} for i, row in enumerate(rows[:limit])
        ]
        return Page(items, str(offset + len(items)) if len(rows) > limit else None)
