"""The schema by alembic (every revision upgrades and downgrades) and the gin-rummy command."""

from __future__ import annotations

import uuid
from itertools import pairwise

import psycopg
import pytest
from alembic.script import ScriptDirectory

from service import cli
from service.store import EventStore, connect
from service.store.migrate import alembic_config, downgrade, upgrade
from tests.factories import MatchFactory, in_hand

TABLES = {
    "events", "snapshots", "match_summaries", "seat_tokens", "idempotency_keys", "match_invites", "rematches",
    "live_followers", "players", "match_players", "player_ratings", "projection_cursors", "match_provenance", "rated_opponents",
    "signing_keys", "service_secrets", "rate_buckets", "hand_analyses", "notifications", "match_turns",
    "matchmaking_tickets", "webhook_endpoints", "webhook_deliveries", "rating_history",
    "erased_seats",
}


def tables(url: str) -> set[str]:
    return {table for table, _, _ in schema(url)}


def schema(url: str) -> set[tuple[str, str, str]]:
    """(table, column, type) of every column, but alembic's own."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name <> 'alembic_version'"
        )
        return set(rows)


def revisions(url: str) -> list[str]:
    """Oldest first."""
    script = ScriptDirectory.from_config(alembic_config(url))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def test_every_revision_downgrades_and_upgrades_again(fresh_database_url):
    url = fresh_database_url
    upgrade(url)
    assert tables(url) == TABLES
    for older, revision in reversed(list(pairwise(["base"] + revisions(url)))):
        before = schema(url)
        downgrade(url, older)
        assert schema(url) != before, f"downgrading {revision} changed nothing"
        upgrade(url, revision)
        assert schema(url) == before, f"{revision} did not come back as it was"
        downgrade(url, older)
    assert schema(url) == set()
    upgrade(url)
    assert tables(url) == TABLES


def test_downgrading_below_0004_fills_the_summary_version_from_the_events(fresh_database_url):
    upgrade(fresh_database_url)
    match = MatchFactory.build(until=in_hand(1, moves=3))
    with connect(fresh_database_url, max_size=1) as pool:
        match.append_to(EventStore(pool))
    downgrade(fresh_database_url, "0003")
    with psycopg.connect(fresh_database_url) as conn:
        version = conn.execute("SELECT version FROM match_summaries WHERE match_id = %s", (match.match_id,)).fetchone()
    assert version == (len(match.events),)
    upgrade(fresh_database_url)


def test_the_cli_upgrades_the_database_of_database_url_rebuilds_projections_and_purges(
    fresh_database_url, monkeypatch, capsys
):
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    assert cli.main(["db", "upgrade"]) == 0
    assert tables(fresh_database_url) == TABLES

    with connect(fresh_database_url, max_size=1) as pool:
        EventStore(pool).append(uuid.uuid4(), 0, MatchFactory.build(until=lambda state: True).events)
    assert cli.main(["projections", "rebuild"]) == 0
    assert cli.main(["db", "purge-idempotency"]) == 0
    assert cli.main(["db", "downgrade", "base"]) == 0
    assert tables(fresh_database_url) == set()
    out = capsys.readouterr().out
    assert "rebuilt the read models of 1 matches, the ratings of 0 rated matches and 0 notifications" in out
    assert "deleted 0 idempotency records older than 24 hours" in out


def test_the_cli_prints_the_openapi_document_without_a_database(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    assert cli.main(["openapi"]) == 0
    assert "openapi: 3.1.0" in capsys.readouterr().out


def test_the_cli_explains_its_commands():
    with pytest.raises(SystemExit):
        cli.main(["db"])


def test_upgrading_a_database_with_history_notifies_nobody_of_the_past(fresh_database_url, monkeypatch):
    from service import feed
    from service.store import erasure
    from service.store import players as store_players

    upgrade(fresh_database_url, "0011")
    # History written as the service of that revision wrote it: it knew no erasures.
    monkeypatch.setattr(erasure, "erased_of", lambda conn, match_id: {})
    ann, bob = uuid.uuid4(), uuid.uuid4()
    seats = [{"kind": "human", "name": "Ann", "player": str(ann)}, {"kind": "human", "name": "Bob", "player": str(bob)}]
    old = MatchFactory.build(start={"type": "start_match", "rules": {"preset": "classic"}, "seats": seats}, until=in_hand(1, moves=4))
    with connect(fresh_database_url, max_size=2) as pool:
        store = EventStore(pool)
        old.append_to(store)
        with store.transaction() as conn:
            store_players.bind_seats(conn, old.match_id, {0: str(ann), 1: str(bob)})
    monkeypatch.undo()
    upgrade(fresh_database_url)
    with connect(fresh_database_url, max_size=2) as pool:
        store = EventStore(pool)
        assert feed.catch_up(store) == 0  # 4 moves and a deal stored before: no notification
        assert feed.rebuild(store) == 0  # nor from a rebuild
        with store.transaction() as conn:
            ended = {"type": "match_ended", "data": {"winner": 0, "reason": "resigned", "scores": [0, 0]}}
            store.append(old.match_id, len(old.events), [ended], conn=conn)
        assert feed.catch_up(store) == 2  # the match's end, to each player
        with store.connection() as conn:
            rows = conn.execute("SELECT kind, player_id FROM notifications ORDER BY id").fetchall()
        assert rows == [("match_ended", ann), ("match_ended", bob)]


def test_a_database_url_naming_several_hosts_is_migrated_on_the_one_that_answers(fresh_database_url):
    """A replicated cluster's URL lists its hosts, ``user@h1:p1,h2:p2/db``; libpq tries
    them in turn (the first here answers nothing: a port no server listens on)."""
    import socket
    from urllib.parse import quote

    with psycopg.connect(fresh_database_url) as conn:
        host, port, user, db = conn.info.host, conn.info.port, conn.info.user, conn.info.dbname
    if host.startswith("/"):
        pytest.skip("this server listens on a socket only: the hosts of such a URL are TCP hosts")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    several = f"postgresql://{quote(user)}@127.0.0.1:{dead},{host}:{port}/{quote(db)}?target_session_attrs=read-write"
    upgrade(several)
    assert tables(fresh_database_url) == TABLES
