"""A player deletes themselves (``DELETE /players/me``), or the operator deletes the
player of a sign-in subject (``DELETE /players?subject=``).

How the name and the link to the player's matches are erased while the events are
never changed, and what stays: service/store/erasure.py.  Here: the use case, in one
transaction after the feeds and the ratings have folded every event stored so far
(so that what they keep is moved to the pseudonym, and nothing folded later names the
player), then this process forgets at once what it keeps (tokens found, states,
views, folded states, live streams' kept events), and every other process does the
same when the deletion's notification reaches it (``erasure.listen``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

from service import feed, ratings
from service.live import LiveHub
from service.store import EventStore
from service.store import erasure as rows

from .callers import Callers
from .errors import Forbidden, NotFound
from .unit_of_work import UnitOfWork
from .views import Views


class Erasure:
    def __init__(
        self, store: EventStore, callers: Callers, views: Views, hub: LiveHub | None, rated_players: str,
        clock: Callable[[], datetime],
    ):
        self.store = store
        self.callers = callers
        self.views = views
        self.hub = hub
        self.rated_players = rated_players
        self.clock = clock

    def delete_me(self, token: str) -> dict:
        """Delete the calling player (a guest's token, or a sign-in token)."""
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
        return self._delete(player_id)

    def delete_subject(self, token: str, issuer: str | None, subject: str) -> dict:
        """The operator deletes the player signed in as ``subject`` (of the service's issuer)."""
        with UnitOfWork(self.store) as uow:
            if not self.callers.identify(uow, token).is_operator:
                raise Forbidden("only the operator deletes a player by subject")
            row = uow.conn.execute("SELECT id FROM players WHERE subject = %s", (f"{issuer} {subject}",)).fetchone()
        if row is None:
            raise NotFound(f"no player signed in as {subject!r}", code="player_not_found")
        return self._delete(row[0])

    def _delete(self, player_id: uuid.UUID) -> dict:
        feed.catch_up(self.store)
        ratings.catch_up(self.store, self.rated_players)
        with self.store.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (feed.LOCK_KEY,))  # no fold names them meanwhile
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (ratings.LOCK_KEY,))
            matches = rows.erase(conn, player_id)
        self.forget(set(matches))
        return {"id": str(player_id), "deleted_at": self.clock().isoformat(), "matches": len(matches)}

    def forget(self, match_ids: set[uuid.UUID] | None) -> None:
        """Forget, in this process, every token found and what is kept of ``match_ids``
        (None: of every match)."""
        self.callers.forget()
        self.store.cache.forget(match_ids)
        feed.forget(self.store, match_ids)
        self.views.forget(match_ids)
        if self.hub is not None:
            self.hub.forget(match_ids)
