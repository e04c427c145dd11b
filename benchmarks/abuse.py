"""Floods from one client address, and whether the service stays responsive meanwhile.

    python benchmarks/abuse.py [--seconds 10] [--connections 4,8] [--workers 2] [--long-events 1500]

The service runs under gunicorn as ``benchmarks/load.py`` starts it (``service.gunicorn_conf``,
a scratch database), with its default limits. Measured in one run:

- baseline: ``GET /health/live`` every 20 ms from its own process, no flood: p50/p99;
- (a) a guest and invite flood: 8 connections each making guests (``POST /players``) and
  public matches with an open seat (``POST /matches``) as fast as they are answered;
- (b) an import and analysis flood at 4 and at 8 connections: each imports a long
  record (a fresh id each time) and asks the analysis of the match with the seat token
  the import gave, again and again.

Each flood starts from full buckets (the limits' counts are emptied before it). For
each flood: the answers by status, how many refusals carried Retry-After (and the
values seen), and ``/health/live`` p50/p99 measured during it, against the baseline.
Target: p99 under 50 ms during each flood, the flood refused 429 (or 503 ``busy``)
with Retry-After.  The flooders ignore Retry-After and ask again at once; the service
sends each such refusal after a pause of up to a second (``REFUSAL_PAUSE_SECONDS``), so
a flood's answer count is about one a second per connection once its buckets are empty:
``--connections 4,8,32`` shows what more connections change.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load import free_ports, gunicorn, percentile, scratch_database  # noqa: E402

TARGET_P99_MS = 50.0
HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


# --- the prober -----------------------------------------------------------------------


def probe(port: int, seconds: float, out) -> None:
    """``GET /health/live`` every 20 ms for ``seconds``: the latencies in ms."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        conn.request("GET", "/health/live")
        conn.getresponse().read()
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
    out.put(latencies)


def probed(port: int, seconds: float) -> multiprocessing.Process:
    queue: multiprocessing.Queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=probe, args=(port, seconds, queue))
    process.start()
    process.queue = queue  # type: ignore[attr-defined]
    return process


# --- the floods (threads in a process of their own) -------------------------------------


def send(conn, method: str, path: str, body=None, headers=None):
    conn.request(method, path, body=None if body is None else json.dumps(body), headers={**HEADERS, **(headers or {})})
    r = conn.getresponse()
    data = r.read()
    return r.status, r.getheader("Retry-After"), data


def guest_flooder(port: int, end: float, tally: Counter, after: Counter) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    i = 0
    while time.monotonic() < end:
        if i % 2:
            status, retry, _ = send(conn, "POST", "/players", {"name": f"flood{i}"})
            what = "guest"
        else:
            body = {"seats": [{"name": "F"}, {"kind": "open"}], "public": True}
            status, retry, _ = send(conn, "POST", "/matches", body)
            what = "invite"
        tally[f"{what} {status}"] += 1
        if retry:
            after[retry] += 1
        i += 1


def import_flooder(port: int, end: float, record: dict, tally: Counter, after: Counter) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    held: list[tuple[str, str]] = []
    body = json.dumps(record).replace(record["match_id"], "{id}")  # serialised once: the client's CPU is the server's too
    while time.monotonic() < end:
        conn.request("POST", "/matches/import", body=body.replace("{id}", str(uuid.uuid4())), headers=HEADERS)
        r = conn.getresponse()
        status, retry, data = r.status, r.getheader("Retry-After"), r.read()
        tally[f"import {status}"] += 1
        if retry:
            after[retry] += 1
        if status == 201:
            answer = json.loads(data)
            held.append((answer["id"], next(s["token"] for s in answer["seats"] if s.get("token"))))
        if held and time.monotonic() < end:
            match_id, token = held[-1] if status == 201 else random.choice(held)
            status, retry, _ = send(conn, "GET", f"/matches/{match_id}/analysis", headers={"Authorization": f"Bearer {token}"})
            tally[f"analysis {status}"] += 1
            if retry:
                after[retry] += 1


