"""Prometheus metrics, served at ``GET /metrics`` in the text exposition format.

- ``gin_rummy_http_requests_total{method, route, status}``: requests; ``route`` is the
  URL rule (``/matches/<match_id>``), ``unmatched`` for unknown paths, so neither ids
  nor made-up paths or methods (counted as ``other``) add series.
- ``gin_rummy_http_request_duration_seconds{method, route}``: time to the first byte
  (a live stream's duration is not included).
- ``gin_rummy_actions_total{type, by}``: actions applied (draw, pass, discard, knock,
  gin, defend), ``by`` a ``person`` or the ``computer``.
- ``gin_rummy_conflicts_total{status, code}``: 409 and 412 answers by problem code
  (``conflict``, ``version_mismatch``, ``illegal_move``, ...).
- ``gin_rummy_bot_decision_seconds{level}``: time the computer took to choose a move.
- ``gin_rummy_rate_limited_total{scope}``: requests refused with 429 (``token``,
  ``address``).
- ``gin_rummy_live_streams``: live streams open now; ``gin_rummy_streams_refused_total{scope}``
  streams refused with 429 (``token``, ``client address``, ``process``);
  ``gin_rummy_streams_lagged_total``: streams closed because their client fell too far
  behind.
- ``gin_rummy_webhook_attempts_total{outcome}``: webhook attempts by outcome:
  ``delivered`` (answered 2xx), ``retried`` (another answer, or none: tried again
  later), ``failed`` (the retries' period is over); ``gin_rummy_webhook_lag_seconds``:
  from a notification to its delivery (the receiver's 2xx), per delivery.
- ``gin_rummy_replica_reads_total{outcome}``: reads meant for the standby of
  ``GIN_RUMMY_REPLICA_DATABASE_URL``: ``replica`` (made there), ``behind`` (it had not
  caught up in time: made on the primary), ``failed`` (it failed the read: made again on
  the primary), ``skipped`` (made on the primary, the standby having just failed one);
  ``gin_rummy_replica_wait_seconds``: how long a read waited for the standby to catch up.

Several gunicorn workers: with ``PROMETHEUS_MULTIPROC_DIR`` set (to an empty, writable
directory) before prometheus_client is imported, every worker writes its counts there
and ``/metrics`` answers the sum over all workers, whichever worker serves it; the
hooks in ``service.gunicorn_conf`` set it up (``gin-rummy serve`` uses them too).
Without it, each process counts on its own.

``/metrics`` is not rate limited.  With ``METRICS_TOKEN`` (env
``GIN_RUMMY_METRICS_TOKEN``) set it needs ``Authorization: Bearer <that token>``; a
token of its own, so a scraper never holds the operator's power to read every match.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from service.application import Hooks
from service.application.tokens import same_secret

from . import schemas as s
from .docs import operation
from .errors import Problem

bp = Blueprint("metrics", __name__)

#: Methods outside this set are counted as "other", so made-up methods cannot grow the
#: number of series.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REQUESTS = Counter(
    "gin_rummy_http_requests", "HTTP requests by method, route and status.", ["method", "route", "status"]
)
LATENCY = Histogram(
    "gin_rummy_http_request_duration_seconds",
    "Time to answer an HTTP request (to the first byte), by method and route.",
    ["method", "route"],
)
ACTIONS = Counter("gin_rummy_actions", "Actions applied to matches, by type and by whom.", ["type", "by"])
CONFLICTS = Counter(
    "gin_rummy_conflicts", "Answers 409 (conflict, illegal move) and 412 (stale If-Match), by problem code.", ["status", "code"]
)
BOT_DECISIONS = Histogram(
    "gin_rummy_bot_decision_seconds",
    "Time the computer took to choose one move, by level.",
    ["level"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
RATE_LIMITED = Counter("gin_rummy_rate_limited", "Requests refused with 429, by the limit spent.", ["scope"])
LIVE_STREAMS = Gauge("gin_rummy_live_streams", "Live streams open now.", multiprocess_mode="livesum")
STREAMS_REFUSED = Counter(
    "gin_rummy_streams_refused", "Live streams refused with 429, by the limit reached.", ["scope"]
)
STREAMS_LAGGED = Counter(
    "gin_rummy_streams_lagged", "Live streams closed because the client fell too far behind."
)
WEBHOOK_ATTEMPTS = Counter("gin_rummy_webhook_attempts", "Webhook attempts, by outcome (delivered, retried, failed).", ["outcome"])
WEBHOOK_LAG = Histogram(
    "gin_rummy_webhook_lag_seconds",
    "Seconds from a notification to its webhook's delivery.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0, 6 * 3600.0, 24 * 3600.0),
)
REPLICA_READS = Counter(
    "gin_rummy_replica_reads", "Reads meant for the standby, by outcome (replica, behind, failed, skipped).", ["outcome"]
)
REPLICA_WAIT = Histogram(
    "gin_rummy_replica_wait_seconds",
    "Seconds a read waited for the standby to replay what the primary had committed.",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)


class MetricsHooks(Hooks):
    """The application's reports, counted."""

    def action_applied(self, action_type: str, by: str) -> None:
        ACTIONS.labels(action_type, by).inc()

    def bot_decided(self, level: str, seconds: float) -> None:
        BOT_DECISIONS.labels(level).observe(seconds)

    def stream_refused(self, scope: str) -> None:
        STREAMS_REFUSED.labels(scope).inc()

    def webhook_attempted(self, outcome: str, lag: float | None) -> None:
        WEBHOOK_ATTEMPTS.labels(outcome).inc()
        if lag is not None:
            WEBHOOK_LAG.observe(lag)

    def replica_read(self, outcome: str, waited: float) -> None:
        REPLICA_READS.labels(outcome).inc()
        if outcome in ("replica", "behind"):
            REPLICA_WAIT.observe(waited)


