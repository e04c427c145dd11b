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
order, and a reader of every match's events in the store's global order (its cursor
carried across the promotions) got each event once.  The seconds without writes after
each fault are reported.

Beside it: reads meant for a standby whose replay is paused wait for it, then read the
primary (no answer is older than one given); and the webhooks of players' matches
played through a primary's kill arrive once each.

    python -m pytest tests/scale/test_failover.py   # skipped without patroni and etcd
"""

from __future__ import annotations

import http.client
import json
import re
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from service.store import EventStore, connect
from tests.support.webhooks import SECRET, Receiver

from .checks import check_all
from .client import LOOPBACK, Ledger, Routes, bearer, call
from .cluster import nginx_binary, wait_for
from .conftest import running
from .patroni import Replicated, available, wait_writable
from .report import note
from .test_matchmaking_scale import make_players
from .test_scale_out import Background, players
from .test_webhooks_scale import UNLIMITED, Progress, check_your_moves, make_match, play_all

pytestmark = pytest.mark.scale

SEED = 20_261_202
CLIENTS = 16
OPERATOR = "failover-operator"
WEBHOOK_MATCHES = 16


@pytest.fixture(scope="module")
def receiver():
    with Receiver() as made:
        yield made


@pytest.fixture(scope="module")
def replicated(request, receiver):
    missing = available()
    if missing or nginx_binary() is None:
        pytest.skip(missing or "nginx is not installed")
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-failover-"))
    hooks = json.dumps([{"url": receiver.url, "secret": SECRET, "kinds": ["your_move"]}])
    deployment = Replicated(
        folder, synchronous=True, replica_reads=True,
        env={
            **UNLIMITED, "GIN_RUMMY_STREAM_HEARTBEAT_SECONDS": "1", "GIN_RUMMY_OPERATOR_TOKEN": OPERATOR,
            "GIN_RUMMY_WEBHOOKS": hooks, "GIN_RUMMY_WEBHOOK_FIRST_RETRY_SECONDS": "0.2",
            "GIN_RUMMY_WEBHOOK_POLL_SECONDS": "0.2",
        },
    )
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


class GlobalReader:
    """Follows every match's events in the store's global order (``read_all`` and its
    cursor), through the multi-host URL, retrying across failovers: the cursor taken
    on one primary must go on on the next."""

    def __init__(self, url: str):
        self.store = EventStore(connect(url, min_size=1, max_size=1))
        self.seen: list[tuple[str, int]] = []
        self.after = 0
        self.failures = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _page(self) -> int:
        page = self.store.read_all(self.after, 500)
        self.seen += [(str(e.match_id), e.seq) for e in page.events]
        self.after = page.after
        return len(page.events)

    def _run(self):
        while not self.stop.is_set():
            try:
                if not self._page():
                    time.sleep(0.05)
            except (psycopg.Error, PoolTimeout):
                self.failures += 1
                time.sleep(0.1)

    def finish(self) -> None:
        """Stop following, then read to the end."""
        self.stop.set()
        self.thread.join(30)
        while self._page():
            pass
        self.store.pool.close()


def acknowledged(ledger: Ledger) -> int:
    with ledger.lock:
        return ledger.counts["actions"]


def wait_until_acknowledged(ledger: Ledger, since: int, timeout: float = 60) -> None:
    """Return once a client action beyond the ``since``-th is acknowledged."""
    started = time.monotonic()
    while acknowledged(ledger) <= since:
        assert time.monotonic() - started < timeout, "no action acknowledged after the fault"
        time.sleep(0.02)


def replica_reads(deployment: Replicated, outcome: str) -> float:
    """``gin_rummy_replica_reads_total{outcome}`` summed over the instances."""
    total = 0.0
    pattern = re.compile(rf'^gin_rummy_replica_reads_total{{outcome="{outcome}"}} (\S+)$', re.M)
    for instance in deployment.instances:
        answer = call(instance.port, "GET", "/metrics")
        assert answer.status == 200, answer.describe()
        total += sum(float(v) for v in pattern.findall(answer.body.decode()))
    return total


def resigned_match(port: int) -> tuple[str, dict]:
    """A two-people match with a draw and a discard, then resigned; (its id, a seat's headers)."""
    created = call(port, "POST", "/matches", {"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    assert created.status == 201, created.describe()
    match_id = created.json["id"]
    seats = [bearer(seat["token"]) for seat in created.json["seats"]]
    for _ in range(2):
        for headers in seats:
            view = call(port, "GET", f"/matches/{match_id}", headers=headers).json
            plays = [a for a in view["legal_actions"] if a["type"] not in ("resign", "claim_timeout", "abort")]
            if plays:
                played = call(port, "POST", f"/matches/{match_id}/actions", plays[0], headers)
                assert played.status == 200, played.describe()
    resigned = call(port, "POST", f"/matches/{match_id}/actions", {"type": "resign"}, seats[0])
    assert resigned.status == 200, resigned.describe()
    return match_id, seats[1]


def test_reads_meant_for_a_standby_behind_wait_for_it_then_read_the_primary(replicated):
    """With replay paused on every standby, a match finished since is read whole (from
    the primary, after the wait); once replay resumes, from the standby again."""
    port = replicated.nginx.port
    leader = replicated.wait_healthy()
    standbys = [node for node in replicated.nodes if node is not leader]
    resigned_match(port)  # the instances' standby connections are made and used
    behind, on_standby = replica_reads(replicated, "behind"), replica_reads(replicated, "replica")
    replicated.maintenance(True)
    for node in standbys:
        with psycopg.connect(node.admin_url, autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
    try:
        match_id, seat = resigned_match(port)
        started = time.monotonic()
        audit = call(port, "GET", f"/matches/{match_id}/audit", headers=seat)
        waited = time.monotonic() - started
        assert audit.status == 200, audit.describe()
        events = call(port, "GET", f"/matches/{match_id}/events", headers=seat)
        assert events.status == 200 and events.json["events"][-1]["type"] == "match_ended", events.describe()
        exported = call(port, "GET", f"/matches/{match_id}/export", headers=seat)
        assert exported.status == 200 and exported.json["events"][-1]["type"] == "match_ended", exported.describe()
        assert waited >= 1.0  # GIN_RUMMY_REPLICA_WAIT_SECONDS, the default
        assert replica_reads(replicated, "behind") == behind + 3
        note("replica reads", **{"paused standby: a read answered by the primary after (s)": f"{waited:.2f}"})
    finally:
        for node in standbys:
            with psycopg.connect(node.admin_url, autocommit=True) as conn:
                conn.execute("SELECT pg_wal_replay_resume()")
        replicated.maintenance(False)
    started = time.monotonic()
    audit = call(port, "GET", f"/matches/{match_id}/audit", headers=seat)
    assert audit.status == 200 and time.monotonic() - started < 1.0, audit.describe()
    assert replica_reads(replicated, "replica") >= on_standby + 1
    assert replica_reads(replicated, "behind") == behind + 3


def test_primary_killed_twice_and_a_switchover_lose_no_acknowledged_action(replicated):
    ledger = Ledger()
    routes = Routes(replicated.nginx.port, [i.port for i in replicated.instances])
    load = Background(players(ledger, routes, SEED, CLIENTS, 0, [None]))
    reader = GlobalReader(replicated.database_url)
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
                old, new = replicated.switchover(attempts=10)
                victim = f"{old.name} -> {new}"
            else:
                leader = replicated.leader()
                leader.kill_postmaster()
                victim = leader.name
            writable = time.monotonic() - started + wait_writable(replicated.database_url)
            wait_until_acknowledged(ledger, acknowledged(ledger))
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
    reader.finish()
    with psycopg.connect(url, autocommit=True) as conn:
        stored = [(str(m), seq) for m, seq in conn.execute("SELECT match_id, seq FROM events")]
    assert len(reader.seen) == len(set(reader.seen)), "the global order gave an event twice"
    assert set(reader.seen) == set(stored), "the global order skipped events"
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
        global_order_read=f"{len(reader.seen)} events, {reader.failures} failed reads retried",
        stream_reconnections=sum(w.reconnects for w in watchers.values()),
        events_checked=checked["events"],
    )


def test_the_webhooks_continue_where_they_stopped_after_the_primary_is_killed(replicated, receiver):
    """Players' matches played while the primary's postmaster is killed: every
    ``your_move`` the rules owe arrives once (after dedupe by webhook-id), signed."""
    port = replicated.nginx.port
    replicated.wait_healthy()
    people = make_players(replicated.database_url, 2 * WEBHOOK_MATCHES, "F")
    matches = [make_match(port, people[2 * i], people[2 * i + 1]) for i in range(WEBHOOK_MATCHES)]
    progress = Progress()
    killed: list[tuple[str, int]] = []

    def kill_the_primary():
        wait_for(lambda: progress.done >= 30, 120, "30 actions")
        leader = replicated.wait_healthy()
        leader.kill_postmaster()
        killed.append((leader.name, progress.done))

    killer = threading.Thread(target=kill_the_primary, daemon=True)
    killer.start()
    play_all(port, matches, SEED, progress)
    killer.join(120)
    assert killed and killed[0][1] < progress.done, f"the play ended ({progress.done} actions) before the kill"
    owed, everything, accepted = check_your_moves(replicated.database_url, receiver, [m["id"] for m in matches])
    note(
        "webhooks through a primary's kill",
        matches=WEBHOOK_MATCHES, actions=progress.done, killed=f"{killed[0][0]} after {killed[0][1]} actions",
        your_moves_owed=owed, deliveries_received=len(everything), duplicates_dropped=len(everything) - len(accepted),
    )

