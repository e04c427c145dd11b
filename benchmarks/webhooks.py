"""Webhooks under load: how soon a player's "your move" reaches the operator's receiver,
and what sending them costs the players' actions.

    python benchmarks/webhooks.py [--seconds 20] [--clients 16] [--database-url URL]

Run it from the repository's root with its virtual environment
(``.venv/bin/python benchmarks/webhooks.py``).  The service runs as ``gin-rummy serve``
runs it (gunicorn with ``service.gunicorn_conf``, 2 worker processes), on a scratch
database, with an operator token and the rate limits turned off (every client shares one
address).  A webhook receiver runs on loopback in this process: it verifies every
delivery's Standard Webhooks signature with the ``standardwebhooks`` library and notes
when each arrived.

Three rounds of ``--seconds`` each (default 20) on the same server, after a few seconds
of untimed warm-up:

- (a) no webhook endpoint: the baseline, measured in two halves, the first before the
  other rounds and the second after them, so that a drift of the machine over the run
  hits it as it hits them;
- (b) an endpoint taking ``your_move``, added with ``POST /webhooks``, whose receiver
  answers at once;
- (c) that endpoint removed (``DELETE /webhooks/{id}``), and another added whose
  receiver takes 5 seconds to answer each delivery (under the 10 s the service gives a
  receiver by default).

After each round the next waits (up to 30 s) until the service has folded every event
into the players' notifications, so that no round inherits the last one's backlog.

In each round ``--clients`` clients (default 16, in 2 processes of their own) play
matches between two people on different devices: each client makes two guests
(``POST /players``) per match, the first creates the match with an open seat and a
600-second turn clock (``POST /matches`` with its player token), the second joins it with
the invite code (``POST /matches/{id}/join``), so that both seats are bound to players
and every turn passed is a ``your_move`` notification.  Each client drives two such
matches in turn, both seats: GET the view of the seat to play, POST one of its
``legal_actions`` with If-Match and an Idempotency-Key, until the match ends (the same
two players then start another) or the round is over.  Making the players and matches
before the round starts is not timed.

Printed for each round: the actions' p50/p99 latency in ms, and for (b) and (c) their
ratio to (a), measured in the same run.  For (b) and (c), the deliveries:

- lag: from the moment the client got its 200 for the action (or the join) that made
  the notification to the moment the receiver got the delivery, p50/p95/p99; and from
  the notification's ``created_at`` (the moment its event was stored), the same;
- from the delivery log: how long from the notification's ``created_at`` until a sender
  took it (its event folded into the notifications, then the wait in the outbox), and
  how long the sending took;
- deliveries per second while the players played, beside the ``your_move``
  notifications made per second, and how many came after they stopped, how fast;
- for every round, how far the players' notifications were behind the events while
  they played (sampled every 0.5 s: the age of the oldest event not yet folded into
  them): a notification is owed to the endpoints only once it is folded;
- duplicates (a ``webhook-id`` received more than once), missing (a ``your_move``
  made while the endpoint was there, in the service's ``notifications`` table, with no
  delivery answered 2xx by the end, after waiting up to 30 s (b) or 5 s (c) for the
  outbox to drain: with a receiver taking 5 s, the service's few senders cannot keep up
  and the backlog is reported as such), and signature failures (must be 0).

The scratch database is made (and dropped) on the server of ``--database-url`` /
``DATABASE_URL``, else on postgresql://postgres@127.0.0.1:5432/test when it answers, else
on an embedded server in a temporary directory.  A default run takes about a minute and a half
(``--seconds 5`` for a quick look).
"""

from __future__ import annotations

import argparse
import bisect
import http.client
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: the load harness and the tests' receiver

from benchmarks.load import Client, Tally, free_ports, greedy, gunicorn, percentile, plays, scratch_database  # noqa: E402
from service.settings import Settings  # noqa: E402
from tests.support.webhooks import SECRET, Receiver  # noqa: E402

