"""Live streams on loopback: N Server-Sent Events streams held open while the service plays.

    python benchmarks/streams.py [--streams 500,1000,2000] [--seconds 10] [--clients 16]
                                 [--actions-per-second 20] [--workers N] [--database-url URL]

The service runs as ``gin-rummy serve`` runs it (gunicorn with ``service.gunicorn_conf``,
``--workers`` processes, default 2), beside the bare INSERT app of ``benchmarks/load.py``.
For each N of ``--streams`` (ascending; the streams are opened incrementally, so the
N-th row holds every stream of the rows before it and more, all kept open to the end):

1. N streams ``GET /matches/{id}/stream?wait=600`` are open: 4 per match (2 per seat
   token, the service allowing 4 per token and process) on matches between two people
   made for the purpose.  They are held by one client process of their own, asyncio
   with raw HTTP/1.1 connections, which notes the arrival time of every event of every
   stream.  A stream counts as open once it has received its match's backlog.
2. Then, all at once for ``--seconds`` (default 10): the two-people load of ``load.py``
   at ``--clients`` clients (default 16) on matches of its own; a driver playing the
   watched matches, one action (on a watched match drawn at random: GET the view of the
   seat to play, POST ``greedy``'s action) about ``--actions-per-second`` times a second (default 20) in all; and a
   prober sending ``GET /health/live`` every 50 ms on a keep-alive connection.

Before each N, the baseline (the bare INSERT app) runs alone at the same client count,
so that a drift of a shared machine hits both.  A count of 0 gives a row without streams.

Each row: the streams held at the end (open, with their backlog; the others are listed
below the table: refused, an answer other than 200; failed, closed before the backlog;
dropped, closed since, with how long they had been open); the seconds the new streams
took to open; the resident memory of the service (the gunicorn master and its workers,
summed) before the first stream and with the N open, right after opening them, and from
the two the MB per 1,000 streams; the connections each worker holds; the driver's
actions per second; the delivery latency -- for every event of the driver's answers
and every stream of its match, the arrival at the watcher minus the moment the driver
had its 200 (it can be negative: the event is announced at commit, before the answer
is sent) -- with its count and the events an open watcher never received (1 s after
the load); the load's requests per second, the baseline's and the share; the load's
p99 of its POSTs of an action and of all its requests, and its errors; and the
p50/p99 of ``/health/live``.  Latencies and rates are those of the load's window.

Targets: 2,000 streams held; delivery p99 under 100 ms and ``/health/live`` p99 under
20 ms at every N; the load's action p99 under 50 ms with 2,000 streams open; no event
missed.
The database is a scratch one (``load.scratch_database``: ``--database-url`` /
``DATABASE_URL``, else the local server, else an embedded one), dropped at the end.
Rate limits and the per-address stream limit are off (every client has one address).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # noqa: E402

STREAMS_PER_MATCH = 4  # 2 per seat token
OPENING_AT_ONCE = 50  # streams being opened (connect, backlog) at the same time
PROBE_EVERY = 0.05
GRACE = 1.0  # seconds after the load for the last events to arrive
TARGET_HELD = 2000
TARGET_DELIVERY_P99_MS = 100.0
TARGET_ACTION_P99_MS = 50.0
TARGET_LIVE_P99_MS = 20.0
SERVICE_ENV = {
    "GIN_RUMMY_STREAMS_PER_ADDRESS": "off",
    "GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off",
    "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off",
}


# --- the watchers: one process, asyncio, raw HTTP/1.1 ---------------------------------


class Watch:
    """One stream: its state, and when each event (by seq) arrived (time.time())."""

    def __init__(self, match_id: str, token: str, backlog: int):
        self.match_id, self.token, self.backlog = match_id, token, backlog
        self.state, self.detail, self.caught_up = "opening", "", False
        self.opened_at = self.closed_at = None  # time.time() of the 200, of the end
        self.received: dict[int, float] = {}
        self.settled = asyncio.Event()  # caught up, refused or failed

    def report(self) -> dict:
        return {"match_id": self.match_id, "state": self.state, "detail": self.detail, "caught_up": self.caught_up,
                "opened_at": self.opened_at, "closed_at": self.closed_at, "received": self.received}


class ServerSentEvents:
    """Feeds bytes, gives (seq, type) of each complete event; comments are skipped."""

    def __init__(self):
        self.buffer, self.seq, self.type = b"", None, None

    def feed(self, data: bytes) -> list[tuple[int, str]]:
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        events = []
        for line in lines:
            if not line:
                if self.seq is not None:
                    events.append((self.seq, self.type))
                self.seq = self.type = None
            elif line.startswith(b"id:"):
                self.seq = int(line[3:])
            elif line.startswith(b"event:"):
                self.type = line[6:].strip().decode()
        return events


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict]:
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("closed before answering")
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers


async def read_piece(reader: asyncio.StreamReader, chunked: bool) -> bytes:
    """The next piece of the body; b"" at its end."""
    if not chunked:
        return await reader.read(65536)
    line = await reader.readline()
    if not line:
        raise ConnectionError("closed in the middle of the body")
    size = int(line.split(b";")[0], 16)
    return (await reader.readexactly(size + 2))[:-2] if size else b""


async def hold(watch: Watch, port: int, opening: asyncio.Semaphore) -> None:
    """Open the stream (one of OPENING_AT_ONCE at a time, until it has its backlog), then read it."""
    await opening.acquire()
    writer = None

    def settle():
        if not watch.settled.is_set():
            watch.settled.set()
            opening.release()

    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET /matches/{watch.match_id}/stream?wait=600 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {watch.token}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        status, headers = await read_head(reader)
        if status != 200:
            body = await reader.read(int(headers.get("content-length") or 0) or 2000)
            watch.state, watch.detail = "refused", f"{status} {problem_text(body)}"
            return
        watch.state, watch.opened_at = "open", time.time()
        chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        events = ServerSentEvents()
        last = None
        while piece := await read_piece(reader, chunked):
            now = time.time()
            for seq, _last in events.feed(piece):
                watch.received[seq] = now
                if seq >= watch.backlog and not watch.caught_up:
                    watch.caught_up = True
                    settle()
        watch.state = "dropped" if watch.caught_up else "failed"
        watch.detail = "ended with its match" if last == "match_ended" else "closed by the server"
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        watch.state = "dropped" if watch.caught_up else "failed"
        watch.detail = f"{type(exc).__name__}: {exc}"
    finally:
        if watch.state != "open":
            watch.closed_at = time.time()
        settle()
        if writer is not None:
            writer.close()


def problem_text(body: bytes) -> str:
    """A refusal's code and detail (without its request id, so that refusals group)."""
    try:
        problem = json.loads(body)
        return f"{problem.get('code')}: {problem.get('detail')}"
    except ValueError:
        return body.decode(errors="replace")[:200]