def flood_process(kind: str, port: int, connections: int, seconds: float, record, out) -> None:
    tally: Counter = Counter()
    after: Counter = Counter()
    end = time.monotonic() + seconds
    if kind == "guests":
        threads = [threading.Thread(target=guest_flooder, args=(port, end, tally, after)) for _ in range(connections)]
    else:
        threads = [threading.Thread(target=import_flooder, args=(port, end, record, tally, after)) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((dict(tally), dict(after)))


def full_buckets(url: str) -> None:
    """Each flood starts from full buckets, as a new client would."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM rate_buckets")


def flood(kind: str, port: int, connections: int, seconds: float, record=None) -> tuple[dict, dict, list[float]]:
    queue: multiprocessing.Queue = multiprocessing.Queue()
    flooder = multiprocessing.Process(target=flood_process, args=(kind, port, connections, seconds, record, queue))
    flooder.start()
    time.sleep(0.5)  # the flood under way
    prober = probed(port, max(1.0, seconds - 1.0))
    latencies = prober.queue.get()  # type: ignore[attr-defined]
    prober.join()
    tally, after = queue.get()
    flooder.join()
    return tally, after, latencies


# --- the long record ------------------------------------------------------------------


def long_record(url: str, events: int) -> dict:
    from benchmarks.records import a_long_match
    from service.application import Application
    from service.engine import fold
    from service.settings import Settings
    from service.store import EventStore, connect

    played = a_long_match(random.Random("abuse"), events)
    store = EventStore(connect(url, max_size=2))
    match_id = uuid.uuid4()
    store.append(match_id, 0, played, state=fold(played))
    record = Application.build(Settings(), store=store).records.record_of(match_id, signed=False)[0]
    store.pool.close()
    return record


# --- the report -----------------------------------------------------------------------


def figures(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return percentile(ordered, 0.50), percentile(ordered, 0.99)


def report(title: str, tally: dict, after: dict, latencies: list[float], base: tuple[float, float]) -> bool:
    p50, p99 = figures(latencies)
    refused = sum(n for key, n in tally.items() if key.endswith((" 429", " 503")))
    print(f"{title}")
    print(f"  answers by status : {', '.join(f'{k}: {v}' for k, v in sorted(tally.items()))}")
    print(f"  Retry-After seen  : {sum(after.values())} answers ({', '.join(f'{k} s: {v}' for k, v in sorted(after.items(), key=lambda kv: int(kv[0])))})")
    print(f"  /health/live      : p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(latencies)} probes "
          f"(x{p50 / base[0]:.1f} and x{p99 / base[1]:.1f} the baseline)")
    ok = p99 < TARGET_P99_MS and refused > 0 and sum(after.values()) >= refused
    print(f"  target (p99 < {TARGET_P99_MS:.0f} ms, refusals with Retry-After): {'met' if ok else 'NOT met'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="each flood's length (default 10)")
    parser.add_argument("--connections", default="4,8", help="the import flood's connection counts (default 4,8)")
    parser.add_argument("--guest-connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2, gin-rummy serve's)")
    parser.add_argument("--long-events", type=int, default=1500, help="about how many events the imported record holds")
    parser.add_argument("--database-url", help="server to make the scratch database on (default: DATABASE_URL, ...)")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        url = stack.enter_context(scratch_database(args.database_url))
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gin-rummy-abuse-")))
        record = long_record(url, args.long_events)
        (port,) = free_ports(1)
        stack.enter_context(gunicorn("service.wsgi:app", port, args.workers, 8, {"DATABASE_URL": url}, logs / "service.log"))
        print(f"gunicorn gevent, {args.workers} workers, default limits; {args.seconds:g} s per flood; the record: "
              f"{len(record['events'])} events, {record['result']['hands']} hands")
        baseline = probed(port, args.seconds)
        base_latencies = baseline.queue.get()  # type: ignore[attr-defined]
        baseline.join()
        base = figures(base_latencies)
        print(f"baseline, no flood: /health/live p50 {base[0]:.1f} ms, p99 {base[1]:.1f} ms over {len(base_latencies)} probes")
        ok = True
        full_buckets(url)
        tally, after, latencies = flood("guests", port, args.guest_connections, args.seconds)
        ok &= report(f"(a) guest and invite flood, {args.guest_connections} connections", tally, after, latencies, base)
        for connections in [int(n) for n in args.connections.split(",")]:
            full_buckets(url)
            tally, after, latencies = flood("imports", port, connections, args.seconds, record)
            ok &= report(f"(b) import and analysis flood, {connections} connections", tally, after, latencies, base)
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
