"""Matchmaking on three `gin-rummy serve` instances behind nginx, one database: players
posting and polling tickets through nginx and straight at each instance are paired
exactly once each, and a cancel racing a pairing on another instance ends one way.

    python -m pytest tests/scale/test_matchmaking_scale.py   # skipped where nginx is missing
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

from service.application import tokens

from .client import bearer, call
from .report import note

pytestmark = pytest.mark.scale

PLAYERS = 200


def make_players(database_url: str, count: int, prefix: str) -> list[dict]:
    """Players written straight into the database (the guests' limit per address
    would refuse a crowd from one machine)."""
    made = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        for i in range(count):
            player_id = uuid.uuid4()
            token = tokens.player_token(player_id)
            conn.execute(
                "INSERT INTO players (id, name, token_hash) VALUES (%s, %s, %s)",
                (player_id, f"{prefix}{i}", tokens.hash_token(token)),
            )
            made.append({"id": str(player_id), "token": token})
    return made


def test_players_racing_through_nginx_and_every_instance_are_each_paired_once(cluster, routes):
    players = make_players(cluster.database_url, PLAYERS, "M")
    ports = [routes.nginx, *routes.instances]
    rng = random.Random(20261202)
    # Each pair of players shares a target score no other pair asks for.
    bodies = [{"rules": {"target_score": 200 + i // 2}, "single_hand": True} for i in range(PLAYERS)]
    order = list(range(PLAYERS))
    rng.shuffle(order)
    tickets: dict[int, str] = {}
    answers: dict[int, dict] = {}
    start = threading.Barrier(12)

    def post(worker: int) -> None:
        start.wait()
        for i in order[worker::12]:
            r = call(ports[(i + worker) % len(ports)], "POST", "/matchmaking/tickets", bodies[i], bearer(players[i]["token"]))
            assert r.status == 201, r.describe()
            tickets[i] = r.json["id"]
            answers[i] = r.json

    with ThreadPoolExecutor(12) as pool:
        list(pool.map(post, range(12)))

    def look(i: int) -> None:
        r = call(ports[i % len(ports)], "GET", f"/matchmaking/tickets/{tickets[i]}", headers=bearer(players[i]["token"]))
        assert r.status == 200, r.describe()
        answers[i] = r.json

    polls = 0
    for _ in range(10):
        left = [i for i in range(PLAYERS) if answers[i]["status"] != "paired"]
        if not left:
            break
        polls += len(left)
        with ThreadPoolExecutor(12) as pool:
            list(pool.map(look, left))
    assert Counter(a["status"] for a in answers.values()) == {"paired": PLAYERS}
    by_match = Counter(a["match"]["id"] for a in answers.values())
    assert len(by_match) == PLAYERS // 2 and set(by_match.values()) == {2}
    for i in range(0, PLAYERS, 2):
        assert answers[i]["match"]["id"] == answers[i + 1]["match"]["id"]
    with psycopg.connect(cluster.database_url) as conn:
        seated = conn.execute(
            "SELECT player_id, count(*) FROM match_players WHERE player_id = ANY(%s) GROUP BY player_id",
            ([uuid.UUID(p["id"]) for p in players],),
        ).fetchall()
    assert len(seated) == PLAYERS and {n for _, n in seated} == {1}
    # Each seat token works on every instance.
    for i in range(0, 6):
        match = answers[i]["match"]
        for port in routes.instances:
            assert call(port, "GET", f"/matches/{match['id']}", headers=bearer(match["token"])).status == 200
    note("matchmaking", paired_once=f"{PLAYERS} players, {PLAYERS // 2} matches, {polls} polls after posting")


def test_a_cancel_on_one_instance_racing_a_pairing_on_another_ends_one_way(cluster, routes):
    players = make_players(cluster.database_url, 40, "C")
    outcomes: Counter[str] = Counter()
    for n in range(20):
        ann, bob = players[2 * n], players[2 * n + 1]
        body = {"rules": {"target_score": 700 + n}}
        first, second = routes.instances[n % 3], routes.instances[(n + 1) % 3]
        ticket = call(first, "POST", "/matchmaking/tickets", body, bearer(ann["token"])).json
        both = threading.Barrier(2)
        got = {}

        delay = (n % 5) * 0.008  # from at once to 32 ms after the post: both endings happen

        def cancel(ticket=ticket, ann=ann, first=first, both=both, got=got, delay=delay) -> None:
            both.wait()
            time.sleep(delay)
            got["cancel"] = call(first, "DELETE", f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"]))

        def pair(bob=bob, second=second, body=body, both=both, got=got) -> None:
            both.wait()
            got["post"] = call(second, "POST", "/matchmaking/tickets", body, bearer(bob["token"]))

        threads = [threading.Thread(target=cancel), threading.Thread(target=pair)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        final = call(routes.nginx, "GET", f"/matchmaking/tickets/{ticket['id']}", headers=bearer(ann["token"])).json
        if got["cancel"].status == 200:
            assert final["status"] == "cancelled" and got["post"].json["status"] == "waiting"
            call(second, "DELETE", f"/matchmaking/tickets/{got['post'].json['id']}", headers=bearer(bob["token"]))
        else:
            assert got["cancel"].status == 409 and got["cancel"].code == "ticket_paired", got["cancel"].describe()
            assert final["status"] == "paired" and final["match"]["id"] == got["post"].json["match"]["id"]
        outcomes[final["status"]] += 1
    assert sum(outcomes.values()) == 20
    note("matchmaking", cancel_races=dict(outcomes))
