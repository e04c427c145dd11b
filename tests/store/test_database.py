"""Finding the database: DATABASE_URL, or an embedded server whose data persists."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import platformdirs
import psutil
import psycopg

from service.settings import Settings
from service.store import data_dir, database_url
from service.store.database import embedded_url, start_embedded_server


def test_database_url_comes_from_the_environment_when_set(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://someone@db.example:5432/gin")
    assert database_url(Settings.from_env()) == "postgresql://someone@db.example:5432/gin"


def test_the_embedded_data_lives_in_the_user_data_folder_unless_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("GIN_RUMMY_DATA_DIR", raising=False)
    assert data_dir(Settings.from_env()) == platformdirs.user_data_path("gin-rummy")
    monkeypatch.setenv("GIN_RUMMY_DATA_DIR", str(tmp_path / "data"))
    assert data_dir(Settings.from_env()) == tmp_path / "data"


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stops(pid: int, within: float = 10.0) -> bool:
    """Whether the process ends soon (pg_ctl returns once the server has removed its
    pid file, a moment before its last process exits)."""
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_embedded_server_keeps_its_data_across_restarts():
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-embedded-"))
    try:
        url = embedded_url(folder)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')")
        server = start_embedded_server(folder / "pgdata")  # the running one
        first = server.get_pid()
        server.cleanup()  # the last user leaves: the server stops
        assert stops(first)

        url = embedded_url(folder)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT value FROM kept").fetchall() == [("still here",)]
        start_embedded_server(folder / "pgdata").cleanup()
    finally:
        shutil.rmtree(folder)


def test_a_user_killed_before_its_exit_handlers_does_not_keep_the_embedded_server_alive():
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-embedded-"))
    try:
        pgdata = folder / "pgdata"
        start_embedded_server(pgdata).cleanup()
        gone = psutil.Popen(["true"])
        gone.wait()
        (pgdata / ".handle_pids.json").write_text(json.dumps([gone.pid]))

        server = start_embedded_server(pgdata)
        pid = server.get_pid()
        server.cleanup()
        assert stops(pid)
    finally:
        shutil.rmtree(folder)


def test_the_health_probe_replaces_a_lost_connection_within_the_same_check(database_url):
    """After a failover the probe's kept connection points at the lost primary: the
    check does not fail once for it, it connects afresh (to whichever server answers)."""
    import psycopg

    from service.store.database import Probe

    probe = Probe(database_url)
    probe.check()
    first = probe._conn
    assert first is not None
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (first.info.backend_pid,))
    probe.check()  # no psycopg.Error: the lost connection was replaced
    assert probe._conn is not None and probe._conn is not first
    assert probe._conn.info.backend_pid != first.info.backend_pid
