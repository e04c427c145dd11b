"""Match records: exports and imports per second; one long import beside a bare append.

    python benchmarks/records.py [--matches 20] [--long-events 2000] [--repeats 5]

Plays complete matches to 100 with a greedy player (knocks at once, takes the pile's
card when it helps, throws the card leaving the least deadwood: realistic lengths) and
stores them; then times exporting each (read, fold, digest) and importing each into a
second database (schema check, digest, replay of every event, one append).

Then one record of about ``--long-events`` events (a greedy match to a high target
score): the time to import it (fresh ids, ``--repeats`` times), beside the time of just
appending the same events to the store (``EventStore.append`` of the record's events,
times and stored forms, with the state folded beforehand: no checks), and the time to
refuse a record one event over ``MAX_RECORD_EVENTS`` (``record_too_long``), directly and
through the HTTP API (Flask's test client), beside that import.  Uses
scratch databases on the server of ``DATABASE_URL`` (the role needs CREATEDB), or on an
embedded server in a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from service.api import create_app
from service.application import Application
from service.application.records import RecordRefused
from service.engine import fold
from service.engine.game import parse_time
from service.records.records import MAX_RECORD_EVENTS, upcast_events
from service.settings import Settings
from service.store import EventStore, connect
from service.store.database import temporary_server
from service.store.migrate import scratch_database

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' players
from tests.support.play import play_greedy_match  # noqa: E402


@contextlib.contextmanager
def scratch_databases(count: int):
    admin = os.environ.get("DATABASE_URL")
    with contextlib.ExitStack() as stack:
        if not admin:
            admin = stack.enter_context(temporary_server("gin-rummy-bench-")).get_uri()
        yield [stack.enter_context(scratch_database(admin, "gin_rummy_records_bench")) for _ in range(count)]


@functools.cache
def records_of(store: EventStore):
    """The application's record use cases on ``store`` (one per store; exports unsigned, as stored)."""
    return Application.build(Settings(), store=store).records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--seed", default="records-2026")
    parser.add_argument("--long-events", type=int, default=2000, help="about how many events the long record holds")
    parser.add_argument("--repeats", type=int, default=5, help="samples of the long import, the bare append and the refusal")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    presets = ["classic", "short-stock", "upcard-offer", "bonus-20-10"]
    seats = [{"name": "Ann"}, {"name": "Bob"}]
    played = [play_greedy_match(rng, {"preset": presets[i % 4]}, seats) for i in range(args.matches)]
    sizes = [len(m) for m in played]
    with scratch_databases(2) as (source_url, target_url):
        source, target = EventStore(connect(source_url, max_size=2)), EventStore(connect(target_url, max_size=2))
        ids = []
        for events in played:
            match_id = uuid.uuid4()
            source.append(match_id, 0, events, state=fold(events))
            ids.append(match_id)

        start = time.perf_counter()
        records = [records_of(source).record_of(match_id, signed=False)[0] for match_id in ids]
        export_seconds = time.perf_counter() - start

        start = time.perf_counter()
        for record in records:
            assert records_of(target).import_record(record).created
        import_seconds = time.perf_counter() - start

        again = [records_of(target).record_of(match_id, signed=False)[0] for match_id in ids]
        # All but how each service came by the match (played there, imported here).
        assert [without_provenance(r) for r in again] == [without_provenance(r) for r in records], "round trip changed a record"
        print(f"matches to 100 (greedy play)  : {len(played)}; events per match median {statistics.median(sizes):.0f}, max {max(sizes)}")
        print(f"exports per second            : {len(records) / export_seconds:>8.1f}  ({export_seconds / len(records) * 1000:.1f} ms each)")
        print(f"imports per second            : {len(records) / import_seconds:>8.1f}  ({import_seconds / len(records) * 1000:.1f} ms each, replay included)")
        print("round trip export -> import -> export: identical")

        long_record(source, target, rng, args.long_events, args.repeats)
        source.pool.close()
        target.pool.close()


def without_provenance(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "provenance"}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}" if seconds >= 0.001 else f"{seconds * 1000:.3f}"


def samples(label: str, times: list[float]) -> None:
    print(f"  {label:<34}: median {ms(statistics.median(times)):>8} ms  (samples: {', '.join(ms(t) for t in times)})")


