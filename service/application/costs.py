"""Limits by cost: what one caller may take of the machine, counted where every worker sees it.

Two kinds of limit, both kept in PostgreSQL (``service.store.limits``: one bucket per
scope and key, shared by every worker process and instance, so a deployment's limit is
the configured one whatever its number of processes):

- **creations**: guests per client address, matches with an invite per address; each
  takes one from its bucket, and a creation that finds it empty is refused with 429
  ``rate_limited`` and a ``Retry-After`` before anything is written. Public matches
  waiting in the lobby are also counted per player (``public_matches_per_player``,
  open at once).
- **CPU**: an import's check and an analysis (the heavy jobs: seconds of CPU for a long
  match) are charged the CPU-seconds they took, measured in the thread that computed
  them, to the client address and to the caller (player, seat or operator). A caller
  whose budget is spent (below zero) is refused with 429 ``cpu_budget_spent`` until it
  has refilled, before any work. And at most ``heavy_jobs_per_process`` of them are
  computed at once in one process: one more is answered 503 ``busy`` with Retry-After
  at once, so a flood of them never holds every thread of a process nor starves its
  event loop (health checks, actions) of the interpreter.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from service.cooperative import off_process_timed
from service.settings import Rate, Settings
from service.store import EventStore
from service.store import limits as buckets

from .errors import RateLimited, Unavailable

T = TypeVar("T")

#: Seconds a client is told to wait when every heavy-job slot of the process is taken.
BUSY_RETRY_SECONDS = 2


def address_key(address: str | None) -> str:
    """A client address as a bucket names it: hashed, so the table keeps no address."""
    return hashlib.blake2b((address or "unknown").encode(), digest_size=16, person=b"gin-rummy-addr").hexdigest()


def seconds(wait: float) -> int:
    return max(1, math.ceil(wait))


@dataclass(frozen=True)
class Payer:
    """Who a heavy job is charged to: the client address, and the caller when known."""

    address: str | None
    caller: str | None = None


class Costs:
    def __init__(self, store: EventStore, settings: Settings):
        self.store = store
        self.settings = settings
        self._slots = settings.heavy_jobs_per_process
        self._running = 0
        self._lock = threading.Lock()

    # --- creations ------------------------------------------------------------------

    def take(self, scope: str, rate: Rate | None, key: str, what: str) -> None:
        """One creation from ``key``'s bucket of ``scope`` (RateLimited when empty)."""
        if rate is None:
            return
        with self.store.connection() as conn:
            wait = buckets.take(conn, scope, key, rate.per_second, rate.burst)
        if wait:
            after = seconds(wait)
            raise RateLimited(f"too many {what} from this client address; retry after {after} s", retry_after=after)

    def guest(self, address: str | None) -> None:
        self.take("guests", self.settings.guests_per_address, address_key(address), "guest players")

    def invite(self, address: str | None) -> None:
        self.take("invites", self.settings.invites_per_address, address_key(address), "matches with an invite")

    # --- CPU --------------------------------------------------------------------------

    def _budgets(self, payer: Payer) -> list[tuple[str, str, Rate]]:
        out = []
        if self.settings.cpu_per_address is not None:
            out.append(("cpu:address", address_key(payer.address), self.settings.cpu_per_address))
        if self.settings.cpu_per_token is not None and payer.caller is not None:
            out.append(("cpu:caller", payer.caller, self.settings.cpu_per_token))
        return out

    def admit(self, payer: Payer) -> None:
        """Refuse now what ``heavy`` would refuse (a spent budget, every slot taken):
        before a request's body is even read."""
        with self._lock:
            if self._slots is not None and self._running >= self._slots:
                raise self._busy()
        self._check_budgets(self._budgets(payer))

    def heavy(self, payer: Payer | None, function: Callable[..., T], *args) -> T:
        """``function(*args)`` off the event loop, if the payer's budgets are not spent
        and a slot of the process is free; its CPU-seconds charged to the payer."""
        budgets = self._budgets(payer) if payer is not None else []
        self._check_budgets(budgets)
        self._enter()
        try:
            result, cpu = off_process_timed(function, *args)
        finally:
            self._leave()
        if budgets:
            with self.store.connection() as conn:
                for scope, key, rate in budgets:
                    buckets.take(conn, scope, key, rate.per_second, rate.burst, amount=cpu, need=-1e18)
        return result

    def _check_budgets(self, budgets: list[tuple[str, str, Rate]]) -> None:
        if budgets:
            with self.store.connection() as conn:
                for scope, key, rate in budgets:
                    # Admitted while the bucket holds anything (a job's cost is known after it).
                    wait = buckets.take(conn, scope, key, rate.per_second, rate.burst, amount=0.0, need=1e-9)
                    if wait:
                        after = seconds(wait)
                        who = "this client address" if scope == "cpu:address" else "this caller"
                        raise RateLimited(
                            f"the CPU budget of {who} is spent (imports and analyses); retry after {after} s",
                            code="cpu_budget_spent", retry_after=after,
                        )

    def _busy(self) -> Unavailable:
        return Unavailable(
            f"this instance is computing {self._running} import(s) or analysis(es) already; retry shortly",
            code="busy", retry_after=BUSY_RETRY_SECONDS,
        )

    def _enter(self) -> None:
        with self._lock:
            if self._slots is not None and self._running >= self._slots:
                raise self._busy()
            self._running += 1

    def _leave(self) -> None:
        with self._lock:
            self._running -= 1
