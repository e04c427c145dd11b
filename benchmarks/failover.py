"""Failover of a replicated PostgreSQL under load, counted: what each fault costs the
players, and what it loses of what they were told was done.

    python benchmarks/failover.py [--rounds 1] [--synchronous] [--clients 16]
                                  [--instances 3] [--workers 2] [--pause 4]

Run it from the repository's root with its virtual environment, as root (Patroni runs
PostgreSQL as the postgres user), where tests/scale/patroni.py can run: patroni, etcd,
PostgreSQL 15 and nginx installed.

Each round is the scenario of tests/scale/test_failover.py on a fresh deployment of
its own (tests/scale/patroni.py): etcd, three PostgreSQL 15 nodes run by Patroni with
asynchronous replication (``--synchronous``: Patroni's synchronous mode, the test's),
``--instances`` service instances (default 3, each ``--workers`` gunicorn workers,
default 2) behind nginx, pointed at the nodes by one multi-host URL
(``target_session_attrs=read-write``).  ``--clients`` clients (default 16; the test's
players, tests/scale/client.py) play matches between two people through nginx, every
action sent with If-Match and an Idempotency-Key and sent again with the same key when
its outcome is unknown.  Here they count instead of failing (``Player(lenient=True)``):
a 500 is sent again like a 503, any other unexpected answer to an action (after a lost
commit, the client's version is ahead of the database's) is counted and the view read
again, a match that cannot go on is left for another.  The rate limits are off.

After 2 s of ramp-up and 4 s of steady load (the baseline of the run), three faults,
each once the cluster is healthy again (a leader and two streaming standbys, one
synchronous in synchronous mode): ``kill -9`` of the primary's postmaster, the same of
the new primary's, and a planned switchover (Patroni's REST API; refused while the
candidate has not caught up, as just after a rejoin, it is asked again each second, up
to 10 times, and timed from the one done); ``--pause`` seconds (default 4) of load
after each.

Printed for each round, a row per interval (the steady load before the faults, then
each fault until the next one, the last until the load stops):

- the node, and for a fault the seconds from it until the database took a write (a
  connection with the multi-host URL found a primary) and until a client's action was
  acknowledged after that;
- actions acknowledged (answered 200) in the interval, per second, and the ratio to
  the steady load's rate in the same round;
- lost: acknowledged actions whose Idempotency-Key, stored in the same statement as
  their events, is not in the database at the end, each by when it was acknowledged:
  after the fault before took writes again (or the start) and before this one's new
  primary did (until then only the old primary answers: a backend of a killed
  postmaster may still commit and answer); doubles: seqs of a match answered to two
  different keys (an action acknowledged, lost, and its seq given to a later one), by
  the earlier key's acknowledgement the same way;
- the answers 500 and 503 the clients got, and the requests without an answer (or
  502/504 from nginx), each of them sent again.

Then the round's totals (the ramp-up and the actions the players finished after the
stop included): acknowledged actions lost out of all acknowledged, matches whose
creation was acknowledged (201) and is gone, streams with a gap (none expected: the new
primary holds a prefix), and the clients' other counts.  What an asynchronous failover
loses is what was acknowledged but had not reached the standby that took over, so it
varies from one fault to the next: ``--rounds N`` (default 1) repeats the whole thing on
a fresh deployment and ends with the totals of all rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: the scale tests' deployment and players
from tests.scale.client import Applied, Ledger, MatchRecord, Routes  # noqa: E402
from tests.scale.cluster import nginx_binary  # noqa: E402
from tests.scale.patroni import Replicated, available, wait_writable  # noqa: E402
from tests.scale.test_scale_out import Background, players  # noqa: E402

SEED = 20_261_207
FAULTS = ("first primary killed", "second primary killed", "planned switchover")
STEADY = "steady load (baseline)"
RAMP_UP = 2.0
STEADY_SECONDS = 4.0
SWITCHOVER_ATTEMPTS = 10
SERVICE_ENV = {"GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off", "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off"}
#: The clients' counts shown in their own columns, or not at all.
SHOWN = {"actions", "matches_created", "matches_finished", "replays_seen",
         "retried_after_500", "retried_after_503", "retried_after_no_answer", "retried_after_502", "retried_after_504"}


class TimedLedger(Ledger):
    """The scale tests' ledger, and when each key was first acknowledged."""

    def __init__(self):
        super().__init__()
        self.acknowledged_at: dict[str, float] = {}

    def applied(self, match: MatchRecord, applied: Applied):
        super().applied(match, applied)
        with self.lock:
            self.acknowledged_at.setdefault(applied.key, time.monotonic())

    def snapshot(self) -> Counter:
        with self.lock:
            return Counter(self.counts)


