"""Recently folded states, kept by each process so that a request need not fold again.

A match's state is a fold of its events; folding them (and decoding them) is most of
what a load costs.  The cache keeps, per match, the last state this process folded
or appended, and the store uses it in two ways:

- a *checked* load (every read, ``EventStore.load``) asks the database only for the
  events after the cached version -- usually none -- and folds those in, so a client
  that got a 200 for an action, from whichever process, never reads an older view;
- an *unchecked* peek (``EventStore.cached``), for an action: the action is decided
  on the cached state and appended at its version, and the append's version check
  refuses it if another process moved the match on meanwhile.  The caller then loads
  the match checked and decides again (``service.application.actions``), so a stale entry costs a
  retry, never a wrong answer.

An entry also holds the stored events of the state's current hand when the match has
a computer seat (the computer's history of the hand, which a request would otherwise
read back from the database).  Entries are replaced only by newer versions, and the
least recently used are forgotten beyond ``size``.
"""

from __future__ import annotations

from typing import NamedTuple
from uuid import UUID

from service.engine import State
from service.lru import LRU

#: Matches one process remembers by default (a state is a few kilobytes).
DEFAULT_SIZE = 4096


class Entry(NamedTuple):
    state: State
    #: ``{"seq", "type", "data"}`` of the events after ``state.hand_start_version`` up to
    #: ``state.version``, for matches with a computer seat; None when not kept.
    hand_events: tuple[dict, ...] | None


class StateCache:
    """Entries by match id (an ``LRU``); safe to share between threads (and greenlets)."""

    def __init__(self, size: int = DEFAULT_SIZE):
        self.size = size
        self._entries: LRU[UUID, Entry] = LRU(size)

    def get(self, match_id: UUID) -> Entry | None:
        return self._entries.get(match_id)

    def put(self, match_id: UUID, entry: Entry) -> None:
        """Keep ``entry`` unless the cache holds a newer version of the match."""

        def unless_newer(known: Entry | None) -> tuple[Entry | None, None]:
            return (None if known is not None and known.state.version > entry.state.version else entry), None

        self._entries.compute(match_id, unless_newer)

    def forget(self, match_ids: set[UUID] | None) -> None:
        """Drop the entries of ``match_ids`` (None: every entry)."""
        self._entries.discard(lambda match_id: match_ids is None or match_id in match_ids)

    def __len__(self) -> int:
        return len(self._entries)


def keeps_hand_events(state: State) -> bool:
    """Whether an entry of ``state`` keeps its hand's events: when a computer plays."""
    return any(seat.get("kind") == "computer" for seat in state.seats)


def hand_tail(state: State, earlier: tuple[dict, ...] | None, new: list[dict]) -> tuple[dict, ...] | None:
    """The hand events of ``state``, from an earlier entry's (None: not known) and the
    ``new`` events that led to it (``{"seq", "type", "data"}``, in order); None when
    ``state`` keeps none, or when they do not reach back to the hand's start."""
    if not keeps_hand_events(state):
        return None
    first = state.hand_start_version
    tail = tuple(e for e in (earlier or ()) + tuple(new) if e["seq"] > first)
    if [e["seq"] for e in tail] != list(range(first + 1, state.version + 1)):
        return None
    return tail
