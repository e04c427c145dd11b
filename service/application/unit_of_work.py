"""One unit of work per use case: what it reads, and what it writes all at once.

Every use case opens one and uses it the same way::

    with UnitOfWork(store) as uow:
        state = store.load(match_id, conn=uow.conn)      # reads see what committed before
        appended = uow.append(match_id, state.version, events, actor="seat:0")
        uow.write(lambda conn: save_seat_tokens(conn, match_id, hashes))
        uow.commit()                                      # every write, or none
        appended.events                                   # the stored events, after the commit

Reads go through ``uow.conn``, one pooled connection held for the use case (taken at
its first use, given back at the end), in autocommit: each read is its own statement
and sees what committed before it, and a request pays no BEGIN or COMMIT to read.

Writes are staged and stored by ``commit``: an append alone is one statement, atomic on
its own (the store writes the events, the summary, the snapshot and the idempotency
record in it), so it runs by itself -- the path of most actions, one round trip; any
other set of writes runs in one transaction on the same connection.  Either way the
use case's writes happen completely or not at all, whichever use case it is.  A staged
write may raise to refuse the whole unit (nothing is stored).  Leaving the ``with``
without a commit stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Generic, TypeVar

import psycopg

from service.engine import Event
from service.store import EventStore, StoredEvent

T = TypeVar("T")


class Staged(Generic[T]):
    """A write waiting for the commit; ``value`` is its result once committed."""

    def __init__(self, run: Callable[[psycopg.Connection], T], alone: bool):
        self.run = run
        #: Whether the write is one statement, atomic by itself.
        self.alone = alone
        self._value: T | None = None
        self.done = False

    @property
    def value(self) -> T:
        if not self.done:
            raise RuntimeError("the unit of work has not been committed")
        return self._value  # type: ignore[return-value]  # set by the commit

    def _apply(self, conn: psycopg.Connection) -> None:
        self._value = self.run(conn)
        self.done = True


class Appended(Staged[list[StoredEvent]]):
    @property
    def events(self) -> list[StoredEvent]:
        return self.value


class UnitOfWork:
    def __init__(self, store: EventStore):
        self.store = store
        self._lease: AbstractContextManager[psycopg.Connection] | None = None
        self._conn: psycopg.Connection | None = None
        self._staged: list[Staged[Any]] = []
        #: The events its commits stored (the feeds fold them after: ``Play.stored``).
        self.appended: list[StoredEvent] = []

    def __enter__(self) -> UnitOfWork:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._staged.clear()
        lease, self._lease, self._conn = self._lease, None, None
        if lease is not None:
            # The pool learns of a failure that left the connection broken (EventStore._pooled).
            lease.__exit__(kind, error, trace)

    @property
    def conn(self) -> psycopg.Connection:
        """The use case's connection (autocommit), taken from the pool at its first use."""
        if self._conn is None:
            self._lease = self.store.connection()
            self._conn = self._lease.__enter__()
        return self._conn

    # --- writes -------------------------------------------------------------------------

    def append(self, match_id, expected_version: int, events: Sequence[Event | dict], **options: Any) -> Appended:
        """Stage ``EventStore.append(match_id, expected_version, events, **options)``."""

        def run(conn: psycopg.Connection) -> list[StoredEvent]:
            return self.store.append(match_id, expected_version, events, conn=conn, **options)

        staged = Appended(run, alone=True)
        self._staged.append(staged)
        return staged

    def write(self, run: Callable[[psycopg.Connection], T], *, alone: bool = False) -> Staged[T]:
        """Stage ``run(conn)``: rows beside the events (tokens, read models, links).
        ``alone``: it is one statement, atomic by itself (like an append)."""
        staged = Staged(run, alone=alone)
        self._staged.append(staged)
        return staged

    def commit(self) -> None:
        """Store every staged write: one append by itself, anything more in one transaction."""
        staged, self._staged = self._staged, []
        if not staged:
            return
        if len(staged) == 1 and staged[0].alone:
            staged[0]._apply(self.conn)
        else:
            with self.store.transaction(self.conn) as conn:
                for write in staged:
                    write._apply(conn)
        for write in staged:
            if isinstance(write, Appended):
                self.appended += write.events


class Immediate(UnitOfWork):
    """A unit of work inside a transaction already open on ``conn``: its writes run at
    once, on that connection.  A staged write of an enclosing unit uses it when what it
    writes depends on rows it has just locked (matchmaking: the two tickets taken decide
    the match), so that code which stages its writes (``MatchService.stage_new_match``)
    writes them inside that transaction."""

    def __init__(self, store: EventStore, conn: psycopg.Connection):
        super().__init__(store)
        self._conn = conn

    def append(self, match_id, expected_version: int, events: Sequence[Event | dict], **options: Any) -> Appended:
        staged = super().append(match_id, expected_version, events, **options)
        self.commit()
        return staged

    def write(self, run: Callable[[psycopg.Connection], T], *, alone: bool = False) -> Staged[T]:
        staged = super().write(run, alone=alone)
        self.commit()
        return staged

    def commit(self) -> None:
        staged, self._staged = self._staged, []
        for write in staged:
            write._apply(self.conn)
            if isinstance(write, Appended):
                self.appended += write.events


class ReadOnly(UnitOfWork):
    """A unit of work that only reads, on a connection given (a standby's: ``Reads``).
    Staging a write is a mistake in the use case, refused at once."""

    def __init__(self, store: EventStore, conn: psycopg.Connection):
        super().__init__(store)
        self._conn = conn

    def append(self, match_id, expected_version: int, events: Sequence[Event | dict], **options: Any) -> Appended:
        raise TypeError("a read-only unit of work writes nothing")

    def write(self, run: Callable[[psycopg.Connection], T], *, alone: bool = False) -> Staged[T]:
        raise TypeError("a read-only unit of work writes nothing")
