"""Clients of the deployment: HTTP calls with http.client, players that play matches
through nginx or straight at an instance, races, and a ledger of every answer.

A player sends each action once with a fresh Idempotency-Key and If-Match, and when the
outcome is unknown (a transport error, 502/504 from nginx) or nothing was done (503),
sends it again with the same key until it gets a definite answer.  The ledger keeps,
for each match, the seqs each applied key's answer carried: the checks then require
that these and the creation's seqs cover the stream exactly once.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.api.conftest import plays

LOOPBACK = "127.0.0.1"
PROBLEM_JSON = "application/problem+json"

PRESETS = ("classic", "short-stock", "upcard-offer", "bonus-20-10")


# --- HTTP ------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int | None  # None: no answer (the connection failed or timed out)
    headers: dict[str, str]
    body: bytes
    elapsed: float
    error: str | None = None

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    @property
    def code(self) -> str | None:
        if self.content_type == PROBLEM_JSON:
            return self.json.get("code")
        return None

    def describe(self) -> str:
        if self.status is None:
            return f"no answer ({self.error})"
        return f"{self.status} {self.body[:300]!r}"


def call(port: int, method: str, path: str, body: Any = None, headers: dict | None = None, timeout: float = 30.0) -> Answer:
    """One request on a connection of its own; transport failures are an Answer too."""
    sent = {"Connection": "close", **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        sent["Content-Type"] = "application/json"
    started = time.monotonic()
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        payload = response.read()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, payload, time.monotonic() - started
        )
    except (OSError, http.client.HTTPException) as exc:
        return Answer(None, {}, b"", time.monotonic() - started, f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def send_and_drop(port: int, method: str, path: str, body: Any = None, headers: dict | None = None) -> None:
    """Send a whole request, then close the connection without reading the answer: a
    client that gave up waiting (the server may or may not act on it)."""
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=5)
    try:
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                     headers={"Content-Type": "application/json", **(headers or {})})
        conn.sock.shutdown(2)
    except (OSError, http.client.HTTPException):
        pass
    finally:
        conn.close()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


# --- the ledger ------------------------------------------------------------------------


@dataclass
class Applied:
    seat: int
    key: str
    seqs: tuple[int, ...]
    body: dict
    replayed: bool


@dataclass
class MatchRecord:
    id: str
    tokens: dict[int, str]
    created_version: int
    body: dict
    applied: dict[str, Applied] = field(default_factory=dict)
    refused_keys: set[str] = field(default_factory=set)
    final_version: int = 0
    finished: bool = False


class Ledger:
    """What the clients saw, shared by their threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.matches: dict[str, MatchRecord] = {}
        self.counts: Counter = Counter()
        self.slow_503: list[float] = []  # elapsed of 503 answers

    def count(self, name: str, n: int = 1):
        with self.lock:
            self.counts[name] += n

    def add_match(self, record: MatchRecord):
        with self.lock:
            self.matches[record.id] = record

    def applied(self, match: MatchRecord, applied: Applied):
        with self.lock:
            known = match.applied.get(applied.key)
            if known is not None:
                # A second answer for one key: it must be the first one, replayed.
                assert applied.replayed, f"key {applied.key} applied twice in {match.id}"
                assert (known.seqs, known.body) == (applied.seqs, applied.body), f"replay of {applied.key} differs"
                self.counts["replays_seen"] += 1
                return
            match.applied[applied.key] = applied
            self.counts["actions"] += 1
            if applied.replayed:
                self.counts["replays_seen"] += 1


class Failure(AssertionError):
    pass


# --- routes ----------------------------------------------------------------------------


class Routes:
    """Where a client sends requests: nginx's port and each instance's, and which are up."""

    def __init__(self, nginx_port: int, instance_ports: list[int]):
        self.nginx = nginx_port
        self.instances = list(instance_ports)
        self.down: set[int] = set()
        self.lock = threading.Lock()

    def alive_instances(self) -> list[int]:
        with self.lock:
            return [p for p in self.instances if p not in self.down]

    def mark_down(self, port: int):
        with self.lock:
            self.down.add(port)

    def mark_up(self, port: int):
        with self.lock:
            self.down.discard(port)


# --- players ---------------------------------------------------------------------------

RETRYABLE = {502, 503, 504}


def choose(view: dict, rng: random.Random) -> dict:
    """Mostly greedy (hands end soon), sometimes random."""
    actions = plays(view)
    enders = [a for a in actions if a["type"] in ("gin", "knock")]
    if enders and rng.random() < 0.9:
        return rng.choice(enders)
    discards = [a for a in actions if a["type"] == "discard"]
    if discards:
        if rng.random() < 0.8:
            return min(discards, key=lambda a: view["discard_deadwood"][a["card"]])
        return rng.choice(discards)
    return rng.choice(actions)


