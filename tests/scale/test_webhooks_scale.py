"""Webhooks on a real deployment: two `gin-rummy serve` instances behind nginx, one
PostgreSQL, and a receiver on loopback that verifies every delivery with the
``standardwebhooks`` library.  While 50 matches between players are played, each
instance is killed (SIGKILL: no exit handler, deliveries cut off mid-send) and
restarted, and the receiver answers 500 for a while: after dedupe by ``webhook-id`` it
has every ``your_move`` of the 50 matches exactly once, each signed.

    python -m pytest tests/scale/test_webhooks_scale.py   # skipped where nginx is missing
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from service.engine.game import evolve
from service.engine.state import DEFENSE, DISCARD, DRAW, UPCARD_OFFER, State
from tests.support.webhooks import SECRET, Receiver

from .client import RETRYABLE, bearer, call, choose
from .cluster import OPERATOR_TOKEN, Cluster, nginx_binary, wait_for
from .report import note
from .test_matchmaking_scale import make_players

pytestmark = pytest.mark.scale

MATCHES = 50
MOVES = 14  # at most, per match
PACE = 0.25  # seconds a player thinks: the play outlasts both kills and restarts
MOVE_PHASES = {UPCARD_OFFER, DRAW, DISCARD, DEFENSE}
UNLIMITED = {
    "GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off", "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off",
    "GIN_RUMMY_INVITES_PER_ADDRESS": "off", "GIN_RUMMY_GUESTS_PER_ADDRESS": "off",
}


@pytest.fixture(scope="module")
def receiver():
    failing = threading.Event()
    with Receiver(status=lambda: 500 if failing.is_set() else 200) as made:
        made.failing = failing
        yield made


@pytest.fixture(scope="module")
def deployment(receiver):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx): the scale-out tests put it in front of the instances")
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-hooks-"))
    folder.chmod(0o755)
    cluster = Cluster(folder, instances=2)
    hooks = json.dumps([{"url": receiver.url, "secret": SECRET, "kinds": ["your_move"]}])
    for instance in cluster.instances:
        instance.env = {
            **UNLIMITED, "GIN_RUMMY_WEBHOOKS": hooks, "GIN_RUMMY_WEBHOOK_FIRST_RETRY_SECONDS": "0.2",
            "GIN_RUMMY_WEBHOOK_TIMEOUT_SECONDS": "6", "GIN_RUMMY_WEBHOOK_POLL_SECONDS": "0.2",
        }
    try:
        cluster.start()
    except BaseException:
        logs = cluster.logs()
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"the deployment did not start:\n{logs}") from None
    yield cluster
    cluster.stop()
    shutil.rmtree(folder, ignore_errors=True)


def sure(port: int, method: str, path: str, body=None, headers=None, key: str | None = None):
    """Send until a definite answer, with one Idempotency-Key for a POST (an instance may
    die under it); the answer."""
    headers = {**(headers or {}), **({"Idempotency-Key": key} if key else {})}
    deadline = time.monotonic() + 90
    while True:
        answer = call(port, method, path, body, headers)
        if answer.status is not None and answer.status not in RETRYABLE:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"{method} {path}: {answer.describe()}")
        time.sleep(0.2)


def make_match(port: int, a: dict, b: dict) -> dict:
    created = sure(port, "POST", "/matches", {
        "seats": [{"kind": "human"}, {"kind": "open"}], "rules": {"turn_seconds": 600}, "single_hand": True,
    }, bearer(a["token"]), key=str(uuid.uuid4()))
    assert created.status == 201, created.describe()
    match = created.json
    joined = sure(port, "POST", f"/matches/{match['id']}/join", {"code": match["invite"]["code"]}, bearer(b["token"]), key=str(uuid.uuid4()))
    assert joined.status == 201, joined.describe()
    return {"id": match["id"], "tokens": {0: match["seats"][0]["token"], 1: joined.json["token"]}}


def play(port: int, match: dict, rng: random.Random, progress) -> None:
    for _ in range(MOVES):
        view = None
        for seat in (0, 1):
            seen = sure(port, "GET", f"/matches/{match['id']}", headers=bearer(match["tokens"][seat]))
            assert seen.status == 200, seen.describe()
            if seen.json.get("turn") == seat and seen.json.get("status") == "active":
                view = seen.json
                break
        if view is None or not [a for a in view["legal_actions"] if a["type"] not in ("resign", "claim_timeout", "abort")]:
            return
        action = choose(view, rng)
        headers = {**bearer(match["tokens"][view["turn"]]), "If-Match": f'"{view["version"]}"'}
        done = sure(port, "POST", f"/matches/{match['id']}/actions", action, headers, key=str(uuid.uuid4()))
        assert done.status in (200, 409, 412), done.describe()  # 409/412: a retry's race with itself
        progress()
        time.sleep(PACE)


class Progress:
    """Counts the actions played, from every thread."""

    def __init__(self):
        self.done = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.done += 1


def play_all(port: int, matches: list[dict], seed: int, progress: Progress) -> None:
    """Play every match to its end (or MOVES moves), eight at a time."""
    rng = random.Random(seed)
    seeds = [rng.random() for _ in matches]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda pair: play(port, pair[0], random.Random(pair[1]), progress), zip(matches, seeds)))


def expected_moves(database_url: str, match_ids: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Per match, from its events by the rules alone: each time the turn passes to a
    seat to move, (the seat, the hand)."""
    moves: dict[str, list[tuple[int, int]]] = {}
    with psycopg.connect(database_url) as conn:
        for match_id in match_ids:
            state, key, turns = State(), (None,), []
            events = conn.execute("SELECT type, data FROM events WHERE match_id = %s ORDER BY seq", (match_id,)).fetchall()
            for kind, data in events:
                state = evolve(state, {"type": kind, "data": data})
                now = (state.turn, state.hand_number) if state.phase in MOVE_PHASES and state.turn is not None else (None,)
                if now != key and now != (None,):
                    turns.append(now)
                key = now
            moves[match_id] = turns
    return moves


