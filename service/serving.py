"""The server's side of the serving model (service.gunicorn_conf): its worker class, and
how long computations leave the event loop.

``Worker`` is gunicorn's gevent worker, told to end the live streams when it is asked
to stop, so that a stopping worker drains in a moment instead of waiting for every
stream's ``wait`` to run out (clients reconnect, to another worker or instance, and
resume with Last-Event-ID).  It also stops on SIGINT / SIGQUIT the same quiet way.

``off_loop(function, *args)`` runs a CPU-bound function so that the event loop keeps
serving meanwhile: under gevent, in gevent's pool of native threads (the function
then holds the interpreter for at most the switch interval at a time, 5 ms), else
directly.  Only for pure computations: no database, no socket.

``on_hangup(sock, callback)`` calls back when the client closes its connection,
which a server that only writes to it (a live stream, between heartbeats) would
otherwise learn only at its next write; it returns the function that stops watching.
Under gevent only (elsewhere it watches nothing).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _gevent_patched() -> bool:
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("threading")


def off_loop(function: Callable[..., T], *args) -> T:
    if not _gevent_patched():
        return function(*args)
    import gevent

    return gevent.get_hub().threadpool.apply(function, args)


def on_hangup(sock, callback: Callable[[], None]) -> Callable[[], None]:
    if sock is None or not _gevent_patched():
        return lambda: None
    import socket

    import gevent

    def watch():
        while True:
            try:
                # Data (a client sending more) means it is still there; nothing means it hung up.
                if sock.recv(1, socket.MSG_PEEK):
                    return
            except TimeoutError:
                continue  # the socket's timeout (for sending) applies to reading too
            except OSError:
                pass
            callback()
            return

    watcher = gevent.spawn(watch)

    def stop():
        # Blocking: the socket must be free for the server's next read when this returns.
        watcher.kill(block=True)

    return stop


try:
    from gunicorn.workers.ggevent import GeventWorker
except ImportError:  # gevent is not installed: no server here, only the library
    GeventWorker = None  # type: ignore[assignment,misc]

if GeventWorker is not None:

    class Worker(GeventWorker):
        def handle_exit(self, sig, frame):
            super().handle_exit(sig, frame)
            self._end_streams()

        def handle_quit(self, sig, frame):
            # gunicorn's own quits with sys.exit in a greenlet, which gevent reports as
            # an error; this stops as SIGTERM does, streams ended, requests finished.
            self.alive = False
            self.cfg.worker_int(self)
            self._end_streams()

        @staticmethod
        def _end_streams():
            import gevent

            from service.live import shutdown_all

            gevent.spawn(shutdown_all)  # not in the signal handler: it takes locks