WORKERS = 2  # as gin-rummy serve
CLIENT_PROCESSES = 2
MATCHES_PER_CLIENT = 2
SLOW_SECONDS = 5.0
DRAIN_SECONDS = {"b": 30.0, "c": 5.0}
SETTLE_SECONDS = 30.0
WARM_UP_SECONDS = 3.0
SAMPLE_EVERY = 0.5
OPERATOR = "operator-" + uuid.uuid4().hex
SERVICE_ENV = {
    "GIN_RUMMY_OPERATOR_TOKEN": OPERATOR,
    "GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off",
    "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off",
    "GIN_RUMMY_GUESTS_PER_ADDRESS": "off",
    "GIN_RUMMY_INVITES_PER_ADDRESS": "off",
}
RULES = {"turn_seconds": 600}
TITLES = {"a": "(a) no endpoint", "b": "(b) receiver answers at once", "c": f"(c) receiver takes {SLOW_SECONDS:g} s"}


# --- clients (in their own processes) ------------------------------------------------


@dataclass
class Part:
    """What one client process sends back: its tally, and when each request that may
    have made a notification (an action, a join) was sent and answered 2xx."""

    tally: Tally
    causes: list = field(default_factory=list)  # (match id, sent, answered), time.time()


class Pair:
    """Two guests on different devices playing one match after another."""

    def __init__(self, client: Client, causes: list):
        self.client, self.causes = client, causes
        self.players = [self.guest("Ann"), self.guest("Bob")]
        self.match: dict | None = None
        self.new_match()

    def timed(self, name: str, method: str, path: str, body: dict | None, headers: dict) -> tuple[int, dict | None, float, float]:
        sent = time.time()
        status, answer = self.client.send(name, method, path, body, headers)
        return status, answer, sent, time.time()

    def guest(self, name: str) -> str:
        status, body = self.client.send("POST player", "POST", "/players", {"name": name})
        if status != 201:
            raise RuntimeError(f"POST /players answered {status}")
        return body["token"]

    def new_match(self) -> None:
        """The first player makes a match with an open seat, the second joins it."""
        self.match = None
        ann, bob = ({"Authorization": f"Bearer {token}"} for token in self.players)
        body = {"seats": [{"kind": "human"}, {"kind": "open"}], "rules": RULES}
        status, made = self.client.send("POST create", "POST", "/matches", body, ann)
        if status != 201:
            return
        mid = made["id"]
        status, joined, sent, answered = self.timed("POST join", "POST", f"/matches/{mid}/join", {"code": made["invite"]["code"]}, bob)
        if status != 201:
            return
        self.causes.append((mid, sent, answered))
        tokens = {s["seat"]: s["token"] for s in made["seats"] if s.get("token")}
        tokens[joined["seat"]] = joined["token"]
        turn = joined["view"].get("turn")
        self.match = {"id": mid, "tokens": tokens, "seat": turn if turn in tokens else min(tokens)}

    def step(self) -> None:
        """GET the view of the seat to play, POST one of its legal actions."""
        match = self.match
        if match is None:
            self.new_match()
            return
        auth = {"Authorization": f"Bearer {match['tokens'][match['seat']]}"}
        status, view = self.client.send("GET view", "GET", f"/matches/{match['id']}", headers=auth)
        if status != 200:
            self.match = None
            return
        if view["status"] == "finished":
            self.new_match()
            return
        if not plays(view):
            match["seat"] = 1 - match["seat"]
            return
        headers = {**auth, "If-Match": f'"{view["version"]}"', "Idempotency-Key": uuid.uuid4().hex}
        status, result, sent, answered = self.timed("POST action", "POST", f"/matches/{match['id']}/actions", greedy(view), headers)
        if status != 200:
            self.match = None
            return
        self.causes.append((match["id"], sent, answered))
        self.client.tally.actions += 1
        turn = result["view"]["turn"]
        if turn in match["tokens"]:
            match["seat"] = turn