class StreamClient:
    """Runs in the watchers' process: commands ("open" [(match_id, token, backlog)...],
    "count", "report", "close") come through ``conn``; each gets one answer."""

    def __init__(self, port: int, conn):
        self.port, self.conn = port, conn
        self.watches: list[Watch] = []
        self.tasks: list[asyncio.Task] = []

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        opening = asyncio.Semaphore(OPENING_AT_ONCE)
        while True:
            command, payload = await loop.run_in_executor(None, self.conn.recv)
            if command == "open":
                started = time.perf_counter()
                new = [Watch(*w) for w in payload]
                self.watches += new
                self.tasks += [asyncio.create_task(hold(w, self.port, opening)) for w in new]
                if new:
                    await asyncio.wait([asyncio.create_task(w.settled.wait()) for w in new], timeout=120)
                self.conn.send({"seconds": time.perf_counter() - started, **tally_states([w.report() for w in new])})
            elif command == "count":  # streams open with their backlog now
                self.conn.send(sum(1 for w in self.watches if w.state == "open" and w.caught_up))
            elif command == "report":
                self.conn.send([w.report() for w in self.watches])
            else:  # close
                for task in self.tasks:
                    task.cancel()
                await asyncio.gather(*self.tasks, return_exceptions=True)
                self.conn.send("closed")
                return


def stream_process(port: int, conn) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(StreamClient(port, conn).serve())