# --- what the database lost, counted ------------------------------------------------------


@dataclass
class Damage:
    lost: list[float] = field(default_factory=list)  # when each lost action was acknowledged
    doubles: list[float] = field(default_factory=list)  # for each seq answered twice, the earlier key's
    stored_otherwise: int = 0  # keys stored with other seqs than the client was answered
    matches_lost: int = 0
    gaps: int = 0
    acknowledged: int = 0


def count_damage(url: str, ledger: TimedLedger) -> Damage:
    """The clients' acknowledged answers against the database (the counting sibling of
    tests/scale/checks.py's ``check_ledger``), in one snapshot."""
    damage = Damage()
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        present = {row[0] for row in conn.execute("SELECT DISTINCT match_id FROM events")}
        damage.gaps = conn.execute(
            "SELECT count(*) FROM (SELECT match_id FROM events GROUP BY match_id"
            " HAVING min(seq) <> 1 OR max(seq) <> count(*)) AS gapped"
        ).fetchall()[0][0]
        stored = {
            (match_id, key): tuple(range(first, last + 1))
            for match_id, key, first, last in conn.execute("SELECT match_id, key, first_seq, last_seq FROM idempotency_keys")
        }
    when = ledger.acknowledged_at
    for record in ledger.matches.values():
        match_id = UUID(record.id)
        damage.matches_lost += match_id not in present
        owners: dict[int, list[str]] = defaultdict(list)
        for key, applied in record.applied.items():
            damage.acknowledged += 1
            for seq in applied.seqs:
                owners[seq].append(key)
            seqs = stored.get((match_id, key))
            if seqs is None:
                damage.lost.append(when[key])
            elif seqs != applied.seqs:
                damage.stored_otherwise += 1
        for keys in owners.values():
            if len(keys) > 1:
                damage.doubles.append(min(when[k] for k in keys))
    return damage


# --- one round --------------------------------------------------------------------------------


@dataclass
class Interval:
    name: str
    node: str
    started: float
    counts: Counter  # the clients' counts at its start
    writable: float | None = None  # seconds from the fault until the database took a write
    first_ack: float | None = None  # ... until an action was acknowledged after that
    attempts: int = 1  # of a switchover (Patroni refuses one to a standby not caught up)
    ended: float = 0.0
    delta: Counter = field(default_factory=Counter)
    lost: int = 0
    doubles: int = 0

    @property
    def rate(self) -> float:
        return self.delta["actions"] / max(self.ended - self.started, 1e-9)


@dataclass
class Round:
    number: int
    intervals: list[Interval]
    damage: Damage
    counts: Counter  # the clients' counts at the end, ramp-up included
    failed_clients: list[str]
    late: tuple[int, int] = (0, 0)  # lost and doubles acknowledged after the last fault


def seconds_until_acknowledged(ledger: TimedLedger, since: int, timeout: float = 60) -> float | None:
    started = time.monotonic()
    while ledger.snapshot()["actions"] <= since:
        if time.monotonic() - started > timeout:
            return None
        time.sleep(0.02)
    return time.monotonic() - started


def fault(replicated: Replicated, name: str, ledger: TimedLedger) -> Interval:
    replicated.wait_healthy()
    started = time.monotonic()
    interval = Interval(name, "", started, ledger.snapshot())
    if name == "planned switchover":
        for attempt in range(1, SWITCHOVER_ATTEMPTS + 1):
            try:
                old, new = replicated.switchover()
                break
            except AssertionError as exc:  # (503, 'Switchover failed'): a candidate not caught up yet; nothing was done
                if attempt == SWITCHOVER_ATTEMPTS:
                    raise RuntimeError(f"{attempt} switchovers refused, the last {exc}") from None
                time.sleep(1)
                replicated.wait_healthy()
                started = time.monotonic()
                interval = Interval(name, "", started, ledger.snapshot())
        interval.node = f"{old.name} -> {new}"
        interval.attempts = attempt
    else:
        leader = replicated.leader()
        assert leader is not None, "no leader"
        leader.kill_postmaster()
        interval.node = leader.name
    try:
        interval.writable = time.monotonic() - started + wait_writable(replicated.database_url)
    except TimeoutError:
        return interval
    after = seconds_until_acknowledged(ledger, ledger.snapshot()["actions"])
    interval.first_ack = None if after is None else time.monotonic() - started
    return interval


