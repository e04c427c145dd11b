"""Event store speed: appends and loads, next to a raw psycopg INSERT on the same database.

    python benchmarks/store.py [--seconds 4]

Uses a scratch database it creates and drops: on the server of ``DATABASE_URL`` if set
(the role needs CREATEDB), else on an embedded server in a temporary directory.

Targets: ``store.append`` at least 70% of the rate of a raw one-row INSERT per
transaction, with 1 and with 8 concurrent writers; loading a match in its 10th hand no
slower than in its 1st.  The raw INSERT is shown twice: into a bare table (the key only)
and into ``events`` itself (the same row, with the indexes the global order needs), so
that the cost of the schema and the cost of the store's statement can be told apart.
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
from collections.abc import Callable
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from service.engine import Event, fold
from service.store import EventStore, connect
from service.store.database import create_database, drop_database, temporary_server, with_database
from service.store.migrate import upgrade

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' players
from tests.support.play import play_match  # noqa: E402

ROUNDS = 7

# The least a stored event needs: no global position, no index but the key.
BARE_TABLE = """
CREATE TABLE bare_events (
    match_id uuid NOT NULL, seq integer NOT NULL, type text NOT NULL, schema_version integer NOT NULL,
    data jsonb NOT NULL, PRIMARY KEY (match_id, seq)
)
"""


def concurrent_rate(writers: int, seconds: float, work: Callable[[int], Callable[[], None]]) -> float:
    """Calls per second of ``work(writer)()`` by ``writers`` threads for ``seconds``."""
    counts = [0] * writers
    barrier = threading.Barrier(writers + 1)
    stop = threading.Event()

    def run(writer: int) -> None:
        step = work(writer)
        barrier.wait()
        while not stop.is_set():
            step()
            counts[writer] += 1

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def rate(fn: Callable[[], object], seconds: float) -> float:
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        fn()
        done += 1
    return done / elapsed


Write = Callable[[uuid.UUID, int, Event], None]


def replays(streams: list[list[Event]], write: Write) -> Callable[[int], Callable[[], None]]:
    """Each writer replays a played match event by event (``write(match_id, version,
    event)``, one call a transaction), starting over under a new id at its end."""

    def work(writer: int) -> Callable[[], None]:
        events = streams[writer % len(streams)]
        place = {"match": uuid.uuid4(), "version": 0}

        def step() -> None:
            if place["version"] == len(events):
                place.update(match=uuid.uuid4(), version=0)
            write(place["match"], place["version"], events[place["version"]])
            place["version"] += 1

        return step

    return work


def raw_insert(pool, table: str) -> Write:
    """A one-row INSERT through psycopg: no version check, read model or snapshot."""
    query = f"INSERT INTO {table} (match_id, seq, type, schema_version, data) VALUES (%s, %s, %s, 1, %s)"

    def write(match_id: uuid.UUID, version: int, event: Event) -> None:
        with pool.connection() as conn:
            conn.execute(query, (match_id, version + 1, event.type, Jsonb(event.data)))

    return write


def store_append(store: EventStore) -> Write:
    def write(match_id: uuid.UUID, version: int, event: Event) -> None:
        store.append(match_id, version, [event])

    return write


def stored_into_hand(store: EventStore, events: list, hand: int, moves: int) -> uuid.UUID:
    """Append ``events`` up to ``moves`` events into hand ``hand``, one per append."""
    deals = [i for i, e in enumerate(events) if e.type == "hand_dealt"]
    end = deals[hand - 1] + 1 + moves
    match_id = uuid.uuid4()
    for version, event in enumerate(events[:end]):
        store.append(match_id, version, [event])
    return match_id


def long_match(rng: random.Random, hands: int, moves: int) -> list:
    """Events of a random-play match with at least ``moves`` events in each of its first ``hands`` hands."""
    while True:
        _, events = play_match(rng, {"target_score": 1000})
        deals = [i for i, e in enumerate(events) if e.type == "hand_dealt"] + [len(events)]
        if len(deals) > hands and all(
            b - a > moves + 1 for a, b in zip(deals[:hands], deals[1 : hands + 1], strict=True)
        ):
            return events


def alternating(rounds: int, seconds: float, measures: dict[str, Callable[[float], float]]) -> list[dict[str, float]]:
    """Each measure for ``seconds / rounds`` in turn, ``rounds`` times, the first one
    moving along each round: all see the same drift of a shared machine (a slow disk
    flush, autovacuum, other processes), and none gains from its place."""
    names = list(measures)
    results = []
    for i in range(rounds):
        order = names[i % len(names) :] + names[: i % len(names)]
        results.append({name: measures[name](seconds / rounds) for name in order})
    return results


def median(rounds: list[dict[str, float]], name: str, base: str | None = None) -> float:
    """The median of a figure, or of its ratio to ``base`` round by round."""
    return statistics.median(r[name] / r[base] if base else r[name] for r in rounds)


def appends(pool, store: EventStore, streams: list[list[Event]], seconds: float) -> None:
    writes = {
        "raw INSERT, bare table": raw_insert(pool, "bare_events"),
        "raw INSERT into events": raw_insert(pool, "events"),
        "store.append": store_append(store),
    }
    figures = {}
    for writers in (1, 8):
        figures[writers] = alternating(
            ROUNDS,
            seconds,
            {
                name: lambda duration, write=write, writers=writers: concurrent_rate(
                    writers, duration, replays(streams, write)
                )
                for name, write in writes.items()
            },
        )
    print(f"appends per second, 1 event each     1 writer   8 writers   (median of {ROUNDS} rounds)")
    for name in writes:
        print(f"  {name:<33}  {median(figures[1], name):>8,.0f}   {median(figures[8], name):>9,.0f}")
    for base in list(writes)[:2]:
        ratios = [median(figures[n], "store.append", base) for n in (1, 8)]
        print(f"  store / {base.removeprefix('raw INSERT').strip(', '):<25}  {ratios[0]:>8.0%}   {ratios[1]:>9.0%}")
    print("  (target: store.append >= 70% of a raw INSERT)\n")


def loads(store: EventStore, rng: random.Random, seconds: float) -> None:
    moves = 10
    events = long_match(rng, 10, moves)
    first = stored_into_hand(store, events, 1, moves)
    tenth = stored_into_hand(store, events, 10, moves)
    # Loads are short: more, shorter rounds follow the machine's drift more closely.
    rounds = 3 * ROUNDS
    figures = alternating(
        rounds,
        seconds,
        {
            "hand 1": lambda duration: rate(lambda: store.load(first), duration),
            "hand 10": lambda duration: rate(lambda: store.load(tenth), duration),
        },
    )
    folded = rate(lambda: fold(e.event for e in store.read(tenth)), seconds / ROUNDS)
    ratios = sorted(r["hand 10"] / r["hand 1"] for r in figures)
    print(f"loads per second, {moves} events into the hand   (median of {rounds} rounds)")
    print(f"  hand 1  ({store.load(first).version:>4} events)            {median(figures, 'hand 1'):>8,.0f}")
    print(
        f"  hand 10 ({store.load(tenth).version:>4} events)            {median(figures, 'hand 10'):>8,.0f}"
        f"   {median(figures, 'hand 10', 'hand 1'):.0%} of hand 1 (target >= 100%;"
        f" rounds {ratios[0]:.0%}-{ratios[-1]:.0%})"
    )
    print(f"  hand 10, every event read and folded  {folded:>8,.0f}   (what the snapshot saves)")


def benchmark(url: str, seconds: float, seed: int) -> None:
    upgrade(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(BARE_TABLE)
        version = conn.execute("SHOW server_version").fetchone()[0]
    rng = random.Random(seed)
    streams = [play_match(rng, {"preset": "classic"})[1] for _ in range(8)]
    print(f"PostgreSQL {version}, {os.cpu_count()} CPUs, {seconds:g} s per figure\n")
    with connect(url, min_size=8, max_size=8) as pool:
        store = EventStore(pool)
        appends(pool, store, streams, seconds)
        loads(store, rng, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="time per figure")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    url = os.environ.get("DATABASE_URL")
    if url:
        on_server(url, args.seconds, args.seed)
    else:
        with temporary_server("gin-rummy-bench-") as server:
            on_server(server.get_uri(), args.seconds, args.seed)


def on_server(admin_url: str, seconds: float, seed: int) -> None:
    """The benchmark in a scratch database on the server of ``admin_url``."""
    name = f"gin_rummy_bench_{uuid.uuid4().hex[:8]}"
    create_database(admin_url, name)
    try:
        benchmark(with_database(admin_url, name), seconds, seed)
    finally:
        drop_database(admin_url, name)


if __name__ == "__main__":
    main()