def tally_states(reports: list[dict]) -> dict:
    """held (open, backlog received), and the others by state and reason, with how
    long they had been open when they closed."""
    held = sum(1 for r in reports if r["state"] == "open" and r["caught_up"])
    groups: dict[str, list] = {}
    for r in reports:
        if not (r["state"] == "open" and r["caught_up"]):
            ages = groups.setdefault(f"{r['state']}: {r['detail'] or 'no backlog yet'}", [])
            ages.append(r["closed_at"] - r["opened_at"] if r["closed_at"] and r["opened_at"] else None)
    others = {}
    for what, ages in groups.items():
        known = [a for a in ages if a is not None]
        others[what + (f" (after {min(known):.1f}-{max(known):.1f} s open)" if known else "")] = len(ages)
    return {"held": held, "others": others}


class Streams:
    """The parent's handle on the watchers' process."""

    def __init__(self, port: int):
        context = multiprocessing.get_context("spawn")
        self.pipe, child = context.Pipe()
        self.proc = context.Process(target=stream_process, args=(port, child), daemon=True)
        self.proc.start()
        child.close()

    def ask(self, command: str, payload=None, timeout: float = 180):
        self.pipe.send((command, payload))
        if not self.pipe.poll(timeout):
            raise RuntimeError(f"the watchers did not answer {command!r}")
        return self.pipe.recv()

    def close(self) -> None:
        if self.proc.is_alive():
            self.ask("close", timeout=30)
        self.proc.join(10)


# --- the watched matches, their driver, the prober --------------------------------------


@dataclass
class Watched:
    id: str
    tokens: dict[int, str]
    seat: int  # whose turn, as far as the driver knows
    version: int
    finished: bool = False


def create_matches(port: int, count: int) -> list[Watched]:
    client = load.Client(port, load.Tally())
    matches = []
    for _ in range(count):
        status, body = client.send("POST create", "POST", "/matches", {"seats": [{"name": "Ann"}, {"name": "Bob"}]})
        if status != 201:
            raise RuntimeError(f"creating a match answered {status}: {body}")
        tokens = {s["seat"]: s["token"] for s in body["seats"]}
        matches.append(Watched(body["id"], tokens, body["view"]["turn"] if body["view"]["turn"] in tokens else 0, body["version"]))
    client.conn.close()
    return matches


def drive(port: int, matches: list[Watched], rate: float, stop: threading.Event, actions: list, tally: load.Tally) -> None:
    """About ``rate`` actions a second, each on a match drawn at random among ``matches``;
    each noted as (time of the 200, match id, seqs of its events)."""
    client, draw = load.Client(port, tally), random.Random(0)
    next_at = time.monotonic()
    while not stop.is_set() and (playing := [m for m in matches if not m.finished]):
        play_one(client, draw.choice(playing), actions)
        next_at += 1 / rate
        delay = next_at - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_at = time.monotonic()  # behind: no burst to catch up
    client.conn.close()


def play_one(client: load.Client, match: Watched, actions: list) -> None:
    for _ in range(2):  # the seat to play, else the other one
        auth = {"Authorization": f"Bearer {match.tokens[match.seat]}"}
        status, view = client.send("GET view", "GET", f"/matches/{match.id}", headers=auth)
        if status != 200:
            return
        if view["status"] == "finished":
            match.finished = True
            return
        if load.plays(view):
            break
        match.seat = 1 - match.seat
    else:
        return
    headers = {**auth, "If-Match": f'"{view["version"]}"', "Idempotency-Key": uuid.uuid4().hex}
    status, answer = client.send("POST action", "POST", f"/matches/{match.id}/actions", load.greedy(view), headers)
    answered = time.time()
    if status != 200:
        return
    actions.append((answered, match.id, [e["seq"] for e in answer["events"]]))
    match.version = answer["view"]["version"]
    if answer["view"]["turn"] in match.tokens:
        match.seat = answer["view"]["turn"]


def probe_process(port: int, conn) -> None:
    """``GET /health/live`` every PROBE_EVERY seconds until told to stop; sends back each
    as (time.time(), ms) and the error count.  A process of its own, so that no other
    client's work in the same interpreter delays a probe."""
    tally = load.Tally()
    client = load.Client(port, tally)
    samples = []
    while not conn.poll(PROBE_EVERY):
        client.send("GET live", "GET", "/health/live")
        samples.append((time.time(), tally.latencies[-1]))
    client.conn.close()
    conn.send((samples, sum(tally.errors.values())))


