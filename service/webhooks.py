"""Webhooks: the notifications sent to the operator's endpoints, by Standard Webhooks.

Each notification the feeds store (service/feed.py) is owed, in the same transaction,
to every endpoint that takes its kind (the outbox: service/store/webhooks.py).  Every
process runs a ``Deliverer``: a thread that claims what is due and sends each on one of
a few sender threads, never in a request, so that no action waits for a receiver.

A delivery is a ``POST`` of the JSON body ``{"type": kind, "timestamp": ..., "data":
{"player": ..., the notification as the feed lists it}}`` with the Standard Webhooks
headers: ``webhook-id`` (``notification_<id>``: the same at every attempt, so the
receiver drops what it has seen), ``webhook-timestamp`` (the attempt's time, in Unix
seconds) and ``webhook-signature`` (``v1,`` and the base64 HMAC-SHA256 of
``id.timestamp.body`` under the endpoint's secret, by the ``standardwebhooks``
library, with which a receiver verifies it).  An answer 2xx delivers it; anything else
(another status, no answer within the timeout, no connection) is retried: after
``first_retry`` seconds, then twice as long each time (at most an hour between two),
until ``retry_period`` has passed since the notification was made, the last attempt at
that moment; then it is ``failed`` (the operator may send it again).  Redirects are not
followed.  One endpoint takes at most half of a process's senders (rounded up), so
that a slow receiver holds back its own deliveries, not every other endpoint's.  At least once: a process killed while it sends leaves the row claimed only
for a lease (twice the timeout, and 5 seconds), after which any process sends it again.
"""

from __future__ import annotations

import http.client
import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from psycopg_pool import PoolClosed
from standardwebhooks import Webhook

from service.store import EventStore
from service.store import webhooks as rows

log = logging.getLogger(__name__)

#: The longest wait between two attempts.
MAX_RETRY_SECONDS = 3600.0
#: What a claim adds to twice the timeout before another process may take the row again.
LEASE_MARGIN_SECONDS = 5.0
#: The most of a receiver's answer read (it is ignored but for its status).
ANSWER_BYTES = 4096
USER_AGENT = "gin-rummy-webhooks"


def message_id(notification_id: int) -> str:
    return f"notification_{notification_id}"


def headers_for(secret: str, notification_id: int, body: str, when: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt (signed at ``when``)."""
    msg_id = message_id(notification_id)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, when, body),
    }


def post(url: str, body: str, headers: dict[str, str], timeout: float) -> int:
    """POST ``body`` to ``url``; the answer's status (an OSError when there is none)."""
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname or "", parts.port, timeout=timeout)
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn.request("POST", path, body=body.encode(), headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers,
        })
        answer = conn.getresponse()
        answer.read(ANSWER_BYTES)
        return answer.status
    finally:
        conn.close()


@dataclass(frozen=True)
class Schedule:
    """When to try again: ``first`` seconds after the first failure, twice as long after
    each one after it (at most an hour), within ``period`` seconds of the notification."""

    first: float
    period: float

    def next_attempt(self, attempt: int, created_at: datetime, now: datetime, rng: random.Random) -> datetime | None:
        """After failed attempt number ``attempt`` (1 the first): the next one, or None
        (the period is over: failed)."""
        end = created_at + timedelta(seconds=self.period)
        if now >= end:
            return None
        wait = min(self.first * 2 ** (attempt - 1), MAX_RETRY_SECONDS) * rng.uniform(0.9, 1.1)
        return min(now + timedelta(seconds=wait), end)


#: Reports each attempt's outcome (delivered, retried, failed) and, when delivered,
#: the seconds since the notification was made.
Report = Callable[[str, float | None], None]


def _quiet(outcome: str, lag: float | None) -> None:
    pass


