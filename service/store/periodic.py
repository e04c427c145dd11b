"""Background work on the database: one daemon thread per job, every so many seconds."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable

import psycopg
from psycopg_pool import PoolClosed

log = logging.getLogger(__name__)


def run_periodically(name: str, every: float, job: Callable[[], None]) -> threading.Event:
    """Run ``job()`` in a daemon thread every ``every`` seconds, the first time after a
    random part of that (so that replicas started together spread out); set the
    returned event to stop.  A failed run (the database down, the pool closed) is
    logged and tried again next time."""
    stop = threading.Event()

    def run() -> None:
        wait = random.uniform(0, every)
        while not stop.wait(wait):
            wait = every
            try:
                job()
            except (psycopg.Error, PoolClosed) as exc:
                log.warning("%s failed: %s", name, type(exc).__name__)

    threading.Thread(target=run, name=name, daemon=True).start()
    return stop