class Prober:
    def __init__(self, port: int):
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.proc = context.Process(target=probe_process, args=(port, child), daemon=True)
        self.proc.start()
        child.close()

    def stop(self) -> tuple[list, int]:
        self.conn.send("stop")
        result = self.conn.recv()
        self.proc.join(10)
        return result


# --- the service's processes ------------------------------------------------------------


def processes(server) -> list[psutil.Process]:
    master = psutil.Process(server.pid)
    return [master, *master.children(recursive=True)]


def rss_mb(server) -> float:
    return sum(p.memory_info().rss for p in processes(server)) / 2**20


def connections_per_worker(server, port: int) -> list[int]:
    return sorted(
        (sum(1 for c in p.net_connections("tcp") if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port)
         for p in processes(server)[1:]),
        reverse=True,
    )


# --- one row ------------------------------------------------------------------------------


@dataclass
class Row:
    streams: int
    held: int
    others: dict  # "state: reason" -> count (refused, failed, dropped)
    open_seconds: float
    rss_before: float
    rss_with: float
    open_at_rss: int  # streams open when rss_with was measured
    per_worker: list
    delivery: tuple  # (count, p50, p99, missed, after their stream closed)
    people: load.Figure
    baseline: load.Figure
    share: float
    live: tuple  # (count, p50, p99, errors)
    driver_errors: dict
    driven_per_s: float  # the driver's actions per second in the window

    @property
    def mb_per_1000(self) -> float:
        return (self.rss_with - self.rss_before) / self.open_at_rss * 1000 if self.open_at_rss else math.nan

    @property
    def action_p99(self) -> float:
        return self.people.by_request.get("POST action", (0, math.nan, math.nan))[2]