HOOKS = MetricsHooks()


def rate_limited(scope: str) -> None:
    RATE_LIMITED.labels(scope).inc()


def count_request(method: str, route: str | None, status: int, seconds: float | None, problem_code: str | None) -> None:
    """Count one answered request (called by the request hooks of ``service.api.logs``)."""
    method = method if method in METHODS else "other"
    route = route or "unmatched"
    key = (method, route, status)
    counters = _children.get(key)
    if counters is None:
        # The labelled children, looked up once per series: labels() costs every request.
        counters = _children[key] = (REQUESTS.labels(method, route, str(status)), LATENCY.labels(method, route))
    counters[0].inc()
    if seconds is not None:
        counters[1].observe(seconds)
    if status in (409, 412):
        CONFLICTS.labels(str(status), problem_code or "unknown").inc()


_children: dict[tuple[str, str, int], tuple] = {}


def exposition(multiprocess_dir: str | None) -> bytes:
    """The metrics as text: every worker's sum in multiprocess mode (the workers' files in
    ``multiprocess_dir``), else this process's."""
    if multiprocess_dir:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


@bp.get("/metrics")
@operation(
    summary="Prometheus metrics (text exposition format)",
    tags=["service"],
    responses={200: "The metrics", 401: s.ProblemSchema},
    auth=False,
    content_type="text/plain",
    description=(
        "Request counts and latencies by route, actions applied, conflicts, the computer's decision times, "
        "rate-limited requests, live streams and webhook attempts and lag, summed over every worker process. Never rate limited. When the server sets "
        "`GIN_RUMMY_METRICS_TOKEN`, send it as `Authorization: Bearer <token>` (the operator and seat tokens "
        "are not accepted here)."
    ),
)
def metrics():
    settings = current_app.extensions["gin_rummy"].settings
    required = settings.metrics_token
    if required:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        # Compared as hashes, so the comparison's time tells nothing, not even the length.
        if scheme.lower() != "bearer" or not same_secret(given.strip(), required):
            raise Problem(
                401, "unauthorized", "send Authorization: Bearer <the metrics token>",
                headers={"WWW-Authenticate": 'Bearer realm="gin-rummy-metrics"'},
            )
    return Response(exposition(settings.metrics_dir), mimetype=None, content_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})
