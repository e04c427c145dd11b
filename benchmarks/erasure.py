"""What a deletion costs the reads of a deleted player's match: a view and an export,
before and after, measured in the same run.

    python benchmarks/erasure.py [--repeat 300] [--database-url URL]

On a scratch database (made and dropped on the server of ``--database-url`` /
``DATABASE_URL``, else postgresql://postgres@127.0.0.1:5432/test), through the
application as a request reaches it (Flask's test client, no HTTP): two guests play a
match to its end.  Then, ``--repeat`` times each: the view of the seat that stays (a
cold one: the state cache forgotten first, so the match's events are read) and the
match's export.  Then one player deletes themselves, and the same again: their seat is
now read through the erasure (one more lookup for the events that name seats).  A
deletion cannot be undone, so "before" runs first; each starts with 20 untimed reads.
Printed: p50 and p90 per read in ms, and after / before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.api import create_app  # noqa: E402
from service.store import EventStore, connect  # noqa: E402
from service.store.migrate import scratch_database  # noqa: E402
from tests.api.conftest import UNLIMITED  # noqa: E402
from tests.support.matches import greedy_action_on_view  # noqa: E402

LOCAL = "postgresql://postgres@127.0.0.1:5432/test"


def play_a_match(client) -> tuple[str, dict, dict]:
    players = [client.post("/players", json={"name": name}).json for name in ("Quorra", "Bob")]
    heads = [{"Authorization": f"Bearer {p['token']}"} for p in players]
    made = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "single_hand": True}, headers=heads[0]).json
    client.post(f"/matches/{made['id']}/join", json={"code": made["invite"]["code"]}, headers=heads[1])
    for _ in range(200):
        views = [client.get(f"/matches/{made['id']}", headers=h).json for h in heads]
        if views[0]["status"] == "finished":
            break
        seat = views[0]["turn"]
        client.post(f"/matches/{made['id']}/actions", json=greedy_action_on_view(views[seat]), headers=heads[seat])
    return made["id"], heads[0], heads[1]


def timed(repeat: int, read) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or LOCAL)
    args = parser.parse_args(argv)
    admin = args.database_url.rsplit("/", 1)[0] + "/postgres"
    with scratch_database(admin, "gin_rummy_erasure_bench") as url, connect(url, max_size=4) as pool:
        store = EventStore(pool)
        app = create_app({"STORE": store, "OPERATOR_TOKEN": "bench", "TESTING": True, **UNLIMITED})
        client = app.test_client()
        mid, hers, bobs = play_a_match(client)
        cache = app.extensions["gin_rummy"].store.cache

        def view():
            cache.forget(None)
            assert client.get(f"/matches/{mid}", headers=bobs).status_code == 200

        def export():
            assert client.get(f"/matches/{mid}/export", headers=bobs).status_code == 200

        samples: dict[tuple[str, str], list[float]] = {}
        for when in ("before", "after"):
            if when == "after":
                assert client.delete("/players/me", headers=hers).status_code == 200
            for name, read in (("view (cold)", view), ("export", export)):
                timed(20, read)  # warm-up
                samples[(name, when)] = timed(args.repeat, read)
        print(f"a finished match of two guests; {args.repeat} reads each, before and after one of them deleted themselves")
        print(f"  {'read':14} {'before p50':>11} {'p90':>7} {'after p50':>10} {'p90':>7} {'after/before p50':>17}")
        for name in ("view (cold)", "export"):
            b, a = samples[(name, "before")], samples[(name, "after")]
            p = lambda xs, q: statistics.quantiles(xs, n=10)[q - 1]  # noqa: E731
            print(f"  {name:14} {statistics.median(b):9.2f}ms {p(b, 9):6.2f} {statistics.median(a):8.2f}ms {p(a, 9):6.2f}"
                  f" {statistics.median(a) / statistics.median(b):16.2f}x")
        app.extensions["gin_rummy"].hub.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
