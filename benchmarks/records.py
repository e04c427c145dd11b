"""Match records: exports and imports per second for complete 100-point matches.

    python benchmarks/records.py [--matches 20]

Plays complete matches to 100 with a greedy player (knocks at once, takes the pile's
card when it helps, throws the card leaving the least deadwood: realistic lengths) and
stores them; then times exporting each (read, fold, digest) and importing each into a
second database (schema check, digest, replay of every event, one append).  Uses
scratch databases on the server of ``DATABASE_URL`` (the role needs CREATEDB), or on an
embedded server in a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import time
import uuid

from service.engine import fold
from service.engine.simulate import play_greedy_match
from service.matches import seat_token
from service.records.records import export_match, import_record
from service.store import EventStore, connect
from service.store.database import temporary_server
from service.store.migrate import scratch_database


@contextlib.contextmanager
def scratch_databases(count: int):
    admin = os.environ.get("DATABASE_URL")
    with contextlib.ExitStack() as stack:
        if not admin:
            admin = stack.enter_context(temporary_server("gin-rummy-bench-")).get_uri()
        yield [stack.enter_context(scratch_database(admin, "gin_rummy_records_bench")) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--seed", default="records-2026")
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
        records = [export_match(source, match_id)[0] for match_id in ids]
        export_seconds = time.perf_counter() - start

        start = time.perf_counter()
        for record in records:
            assert import_record(target, record, seat_token).created
        import_seconds = time.perf_counter() - start

        again = [export_match(target, match_id)[0] for match_id in ids]
        assert again == records, "round trip changed a record"
        source.pool.close()
        target.pool.close()
    print(f"matches to 100 (greedy play)  : {len(played)}; events per match median {statistics.median(sizes):.0f}, max {max(sizes)}")
    print(f"exports per second            : {len(records) / export_seconds:>8.1f}  ({export_seconds / len(records) * 1000:.1f} ms each)")
    print(f"imports per second            : {len(records) / import_seconds:>8.1f}  ({import_seconds / len(records) * 1000:.1f} ms each, replay included)")
    print("round trip export -> import -> export: identical")


if __name__ == "__main__":
    main()
