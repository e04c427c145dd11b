"""The baseline of ``benchmarks/load.py``: a bare Flask app whose one endpoint does one
INSERT per request, served by the same gunicorn settings as the service.

    DATABASE_URL=... gunicorn --config python:service.gunicorn_conf benchmarks.load_baseline:app

``POST /hits`` stores its JSON body as one row of ``load_baseline`` (made by
``load.py`` before the server starts, from ``TABLE``) and answers 201 with a small JSON
body.  The pool has the service's size per worker (``service.store.connect``'s 10), so
the two differ only in what a request does.
"""

from __future__ import annotations

import os
import threading
import uuid

from flask import Flask, jsonify, request
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

TABLE = """
CREATE TABLE IF NOT EXISTS load_baseline (
    id uuid PRIMARY KEY,
    body jsonb NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
)
"""
INSERT = "INSERT INTO load_baseline (id, body) VALUES (%s, %s)"

app = Flask(__name__)
_pool: ConnectionPool | None = None
_lock = threading.Lock()


def pool() -> ConnectionPool:
    """The worker's pool, opened by its first request (importing this module opens nothing)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ConnectionPool(os.environ["DATABASE_URL"], min_size=1, max_size=10, kwargs={"autocommit": True})
    return _pool


@app.post("/hits")
def hit():
    body = request.get_json(silent=True)
    with pool().connection() as conn:
        conn.execute(INSERT, (uuid.uuid4(), Jsonb(body if isinstance(body, dict) else {})))
    return jsonify({"stored": True}), 201