def measure(args, server, ports: tuple[int, int], streams: Streams, matches: list[Watched], opened: int, n: int,
            rss_before: float) -> Row:
    """The baseline; then open streams up to ``n`` (``opened`` are open), and run the
    load, the driver and the prober."""
    port, baseline_port = ports
    baseline = load.Figure.of(
        "baseline", args.clients, load.run_load("baseline", baseline_port, args.clients, args.seconds, 2, "medium", 2)
    )
    wanted = [
        (m.id, m.tokens[(k // 2) % 2], m.version)
        for k in range(opened, n)
        for m in [matches[k // STREAMS_PER_MATCH]]
    ]
    opening = streams.ask("open", wanted)
    time.sleep(1)
    rss_with, per_worker, open_at_rss = rss_mb(server), connections_per_worker(server, port), streams.ask("count")
    watched = matches[: math.ceil(n / STREAMS_PER_MATCH)]

    stop = threading.Event()
    actions, driver_tally = [], load.Tally()
    threads = [
        threading.Thread(target=drive, args=(port, watched, args.actions_per_second, stop, actions, driver_tally)),
    ]
    prober = Prober(port)
    for t in threads:
        t.start()
    try:
        tally = load.run_load("people", port, args.clients, args.seconds, 2, "medium", 2)
    finally:
        ended = time.time()
        stop.set()
        for t in threads:
            t.join()
        samples, probe_errors = prober.stop()
    window = (ended - tally.seconds - 0.3, ended)  # the load's clients ran in it
    time.sleep(GRACE)
    reports = streams.ask("report")

    people = load.Figure.of("people", args.clients, tally)
    live = sorted(ms for at, ms in samples if window[0] <= at <= window[1])
    return Row(
        n, **tally_states(reports), open_seconds=opening["seconds"], rss_before=rss_before, rss_with=rss_with,
        open_at_rss=open_at_rss,
        per_worker=per_worker, delivery=delivery(actions, reports, window), people=people,
        baseline=baseline, share=people.requests_per_s / baseline.requests_per_s if baseline.requests_per_s else math.nan,
        live=(len(live), load.percentile(live, 0.5), load.percentile(live, 0.99), probe_errors),
        driver_errors=dict(driver_tally.errors),
        driven_per_s=sum(1 for a in actions if window[0] <= a[0] <= window[1]) / (window[1] - window[0]),
    )


def delivery(actions: list, reports: list[dict], window: tuple[float, float]) -> tuple:
    """(count, p50, p99) of arrival - answer in ms over the window; the events some
    watcher (a stream that had its backlog) never received though it was open when
    the driver had its answer, over the whole run; and those answered after their
    watcher had closed."""
    by_match: dict[str, list[dict]] = {}
    for r in reports:
        if r["caught_up"]:
            by_match.setdefault(r["match_id"], []).append(r)
    latencies, missed, after_close = [], 0, 0
    for answered, match_id, seqs in actions:
        for r in by_match.get(match_id, []):
            for seq in seqs:
                if seq in r["received"]:
                    if window[0] <= answered <= window[1]:
                        latencies.append((r["received"][seq] - answered) * 1000)
                elif r["closed_at"] is not None and r["closed_at"] <= answered:
                    after_close += 1
                else:
                    missed += 1
    latencies.sort()
    return len(latencies), load.percentile(latencies, 0.5), load.percentile(latencies, 0.99), missed, after_close


# --- printing --------------------------------------------------------------------------------

HEADER = (
    f"{'streams':>7}{'held':>6}{'open s':>7}{'RSS MB before/with':>20}{'MB/1k':>7}{'conns/worker':>14}"
    f"{'driven/s':>9}{'deliv p50/p99 ms':>18}{'events':>8}{'missed':>7}{'req/s':>7}{'base':>6}{'share':>6}{'action p99':>11}"
    f"{'load p99':>9}{'errors':>7}{'live p50/p99':>14}"
)


LEGEND = """
held: open with their backlog at the end; open s: seconds to open the row's new streams; MB/1k: (RSS with -
before) / streams open then * 1000; conns/worker: established connections of each worker with the streams open;
driven/s: the driver's actions per second; deliv: arrival at each watcher - the driver's 200 (ms), over
events (events x watchers); missed: events an open watcher never received; req/s, base: the load's and the
baseline's (measured just before the row's streams were opened); share: req/s / base; action p99: the
load's POSTs of an action; live: GET /health/live every 50 ms."""


def row_text(r: Row) -> str:
    count, p50, p99, missed, _ = r.delivery
    return (
        f"{r.streams:>7}{r.held:>6}{r.open_seconds:>7.1f}{f'{r.rss_before:.0f} / {r.rss_with:.0f}':>20}"
        f"{r.mb_per_1000:>7.1f}{'/'.join(map(str, r.per_worker)):>14}{r.driven_per_s:>9.1f}{f'{p50:.1f} / {p99:.1f}':>18}"
        f"{count:>8}{missed:>7}{r.people.requests_per_s:>7.0f}{r.baseline.requests_per_s:>6.0f}{r.share:>6.0%}{r.action_p99:>11.1f}"
        f"{r.people.p99:>9.1f}{r.people.error_count:>7}{f'{r.live[1]:.1f} / {r.live[2]:.1f}':>14}"
    )


def details(r: Row) -> list[str]:
    lines = [f"  {n} {what}" for what, n in sorted(r.others.items())]
    if r.open_at_rss < r.streams:
        lines.append(f"  only {r.open_at_rss} open when the RSS with them was measured (MB/1k is per stream open then)")
    if r.delivery[4]:
        lines.append(f"  {r.delivery[4]} events (times watchers) answered after their stream had closed: not counted as missed")
    if r.baseline.errors:
        lines.append(f"  baseline errors: {r.baseline.errors}")
    if r.people.errors:
        lines.append(f"  load errors: {r.people.errors}")
    if r.driver_errors:
        lines.append(f"  driver errors: {r.driver_errors}")
    if r.live[3]:
        lines.append(f"  /health/live errors: {r.live[3]}")
    return [f"{r.streams} streams:"] + lines if len(lines) else []


def verdict(rows: list[Row]) -> bool:
    print("\ntargets:")
    top, watched = rows[-1], [r for r in rows if r.streams]
    big = top.streams >= TARGET_HELD
    short = f"not measured: at most {top.streams:,} streams"
    checks = [
        (f"{TARGET_HELD:,} streams held", big and top.held >= TARGET_HELD,
         f"{top.held:,} of {top.streams:,}" if big else short),
        (f"delivery p99 under {TARGET_DELIVERY_P99_MS:.0f} ms", bool(watched) and all(r.delivery[2] < TARGET_DELIVERY_P99_MS for r in watched),
         ", ".join(f"{r.delivery[2]:.1f} ms at {r.streams}" for r in watched)),
        (f"action p99 under {TARGET_ACTION_P99_MS:.0f} ms at {top.people.clients} clients with {TARGET_HELD:,} streams open",
         big and top.action_p99 < TARGET_ACTION_P99_MS, f"{top.action_p99:.1f} ms" + ("" if big else f"; {short}")),
        (f"/health/live p99 under {TARGET_LIVE_P99_MS:.0f} ms", all(r.live[2] < TARGET_LIVE_P99_MS for r in rows),
         ", ".join(f"{r.live[2]:.1f} ms at {r.streams}" for r in rows)),
        ("no event missed", all(r.delivery[3] == 0 for r in watched), ", ".join(f"{r.delivery[3]} at {r.streams}" for r in watched)),
    ]
    for name, ok, figures in checks:
        print(f"  {name}: {'met' if ok else 'NOT met'} ({figures})")
    return all(ok for _, ok, _ in checks)


def print_log_problems(log: Path) -> None:
    """The service log's lines other than requests answered below 400 (the last 30)."""
    lines = []
    for line in log.read_text().splitlines():
        try:
            if json.loads(line).get("status", 500) < 400:
                continue
        except (ValueError, AttributeError):
            pass
        lines.append(line)
    print(f"\nservice log, all but the requests answered < 400 (last 30 of {len(lines)} lines):")
    print("\n".join(lines[-30:]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", default="500,1000,2000", help="stream counts (default 500,1000,2000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="of load at each stream count (default 10)")
    parser.add_argument("--clients", type=int, default=16, help="clients of the two-people load (default 16)")
    parser.add_argument("--actions-per-second", type=float, default=20.0, help="of the driver on the watched matches (default 20)")
    parser.add_argument("--workers", type=int, default=load.DEFAULT_WORKERS,
                        help=f"gunicorn worker processes (default {load.DEFAULT_WORKERS}, as gin-rummy serve)")
    parser.add_argument("--database-url", help="server to make the scratch database on (default: DATABASE_URL, ...)")
    args = parser.parse_args(argv)
    counts = sorted(int(n) for n in args.streams.split(","))
    if not counts or counts[0] < 0:
        parser.error("--streams: counts of 0 (a reference without streams) or more")

    rows: list[Row] = []
    with ExitStack() as stack:
        url = stack.enter_context(load.scratch_database(args.database_url))
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gin-rummy-streams-")))
        env = {"DATABASE_URL": url, **SERVICE_ENV}
        port, baseline_port = load.free_ports(2)
        server = stack.enter_context(load.gunicorn("service.wsgi:app", port, args.workers, 8, env, logs / "service.log"))
        stack.enter_context(load.gunicorn("benchmarks.load_baseline:app", baseline_port, args.workers, 8, env, logs / "baseline.log"))
        print(
            f"gunicorn gevent (service.gunicorn_conf), {args.workers} workers; streams {', '.join(map(str, counts))} "
            f"(opened incrementally, {STREAMS_PER_MATCH} per match, 2 per token); {args.seconds:g} s of load at each: "
            f"two people at {args.clients} clients, driver {args.actions_per_second:g} actions/s on the watched "
            f"matches, /health/live every {PROBE_EVERY * 1000:.0f} ms; the baseline before each count; cores: {os.cpu_count()}",
            flush=True,
        )
        matches = create_matches(port, math.ceil(counts[-1] / STREAMS_PER_MATCH))
        streams = Streams(port)
        stack.callback(streams.close)
        time.sleep(1)
        rss_before = rss_mb(server)
        print(HEADER, flush=True)
        opened = 0
        for n in counts:
            rows.append(measure(args, server, (port, baseline_port), streams, matches, opened, n, rss_before))
            opened = n
            print(row_text(rows[-1]), flush=True)
        notes = [line for r in rows for line in details(r)]
        if notes:
            print("\nstreams not held, and errors:\n" + "\n".join(notes))
            print_log_problems(logs / "service.log")
        print(LEGEND)
        met = verdict(rows)
    print("\nall targets met" if met else "\nsome targets not met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
