"""What a newcomer meets in a first hour with ``gin-rummy``: a database that does not
exist, one never migrated (a fresh ``createdb``) or migrated by another version, a port
already taken, the help, and no stray warning or traceback on the way out."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from service import cli
from service.application.records import home_of
from service.store.database import with_database
from service.store.migrate import upgrade
from service.store.readiness import ensure_ready, redact
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory
from tests.store.test_cli_and_migrations import TABLES, revisions, tables

NO_MATCH = "00000000-0000-0000-0000-000000000000"
PASSWORD = "hunter2-secret"


def with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0] if at else "postgres"
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize("command", [
    ["audit", NO_MATCH], ["audit"], ["import", "RECORD"], ["export"], ["replay", NO_MATCH], ["keys", "list"],
    ["projections", "rebuild"], ["db", "upgrade"], ["db", "downgrade", "base"], ["db", "purge-idempotency"],
])
def test_a_database_that_does_not_exist_is_one_line_with_the_fix_and_no_password(
    server, command, monkeypatch, capsys, tmp_path
):
    record = tmp_path / "record.json"
    record.write_text("{}")
    name = f"nosuch_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("DATABASE_URL", with_password(with_database(server.admin_url, name), PASSWORD))
    assert cli.main([str(record) if part == "RECORD" else part for part in command]) == 1
    captured = capsys.readouterr()
    line = one_line(captured.err)
    assert line.startswith("gin-rummy: cannot connect to postgresql://") and f"/{name}" in line
    assert f'database "{name}" does not exist' in line
    assert "createdb" in line and name in line.split("createdb", 1)[1] and "unset DATABASE_URL" in line
    assert PASSWORD not in captured.err + captured.out and ":***@" in line
    assert captured.out == ""


def test_a_server_that_is_not_running_is_one_line(monkeypatch, capsys):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("DATABASE_URL", f"postgresql://ann:{PASSWORD}@127.0.0.1:{port}/gin_rummy")
    assert cli.main(["audit"]) == 1
    line = one_line(capsys.readouterr().err)
    assert "Connection refused" in line and "is PostgreSQL running" in line and PASSWORD not in line


def a_record(store) -> dict:
    start = StartMatchFactory(seats=[HumanSeatFactory(name="Ann"), HumanSeatFactory(name="Bob")],
                              rules={"preset": "classic", "single_hand": True})
    match = MatchFactory.create(store=store, start=start)
    from service.application import Application
    from service.settings import Settings

    return Application.build(Settings(), store=store).records.record_of(match.match_id, signed=False)[0]


def test_import_into_a_fresh_createdb_database_migrates_it_first(
    store, fresh_database_url, monkeypatch, capsys, tmp_path
):
    path = tmp_path / "record.json"
    record = a_record(store)
    path.write_text(json.dumps(record))
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    assert tables(fresh_database_url) == set()

    assert cli.main(["import", str(path)]) == 0
    captured = capsys.readouterr()
    home = home_of(uuid.UUID(record["match_id"]), record["digest"]["value"], verified=False)  # unsigned
    assert f"imported match {home} (the record names {record['match_id']};" in captured.out
    assert one_line(captured.err).startswith("gin-rummy: applied the migrations to postgresql://")
    assert tables(fresh_database_url) == TABLES

    assert cli.main(["audit"]) == 0  # migrated now: nothing more is said about it
    captured = capsys.readouterr()
    assert f"{home}: ok" in captured.out and "migrations" not in captured.err


@pytest.mark.parametrize("command", [["audit"], ["export"], ["keys", "list"], ["projections", "rebuild"],
                                     ["db", "purge-idempotency"], ["replay", NO_MATCH]])
def test_every_database_command_migrates_a_database_without_the_schema(fresh_database_url, command, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    status = cli.main(command)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "UndefinedTable" not in captured.err
    assert "applied the migrations" in captured.err
    assert status == (1 if command[0] == "replay" else 0)  # replay: no such match, said in one line
    assert tables(fresh_database_url) == TABLES


def test_a_database_behind_or_ahead_of_this_version_says_what_to_run(fresh_database_url, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", fresh_database_url)
    first = revisions(fresh_database_url)[0]
    upgrade(fresh_database_url, first)
    assert cli.main(["audit"]) == 1
    line = one_line(capsys.readouterr().err)
    assert f"at revision {first}, behind" in line and "run `gin-rummy db upgrade`" in line
    assert tables(fresh_database_url) != TABLES  # not migrated behind the operator's back

    # What `gin-rummy serve` does (as every instance of a deployment does when it starts).
    done = ensure_ready(fresh_database_url, upgrade_behind=True)
    assert done == f"migrated {redact(fresh_database_url)} from {first} to {revisions(fresh_database_url)[-1]}"
    assert tables(fresh_database_url) == TABLES
    assert ensure_ready(fresh_database_url) is None

    with psycopg.connect(fresh_database_url, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    assert cli.main(["export"]) == 1
    line = one_line(capsys.readouterr().err)
    assert "9999_from_the_future" in line and "upgrade gin-rummy" in line
    assert cli.main(["db", "downgrade", "no_such_revision"]) == 1
    assert one_line(capsys.readouterr().err).startswith("gin-rummy: migrations: ")


def test_serve_on_a_port_in_use_says_to_choose_another_and_starts_nothing(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/never_reached")  # checked after the port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--port", str(port)]) == 1
    captured = capsys.readouterr()
    line = one_line(captured.err)
    assert f"port {port} on 127.0.0.1 is in use" in line and "--port" in line
    assert "serving on" not in captured.err + captured.out


def test_the_help_says_where_the_database_is_and_what_to_try_first(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert "DATABASE_URL" in text and "embedded PostgreSQL" in text and "GIN_RUMMY_DATA_DIR" in text
    assert "gin-rummy serve" in text and "http://localhost:8000/" in text

    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for default in ("(default: 127.0.0.1)", "(default: 8000)", "(default: 2)", "(default: 5000)"):
        assert default in text


def test_every_pool_the_command_opens_is_closed_when_it_ends(store, database_url, monkeypatch, capsys, tmp_path):
    record = a_record(store)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    opened = []
    real_connect = cli.common.connect

    def connect(*args, **kwargs):
        opened.append(real_connect(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(cli.common, "connect", connect)
    monkeypatch.setenv("DATABASE_URL", database_url)
    match = record["match_id"]
    for command in (["export", match], ["import", str(path)], ["replay", match], ["audit", match], ["keys", "list"]):
        assert cli.main(command) == 0
    with pytest.raises(SystemExit):  # a command that stops half-way closes its pool too
        cli.main(["audit", "not-a-match-id"])
    capsys.readouterr()
    assert len(opened) >= 6 and all(pool.closed for pool in opened)


RUNTIME_DIR_WARNINGS = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    before = list(warnings.filters)
    if sys.argv[1] == "embedded":
        from service.store.database import import_pgserver
        import_pgserver()
        assert warnings.filters == before, "the filter outlived the import"
    else:  # the control: what platformdirs does unfiltered
        import platformdirs
        platformdirs.user_runtime_path("python_PostgresServer")
print(json.dumps([str(w.message) for w in caught if "XDG_RUNTIME_DIR" in str(w.message)]))
"""


def runtime_dir_warnings(which: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run([sys.executable, "-c", RUNTIME_DIR_WARNINGS, which], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_embedded_server_is_imported_without_the_runtime_dir_warning():
    import platformdirs

    if hasattr(platformdirs, "RuntimeDirWarning"):  # older versions never warn
        assert runtime_dir_warnings("control"), "the control should warn: XDG_RUNTIME_DIR is unset"
    assert runtime_dir_warnings("embedded") == []
