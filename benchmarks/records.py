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

from service.engine import State, decide, deadwood, discard_deadwoods, fold, legal_actions
from service.engine.game import AWAITING_DEAL
from service.engine.simulate import deal_command
from service.matches import seat_token
from service.records.records import export_match, import_record
from service.store import EventStore, connect
from service.store.database import create_database, drop_database, temporary_server, with_database
from service.store.migrate import upgrade


def greedy_events(rng: random.Random, preset: str) -> list:
    seats = [{"name": "Ann"}, {"name": "Bob"}]
    events = decide(State(), {"type": "start_match", "rules": {"preset": preset}, "seats": seats})
    state = fold(events)
    while not state.finished:
        if state.phase == AWAITING_DEAL:
            command = deal_command(rng)
        else:
            seat, actions = state.turn, legal_actions(state, state.turn)
            hand = list(state.hands[seat])
            enders = [a for a in actions if a["type"] in ("gin", "knock")]
            if len(actions) == 1 or enders:
                command = (enders or actions)[0]
            elif state.phase == "discard":
                left = discard_deadwoods(hand)
                command = min((a for a in actions if a["type"] == "discard"), key=lambda a: left[a["card"]])
            elif state.discard_pile and {"type": "draw", "source": "discard"} in actions and min(
                discard_deadwoods(hand + [state.discard_pile[-1]]).values()
            ) < deadwood(hand):
                command = {"type": "draw", "source": "discard"}
            else:
                command = next(a for a in actions if a.get("source") == "stock" or a["type"] == "pass")
            command = {**command, "seat": seat}
        new = decide(state, command)
        state = fold(new, state)
        events += new
    return events


@contextlib.contextmanager
def scratch_databases(count: int):
    admin = os.environ.get("DATABASE_URL")
    with contextlib.ExitStack() as stack:
        if not admin:
            admin = stack.enter_context(temporary_server("gin-rummy-bench-")).get_uri()
        names = [f"gin_rummy_records_bench_{uuid.uuid4().hex[:8]}" for _ in range(count)]
        urls = []
        for name in names:
            create_database(admin, name)
            urls.append(with_database(admin, name))
            upgrade(urls[-1])
        try:
            yield urls
        finally:
            for name in names:
                drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--seed", default="records-2026")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    presets = ["classic", "short-stock", "upcard-offer", "bonus-20-10"]
    played = [greedy_events(rng, presets[i % 4]) for i in range(args.matches)]
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