def client_thread(port: int, part: Part, ready, go, stop) -> None:
    client = Client(port, part.tally)
    pairs, failed = [], None
    try:
        pairs = [Pair(client, part.causes) for _ in range(MATCHES_PER_CLIENT)]
    except Exception as exc:  # counted below, as an error of the round
        failed = type(exc).__name__
    finally:
        ready.release()
    go.wait()
    tally = part.tally  # what setting up cost is not part of the figures (its joins are causes all the same)
    tally.actions = tally.requests = 0
    tally.errors.clear()
    tally.latencies.clear()
    tally.by_request.clear()
    if failed:
        tally.errors[f"client {failed}"] = 1
        return
    started, turn = time.perf_counter(), 0
    try:
        while not stop.is_set():
            turn = (turn + 1) % len(pairs)
            try:
                pairs[turn].step()
            except Exception as exc:  # an answer the client did not expect: an error, and a fresh match
                name = f"client {type(exc).__name__}"
                tally.errors[name] = tally.errors.get(name, 0) + 1
                pairs[turn].match = None
    finally:
        tally.seconds = time.perf_counter() - started
        client.conn.close()


def client_process(port: int, threads: int, seconds: float, conn) -> None:
    """``threads`` clients for ``seconds`` once the parent says go; sends back one Part."""
    ready, go, stop = threading.Semaphore(0), threading.Event(), threading.Event()
    parts = [Part(Tally()) for _ in range(threads)]
    workers = [threading.Thread(target=client_thread, args=(port, p, ready, go, stop), daemon=True) for p in parts]
    for w in workers:
        w.start()
    for _ in workers:
        ready.acquire()
    conn.send("ready")
    conn.recv()  # go
    go.set()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    total = Part(Tally(seconds=max(p.tally.seconds for p in parts)))
    for p in parts:
        total.tally.add(p.tally)
        total.causes.extend(p.causes)
    conn.send(total)
    conn.close()


def run_load(port: int, clients: int, seconds: float) -> tuple[Part, float, float]:
    """``clients`` clients in their processes, started together: their Part, and when
    (time.time()) they were told to go and when the last one finished."""
    context = multiprocessing.get_context("spawn")
    processes = min(CLIENT_PROCESSES, clients)
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    pipes, procs = [], []
    for share in shares:
        parent, child = context.Pipe()
        proc = context.Process(target=client_process, args=(port, share, seconds, child))
        proc.start()
        child.close()
        pipes.append(parent)
        procs.append(proc)
    for pipe in pipes:
        if not pipe.poll(120):
            raise RuntimeError("the clients did not get ready")
        pipe.recv()
    started = time.time()
    for pipe in pipes:
        pipe.send("go")
    total = Part(Tally())
    for pipe in pipes:
        if not pipe.poll(seconds + 120):
            raise RuntimeError("the clients did not finish")
        part = pipe.recv()
        total.tally.add(part.tally)
        total.tally.seconds = max(total.tally.seconds, part.tally.seconds)
        total.causes.extend(part.causes)
    ended = time.time()
    for proc in procs:
        proc.join()
    return total, started, ended


# --- the operator's API and the database ----------------------------------------------


def operator(port: int, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": f"Bearer {OPERATOR}", "Content-Type": "application/json", "Accept": "application/json"}
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=headers)
        answer = conn.getresponse()
        raw = answer.read()
        return answer.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def add_endpoint(port: int, receiver: Receiver, description: str) -> dict:
    status, made = operator(port, "POST", "/webhooks", {"url": receiver.url, "secret": SECRET, "kinds": ["your_move"], "description": description})
    if status != 201:
        raise RuntimeError(f"POST /webhooks answered {status}: {made}")
    return made


def remove_endpoint(port: int, endpoint: dict) -> None:
    status, answer = operator(port, "DELETE", f"/webhooks/{endpoint['id']}")
    if status not in (200, 204):
        raise RuntimeError(f"DELETE /webhooks/{endpoint['id']} answered {status}: {answer}")


def outbox(port: int, endpoint: dict) -> dict:
    """The endpoint's deliveries by state (pending, delivered, failed, oldest_pending)."""
    status, answer = operator(port, "GET", f"/webhooks/{endpoint['id']}")
    if status != 200:
        raise RuntimeError(f"GET /webhooks/{endpoint['id']} answered {status}: {answer}")
    return answer["deliveries"]


FOLDED = """
SELECT coalesce((SELECT position FROM projection_cursors WHERE name = 'notifications'), 0)
     = coalesce((SELECT position FROM events ORDER BY tx DESC, position DESC LIMIT 1), 0)
"""


