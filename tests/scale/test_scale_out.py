"""Scale-out on this machine, for real: three `gin-rummy serve` instances behind nginx,
one PostgreSQL server of the tests' own, concurrent clients, races, and faults.

The tests run in order on one deployment (module-scoped fixtures) and each ends by
checking the whole database (checks.py): every stream gapless, every summary and
snapshot equal to the fold of the events, and every client answer accounted for once.

    python -m pytest tests/scale          # or -m scale; skipped where nginx is missing
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from service.store import find_idempotency_record

from .checks import check_all
from .client import Player, bearer, call, plays
from .cluster import gin_rummy
from .report import note

pytestmark = pytest.mark.scale

SEED = 20_251_130


def run_players(jobs, workers: int):
    """Run callables in threads; re-raise the first failure."""
    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(job) for job in jobs]
        for future in futures:
            future.result()


def lock_waiters(conn) -> int:
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchone()[0]


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def version_of(conn, match_id: str) -> int:
    return conn.execute("SELECT COALESCE(max(seq), 0) FROM events WHERE match_id = %s", (match_id,)).fetchone()[0]


# --- load and races ----------------------------------------------------------------------


def test_concurrent_matches_through_nginx_and_races_across_instances(cluster, ledger, routes):
    """Players play complete matches (both seats human) through nginx or straight at an
    instance; some of them send some actions to every instance at once, at the same
    version: exactly one wins, the others get a clean 409 or 412 problem."""
    started = time.monotonic()
    rng = random.Random(SEED)
    players = []
    matches_per_player = 3
    for n in range(8):
        direct = routes.instances[n % 3] if n in (1, 5) else None
        race = 0.3 if n % 2 == 0 else 0.0
        player = Player(ledger, routes, random.Random(rng.random()), direct=direct, race_probability=race)
        numbers = range(n * matches_per_player, (n + 1) * matches_per_player)
        players.append(lambda p=player, numbers=numbers: p.play_many(numbers))
    run_players(players, len(players))

    checked = check_all(cluster.database_url, ledger)
    counts = ledger.counts
    assert counts["matches_finished"] == 8 * matches_per_player
    assert counts["races"] >= 20, counts
    assert counts["race_refused_409"] + counts["race_refused_412"] == 2 * counts["races"]
    assert not ledger.slow_503, "503s without any fault"
    note(
        "load and races",
        matches_played=counts["matches_finished"],
        actions_applied=counts["actions"],
        races=counts["races"],
        race_losers_refused_409_conflict=counts["race_refused_409"],
        race_losers_refused_412_version_mismatch=counts["race_refused_412"],
        events_checked=checked["events"],
        snapshots_checked=checked["snapshots"],
        seconds=round(time.monotonic() - started, 1),
    )


# --- helpers for the faults ----------------------------------------------------------------


class Blocker:
    """Holds SHARE on idempotency_keys: every action sent with an Idempotency-Key then
    stops inside the statement that stores it, with its events inserted but not
    committed, at the insert of its answer; it goes on when this is released."""

    def __init__(self, url: str):
        self.conn = psycopg.connect(url)
        self.conn.execute("LOCK TABLE idempotency_keys IN SHARE MODE")

    def release(self):
        try:
            self.conn.rollback()
            self.conn.close()
        except psycopg.Error:
            pass  # the server went away with the lock


def turn(player: Player, match):
    """(seat to act, its view) of a match."""
    view = player.get(f"/matches/{match.id}", match.tokens[0])
    if view["turn"] != 0:
        view = player.get(f"/matches/{match.id}", match.tokens[view["turn"]])
    return view["turn"], view


class Background:
    """Players playing matches in threads until stopped."""

    def __init__(self, players_and_numbers):
        self.stop = threading.Event()
        self.pool = ThreadPoolExecutor(len(players_and_numbers))
        self.futures = [self.pool.submit(p.play_many, numbers, self.stop) for p, numbers in players_and_numbers]

    def finish(self):
        self.stop.set()
        try:
            for future in self.futures:
                future.result(timeout=120)
        finally:
            self.pool.shutdown(wait=False)


def players(ledger, routes, seed: int, count: int, first_number: int, direct: list[int | None], **options):
    rng = random.Random(seed)
    made = []
    for n in range(count):
        player = Player(ledger, routes, random.Random(rng.random()), direct=direct[n % len(direct)], **options)
        made.append((player, range(first_number + 1000 * n, first_number + 1000 * (n + 1))))
    return made


# --- (c) a retry after a client-side timeout ------------------------------------------------


def test_an_action_retried_after_a_client_timeout_is_applied_once(cluster, ledger, routes):
    """The client gives up waiting and sends the action again with the same key: after
    the first attempt committed, or while it is still held, or (played
    through whole matches) right away.  The stream holds the action once, and every
    answer is the first one."""
    url = cluster.database_url
    player = Player(ledger, routes, random.Random(SEED + 1))
    nginx = routes.nginx
    direct = routes.instances
    timeouts = 0

    def attempt(match, seat, action, version, key, port, timeout):
        headers = {**bearer(match.tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": key}
        return call(port, "POST", f"/matches/{match.id}/actions", action, headers, timeout=timeout)

    with psycopg.connect(url, autocommit=True) as watch:
        # 1. The first attempt is held past the client's timeout,
        #    then commits; the retry (through nginx) and another (straight at an
        #    instance) get its answer.
        match = player.create(9001)
        seat, view = turn(player, match)
        action, version, key = plays(view)[0], view["version"], f"timeout-{uuid.uuid4()}"
        blocker = Blocker(url)
        first = attempt(match, seat, action, version, key, nginx, timeout=0.5)
        assert first.status is None and "timed out" in first.error, first.describe()
        timeouts += 1
        wait_until(lambda: lock_waiters(watch) == 1, 10, "the first attempt to be held mid-transaction")
        blocker.release()
        wait_until(lambda: watch.execute("SELECT 1 FROM idempotency_keys WHERE key = %s", (key,)).fetchone(),
                   10, "the first attempt to commit")
        for port in (nginx, direct[1]):
            answer = attempt(match, seat, action, version, key, port, timeout=10)
            assert answer.status == 200 and answer.headers.get("idempotent-replayed") == "true", answer.describe()
            player.record(match, seat, key, answer)
        events = answer.json["events"]
        assert version_of(watch, match.id) == version + len(events)

        # 2. The retry comes while the first attempt is still held: both wait at the
        #    statement that stores an action with its answer.  Whichever goes first
        #    stores the action; the other fails on the version or the key and stores
        #    nothing.  So the retry answers 200, with the first one's answer or its own.
        seat, view = turn(player, match)
        action, version, key = plays(view)[0], view["version"], f"timeout-{uuid.uuid4()}"
        blocker = Blocker(url)
        first = attempt(match, seat, action, version, key, nginx, timeout=0.5)
        assert first.status is None, first.describe()
        timeouts += 1
        second: list = []
        retry = threading.Thread(target=lambda: second.append(attempt(match, seat, action, version, key, direct[2], 30)))
        retry.start()
        wait_until(lambda: lock_waiters(watch) == 2, 10, "the retry to wait for the first attempt")
        blocker.release()
        retry.join(30)
        (answer,) = second
        assert answer.status == 200, answer.describe()
        retry_replayed = answer.headers.get("idempotent-replayed") == "true"
        player.record(match, seat, key, answer)
        assert version_of(watch, match.id) == version + len(answer.json["events"])

    # 3. Whole matches in which every other action's first attempt is dropped as soon as
    #    it is sent (through nginx or straight at an instance), and sent again at once.
    jobs = players(ledger, routes, SEED + 2, 4, 9100, [None, direct[0]], drop_probability=0.5)
    before = ledger.counts["requests_dropped_by_the_client"]
    run_players([lambda p=p, numbers=numbers: p.play_many(list(numbers)[:2]) for p, numbers in jobs], len(jobs))
    dropped = ledger.counts["requests_dropped_by_the_client"] - before

    checked = check_all(cluster.database_url, ledger)
    counts = ledger.counts
    note(
        "(c) retries after a client-side timeout",
        held_past_the_timeout=timeouts,
        retry_while_the_first_was_held="got the first answer" if retry_replayed else "stored the action itself",
        dropped_right_after_sending_and_resent=dropped,
        retries_answered_409_while_the_first_attempt_was_in_flight=counts["retry_refused_409_while_first_attempt_in_flight"],
        retries_answered_412_while_the_first_attempt_was_in_flight=counts["retry_refused_412_while_first_attempt_in_flight"],
        replayed_answers_seen=counts["replays_seen"],
        events_checked=checked["events"],
    )


# --- (a) PostgreSQL stopped and restarted under load ------------------------------------------


def test_postgres_stopped_and_restarted_under_load(cluster, ledger, routes):
    """While PostgreSQL is down every request fails fast with 503 and Retry-After; what
    was in flight is rolled back whole; the instances recover on their own."""
    url = cluster.database_url
    ports = routes.instances + [routes.nginx]
    probe = Player(ledger, routes, random.Random(SEED + 3))
    match = probe.create(9200)
    seat, view = turn(probe, match)
    action, version, key = plays(view)[0], view["version"], f"pg-{uuid.uuid4()}"
    headers = {**bearer(match.tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": key}
    path = f"/matches/{match.id}/actions"

    load = Background(players(ledger, routes, SEED + 4, 6, 10_000, [None, routes.instances[0], None, routes.instances[2]]))
    try:
        time.sleep(2)
        # One action held in its transaction (with the load's) when the server stops.
        blocker = Blocker(url)
        held: list = []
        request = threading.Thread(target=lambda: held.append(call(routes.instances[1], "POST", path, action, headers)))
        request.start()
        with psycopg.connect(url, autocommit=True) as watch:
            wait_until(lambda: lock_waiters(watch) >= 1, 10, "the action to be held")
            time.sleep(0.3)
            in_flight = lock_waiters(watch)
        stopped_at = time.monotonic()
        cluster.postgres.stop("fast")
        down_after = time.monotonic() - stopped_at
        blocker.release()
        request.join(30)
        (answer,) = held
        # Rolled back whole (503), or committed just before its backend was stopped.
        if answer.status == 200:
            probe.record(match, seat, key, answer)
            held_outcome = "committed before the stop, then replayed"
        else:
            assert answer.status == 503 and answer.code == "database_unavailable", answer.describe()
            assert answer.headers.get("retry-after"), answer.headers
            held_outcome = "rolled back (503), then applied by its retry"

        # While it is down: 503 with Retry-After, fast, from every instance and nginx,
        # for reads, actions and the readiness check alike.
        probes = []
        for port in ports:
            probes += [
                (port, "GET", f"/matches/{match.id}", None, bearer(match.tokens[seat])),
                (port, "POST", path, action, headers),
                (port, "GET", "/health", None, {}),
            ]
        answers = []
        for _ in range(2):
            with ThreadPoolExecutor(len(probes)) as pool:
                answers += list(pool.map(lambda args: call(*args), probes))
        for got in answers:
            assert got.status == 503 and got.headers.get("retry-after"), got.describe()
        assert all(got.code == "database_unavailable" for got in answers if got.content_type == "application/problem+json")
        slowest = max(got.elapsed for got in answers)
        assert slowest < 3.0, f"a request took {slowest:.1f}s to fail while the database was down"
        time.sleep(max(0.0, 3 - (time.monotonic() - stopped_at)))
        downtime = time.monotonic() - stopped_at

        cluster.postgres.start()
        started_at = time.monotonic()
        recovered: dict[int, float] = {}
        after_restart = 0
        while len(recovered) < len(ports):
            assert time.monotonic() - started_at < 20, f"not recovered 20s after the restart: {recovered}"
            for port in ports:
                if port in recovered:
                    continue
                got = call(port, "GET", f"/matches/{match.id}", headers=bearer(match.tokens[seat]))
                if got.status == 200:
                    recovered[port] = time.monotonic() - started_at
                else:
                    assert got.status == 503 and got.headers.get("retry-after"), got.describe()
                    after_restart += 1
            time.sleep(0.05)
        # Retried with its key, the held action is applied once: now, or replayed.
        # (A 503 after a commit whose acknowledgement the stop cut off is answered by
        # the retry's replay; the ledger's check below holds either way.)
        committed = answer.status == 200
        if answer.status == 503:
            committed = probe.get(f"/matches/{match.id}", match.tokens[seat])["version"] != version
        probe.act(match, seat, action, version, key=key)
        replayed = probe.last_answer.headers.get("idempotent-replayed") == "true"
        assert replayed == committed, probe.last_answer.describe()
        time.sleep(2)  # the load goes on
    finally:
        if not cluster.postgres.running():
            cluster.postgres.start()
        load.finish()

    checked = check_all(url, ledger)
    note(
        "(a) PostgreSQL stopped (pg_ctl stop -m fast) and restarted under load",
        actions_held_in_their_transaction_at_the_stop=in_flight,
        the_tests_held_action=held_outcome,
        seconds_to_stop=round(down_after, 2),
        seconds_down=round(downtime, 2),
        probes_answered_503_with_retry_after=len(answers),
        slowest_503_seconds=round(slowest, 2),
        players_503_answers=len(ledger.slow_503),
        players_slowest_503_seconds=round(max(ledger.slow_503, default=0), 2),
        requests_answered_503_after_the_restart=after_restart,
        seconds_to_recover_per_port=[round(recovered[p], 2) for p in ports],
        events_checked=checked["events"],
    )


def test_a_retry_racing_its_first_attempt_gets_the_first_answer(cluster, ledger, routes):
    """Resent at once after the first attempt was dropped, an action must get the
    first answer (or be applied by the retry), never a refusal."""
    jobs = players(ledger, routes, SEED + 5, 4, 9300, [None, routes.instances[1]], drop_probability=1.0)
    names = [f"retry_refused_{s}_while_first_attempt_in_flight" for s in (409, 412)]
    before = sum(ledger.counts[n] for n in names)
    run_players([lambda p=p, numbers=numbers: p.play_many(list(numbers)[:1]) for p, numbers in jobs], len(jobs))
    refused = sum(ledger.counts[n] for n in names) - before
    check_all(cluster.database_url, ledger)
    assert refused == 0, f"{refused} retries with the first attempt's Idempotency-Key were refused 409/412"


# --- (b) an instance killed mid-request ----------------------------------------------------


def test_an_instance_killed_mid_request(cluster, ledger, routes):
    """SIGKILL of an instance (master and workers) while actions are inside their
    statements on it: each is written whole or not at all (one statement stores an
    action's events, summary and answer; PostgreSQL may finish it after its client
    died), their clients retry with their keys and are answered once, nginx keeps
    serving from the other two, and the instance comes back."""
    url = cluster.database_url
    victim = cluster.instances[1]
    probe = Player(ledger, routes, random.Random(SEED + 6))
    match = probe.create(9400)
    seat, view = turn(probe, match)
    action, version, key = plays(view)[0], view["version"], f"kill-{uuid.uuid4()}"
    headers = {**bearer(match.tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": key}
    before = dict(ledger.counts)

    load = Background(players(ledger, routes, SEED + 7, 6, 20_000, [victim.port, None]))
    try:
        time.sleep(2)
        blocker = Blocker(url)
        held: list = []
        request = threading.Thread(
            target=lambda: held.append(call(victim.port, "POST", f"/matches/{match.id}/actions", action, headers))
        )
        request.start()
        with psycopg.connect(url, autocommit=True) as watch:

            def held_on_victim() -> int:
                return watch.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND client_port = ANY(%s)",
                    (sorted(victim.database_client_ports(cluster.postgres.port)),),
                ).fetchone()[0]

            wait_until(lambda: held_on_victim() >= 1, 10, "actions to be held on the instance")
            time.sleep(0.3)
            in_flight = lock_waiters(watch)
            on_victim = held_on_victim()
            victim.kill()
            routes.mark_down(victim.port)
            killed_at = time.monotonic()
            blocker.release()
            request.join(30)
            (answer,) = held
            assert answer.status is None, f"the killed instance answered: {answer.describe()}"
            # The held action's statement either died with its instance or finished
            # after it: then its events and its answer are there together.
            time.sleep(0.5)
            written = version_of(watch, match.id) != version
            stored_answer = find_idempotency_record(watch, uuid.UUID(match.id), f"seat:{seat}", key)
            assert (stored_answer is not None) == written
        probe.act(match, seat, action, version, key=key)
        assert (probe.last_answer.headers.get("idempotent-replayed") == "true") == written

        # nginx serves from the other two: reads are passed on, actions retried by clients.
        time.sleep(2)
        burst = [call(routes.nginx, "GET", f"/matches/{match.id}", headers=bearer(match.tokens[0])) for _ in range(30)]
        assert all(a.status == 200 for a in burst), [a.describe() for a in burst if a.status != 200]

        victim.start()
        victim.wait_ready()
        restarted_after = time.monotonic() - killed_at
        routes.mark_up(victim.port)
        assert call(victim.port, "GET", f"/matches/{match.id}", headers=bearer(match.tokens[0])).status == 200
        time.sleep(2)
    finally:
        if not victim.alive():
            victim.start()
            victim.wait_ready()
            routes.mark_up(victim.port)
        load.finish()

    checked = check_all(url, ledger)
    delta = {k: ledger.counts[k] - before.get(k, 0) for k in ledger.counts}
    passed_on = Counter(line.split()[0] for line in cluster.nginx.passed_on())
    note(
        "(b) an instance SIGKILLed mid-request under load",
        actions_held_in_their_statement_at_the_kill=f"{on_victim} on the killed instance, {in_flight} in all",
        the_tests_held_action="finished after the kill, then replayed" if written else "died with the instance, then applied by its retry",
        requests_left_without_answer_then_retried=delta.get("retried_after_no_answer", 0),
        nginx_502_then_retried=delta.get("retried_after_502", 0),
        actions_applied_meanwhile=delta.get("actions", 0),
        reads_through_nginx_after_the_kill_all_200=len(burst),
        requests_nginx_passed_to_another_instance=dict(passed_on),
        seconds_from_the_kill_until_the_restarted_instance_was_ready=round(restarted_after, 2),
        events_checked=checked["events"],
    )


# --- the read models and the totals ------------------------------------------------------------


def test_read_models_rebuilt_from_the_events_equal_the_ones_written_under_load(cluster, ledger):
    url = cluster.database_url
    query = "SELECT * FROM match_summaries ORDER BY match_id"
    with psycopg.connect(url, autocommit=True) as conn:
        written = conn.execute(query).fetchall()
    rebuilt = gin_rummy("projections", "rebuild", database_url=url)
    assert rebuilt.returncode == 0, rebuilt.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(query).fetchall() == written
    checked = check_all(url, ledger)

    counts = ledger.counts
    note(
        "totals",
        matches_created=counts["matches_created"],
        matches_played_to_the_end=counts["matches_finished"],
        actions_applied=counts["actions"],
        races=counts["races"],
        race_losers_refused=counts["race_refused_409"] + counts["race_refused_412"],
        faults_injected=(
            "1 PostgreSQL stop/restart, 1 instance SIGKILL, "
            f"{counts['requests_dropped_by_the_client'] + 2} actions abandoned by their client (timeout) and resent"
        ),
        streams_checked_gapless=checked["matches"],
        events=checked["events"],
        summaries_equal_to_folds_and_to_a_rebuild=len(written),
        snapshots_equal_to_folds=checked["snapshots"],
    )
