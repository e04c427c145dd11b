"""Failover of a replicated PostgreSQL under load: three nodes run by Patroni with
synchronous replication (patroni.py), three service instances behind nginx pointed at
them by one multi-host URL (``target_session_attrs=read-write``), 16 clients playing
two-people matches with Idempotency-Keys, and live streams of some matches.

The primary's postmaster is killed (``kill -9``), then the new primary's, then a
planned switchover is made.  After each the test waits for a synchronous standby
again.  Then: every action answered 200 is in the cluster exactly once (the clients'
ledger against ``events``), no stream has a gap or a double, no request was answered
500 (a client fails on any answer but 200, 409/412 of a retry in flight, 429 and
502/503/504), and every live stream's client saw every event of its match once and in
order.  The seconds without writes after each fault are reported.

    python -m pytest tests/scale/test_failover.py   # skipped without patroni and etcd
"""

from __future__ import annotations

import http.client
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from .checks import check_all
from .client import LOOPBACK, Ledger, Routes, bearer
from .cluster import nginx_binary
from .conftest import running
from .patroni import Replicated, available, wait_writable
from .report import note
from .test_scale_out import Background, players

pytestmark = pytest.mark.scale

SEED = 20_261_202
CLIENTS = 16


@pytest.fixture(scope="module")
def replicated(request):
    missing = available()
    if missing or nginx_binary() is None:
        pytest.skip(missing or "nginx is not installed")
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-failover-"))
    deployment = Replicated(folder, synchronous=True, env={"GIN_RUMMY_STREAM_HEARTBEAT_SECONDS": "1"})
    yield from running(request, deployment, folder)


class Watcher:
    """Follows one match's live stream through nginx, reconnecting with Last-Event-ID
    whenever the stream ends or breaks, and keeps every id it was sent."""

    def __init__(self, port: int, match_id: str, token: str):
        self.port, self.match_id, self.token = port, match_id, token
        self.seen: list[int] = []
        self.reconnects = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            headers = {**bearer(self.token), "Accept": "text/event-stream"}
            if self.seen:
                headers["Last-Event-ID"] = str(self.seen[-1])
            conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=5)
            try:
                conn.request("GET", f"/matches/{self.match_id}/stream?wait=10", headers=headers)
                response = conn.getresponse()
                if response.status != 200:
                    response.read()
                    time.sleep(0.2)
                    continue
                while not self.stop.is_set():
                    line = response.fp.readline()
                    if not line:
                        break
                    if line.startswith(b"id: "):
                        self.seen.append(int(line[4:]))
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.1)
            finally:
                conn.close()
            self.reconnects += 1


def acknowledged(ledger: Ledger) -> int:
    with ledger.lock:
        return ledger.counts["actions"]


def seconds_until_acknowledged(ledger: Ledger, since: int, timeout: float = 60) -> float:
    started = time.monotonic()
    while acknowledged(ledger) <= since:
        assert time.monotonic() - started < timeout, "no action acknowledged after the fault"
        time.sleep(0.02)
    return time.monotonic() - started


def test_primary_killed_twice_and_a_switchover_lose_no_acknowledged_action(replicated):
    ledger = Ledger()
    routes = Routes(replicated.nginx.port, [i.port for i in replicated.instances])
    load = Background(players(ledger, routes, SEED, CLIENTS, 0, [None]))
    watchers: dict[str, Watcher] = {}
    faults = {}
    try:
        time.sleep(3)
        with ledger.lock:
            for record in list(ledger.matches.values())[:8]:
                watchers[record.id] = Watcher(routes.nginx, record.id, record.tokens[0])
        time.sleep(3)
        for fault in ("first primary killed", "second primary killed", "planned switchover"):
            replicated.wait_healthy()
            before = acknowledged(ledger)
            started = time.monotonic()
            if fault == "planned switchover":
                old, new = replicated.switchover()
                victim = f"{old.name} -> {new}"
            else:
                leader = replicated.leader()
                leader.kill_postmaster()
                victim = leader.name
            writable = time.monotonic() - started + wait_writable(replicated.database_url)
            seconds_until_acknowledged(ledger, acknowledged(ledger))
            faults[fault] = {
                "node": victim,
                "seconds_until_the_database_took_writes": round(writable, 2),
                "seconds_until_a_client_action_was_acknowledged": round(time.monotonic() - started, 2),
                "acknowledged_before": before,
            }
            time.sleep(4)
        replicated.wait_healthy()
        time.sleep(2)
    finally:
        load.finish()

    url = replicated.database_url
    checked = check_all(url, ledger)
    with psycopg.connect(url, autocommit=True) as conn:
        for match_id, watcher in watchers.items():
            (last,) = conn.execute("SELECT COALESCE(max(seq), 0) FROM events WHERE match_id = %s", (match_id,)).fetchone()
            deadline = time.monotonic() + 30
            while (not watcher.seen or watcher.seen[-1] < last) and time.monotonic() < deadline:
                time.sleep(0.1)
            watcher.stop.set()
            assert watcher.seen == list(range(1, last + 1)), (match_id, last, watcher.seen[-5:])
    counts = ledger.counts
    assert counts["actions"] > 200, counts
    note(
        "failover: three Patroni nodes (synchronous), three instances, 16 clients",
        **{fault: values for fault, values in faults.items()},
        actions_acknowledged=counts["actions"],
        answers_503=len(ledger.slow_503),
        retries=dict(sorted((k, v) for k, v in counts.items() if k.startswith("retr"))),
        streams_followed=len(watchers),
        stream_reconnections=sum(w.reconnects for w in watchers.values()),
        events_checked=checked["events"],
    )