def drain(port: int, db, endpoint: dict, limit: float) -> float:
    """Wait (at most ``limit`` seconds) until every event is folded into the feeds and
    the endpoint has nothing pending; the seconds waited."""
    started = time.monotonic()
    calm = 0
    while time.monotonic() - started < limit:
        folded = db.execute(FOLDED).fetchone()[0]
        calm = calm + 1 if folded and outbox(port, endpoint)["pending"] == 0 else 0
        if calm >= 2:
            break
        time.sleep(0.25)
    return time.monotonic() - started


def settle(db, limit: float) -> float:
    """Wait (at most ``limit`` seconds) until every event is folded into the feeds."""
    started = time.monotonic()
    while time.monotonic() - started < limit and not db.execute(FOLDED).fetchone()[0]:
        time.sleep(0.25)
    return time.monotonic() - started


BEHIND = """
SELECT count(*), coalesce(extract(epoch FROM clock_timestamp() - min(e.recorded_at)), 0) FROM events e
WHERE (e.tx, e.position) > (
    SELECT last.tx, last.position FROM projection_cursors c JOIN events last ON last.position = c.position
    WHERE c.name = 'notifications'
)
"""


class Behind:
    """Samples, every SAMPLE_EVERY seconds while the block runs, how far the players'
    notifications are behind the events: (events not yet folded, the oldest one's age)."""

    def __init__(self, url: str):
        self.url = url
        self.samples: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.wait(SAMPLE_EVERY):
                count, age = conn.execute(BEHIND).fetchone()
                self.samples.append((count, float(age)))

    def __enter__(self) -> Behind:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def owed_your_moves(db, since: datetime) -> dict[str, float]:
    """The ``your_move`` notifications made since ``since``: webhook-id -> created_at."""
    rows = db.execute("SELECT id, created_at FROM notifications WHERE kind = 'your_move' AND created_at >= %s", (since,)).fetchall()
    return {f"notification_{nid}": created.timestamp() for nid, created in rows}


OUTBOX_TIMES = """
SELECT extract(epoch FROM last_attempt_at - created_at) * 1000, extract(epoch FROM finished_at - last_attempt_at) * 1000
FROM webhook_deliveries WHERE endpoint_id = %s AND state = 'delivered'
"""


# --- figures ---------------------------------------------------------------------------


@dataclass
class Round:
    name: str
    part: Part
    started: float
    ended: float
    receiver: Receiver | None = None
    endpoint: dict | None = None
    behind: list = field(default_factory=list)  # (events not folded, the oldest one's age in s), sampled
    deliveries: dict | None = None

    @property
    def actions(self) -> list[float]:
        return sorted(self.part.tally.by_request.get("POST action", []))

    def add(self, other: Round) -> None:
        """Another half of the same round (the baseline's)."""
        seconds = self.part.tally.seconds + other.part.tally.seconds
        self.part.tally.add(other.part.tally)
        self.part.tally.seconds = seconds
        self.part.causes.extend(other.part.causes)
        self.behind.extend(other.behind)


def spread(values: list[float], unit: str = "ms") -> str:
    if not values:
        return "none"
    values = sorted(values)
    digits = 0 if unit == "ms" else 1
    return ", ".join(f"{name} {percentile(values, q):,.{digits}f} {unit}" for name, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)))


