"""A replicated PostgreSQL on this machine: etcd, and three PostgreSQL nodes each run by
Patroni (Debian's ``patroni`` and ``etcd-server`` packages, PostgreSQL 15), with
synchronous replication or not, on loopback ports; then three service instances behind
nginx (cluster.py) pointed at the nodes by a multi-host URL.

The settings are the ones deploy/patroni/patroni.yml explains: a leader key of 10 s,
Patroni's loop every second, ``primary_start_timeout: 0`` (a primary whose postmaster
died is failed over at once, never restarted in place) and ``pg_rewind`` for the old
primary to rejoin as a standby by itself.

A postmaster outlives a killed Patroni (it is re-parented to PID 1), so ``stop`` ends
every node's postmaster by its ``postmaster.pid``.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg

from .cluster import LOOPBACK, Instance, Nginx, free_port, gin_rummy, tail, wait_for

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PATRONI = shutil.which("patroni") or "/usr/bin/patroni"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
SCOPE = "gin-rummy"
DATABASE = "gin_rummy"
#: A standby's state in Patroni's /cluster: "running" in 3.0, "streaming" from 3.0.3 on.
STREAMING = ("running", "streaming")


def available() -> str | None:
    """Why the replicated cluster cannot run here (None: it can)."""
    missing = [name for name, path in (("etcd-server", ETCD), ("patroni", PATRONI)) if not os.access(path, os.X_OK)]
    if not (PG_BIN / "postgres").exists():
        missing.append("postgresql-15")
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install patroni etcd-server postgresql-15)"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "no postgres user (Debian's postgresql package makes it)"
    return None


def _as_postgres():
    entry = pwd.getpwnam("postgres")
    return entry.pw_uid, entry.pw_gid


def _chown(path: Path):
    uid, gid = _as_postgres()
    os.chown(path, uid, gid)


def _end(process: subprocess.Popen | None, patience: float) -> None:
    """Stop ``process`` with SIGTERM, and SIGKILL when it takes longer than ``patience`` seconds."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(patience)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


class Etcd:
    def __init__(self, folder: Path):
        self.folder = folder / "etcd"
        self.folder.mkdir()
        self.client_port, self.peer_port = free_port(), free_port()
        self.log = folder / "etcd.log"
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"{LOOPBACK}:{self.client_port}"

    def start(self):
        client, peer = f"http://{self.endpoint}", f"http://{LOOPBACK}:{self.peer_port}"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [ETCD, "--name", "e0", "--data-dir", str(self.folder / "data"),
                 "--listen-client-urls", client, "--advertise-client-urls", client,
                 "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                 "--initial-cluster", f"e0={peer}", "--initial-cluster-state", "new"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            )

        def healthy():
            try:
                with urllib.request.urlopen(f"{client}/health", timeout=1) as answer:
                    return json.loads(answer.read()).get("health") == "true"
            except (OSError, ValueError):
                return False

        wait_for(healthy, 30, "etcd", interval=0.1)

    def stop(self):
        _end(self.process, 10)


PATRONI_YML = """\
scope: {scope}
name: {name}
log:
  level: WARNING
restapi:
  listen: {host}:{rest_port}
  connect_address: {host}:{rest_port}
etcd3:
  hosts: {etcd}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    primary_start_timeout: 0
    maximum_lag_on_failover: 1048576
    synchronous_mode: {synchronous}
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: "on"
        hot_standby_feedback: "on"
        max_connections: 250
        max_wal_senders: 10
        max_replication_slots: 10
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: {host}:{pg_port}
  connect_address: {host}:{pg_port}
  data_dir: {data}
  bin_dir: {bin}
  pgpass: {folder}/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: postgres
      password: postgres
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: {folder}
    fsync: "on"
tags:
  nofailover: false
  noloadbalance: false
"""


class Node:
    """One PostgreSQL node and the Patroni that runs it."""

    def __init__(self, name: str, folder: Path, etcd: Etcd, synchronous: bool):
        self.name = name
        self.folder = folder / name
        self.folder.mkdir()
        _chown(self.folder)
        self.data = self.folder / "data"
        self.pg_port, self.rest_port = free_port(), free_port()
        self.config = self.folder / "patroni.yml"
        self.config.write_text(PATRONI_YML.format(
            scope=SCOPE, name=name, host=LOOPBACK, rest_port=self.rest_port, pg_port=self.pg_port,
            etcd=etcd.endpoint, synchronous=str(synchronous).lower(), data=self.data, bin=PG_BIN, folder=self.folder,
        ))
        _chown(self.config)
        self.log = self.folder / "patroni.log"
        self.process: subprocess.Popen | None = None

    def start(self):
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [PATRONI, str(self.config)], user="postgres", group="postgres", cwd=self.folder,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                env={"PATH": "/usr/bin:/bin", "HOME": str(self.folder), "LANG": "C.UTF-8"},
            )

    def rest(self, path: str, method: str = "GET", body: dict | None = None, timeout: float = 2.0):
        """(status, decoded JSON or None) of Patroni's REST API; (None, None) if it does not answer."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://{LOOPBACK}:{self.rest_port}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                raw = answer.read()
                status = answer.status
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), exc.code
        except OSError:
            return None, None
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill_postmaster(self) -> int:
        """``kill -9`` of this node's postmaster (Patroni lives on)."""
        pid = self.postmaster_pid()
        assert pid is not None, f"{self.name} has no postmaster"
        os.kill(pid, signal.SIGKILL)
        return pid

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@{LOOPBACK}:{self.pg_port}/postgres"

    def stop(self):
        _end(self.process, 30)
        pid = self.postmaster_pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


