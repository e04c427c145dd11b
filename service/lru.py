"""The one cache mechanism of the service: a bounded map that forgets the least recently used.

Every process-local cache is one of these: folded states (``service.store.cache``), seat
views encoded at a version, provenance and finished hands' analyses
(``service.application.views``, ``service.application.coaching``), tokens already found
(``service.application.callers``), who follows a match live (``service.live.Presence``)
and the request rate buckets (``service.api.ratelimit``).  Each keeps its own instance,
so two apps on two databases never share entries.

Safe to share between threads and greenlets: every operation holds the map's lock for
a few dictionary operations.  ``compute`` reads and replaces one entry atomically (a
state replaced only by a newer one, a rate bucket refilled and taken from).

>>> seen = LRU(2)
>>> seen.put("a", 1); seen.put("b", 2); seen.get("a"); seen.put("c", 3)
1
>>> seen.get("b") is None, seen.get("a"), seen.get("c")
(True, 1, 3)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R")


class LRU(Generic[K, V]):
    """At most ``size`` entries (none when ``size`` is 0 or less)."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._store(key, value)

    def compute(self, key: K, update: Callable[[V | None], tuple[V | None, R]]) -> R:
        """``update(the entry or None) -> (the entry to keep, or None to keep the old one;
        what to return)``, with the map locked throughout."""
        with self._lock:
            new, result = update(self._entries.get(key))
            if new is not None:
                self._store(key, new)
            elif key in self._entries:
                self._entries.move_to_end(key)
            return result

    def _store(self, key: K, value: V) -> None:
        if self.size <= 0:
            return
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def discard(self, doomed: Callable[[K], bool]) -> int:
        """Forget the entries whose key is ``doomed``; how many."""
        with self._lock:
            gone = [key for key in self._entries if doomed(key)]
            for key in gone:
                del self._entries[key]
            return len(gone)

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