def deliveries(round_: Round, db, port: int) -> dict:
    """What the receiver got in the round, against what was owed."""
    assert round_.receiver is not None and round_.endpoint is not None
    receiver, endpoint = round_.receiver, round_.endpoint
    since = datetime.fromisoformat(endpoint["created_at"])
    owed = owed_your_moves(db, since)
    got = receiver.got()
    seen = Counter(each["id"] for each in got)
    accepted = receiver.accepted()
    # The moment the receiver got it: it notes the time after its wait.
    arrived = {wid: each["at"] - receiver.delay for wid, each in accepted.items()}

    causes: dict[str, list[tuple[float, float]]] = {}
    for mid, sent, answered in round_.part.causes:
        causes.setdefault(mid, []).append((sent, answered))
    starts = {}
    for mid, spans in causes.items():
        spans.sort()
        starts[mid] = [sent for sent, _ in spans]

    from_answer, from_created, unattributed = [], [], 0
    for wid, each in accepted.items():
        data = each["payload"]["data"]
        created = datetime.fromisoformat(data["created_at"]).timestamp()
        from_created.append((arrived[wid] - created) * 1000)
        # The request that stored its event: the one of its match sent last before it.
        spans = causes.get(data["match"], [])
        i = bisect.bisect_right(starts.get(data["match"], []), created) - 1
        if i >= 0 and spans[i][1] >= created:
            from_answer.append((arrived[wid] - spans[i][1]) * 1000)
        else:
            unattributed += 1
    window = round_.ended - round_.started
    during = sum(1 for at in arrived.values() if round_.started <= at <= round_.ended)
    made = sum(1 for created in owed.values() if round_.started <= created <= round_.ended)
    times = db.execute(OUTBOX_TIMES, (uuid.UUID(endpoint["id"]),)).fetchall()
    last = max(arrived.values()) if arrived else None
    return {
        "owed": len(owed),
        "made_per_s": made / window,
        "delivered": len(accepted),
        "per_s": during / window,
        "after": sum(1 for at in arrived.values() if at > round_.ended),
        "last_after": last - round_.ended if last is not None else None,
        "from_answer": from_answer,
        "from_created": from_created,
        "unattributed": unattributed,
        "waits": [float(wait) for wait, _ in times],
        "sends": [float(send) for _, send in times],
        "duplicates": sum(n - 1 for n in seen.values() if n > 1),
        "missing": len(set(owed) - set(accepted)),
        "unexpected": len(set(accepted) - set(owed)),
        "signature_failures": sum(1 for each in got if not each["verified"]),
        "outbox": outbox(port, endpoint),
    }


def print_actions(rounds: dict[str, Round]) -> None:
    base = rounds["a"].actions
    b50, b99 = percentile(base, 0.50), percentile(base, 0.99)
    print("\naction latency (POST /matches/{id}/actions)")
    print(f"  {'round':<34}{'seconds':>8}{'actions':>9}{'actions/s':>11}{'p50 ms':>9}{'p99 ms':>9}{'p50 / (a)':>11}{'p99 / (a)':>11}  errors")
    for name, r in rounds.items():
        values = r.actions
        p50, p99 = percentile(values, 0.50), percentile(values, 0.99)
        ratios = ("-", "-") if name == "a" else (f"{p50 / b50:.2f}x", f"{p99 / b99:.2f}x")
        errors = sum(r.part.tally.errors.values())
        shown = f"{errors}" + (f" {dict(r.part.tally.errors)}" if errors else "")
        seconds = r.part.tally.seconds or 1.0
        print(
            f"  {TITLES[name]:<34}{seconds:>8.0f}{len(values):>9,}{len(values) / seconds:>11,.0f}{p50:>9.1f}{p99:>9.1f}"
            f"{ratios[0]:>11}{ratios[1]:>11}  {shown}"
        )
    print("\nthe players' notifications behind the events while they played (sampled every 0.5 s)")
    for name, r in rounds.items():
        ages = [age for _, age in r.behind]
        most = max((count for count, _ in r.behind), default=0)
        print(f"  {TITLES[name]:<34}the oldest event not yet folded: {spread(ages, 's')}; at most {most:,} events waiting")