def check_your_moves(database_url: str, receiver: Receiver, ids: list[str]) -> tuple[int, list[dict], dict]:
    """Wait until the receiver has a ``your_move`` for every turn of the matches ``ids``
    (the rules say which, from their events), then check each came once after dedupe by
    ``webhook-id``, signed, in order; (owed, every delivery, the accepted by id)."""
    expected = expected_moves(database_url, ids)
    owed = sum(len(turns) for turns in expected.values())

    def arrived():
        got = receiver.accepted()
        return sum(1 for each in got.values() if each["payload"]["data"]["match"] in expected) >= owed

    wait_for(arrived, 120, f"{owed} your_move webhooks", interval=0.5)
    time.sleep(1.0)  # anything still arriving would be a double of one received: it is deduplicated below
    everything = [each for each in receiver.got() if each["payload"]["data"]["match"] in expected]
    assert everything and all(each["verified"] for each in everything), "every delivery's signature verifies"
    accepted = {wid: each for wid, each in receiver.accepted().items() if each["payload"]["data"]["match"] in expected}
    got: dict[str, list[tuple[int, int, int]]] = {}
    for each in accepted.values():
        data = each["payload"]["data"]
        assert each["payload"]["type"] == data["kind"] == "your_move"
        got.setdefault(data["match"], []).append((int(data["id"]), data["seat"], data["hand"]))
    for match_id, turns in expected.items():
        sent = [(seat, hand) for _, seat, hand in sorted(got.get(match_id, []))]
        assert sent == turns, f"match {match_id}: sent {sent}, the rules say {turns}"
    return owed, everything, accepted


