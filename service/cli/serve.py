"""``gin-rummy serve``: apply the migrations, then serve the REST API with gunicorn."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import socket
import subprocess
import sys
from contextlib import suppress

from service.store import data_dir

from .common import checked_replica, database


def serve(args: argparse.Namespace) -> int:
    if problem := _cannot_listen(args.host, args.port):
        print(f"gin-rummy: {problem}", file=sys.stderr)
        return 1
    settings = args.settings
    checked_replica(settings)  # the workers read on it
    url = database(settings, upgrade_behind=True)  # whatever revision it is at, as a deployment's instances do
    # gunicorn runs in a process of its own, which imports nothing before its gevent
    # workers patch the standard library (psycopg must be imported after that: see
    # service.gunicorn_conf).  This process stays, holding the embedded server (if
    # any) until gunicorn exits, then stopping it cleanly.
    env = {
        **os.environ,
        "DATABASE_URL": url,  # every worker uses the same database, embedded or not
        "GIN_RUMMY_BIND": f"{args.host}:{args.port}",
        "GIN_RUMMY_WORKERS": str(args.workers),
        "GIN_RUMMY_CONNECTIONS": str(args.connections),
    }
    command = [sys.executable, "-m", "gunicorn", "--config", "python:service.gunicorn_conf", "service.wsgi:app"]
    print(f"gin-rummy: serving on http://{args.host}:{args.port}/ (API docs at /docs)", file=sys.stderr)
    if not settings.database_url:
        print(f"gin-rummy: the embedded database keeps its data in {data_dir(settings)} (Ctrl-C stops the service and it)",
              file=sys.stderr)
    gunicorn = subprocess.Popen(command, env=env)

    def forward(signum, frame):
        # Ctrl+C reaches both processes (one process group); SIGTERM may reach only
        # this one.  A hangup stops the server (to gunicorn, HUP means reload).
        with suppress(ProcessLookupError):
            gunicorn.send_signal(signal.SIGTERM if signum == signal.SIGHUP else signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    status = gunicorn.wait()
    return 0 if status in (0, -signal.SIGINT, -signal.SIGTERM) else status


def _cannot_listen(host: str, port: int) -> str | None:
    """Why gunicorn could not listen on host:port (one line, with the fix), or None.

    gunicorn would say "Connection in use", retry five times and give up with "Can't
    connect"; a bind here, released at once, finds it out first."""
    try:
        addresses = {info[4]: info for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)}
    except socket.gaierror as exc:
        return f"cannot serve on {host!r}: {exc.strerror} — give an address of this machine with --host (default 127.0.0.1)"
    for family, kind, proto, _, address in addresses.values():
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn does
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return (f"port {port} on {host} is in use (another gin-rummy serve?) — choose another with --port,"
                            f" e.g. `gin-rummy serve --port {port + 1 if port < 65535 else 8000}`")
                if exc.errno == errno.EACCES:
                    return f"not allowed to serve on port {port} (ports below 1024 need privileges) — choose another with --port"
                return f"cannot serve on {host}:{port}: {exc.strerror} — check --host and --port"
    return None