def print_deliveries(name: str, d: dict, drained: float) -> None:
    def line(label: str, value: str) -> None:
        print(f"  {label + ':':<46}{value}")

    box = d["outbox"]
    print(f"\n{TITLES[name]}: webhook deliveries (your_move)")
    line("your_move notifications owed", f"{d['owed']:,} ({d['made_per_s']:,.1f} made per second while the players played)")
    line("delivered", f"{d['delivered']:,} ({d['per_s']:,.1f} per second while the players played)")
    if d["after"] and d["last_after"] and d["last_after"] >= 1.0:
        line("after the players stopped", f"{d['after']:,} in {d['last_after']:.1f} s ({d['after'] / d['last_after']:,.1f} per second)")
    unmatched = f" ({d['unattributed']} not matched to an action)" if d["unattributed"] else ""
    line("lag, the action's 200 to the receiver", spread(d["from_answer"]) + unmatched)
    line("lag, the notification's created_at to it", spread(d["from_created"]))
    line("created_at to a sender taking it", spread(d["waits"]))
    line("sending, the sender taking it to the answer", spread(d["sends"]))
    line("duplicates (a webhook-id twice)", f"{d['duplicates']}")
    unexpected = f"; {d['unexpected']} delivered that were not owed" if d["unexpected"] else ""
    line(f"missing after a {drained:.1f} s drain", f"{d['missing']:,} (the outbox: {box['pending']:,} pending, "
         f"{box['delivered']:,} delivered, {box['failed']:,} failed){unexpected}")
    line("signature failures", f"{d['signature_failures']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per round (default 20)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--workers", type=int, default=WORKERS, help=f"gunicorn worker processes (default {WORKERS})")
    parser.add_argument("--database-url", help="server to make the scratch database on (default: DATABASE_URL, ...)")
    args = parser.parse_args(argv)

    import psycopg

    with ExitStack() as stack:
        url = stack.enter_context(scratch_database(args.database_url))
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gin-rummy-webhooks-")))
        (port,) = free_ports(1)
        stack.enter_context(gunicorn("service.wsgi:app", port, args.workers, 8, {"DATABASE_URL": url, **SERVICE_ENV}, logs / "service.log"))
        db = stack.enter_context(psycopg.connect(url, autocommit=True))
        fast = stack.enter_context(Receiver())
        slow = stack.enter_context(Receiver(delay=SLOW_SECONDS))
        settings = {k: os.environ.get(k) for k in ("GIN_RUMMY_WEBHOOK_POLL_SECONDS", "GIN_RUMMY_WEBHOOK_SENDERS")}
        print(
            f"gunicorn gevent, {args.workers} workers; {args.clients} clients in {min(CLIENT_PROCESSES, args.clients)} processes, "
            f"{MATCHES_PER_CLIENT} matches each (two guests per match); {args.seconds:g} s per round; "
            f"webhook poll {settings['GIN_RUMMY_WEBHOOK_POLL_SECONDS'] or '1'} s, "
            f"senders {settings['GIN_RUMMY_WEBHOOK_SENDERS'] or Settings().webhook_senders} per process; cores: {os.cpu_count()}, "
            f"load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        run_load(port, args.clients, min(WARM_UP_SECONDS, args.seconds))  # untimed
        settle(db, SETTLE_SECONDS)

        rounds: dict[str, Round] = {}
        drained: dict[str, float] = {}
        endpoint = None
        plan = (("a", None, args.seconds / 2), ("b", fast, args.seconds), ("c", slow, args.seconds), ("a", None, args.seconds / 2))
        for name, receiver, seconds in plan:
            if endpoint is not None:
                remove_endpoint(port, endpoint)  # the slow one's backlog goes with it
                endpoint = None
            if receiver is not None:
                endpoint = add_endpoint(port, receiver, TITLES[name])
            with Behind(url) as behind:
                part, started, ended = run_load(port, args.clients, seconds)
            r = Round(name, part, started, ended, receiver, endpoint, behind.samples)
            print(f"  {TITLES[name]}: {len(r.actions):,} actions in {part.tally.seconds:.0f} s", flush=True)
            if endpoint is not None:
                drained[name] = drain(port, db, endpoint, DRAIN_SECONDS[name])
                r.deliveries = deliveries(r, db, port)
            settle(db, SETTLE_SECONDS)
            if name in rounds:
                rounds[name].add(r)
            else:
                rounds[name] = r
        print_actions(rounds)
        for name in ("b", "c"):
            found = rounds[name].deliveries
            assert found is not None
            print_deliveries(name, found, drained[name])
        failures = sum(rounds[n].deliveries["signature_failures"] for n in ("b", "c"))
        duplicates = sum(rounds[n].deliveries["duplicates"] for n in ("b", "c"))
        missing = rounds["b"].deliveries["missing"]
        print(
            f"\nsignature failures: {failures} (must be 0); duplicates: {duplicates}; "
            f"missing with the receiver answering at once: {missing}"
        )
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