def test_every_your_move_of_50_matches_arrives_once_through_kills_and_a_failing_receiver(deployment, receiver):
    port = deployment.nginx.port
    players = make_players(deployment.database_url, 2 * MATCHES, "H")
    with ThreadPoolExecutor(8) as pool:
        matches = list(pool.map(lambda i: make_match(port, players[2 * i], players[2 * i + 1]), range(MATCHES)))

    progress = Progress()
    killed = []

    def chaos():
        """Kill each instance in turn once the play is under way, and fail the receiver
        around the first kill."""
        at = 60
        for victim in deployment.instances:
            wait_for(lambda at=at: progress.done >= at, 300, f"{at} actions")
            if victim is deployment.instances[0]:
                receiver.failing.set()
            victim.kill()
            killed.append((victim.name, progress.done))
            time.sleep(1.0)
            victim.start()
            victim.wait_ready()
            if receiver.failing.is_set():
                time.sleep(2.0)
                receiver.failing.clear()
            at = progress.done + 60

    killer = threading.Thread(target=chaos, daemon=True)
    killer.start()
    play_all(port, matches, 20261202, progress)
    played = progress.done
    killer.join(300)
    assert len(killed) == 2 and killed[-1][1] < played, f"the play ended ({played} actions) before both kills: {killed}"

    ids = [m["id"] for m in matches]
    owed, everything, accepted = check_your_moves(deployment.database_url, receiver, ids)
    refused = [each for each in everything if each["answered"] == 500]
    assert refused, "the receiver answered 500 to some deliveries, which were retried"
    assert {each["id"] for each in refused} <= set(accepted)
    note(
        "webhooks through two SIGKILLs and a failing receiver",
        matches=MATCHES, actions=progress.done, kills=", ".join(f"{name} after {at} actions" for name, at in killed),
        your_moves_owed=owed, deliveries_received=len(everything), answered_500=len(refused),
        duplicates_dropped=len(everything) - len(refused) - len(accepted),
    )


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def test_an_actions_latency_does_not_wait_for_a_receiver_that_takes_5_seconds(deployment):
    port = deployment.nginx.port
    players = make_players(deployment.database_url, 16, "L")
    matches = [make_match(port, players[2 * i], players[2 * i + 1]) for i in range(8)]
    operator = bearer(OPERATOR_TOKEN)
    timings: dict[str, list[float]] = {"without": [], "with a 5 s receiver": []}

    def act(match: dict, rng: random.Random, into: list[float], count: int) -> None:
        for _ in range(count):
            seen = [sure(port, "GET", f"/matches/{match['id']}", headers=bearer(match["tokens"][seat])) for seat in (0, 1)]
            view = next((s.json for s in seen if s.json["turn"] == s.json["seat"] and s.json["status"] == "active"), None)
            if view is None:
                return  # the hand is over
            headers = {**bearer(match["tokens"][view["seat"]]), "If-Match": f'"{view["version"]}"', "Idempotency-Key": str(uuid.uuid4())}
            answer = call(port, "POST", f"/matches/{match['id']}/actions", choose(view, rng), headers)
            assert answer.status == 200, answer.describe()
            into.append(answer.elapsed)

    with Receiver(delay=5.0) as slow:
        for round_ in range(4):
            kind = "with a 5 s receiver" if round_ % 2 else "without"
            endpoint = None
            if round_ % 2:
                endpoint = call(port, "POST", "/webhooks", {"url": slow.url, "kinds": ["your_move"], "secret": SECRET}, operator).json
            fresh = [make_match(port, players[2 * i], players[2 * i + 1]) for i in range(8)] if round_ else matches
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda m, into=timings[kind]: act(m, random.Random(m["id"]), into, 6), fresh))
            if endpoint is not None:
                assert call(port, "DELETE", f"/webhooks/{endpoint['id']}", headers=operator).status == 200
        assert slow.arrived, "the slow receiver was sent deliveries while the actions were timed"
    quick, held = p99(timings["without"]), p99(timings["with a 5 s receiver"])
    note(
        "action latency with a receiver taking 5 s",
        actions_timed={k: len(v) for k, v in timings.items()},
        p99_ms_without=round(quick * 1000, 1), p99_ms_with_5s_receiver=round(held * 1000, 1), ratio=round(held / quick, 2),
    )
    assert held < 5.0 and held <= 2 * quick + 0.05, (quick, held)
