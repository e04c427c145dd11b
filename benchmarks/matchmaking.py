"""Matchmaking: tickets paired per second with 10,000 tickets waiting, against 100.

    python benchmarks/matchmaking.py [--seconds 5] [--threads 1,4] [--waiting 100,10000]

Uses a scratch database it creates and drops (on the server of ``DATABASE_URL`` if set,
else an embedded one).  For each size of the waiting crowd: that many correspondence
tickets of as many players wait (ratings spread evenly from 1000 to 2000, ten hours
old, so each accepts ±500), under one set of rules.  Each step is one arrival, through
the application as a request makes it (``Matchmaking.post``: the caller's token, the
rating, the ticket, the pairing transaction that takes the two tickets ``FOR UPDATE
SKIP LOCKED`` and writes the match, the answer): a new player rated 1500 (±100 at
first: a tenth of the crowd fits) posts a fitting ticket and is paired at once; then a
new waiting ticket that fits too (outside the timing) keeps the crowd at its size.  Measured: matches
made a second (tickets paired, halved), with 1 and 4 threads posting at once, and the
p50/p99 of one arrival; with 4 threads two arrivals (both rated 1500) may be each
other's nearest, and one of them is answered "waiting" while the other pairs it.  The
baseline is the same run with 100 waiting: the target is that 10,000 waiting pairs at
least 80% as fast.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.application import Application  # noqa: E402
from service.application.matchmaking import fit_of, ticket_rules  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.store import EventStore, connect  # noqa: E402
from service.store.database import temporary_server  # noqa: E402
from service.store.migrate import scratch_database  # noqa: E402

SPEC = {"kind": "correspondence", "days_per_move": 3, "rated": True}
TARGET = 0.8


def fill(conn, count: int, fit: str, spec: dict, rng: random.Random, low: float = 1000, high: float = 2000) -> None:
    """``count`` waiting tickets of as many new players, ten hours old, rated ``low`` to ``high``."""
    old = datetime.now(UTC) - timedelta(hours=10)
    players = [(uuid.uuid4(), f"W{i}", uuid.uuid4().hex) for i in range(count)]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO players (id, name, token_hash) VALUES (%s, %s, %s)", players)
        cur.executemany(
            "INSERT INTO matchmaking_tickets (id, player_id, kind, fit, spec, rating, created_at, polled_at)"
            " VALUES (%s, %s, 'correspondence', %s, %s, %s, %s, %s)",
            [(uuid.uuid4(), p[0], fit, Jsonb(spec), low + (high - low) * rng.random(), old, old) for p in players],
        )


def measure(app: Application, waiting: int, threads: int, seconds: float) -> dict:
    kind, rules = ticket_rules(SPEC)
    fit, spec = fit_of(kind, rules, True), {"rules": rules, "rated": True}
    rng = random.Random(waiting * 10 + threads)
    with app.store.connection() as conn:
        conn.execute("DELETE FROM matchmaking_tickets WHERE status = 'waiting'")
        fill(conn, waiting, fit, spec, rng)
        conn.execute("ANALYZE matchmaking_tickets")
    tokens = [[app.players.create_guest(f"N{t}-{i}")["token"] for i in range(4000)] for t in range(threads)]
    times: list[list[float]] = [[] for _ in range(threads)]
    unpaired = [0] * threads
    barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def run(worker: int) -> None:
        local = random.Random(worker)
        barrier.wait()
        for token in tokens[worker]:
            if stop.is_set():
                return
            start = time.perf_counter()
            answer = app.matchmaking.post(token, SPEC)
            times[worker].append(time.perf_counter() - start)
            if answer["status"] != "paired":
                unpaired[worker] += 1
            with app.store.connection() as conn:
                fill(conn, 1, fit, spec, local, 1400, 1600)  # one that fits, for the one taken

    def paired_tickets() -> int:
        with app.store.connection() as conn:
            return conn.execute("SELECT count(*) FROM matchmaking_tickets WHERE status = 'paired'").fetchone()[0]

    before = paired_tickets()
    workers = [threading.Thread(target=run, args=(w,)) for w in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    begun = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - begun
    every = sorted(t for ts in times for t in ts)
    # Matches made: two arrivals may pair with each other, one of them answered
    # "waiting" while the other's pairing held its row (then paired a moment later).
    paired = (paired_tickets() - before) // 2
    with app.store.connection() as conn:
        still = conn.execute("SELECT count(*) FROM matchmaking_tickets WHERE status = 'waiting'").fetchone()[0]
    return {
        "waiting": waiting, "threads": threads, "pairs_per_second": paired / elapsed, "arrivals": len(every),
        "answered_waiting": sum(unpaired), "p50_ms": 1000 * statistics.median(every),
        "p99_ms": 1000 * every[min(len(every) - 1, int(0.99 * len(every)))], "waiting_after": still,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", default="1,4")
    parser.add_argument("--waiting", default="100,10000")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        admin = os.environ.get("DATABASE_URL") or stack.enter_context(temporary_server("gin-rummy-mm-")).get_uri()
        url = stack.enter_context(scratch_database(admin, "gin_rummy_matchmaking"))
        pool = stack.enter_context(connect(url, min_size=2, max_size=10))
        settings = Settings.from_env({}, guests_per_address=None, rate_limit_per_address=None)
        app = Application.build(settings, store=EventStore(pool))
        results = {}
        for threads in (int(t) for t in args.threads.split(",")):
            for waiting in (int(w) for w in args.waiting.split(",")):
                result = measure(app, waiting, threads, args.seconds)
                results[(waiting, threads)] = result
                print(
                    f"{waiting:>6} waiting, {threads} thread(s): {result['pairs_per_second']:7.1f} pairs/s"
                    f" ({result['arrivals']} arrivals, {result['answered_waiting']} answered waiting;"
                    f" p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms; {result['waiting_after']} waiting after)"
                )
        app.close()
    sizes = sorted({w for w, _ in results})
    ok = True
    for threads in sorted({t for _, t in results}):
        base, big = results[(sizes[0], threads)], results[(sizes[-1], threads)]
        ratio = big["pairs_per_second"] / base["pairs_per_second"]
        ok &= ratio >= TARGET
        print(f"{threads} thread(s): {sizes[-1]} waiting pairs at {ratio:.0%} of the rate with {sizes[0]} waiting (target {TARGET:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
