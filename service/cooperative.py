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

``off_process_timed(function, *args)`` runs the heaviest computations (an import's
check, an analysis) in a child process of the worker, at a lower priority, so that they
do not share the worker's interpreter with its event loop at all (below).
"""

from __future__ import annotations

import os
import pickle
import struct
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


# --- computations in a process of their own ---------------------------------------------
#
# A thread of gevent's pool still shares the interpreter with the event loop: while it
# computes, the loop gets the interpreter back only every switch interval, so each
# request the loop serves meanwhile waits a few milliseconds at every step.  The heavy
# computations (an import's check, an analysis: seconds of CPU) therefore run in a child
# process of the worker, which reads ``(function, args)`` pickled on its standard input
# and writes back ``((ok, result or exception), cpu_seconds)``; it runs at a lower
# priority (``NICER``), so where the CPUs are all busy the workers' loops come first.
# The children are kept (``MAX_IDLE`` at most) and each serves one call at a time; a
# child that dies is replaced.  The function and its arguments must be picklable (a
# module-level function and plain data); so must what it returns or raises.

#: The most idle children kept per process.
MAX_IDLE = 2
_HEADER = struct.Struct(">Q")


class ChildDied(RuntimeError):
    """The child process computing a call exited before answering."""


def off_process_timed(function: Callable[..., T], *args) -> tuple[T, float]:
    """``(function(*args), the CPU-seconds it took)``: under gevent in a child process
    (above), else directly."""
    if not _gevent_patched():
        started = time.process_time()
        result = function(*args)
        return result, time.process_time() - started
    return _CHILDREN.call(function, args)


class _Child:
    def __init__(self) -> None:
        import subprocess  # gevent's, cooperative, once patched

        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.cooperative"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )

    def call(self, request: bytes) -> bytes:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(_HEADER.pack(len(request)) + request)
            stdin.flush()
            header = stdout.read(_HEADER.size)
            if len(header) < _HEADER.size:
                raise ChildDied("the child computing the call exited")
            (size,) = _HEADER.unpack(header)
            answer = stdout.read(size)
        except OSError as exc:
            raise ChildDied(f"the child computing the call failed: {exc}") from None
        if len(answer) < size:
            raise ChildDied("the child computing the call exited")
        return answer

    def close(self) -> None:
        try:
            self.process.kill()
            self.process.wait()
        except OSError:
            pass


class _Children:
    def __init__(self) -> None:
        self._idle: list[_Child] = []

    def call(self, function: Callable[..., T], args: tuple) -> tuple[T, float]:
        # Pickled and unpickled in gevent's pool (a record is megabytes), computed there.
        request = off_loop(pickle.dumps, (function, args), pickle.HIGHEST_PROTOCOL)
        child = self._idle.pop() if self._idle else _Child()
        try:
            answer = child.call(request)
        except BaseException:
            child.close()
            raise
        if len(self._idle) < MAX_IDLE:
            self._idle.append(child)
        else:
            child.close()
        (ok, outcome), cpu = off_loop(pickle.loads, answer)
        if ok:
            return outcome, cpu
        raise outcome


_CHILDREN = _Children()


def _serve_calls() -> None:
    """A child's loop: one call at a time from standard input, its outcome to standard output."""
    try:
        os.nice(NICER)
    except OSError:
        pass
    calls, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever the function prints stays out of the answers
    while True:
        header = calls.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the worker closed the pipe: it is gone
        (size,) = _HEADER.unpack(header)
        function, args = pickle.loads(calls.read(size))
        started = time.process_time()
        try:
            outcome: tuple[bool, Any] = (True, function(*args))
        except Exception as exc:
            outcome = (False, exc)
        cpu = time.process_time() - started
        try:
            answer = pickle.dumps((outcome, cpu), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an outcome that cannot be pickled
            answer = pickle.dumps(((False, RuntimeError(f"the outcome could not be sent back ({type(exc).__name__})")), cpu))
        answers.write(_HEADER.pack(len(answer)) + answer)
        answers.flush()


def pause(seconds: float) -> None:
    """Wait ``seconds`` where waiting costs nothing (a greenlet, under gevent); elsewhere
    (a test, a thread of a development server) not at all."""
    if seconds > 0 and _gevent_patched():
        import gevent

        gevent.sleep(seconds)


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


if __name__ == "__main__":
    _serve_calls()