def match_spec(rng: random.Random, n: int) -> dict:
    preset = PRESETS[n % len(PRESETS)]
    rules: dict[str, Any] = {"preset": preset}
    spec: dict[str, Any] = {"seats": [{"name": f"Ann {n}"}, {"name": f"Bob {n}"}], "rules": rules}
    if n % 5 == 4:
        rules["target_score"] = rng.choice([15, 20, 25])  # a few hands: snapshots, summaries
    else:
        spec["single_hand"] = True
    return spec


class Player:
    """Plays matches for both seats of each; thread-confined."""

    def __init__(self, ledger: Ledger, routes: Routes, rng: random.Random, *, direct: int | None = None,
                 race_probability: float = 0.0, drop_probability: float = 0.0, deadline: float = 90.0,
                 lenient: bool = False):
        self.ledger = ledger
        self.routes = routes
        self.rng = rng
        self.direct = direct  # an instance port to use instead of nginx while it is up
        self.race_probability = race_probability
        self.drop_probability = drop_probability  # of abandoning an action's first attempt
        self.last_answer: Answer | None = None
        self.deadline = deadline  # most seconds one request may keep failing
        # Count instead of failing (benchmarks/failover.py, where an asynchronous failover
        # may lose what was acknowledged): a 500 is sent again like a 503, its outcome
        # unknown; any other unexpected answer to an action (a refusal that lasts, after
        # a lost commit) is counted and the match's view read again; a match that cannot
        # go on (it was lost with its creation) is counted and left for the next one.
        self.lenient = lenient

    # Requests ------------------------------------------------------------------

    def port(self) -> int:
        if self.direct is not None and self.direct in self.routes.alive_instances():
            return self.direct
        return self.routes.nginx

    def retryable(self, answer: Answer) -> bool:
        return answer.status is None or answer.status in RETRYABLE or (self.lenient and answer.status == 500)

    def _pause(self, answer: Answer):
        self.ledger.count(f"retried_after_{answer.status or 'no_answer'}")
        if answer.status == 503:
            assert answer.headers.get("retry-after"), f"503 without Retry-After: {answer.describe()}"
            assert answer.code == "database_unavailable", answer.describe()
            with self.ledger.lock:
                self.ledger.slow_503.append(answer.elapsed)
        time.sleep(0.1 + self.rng.random() * 0.2)

    def get(self, path: str, token: str) -> dict:
        started = time.monotonic()
        while True:
            answer = call(self.port(), "GET", path, headers=bearer(token))
            if answer.status == 200:
                return answer.json
            if self.retryable(answer):
                if time.monotonic() - started > self.deadline:
                    raise Failure(f"GET {path} kept failing: {answer.describe()}")
                self._pause(answer)
                continue
            raise Failure(f"GET {path}: {answer.describe()}")

    def create(self, n: int) -> MatchRecord:
        spec = match_spec(self.rng, n)
        started = time.monotonic()
        while True:
            answer = call(self.port(), "POST", "/matches", spec)
            if answer.status == 201:
                body = answer.json
                tokens = {s["seat"]: s["token"] for s in body["seats"]}
                record = MatchRecord(body["id"], tokens, body["version"], body)
                record.final_version = body["version"]
                self.ledger.add_match(record)
                self.ledger.count("matches_created")
                return record
            if self.retryable(answer):
                # Creating is not idempotent: a lost answer may leave a match nobody
                # plays.  The stream checks cover it all the same.
                if answer.status != 503:
                    self.ledger.count("creations_with_unknown_outcome")
                if time.monotonic() - started > self.deadline:
                    raise Failure(f"POST /matches kept failing: {answer.describe()}")
                self._pause(answer)
                continue
            raise Failure(f"POST /matches: {answer.describe()}")

    def act(self, match: MatchRecord, seat: int, action: dict, version: int, key: str | None = None,
            port: int | None = None, drop_first: bool = False) -> dict:
        """Send one action until it has a definite answer; returns the new view.

        ``drop_first``: the first attempt is abandoned once sent (a client-side
        timeout), and the action sent again with the same key."""
        key = key or f"k-{uuid.uuid4()}"
        headers = {**bearer(match.tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": key}
        path = f"/matches/{match.id}/actions"
        uncertain = False  # an earlier attempt may have been applied
        if drop_first:
            send_and_drop(port or self.port(), "POST", path, action, headers)
            self.ledger.count("requests_dropped_by_the_client")
            uncertain = True
        started = time.monotonic()
        refused = 0  # answers 409/412 while an earlier attempt may be in flight
        while True:
            answer = call(port or self.port(), "POST", path, action, headers)
            port = None  # retries go where the player's route says
            if answer.status == 200:
                self.record(match, seat, key, answer)
                return answer.json["view"]
            if self.retryable(answer):
                if answer.status != 503:
                    uncertain = True
                if time.monotonic() - started > self.deadline:
                    raise Failure(f"action {action} in {match.id} kept failing: {answer.describe()}")
                self._pause(answer)
                continue
            if answer.status in (409, 412) and uncertain and answer.code in ("conflict", "version_mismatch") and not (
                self.lenient and refused >= 40
            ):
                # The first attempt may still be committing: the retry then races it.
                # Sent again, the key finds the first answer.
                refused += 1
                self.ledger.count(f"retry_refused_{answer.status}_while_first_attempt_in_flight")
                time.sleep(0.05)
                continue
            if answer.status == 429:
                self.ledger.count("rate_limited")
                time.sleep(float(answer.headers.get("retry-after", "1")))
                continue
            if self.lenient:
                self.ledger.count(f"unexpected_{answer.status}_{answer.code}_to_an_action")
                return self.get(f"/matches/{match.id}", match.tokens[seat])
            raise Failure(f"action {action} at version {version} in {match.id}: {answer.describe()}")

    def record(self, match: MatchRecord, seat: int, key: str, answer: Answer):
        body = answer.json
        seqs = tuple(e["seq"] for e in body["events"])
        replayed = answer.headers.get("idempotent-replayed") == "true"
        self.last_answer = answer
        assert answer.headers.get("etag") == f'"{body["view"]["version"]}"', answer.headers
        assert seqs and seqs[-1] == body["view"]["version"], (seqs, body["view"]["version"])
        self.ledger.applied(match, Applied(seat, key, seqs, body, replayed))

    # Races ---------------------------------------------------------------------

    def race(self, match: MatchRecord, seat: int, action: dict, version: int, ports: list[int]) -> dict:
        """The same action at the same version sent at once to several instances, each
        with its own Idempotency-Key: exactly one may win."""
        barrier = threading.Barrier(len(ports))
        answers: list[Answer | None] = [None] * len(ports)
        keys = [f"race-{uuid.uuid4()}" for _ in ports]

        def send(i: int, port: int):
            headers = {
                **bearer(match.tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": keys[i],
                "Content-Type": "application/json", "Connection": "close",
            }
            data = json.dumps(action).encode()
            conn = http.client.HTTPConnection(LOOPBACK, port, timeout=30)
            started = time.monotonic()
            try:
                conn.connect()
                barrier.wait(5)
                conn.request("POST", f"/matches/{match.id}/actions", body=data, headers=headers)
                response = conn.getresponse()
                answers[i] = Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                                    response.read(), time.monotonic() - started)
            except (OSError, http.client.HTTPException, threading.BrokenBarrierError) as exc:
                answers[i] = Answer(None, {}, b"", time.monotonic() - started, f"{type(exc).__name__}: {exc}")
            finally:
                conn.close()

        threads = [threading.Thread(target=send, args=(i, p)) for i, p in enumerate(ports)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, a in enumerate(answers) if a.status == 200]
        self.ledger.count("races")
        assert len(winners) == 1, f"race at version {version} in {match.id}: {[a.describe() for a in answers]}"
        for i, answer in enumerate(answers):
            if i in winners:
                continue
            assert answer.status in (409, 412), f"race loser: {answer.describe()}"
            assert answer.content_type == PROBLEM_JSON, answer.headers
            problem = answer.json
            assert problem["status"] == answer.status and problem["detail"], problem
            expected = "conflict" if answer.status == 409 else "version_mismatch"
            assert problem["code"] == expected, problem
            if answer.status == 412:
                assert problem["current_version"] > version, problem
            self.ledger.count(f"race_refused_{answer.status}")
            with self.ledger.lock:
                match.refused_keys.add(keys[i])
        (win,) = winners
        assert answers[win].headers.get("idempotent-replayed") is None
        self.record(match, seat, keys[win], answers[win])
        return answers[win].json["view"]

    # Playing -------------------------------------------------------------------

    def play(self, match: MatchRecord, stop: threading.Event | None = None, max_actions: int = 10_000) -> None:
        view = match.body["view"]
        token_of = match.tokens
        for _ in range(max_actions):
            if view["status"] == "finished":
                match.finished = True
                self.ledger.count("matches_finished")
                return
            if stop is not None and stop.is_set():
                return
            seat = view["turn"]
            if view["seat"] != seat or not plays(view):
                view = self.get(f"/matches/{match.id}", token_of[seat])
                continue
            action = choose(view, self.rng)
            version = view["version"]
            ports = self.routes.alive_instances()
            if self.race_probability and len(ports) >= 2 and self.rng.random() < self.race_probability:
                view = self.race(match, seat, action, version, ports)
            else:
                drop = bool(self.drop_probability) and self.rng.random() < self.drop_probability
                view = self.act(match, seat, action, version, drop_first=drop)
            match.final_version = max(match.final_version, view["version"])
        raise Failure(f"match {match.id} did not end in {max_actions} actions")

    def play_many(self, numbers, stop: threading.Event | None = None):
        for n in numbers:
            if stop is not None and stop.is_set():
                return
            try:
                self.play(self.create(n), stop)
            except Failure:
                if not self.lenient:
                    raise
                self.ledger.count("matches_left_after_a_failure")