def finish(load: Background) -> list[str]:
    """Stop the players; what any of them died of (Background.finish raises the first)."""
    load.stop.set()
    failed = []
    for future in load.futures:
        try:
            future.result(timeout=120)
        except Exception as exc:  # counted, the others go on
            failed.append(f"{type(exc).__name__}: {str(exc)[:200]}")
    load.pool.shutdown(wait=False)
    return failed


def run_round(number: int, args) -> Round:
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-failover-bench-"))
    replicated = Replicated(folder, synchronous=args.synchronous, instances=args.instances, workers=args.workers,
                            env=SERVICE_ENV)
    try:
        try:
            replicated.start()
        except BaseException:
            print(f"the deployment did not start:\n{replicated.logs()}", file=sys.stderr)
            raise
        assert replicated.nginx is not None
        ledger = TimedLedger()
        routes = Routes(replicated.nginx.port, [i.port for i in replicated.instances])
        load = Background(players(ledger, routes, SEED + number, args.clients, 0, [None], lenient=True))
        intervals: list[Interval] = []
        try:
            time.sleep(RAMP_UP)
            leader = replicated.leader()
            intervals.append(Interval(STEADY, leader.name if leader else "?", time.monotonic(), ledger.snapshot()))
            time.sleep(STEADY_SECONDS)
            for name in FAULTS:
                intervals.append(fault(replicated, name, ledger))
                time.sleep(args.pause)
            replicated.wait_healthy()
            time.sleep(2)
        finally:
            stopped, counts = time.monotonic(), ledger.snapshot()
            failed = finish(load)
        final = ledger.snapshot()  # with the ramp-up, and what was finished after the stop
        replicated.wait_healthy()
        damage = count_damage(replicated.database_url, ledger)
    except BaseException:
        print(f"\nlogs of round {number}:\n{replicated.logs()}", file=sys.stderr)
        raise
    finally:
        replicated.stop()
        shutil.rmtree(folder, ignore_errors=True)

    for interval, following in zip(intervals, [*intervals[1:], None]):
        interval.ended = following.started if following else stopped
        interval.delta = (following.counts if following else counts) - interval.counts
    result = Round(number, intervals, damage, final, failed)
    faults = intervals[1:]

    def blame(acknowledged_at: float) -> Interval | None:
        """The first fault whose new primary took writes after the acknowledgement: until
        then the old primary answered (a backend of a killed postmaster may still commit)."""
        return next((f for f in faults if acknowledged_at <= f.started + (f.writable or float("inf"))), None)

    late_lost = late_doubles = 0
    for at in damage.lost:
        if (f := blame(at)) is not None:
            f.lost += 1
        else:
            late_lost += 1
    for at in damage.doubles:
        if (f := blame(at)) is not None:
            f.doubles += 1
        else:
            late_doubles += 1
    result.late = (late_lost, late_doubles)
    return result


# --- printing -------------------------------------------------------------------------------------

HEADER = (
    f"{'interval':<26}{'node':<12}{'writable s':>11}{'1st ack s':>10}{'acked':>8}{'acked/s':>9}{'vs steady':>10}"
    f"{'lost':>6}{'doubles':>8}{'500s':>6}{'503s':>6}{'no answer':>10}"
)


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def unanswered(counts: Counter) -> int:
    return counts["retried_after_no_answer"] + counts["retried_after_502"] + counts["retried_after_504"]