class Deliverer:
    """Sends this process's share of the deliveries due, ``senders`` at a time."""

    def __init__(
        self, store: EventStore, *, timeout: float, schedule: Schedule, senders: int = 4, poll: float = 1.0,
        report: Report = _quiet, before_poll: Callable[[], None] | None = None, send=post,
    ):
        self.store = store
        self.timeout = timeout
        self.schedule = schedule
        self.senders = max(1, senders)
        self.poll = poll
        self.report = report
        self.before_poll = before_poll
        self.send = send
        self._rng = random.Random()
        #: The most attempts under way to one endpoint at once, in this process.
        self.per_endpoint = (self.senders + 1) // 2
        self._busy: dict = {}  # endpoint id -> attempts under way
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._polled = 0.0  # when before_poll last ran (monotonic)
        self._endpoints: tuple[float, list] = (0.0, [])  # (when read, the endpoint ids)

    # --- one attempt ----------------------------------------------------------------------

    def attempt(self, due: rows.Due) -> str:
        """Send one claimed delivery and record its outcome (delivered, retried, failed)."""
        body = rows.body(due.payload)
        status: int | None = None
        error: str | None = None
        try:
            status = self.send(due.url, body, headers_for(due.secret, due.notification_id, body, datetime.now(UTC)), self.timeout)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            error = (f"{type(exc).__name__}: {exc}")[:200]
        now = datetime.now(UTC)
        if status is not None and 200 <= status < 300:
            outcome, state, next_attempt = "delivered", "delivered", None
        else:
            if error is None:
                error = f"answered {status}"
            next_attempt = self.schedule.next_attempt(due.attempt, due.created_at, now, self._rng)
            outcome, state = ("retried", "pending") if next_attempt is not None else ("failed", "failed")
        with self.store.connection() as conn:
            rows.finish(conn, due, state, status, error, next_attempt)
        lag = (now - due.created_at).total_seconds() if outcome == "delivered" else None
        self.report(outcome, lag)
        return outcome

    def claim(self, limit: int, endpoint_id=None) -> list[rows.Due]:
        lease = timedelta(seconds=2 * self.timeout + LEASE_MARGIN_SECONDS)
        with self.store.connection() as conn:  # one statement, atomic by itself: one round trip
            return rows.claim(conn, limit, lease, endpoint_id)

    def claim_fairly(self) -> list[rows.Due]:
        """What is due, each endpoint's share: the senders free, at most
        ``per_endpoint`` under way to any one endpoint, the endpoints taken in turn."""
        with self._lock:
            free = self.senders - sum(self._busy.values())
            busy = dict(self._busy)
        if free <= 0:
            return []
        ids = self._endpoint_ids()
        if ids:
            turn = self._rng.randrange(len(ids))
            ids = ids[turn:] + ids[:turn]
        claimed: list[rows.Due] = []
        for endpoint_id in ids:
            room = min(free - len(claimed), self.per_endpoint - busy.get(endpoint_id, 0))
            if room > 0:
                claimed += self.claim(room, endpoint_id)
        return claimed

    def deliver_due(self, limit: int = 100) -> list[str]:
        """One round: claim what is due now (at most ``limit``) and send it in this
        thread, one after the other (tests, commands); the outcomes."""
        return [self.attempt(due) for due in self.claim(limit)]

    def _endpoint_ids(self) -> list:
        """The endpoints' ids, read again at most once a poll interval."""
        read_at, ids = self._endpoints
        if time.monotonic() - read_at >= self.poll:
            with self.store.connection() as conn:
                ids = rows.endpoint_ids(conn)
            self._endpoints = (time.monotonic(), ids)
        return ids

    # --- the thread -----------------------------------------------------------------------

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> threading.Event:
        """Deliver in daemon threads until the returned event is set."""
        self._pool = ThreadPoolExecutor(self.senders, thread_name_prefix="webhook-sender")
        threading.Thread(target=self._run, name="webhook-deliverer", daemon=True).start()
        return self._stop

    def _run(self) -> None:
        time.sleep(random.uniform(0, self.poll))  # replicas started together spread out
        while not self._stop.is_set():
            self._wake.clear()
            try:
                if self.before_poll is not None and time.monotonic() - self._polled >= self.poll:
                    self._polled = time.monotonic()
                    self.before_poll()
                claimed = self.claim_fairly()
            except PoolClosed:
                return
            except Exception as exc:  # the database is away: try again next time
                log.warning("webhook deliveries: %s", type(exc).__name__)
                claimed = []
            for due in claimed:
                with self._lock:
                    self._busy[due.endpoint_id] = self._busy.get(due.endpoint_id, 0) + 1
                assert self._pool is not None, "start made the senders"
                self._pool.submit(self._send, due)
            if not claimed:
                self._wake.wait(self.poll)

    def _send(self, due: rows.Due) -> None:
        try:
            self.attempt(due)
        except PoolClosed:
            pass
        except Exception as exc:  # the outcome could not be recorded: the lease runs out, it is sent again
            log.warning("webhook delivery %s: %s", message_id(due.notification_id), type(exc).__name__)
        finally:
            with self._lock:
                self._busy[due.endpoint_id] -= 1
                if not self._busy[due.endpoint_id]:
                    del self._busy[due.endpoint_id]
            self._wake.set()
