"""How long computations leave the event loop, and how a stream hears its client hang up.

Under ``gin-rummy serve`` every request is a greenlet of a gevent event loop
(``service.gunicorn_conf``).  ``off_loop(function, *args)`` runs a CPU-bound function so
that the loop keeps serving meanwhile: under gevent, in gevent's pool of native threads
(the function then holds the interpreter for at most the switch interval at a time,
5 ms), else directly.  Only for pure computations: no database, no socket.
``off_loop_timed`` does the same and also answers the CPU-seconds the function took
(measured in the thread that ran it, so other requests' work is not counted).

``on_hangup(sock, callback)`` calls back when the client closes its connection,
which a server that only writes to it (a live stream, between heartbeats) would
otherwise learn only at its next write; it returns the function that stops watching.
Under gevent only (elsewhere it watches nothing).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _gevent_patched() -> bool:
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and monkey.is_module_patched("threading")


def off_loop(function: Callable[..., T], *args) -> T:
    if not _gevent_patched():
        return function(*args)
    import gevent

    # What the function raises comes back as a value and is raised here, in the caller:
    # an exception escaping gevent's pool is also printed with its traceback (the hub's
    # handle_error), and a refusal is not an error to log (a refused record's traceback
    # would hold the record).
    ok, outcome = gevent.get_hub().threadpool.apply(_outcome, (function, args))
    if ok:
        return outcome
    raise outcome


def _outcome(function: Callable[..., T], args: tuple) -> tuple[bool, Any]:
    try:
        return True, function(*args)
    except Exception as exc:  # raised again by off_loop, in the caller
        return False, exc


#: How much lower than the event loop's the threads computing ``off_loop`` run (Linux's
#: nice, per thread): where the machine's CPUs are all busy, the loops of every process
#: are scheduled first, and requests keep being answered while long computations wait.
NICER = 10


def _nicer() -> None:
    if getattr(_niced, "done", False):
        return
    _niced.done = True
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + NICER)
    except (AttributeError, OSError):
        pass  # not Linux, or not allowed: the thread runs as the rest


_niced = threading.local()


def _timed(function: Callable[..., T], args: tuple) -> tuple[T, float]:
    if _gevent_patched():
        _nicer()  # a thread of gevent's pool (never the loop's, nor a test's)
    started = time.thread_time()
    result = function(*args)
    return result, time.thread_time() - started


def off_loop_timed(function: Callable[..., T], *args) -> tuple[T, float]:
    """``(function(*args), the CPU-seconds it took)``, off the event loop as ``off_loop``."""
    return off_loop(_timed, function, args)


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