def print_round(r: Round, args) -> None:
    mode = "synchronous" if args.synchronous else "asynchronous"
    print(f"\nround {r.number} of {args.rounds}: {mode} replication", flush=True)
    print(HEADER)
    steady = r.intervals[0].rate
    for i in r.intervals:
        is_fault = i.name != STEADY
        share = f"{i.rate / steady:.0%}" if steady else "-"
        print(
            f"{i.name:<26}{i.node:<12}{seconds(i.writable) if is_fault else '-':>11}{seconds(i.first_ack) if is_fault else '-':>10}"
            f"{i.delta['actions']:>8}{i.rate:>9.1f}{share:>10}{i.lost if is_fault else '-':>6}{i.doubles if is_fault else '-':>8}"
            f"{i.delta['retried_after_500']:>6}{i.delta['retried_after_503']:>6}{unanswered(i.delta):>10}"
        )
    d, c = r.damage, r.counts
    print(
        f"{'round total':<26}{'':<12}{'':>11}{'':>10}{c['actions']:>8}{'':>9}{'':>10}{len(d.lost):>6}{len(d.doubles):>8}"
        f"{c['retried_after_500']:>6}{c['retried_after_503']:>6}{unanswered(c):>10}"
    )
    lost_share = len(d.lost) / d.acknowledged if d.acknowledged else 0.0
    print(f"  acknowledged actions lost: {len(d.lost)} of {d.acknowledged} ({lost_share:.3%});"
          f" seqs answered to two keys: {len(d.doubles)}")
    if any(r.late):
        print(f"  of which acknowledged after the last fault: {r.late[0]} lost, {r.late[1]} doubles")
    print(f"  matches acknowledged (201) and gone: {d.matches_lost} of {c['matches_created']};"
          f" streams with a gap: {d.gaps}; keys stored with other seqs than answered: {d.stored_otherwise}")
    retried = [f"{i.name}: {i.attempts} attempts" for i in r.intervals if i.attempts > 1]
    if retried:
        print(f"  switchovers refused first (the candidate not caught up yet), timed from the one done: {'; '.join(retried)}")
    others = {k: v for k, v in sorted(c.items()) if k not in SHOWN and v}
    print(f"  the clients' other counts: {others or 'none'}")
    if r.failed_clients:
        print(f"  clients that died: {len(r.failed_clients)}; first: {r.failed_clients[0]}")


def print_all(rounds: list[Round]) -> None:
    print(f"\nall {len(rounds)} rounds, by fault (seconds: median / max)")
    print(f"{'fault':<26}{'writable s':>14}{'1st ack s':>14}{'acked/s vs steady':>19}{'lost':>6}{'doubles':>8}{'500s':>6}{'503s':>6}")
    for n, name in enumerate(FAULTS, start=1):
        faults = [(r.intervals[n], r.intervals[0].rate) for r in rounds if len(r.intervals) > n]

        def spread(values: list[float | None]) -> str:
            known = [v for v in values if v is not None]
            missing = len(values) - len(known)
            text = f"{statistics.median(known):.2f} / {max(known):.2f}" if known else "-"
            return text + (f" ({missing} never)" if missing else "")

        shares = [f.rate / steady for f, steady in faults if steady]
        print(
            f"{name:<26}{spread([f.writable for f, _ in faults]):>14}{spread([f.first_ack for f, _ in faults]):>14}"
            f"{(f'{statistics.median(shares):.0%}' if shares else '-'):>19}{sum(f.lost for f, _ in faults):>6}"
            f"{sum(f.doubles for f, _ in faults):>8}{sum(f.delta['retried_after_500'] for f, _ in faults):>6}"
            f"{sum(f.delta['retried_after_503'] for f, _ in faults):>6}"
        )
    lost = sum(len(r.damage.lost) for r in rounds)
    acknowledged = sum(r.damage.acknowledged for r in rounds)
    print(
        f"total: {lost} of {acknowledged} acknowledged actions lost ({lost / max(acknowledged, 1):.3%}),"
        f" {sum(len(r.damage.doubles) for r in rounds)} seqs answered twice,"
        f" {sum(r.damage.matches_lost for r in rounds)} acknowledged matches gone,"
        f" {sum(r.counts['retried_after_500'] for r in rounds)} answers 500,"
        f" {sum(r.counts['retried_after_503'] for r in rounds)} answers 503;"
        f" rounds with a loss or a double: {sum(1 for r in rounds if r.damage.lost or r.damage.doubles)} of {len(rounds)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="whole runs, each on a fresh deployment (default 1)")
    parser.add_argument("--synchronous", action="store_true", help="Patroni's synchronous mode (default: asynchronous)")
    parser.add_argument("--clients", type=int, default=16, help="players playing at once (default 16)")
    parser.add_argument("--instances", type=int, default=3, help="service instances behind nginx (default 3)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance (default 2)")
    parser.add_argument("--pause", type=float, default=4.0, help="seconds of load after each fault (default 4)")
    args = parser.parse_args(argv)
    missing = available() or (None if nginx_binary() else "nginx is not installed")
    if missing:
        parser.error(missing)
    # `timeout` and the like: stop the deployment on the way out (its processes are in sessions of their own).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    print(
        f"{'synchronous' if args.synchronous else 'asynchronous'} replication, 3 PostgreSQL nodes (Patroni),"
        f" {args.instances} instances x {args.workers} workers behind nginx, {args.clients} clients,"
        f" {args.rounds} round(s); cores: {os.cpu_count()}",
        flush=True,
    )
    rounds = []
    for number in range(1, args.rounds + 1):
        rounds.append(run_round(number, args))
        print_round(rounds[-1], args)
    print_all(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