class Replicated:
    """etcd, three Patroni nodes, and (``serve``) three service instances behind nginx."""

    def __init__(self, folder: Path, *, synchronous: bool = True, nodes: int = 3, instances: int = 3,
                 workers: int = 2, env: dict | None = None, replica_reads: bool = False):
        self.folder = folder
        self.synchronous = synchronous
        self.etcd = Etcd(folder)
        self.nodes = [Node(f"pg{n}", folder, self.etcd, synchronous) for n in range(nodes)]
        if replica_reads:  # the instances' heavy reads on a standby
            env = {**(env or {}), "GIN_RUMMY_REPLICA_DATABASE_URL": self.replica_url}
        self.instances = [Instance(f"instance-{n}", folder, self.database_url, workers=workers, env=env)
                          for n in range(instances)]
        self.nginx = Nginx(folder, self.instances) if instances else None

    def url(self, attrs: str = "read-write", database: str = DATABASE) -> str:
        hosts = ",".join(f"{LOOPBACK}:{node.pg_port}" for node in self.nodes)
        return f"postgresql://postgres@{hosts}/{database}?target_session_attrs={attrs}&connect_timeout=2"

    @property
    def database_url(self) -> str:
        return self.url()

    @property
    def replica_url(self) -> str:
        return self.url("prefer-standby")

    # The cluster -------------------------------------------------------------------

    def members(self) -> list[dict]:
        for node in self.nodes:
            status, body = node.rest("/cluster")
            if status == 200 and isinstance(body, dict):
                return body.get("members", [])
        return []

    def leader(self) -> Node | None:
        for member in self.members():
            if member.get("role") == "leader" and member.get("state") == "running":
                return next(n for n in self.nodes if n.name == member["name"])
        return None

    def synchronous_standbys(self) -> list[str]:
        return [m["name"] for m in self.members() if m.get("role") == "sync_standby" and m.get("state") in STREAMING]

    def healthy(self, *, standbys: int | None = None) -> Node | None:
        """The leader, once it takes writes and ``standbys`` standbys (by default every
        other node) stream from it (one of them synchronous, in synchronous mode); else None."""
        if standbys is None:
            standbys = len(self.nodes) - 1
        leader = self.leader()
        if leader is None:
            return None
        members = self.members()
        streaming = [m for m in members if m.get("role") in ("replica", "sync_standby") and m.get("state") in STREAMING]
        if len(streaming) < standbys:
            return None
        if standbys and self.synchronous and not self.synchronous_standbys():
            return None
        try:
            with psycopg.connect(leader.admin_url, autocommit=True, connect_timeout=2) as conn:
                if conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                    return None
        except psycopg.Error:
            return None
        return leader

    def wait_healthy(self, timeout: float = 90, standbys: int | None = None) -> Node:
        return wait_for(lambda: self.healthy(standbys=standbys), timeout, "a leader and its standbys", interval=0.2)

    def switchover(self, attempts: int = 1) -> tuple[Node, str]:
        """A planned switchover to a (synchronous) standby: (old leader, the candidate);
        tried up to ``attempts`` times, a second apart, while Patroni refuses it."""
        for attempt in range(1, attempts + 1):
            leader = self.wait_healthy()
            candidates = self.synchronous_standbys() if self.synchronous else [
                m["name"] for m in self.members() if m.get("role") == "replica"]
            candidate = candidates[0]
            status, body = leader.rest("/switchover", "POST", {"leader": leader.name, "candidate": candidate}, timeout=60)
            if status == 200:
                return leader, candidate
            # 503 'Switchover failed': Patroni found the candidate not caught up (a member
            # that rejoined a moment ago); nothing was done.
            assert status == 503 and attempt < attempts, (status, body)
            time.sleep(1)
        raise AssertionError("unreachable")

    def maintenance(self, on: bool) -> None:
        """Patroni's maintenance mode: it leaves PostgreSQL alone (otherwise it resumes
        a standby's paused replay within a loop)."""
        leader = self.wait_healthy()
        status, body = leader.rest("/config", "PATCH", {"pause": on})
        assert status == 200, (status, body)

        def applied():
            status, body = leader.rest("/cluster")
            return status == 200 and bool(body.get("pause", False)) == on

        wait_for(applied, 30, f"maintenance mode {'on' if on else 'off'}", interval=0.1)

    # Start and stop ----------------------------------------------------------------

    def start(self, serve: bool = True):
        self.folder.chmod(0o755)
        self.etcd.start()
        self.nodes[0].start()
        first = wait_for(lambda: self.healthy(standbys=0), 90, "the first node to lead", interval=0.2)
        for node in self.nodes[1:]:
            node.start()
        self.wait_healthy()
        with psycopg.connect(first.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        upgraded = gin_rummy("db", "upgrade", database_url=self.database_url)
        if upgraded.returncode != 0:
            raise RuntimeError(f"gin-rummy db upgrade failed:\n{upgraded.stdout}\n{upgraded.stderr}")
        if not serve:
            return
        for instance in self.instances:
            instance.start()
        for instance in self.instances:
            instance.wait_ready()
        if self.nginx is not None:
            self.nginx.start()

    def stop(self):
        for stop in [*([self.nginx.stop] if self.nginx else []), *(i.stop for i in self.instances),
                     *(n.stop for n in self.nodes), self.etcd.stop]:
            try:
                stop()
            except Exception:  # keep stopping the rest
                pass

    def logs(self) -> str:
        parts = [f"--- {i.name} ---\n{tail(i.log)}" for i in self.instances]
        if self.nginx is not None:
            parts.append(f"--- nginx ---\n{tail(self.nginx.log)}")
        parts += [f"--- {n.name} (patroni) ---\n{tail(n.log)}" for n in self.nodes]
        parts.append(f"--- etcd ---\n{tail(self.etcd.log, 10)}")
        return "\n".join(parts)


def wait_writable(url: str, timeout: float = 60) -> float:
    """Seconds until ``url`` takes a write again."""
    started = time.monotonic()

    def writable():
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=1) as conn:
                return not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        except psycopg.Error:
            return False

    wait_for(writable, timeout, "a writable primary", interval=0.05)
    return time.monotonic() - started
