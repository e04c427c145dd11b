"""Where a use case makes its heavy reads: on a standby once it has caught up, else on the primary.

With ``GIN_RUMMY_REPLICA_DATABASE_URL`` set, ``Reads.run(read)`` calls ``read(uow)``
with a read-only unit of work on the standby, after the standby has replayed everything
the primary had committed when the read began (``service.store.replica``); so a caller
never reads older state than it was answered.  The primary reads instead when the
standby is still behind after ``GIN_RUMMY_REPLICA_WAIT_SECONDS``, and reads again when
the standby failed the read.  Unset, every read is a unit of work on the primary.

``read`` only reads, and may run twice.  What decides whether the caller may read (its
token, which can be one just issued, and a first sign-in writes a player) is read on
the primary before, in a unit of work of its own; so are reads that fold first and
write what they folded (the ratings before the leaderboard).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from service.store import EventStore
from service.store.replica import Replica

from .unit_of_work import ReadOnly, UnitOfWork

T = TypeVar("T")


class Reads:
    def __init__(self, store: EventStore, replica: Replica | None = None):
        self.store = store
        self.replica = replica

    def run(self, read: Callable[[UnitOfWork], T]) -> T:
        if self.replica is None:
            with UnitOfWork(self.store) as uow:
                return read(uow)
        return self.replica.run(lambda conn: read(ReadOnly(self.store, conn)))