def a_long_match(rng: random.Random, events: int) -> list:
    """A complete greedy match of about ``events`` events (within a tenth): to a target
    score that makes greedy matches about that long (about 3.3 events per point)."""
    target_score = max(1, min(1000, round(events / 3.3)))
    closest: list = []
    for _ in range(50):
        played = play_greedy_match(rng, {"target_score": target_score}, [{"name": "Ann"}, {"name": "Bob"}])
        if abs(len(played) - events) < abs(len(closest) - events):
            closest = played
        if abs(len(closest) - events) <= events // 10:
            break
    return closest


def long_record(source: EventStore, target: EventStore, rng: random.Random, events: int, repeats: int) -> None:
    played = a_long_match(rng, events)
    match_id = uuid.uuid4()
    source.append(match_id, 0, played, state=fold(played))
    record = records_of(source).record_of(match_id, signed=False)[0]
    count = len(record["events"])
    print()
    print(f"one long record               : {count} events ({record['result']['hands']} hands, "
          f"to {record['rules']['target_score']} points), {len(json.dumps(record)) / 1e6:.2f} MB of JSON")

    # What an import writes, prepared beforehand: the events at today's versions, their
    # times and the forms they came in, and the state after them (so the append folds nothing).
    current = upcast_events(record["events"])
    times = [parse_time(e["recorded_at"]) for e in record["events"]]
    stored_as = [(e["schema_version"], e["data"]) for e in record["events"]]
    state = fold(current)
    imports, appends = [], []
    for _ in range(repeats):
        fresh = {**record, "match_id": str(uuid.uuid4())}  # the digest does not cover the id
        start = time.perf_counter()
        assert records_of(target).import_record(fresh).created
        imports.append(time.perf_counter() - start)

        start = time.perf_counter()
        with target.transaction() as conn:
            target.append(uuid.uuid4(), 0, current, actor="import", recorded_at=times, stored_as=stored_as, state=state, conn=conn)
        appends.append(time.perf_counter() - start)
    assert records_of(target).record_of(uuid.UUID(fresh["match_id"]), signed=False)[0]["events"] == record["events"]
    imported, appended = statistics.median(imports), statistics.median(appends)
    print(f"import of {count} events (median of {repeats}): {ms(imported)} ms; bare append of them: {ms(appended)} ms; "
          f"ratio {imported / appended:.1f}x")
    samples("import (checks, replay, append)", imports)
    samples("baseline: EventStore.append only", appends)
    per_event = (imported - appended) / count * 1e6
    print(f"  the checks cost about {per_event:.0f} us an event beyond the append")

    # One event over the most a record may hold: refused before anything costly.
    too_long = dict(record)
    too_long["events"] = (record["events"] * (MAX_RECORD_EVENTS // count + 1))[: MAX_RECORD_EVENTS + 1]
    too_long["match_id"] = str(uuid.uuid4())
    direct, http, parse = [], [], []
    client = create_app({
        "STORE": target, "TESTING": True, "RATE_LIMIT_PER_TOKEN": "off", "RATE_LIMIT_PER_ADDRESS": "off",
        "IMPORT_RATE_LIMIT_PER_ADDRESS": "off",
    }).test_client()
    body = json.dumps(too_long).encode()
    for _ in range(repeats):
        start = time.perf_counter()
        try:
            records_of(target).import_record(too_long)
            raise AssertionError("a record over the most events was imported")
        except RecordRefused as exc:
            assert exc.code == "record_too_long", exc.code
        direct.append(time.perf_counter() - start)

        start = time.perf_counter()
        answer = client.post("/matches/import", data=body, content_type="application/json")
        http.append(time.perf_counter() - start)
        start = time.perf_counter()
        json.loads(body)
        parse.append(time.perf_counter() - start)
        assert answer.status_code == 422 and answer.json["code"] == "record_too_long", (answer.status_code, answer.json)
    refused_direct, refused_http = statistics.median(direct), statistics.median(http)
    print(f"refusal of {len(too_long['events'])} events (record_too_long), {len(body) / 1e6:.2f} MB:")
    samples("import_record (parsed already)", direct)
    samples("POST /matches/import (test client)", http)
    samples("beside: json.loads of that body", parse)
    print(f"  ratio to the {count}-event import: import_record {refused_direct / imported:.5f}x, HTTP {refused_http / imported:.3f}x")


if __name__ == "__main__":
    main()
