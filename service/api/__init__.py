"""The REST API: ``create_app(config=None)`` is the only composition root.

Configuration (keys of ``config``, or environment variables where named):

- ``DATABASE_URL`` (env ``DATABASE_URL``): the PostgreSQL server; without one, the
  embedded server is started (``service.store.database``).
- ``OPERATOR_TOKEN`` (env ``GIN_RUMMY_OPERATOR_TOKEN``): the token that may read every
  match, for support and auditing.  Unset: there is no operator.
- ``STORE``: an ``EventStore`` to use instead of connecting (tests).
- ``CLOCK``: a function giving the time now (an aware ``datetime``) instead of the
  system's (tests: deadlines without waiting).
- ``PRESENCE_CACHE_SECONDS`` (2): how long a process keeps its answer to which seats
  of a match follow it live (``opponent.connected``).
- Live streams (``service.live``): ``STREAMS_PER_TOKEN`` (env
  ``GIN_RUMMY_STREAMS_PER_TOKEN``, default 4), ``STREAMS_PER_ADDRESS``
  (``GIN_RUMMY_STREAMS_PER_ADDRESS``, 100) and ``STREAMS_PER_PROCESS``
  (``GIN_RUMMY_STREAMS_PER_PROCESS``, 4000): the most streams open at once in one
  process per seat token (the operator's is not counted), per client address and in
  all; beyond them 429 ``too_many_streams`` with Retry-After; 0 or ``off``: no limit.
  ``STREAM_HEARTBEAT_SECONDS`` (env ``GIN_RUMMY_STREAM_HEARTBEAT_SECONDS``, 15): a
  comment line after that long without events.  ``STREAM_BUFFER_EVENTS``
  (``GIN_RUMMY_STREAM_BUFFER_EVENTS``, 256): recent events kept per followed match; a
  follower further behind is disconnected and resumes with Last-Event-ID.
  ``STREAM_SEND_TIMEOUT_SECONDS`` (``GIN_RUMMY_STREAM_SEND_TIMEOUT_SECONDS``, 30): a
  stream whose client takes nothing for that long is closed.
  ``STREAM_SEND_BUFFER_BYTES`` (``GIN_RUMMY_STREAM_SEND_BUFFER_BYTES``, 65536): the
  socket send buffer of a stream (the kernel's memory per slow client).
- ``MAX_CONTENT_LENGTH``: largest request body in bytes (64 KiB).
- ``CORS_ORIGINS`` (env ``GIN_RUMMY_CORS_ORIGINS``, comma-separated, or ``*``): browser
  origins allowed to call the API from another site.  Unset: same origin only.
- ``RATE_LIMIT_PER_TOKEN`` (env ``GIN_RUMMY_RATE_LIMIT_PER_TOKEN``, default
  ``"100/second burst 300"``) and ``RATE_LIMIT_PER_ADDRESS`` (env
  ``GIN_RUMMY_RATE_LIMIT_PER_ADDRESS``, default ``"1000/second burst 3000"``): requests
  allowed per bearer token and per client address, as ``"N/second burst B"`` (or
  ``N/minute``, ``N/hour``); ``0`` or ``off`` turns a limit off.  Beyond a limit the
  answer is 429 ``rate_limited`` with ``Retry-After``.  The counts are kept per worker
  process (see ``service.api.ratelimit`` for why), so a deployment of W processes
  allows up to W times these; the defaults are far above a person's or a front end's
  needs and only stop runaway clients.  Health checks and ``/metrics`` are exempt.
- ``IMPORT_RATE_LIMIT_PER_ADDRESS`` (env ``GIN_RUMMY_IMPORT_RATE_LIMIT_PER_ADDRESS``,
  default ``"30/minute burst 30"``): record imports allowed per client address (an
  import replays a whole match), on top of the limits above; ``off`` for none.
- Signed records (``service.records.signing``): ``SIGNING_KEY_FILE`` (env
  ``GIN_RUMMY_SIGNING_KEY_FILE``): a PEM PKCS#8 Ed25519 private key to sign exports
  with; unset, the service makes its own once and keeps it in the database
  (``gin-rummy keys rotate`` makes a new one).  ``PUBLIC_URL``
  (``GIN_RUMMY_PUBLIC_URL``): the service's base URL, named in its signatures as the
  signer.  ``TRUSTED_JWKS`` (``GIN_RUMMY_TRUSTED_JWKS``, comma-separated URLs or files):
  other services' key sets, whose signatures an import checks too.
- ``TRUSTED_PROXIES`` (env ``GIN_RUMMY_TRUSTED_PROXIES``, default 0): how many proxies
  (nginx, a load balancer) stand in front of the service.  With N > 0 the client
  address is taken from the N-th last X-Forwarded-For entry (and the scheme from
  X-Forwarded-Proto); with 0 those headers are ignored, since any client can send them.
  The address limit and the request log use that address.
- ``METRICS_TOKEN`` (env ``GIN_RUMMY_METRICS_TOKEN``): when set, ``GET /metrics`` needs
  it as a bearer token.  Unset: ``/metrics`` is open (keep it off the public network, e.g.
  by nginx).  With several workers, ``PROMETHEUS_MULTIPROC_DIR`` makes ``/metrics`` sum
  over them (``service.api.metrics``).
- Sign-in by the front end's own identity provider (``service.players``):
  ``JWT_ISSUER`` (env ``GIN_RUMMY_JWT_ISSUER``), ``JWT_AUDIENCE``
  (``GIN_RUMMY_JWT_AUDIENCE``) and its keys, ``JWT_JWKS_URL``
  (``GIN_RUMMY_JWT_JWKS_URL``) or ``JWT_JWKS_FILE`` (``GIN_RUMMY_JWT_JWKS_FILE``);
  ``JWT_NAME_CLAIM`` (``GIN_RUMMY_JWT_NAME_CLAIM``, default ``name``): the claim a new
  player's name is taken from; ``JWT_LEEWAY_SECONDS`` (``GIN_RUMMY_JWT_LEEWAY_SECONDS``,
  default 30): the clock skew allowed on ``exp`` and ``nbf``.  Keys fetched from the URL
  are kept 5 minutes; a token naming a key id not among them fetches them again, at most
  once per ``JWT_JWKS_COOLDOWN_SECONDS`` (``GIN_RUMMY_JWT_JWKS_COOLDOWN_SECONDS``, 30).
  Unset issuer: JWTs are not accepted (guests and seat tokens still are).
- ``IDEMPOTENCY_PURGE_SECONDS`` (default 3600): how often a service that connected on
  its own (not given a ``STORE``) deletes the answers to Idempotency-Keys older than 24
  hours (``service.store.idempotency``); 0: never (then run
  ``gin-rummy db purge-idempotency`` from a scheduler).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from service.live import LiveHub, Presence, StreamLimits
from service.matches import MatchService
from service.players import JwtVerifier
from service.records.signing import Signer
from service.store import EventStore, connect
from service.store.database import Probe
from service.store.idempotency import purge_periodically

from . import metrics
from .auth import KnownTokens
from .cors import register_cors
from .errors import Request, register_error_handlers
from .logs import register_request_logs
from .ratelimit import TokenBuckets, parse_rate, register_rate_limits

DEFAULT_RATE_LIMIT_PER_TOKEN = "100/second burst 300"
DEFAULT_RATE_LIMIT_PER_ADDRESS = "1000/second burst 3000"
#: Imports replay a whole match: far fewer of them than of other requests.
DEFAULT_IMPORT_RATE_LIMIT = "30/minute burst 30"


@dataclass
class Services:
    store: EventStore
    matches: MatchService
    hub: LiveHub
    probe: Probe
    presence: Presence
    #: Pools this app opened itself (closed by ``close``; a given STORE is the caller's).
    owned_pools: tuple = ()

    def close(self) -> None:
        """End the streams and close the pools the app opened (a server's worker exit)."""
        if self.hub is not None:
            self.hub.shutdown()
        for pool in self.owned_pools:
            pool.close()


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.request_class = Request
    app.config.update(
        OPERATOR_TOKEN=os.environ.get("GIN_RUMMY_OPERATOR_TOKEN") or None,
        CORS_ORIGINS=os.environ.get("GIN_RUMMY_CORS_ORIGINS", ""),
        RATE_LIMIT_PER_TOKEN=os.environ.get("GIN_RUMMY_RATE_LIMIT_PER_TOKEN", DEFAULT_RATE_LIMIT_PER_TOKEN),
        RATE_LIMIT_PER_ADDRESS=os.environ.get("GIN_RUMMY_RATE_LIMIT_PER_ADDRESS", DEFAULT_RATE_LIMIT_PER_ADDRESS),
        TRUSTED_PROXIES=int(os.environ.get("GIN_RUMMY_TRUSTED_PROXIES") or 0),
        METRICS_TOKEN=os.environ.get("GIN_RUMMY_METRICS_TOKEN") or None,
        STREAMS_PER_TOKEN=os.environ.get("GIN_RUMMY_STREAMS_PER_TOKEN", "4"),
        STREAMS_PER_ADDRESS=os.environ.get("GIN_RUMMY_STREAMS_PER_ADDRESS", "100"),
        STREAMS_PER_PROCESS=os.environ.get("GIN_RUMMY_STREAMS_PER_PROCESS", "4000"),
        STREAM_HEARTBEAT_SECONDS=float(os.environ.get("GIN_RUMMY_STREAM_HEARTBEAT_SECONDS") or 15),
        STREAM_BUFFER_EVENTS=int(os.environ.get("GIN_RUMMY_STREAM_BUFFER_EVENTS") or 256),
        STREAM_SEND_TIMEOUT_SECONDS=float(os.environ.get("GIN_RUMMY_STREAM_SEND_TIMEOUT_SECONDS") or 30),
        STREAM_SEND_BUFFER_BYTES=int(os.environ.get("GIN_RUMMY_STREAM_SEND_BUFFER_BYTES") or 64 * 1024),
        MAX_CONTENT_LENGTH=64 * 1024,
        JSON_SORT_KEYS=False,
        IDEMPOTENCY_PURGE_SECONDS=3600,
        IMPORT_RATE_LIMIT_PER_ADDRESS=os.environ.get("GIN_RUMMY_IMPORT_RATE_LIMIT_PER_ADDRESS", DEFAULT_IMPORT_RATE_LIMIT),
        SIGNING_KEY_FILE=os.environ.get("GIN_RUMMY_SIGNING_KEY_FILE") or None,
        PUBLIC_URL=os.environ.get("GIN_RUMMY_PUBLIC_URL") or None,
        TRUSTED_JWKS=os.environ.get("GIN_RUMMY_TRUSTED_JWKS", ""),
        JWT_ISSUER=os.environ.get("GIN_RUMMY_JWT_ISSUER") or None,
        JWT_AUDIENCE=os.environ.get("GIN_RUMMY_JWT_AUDIENCE") or None,
        JWT_JWKS_URL=os.environ.get("GIN_RUMMY_JWT_JWKS_URL") or None,
        JWT_JWKS_FILE=os.environ.get("GIN_RUMMY_JWT_JWKS_FILE") or None,
        JWT_NAME_CLAIM=os.environ.get("GIN_RUMMY_JWT_NAME_CLAIM") or "name",
        JWT_LEEWAY_SECONDS=float(os.environ.get("GIN_RUMMY_JWT_LEEWAY_SECONDS") or 30),
        JWT_JWKS_COOLDOWN_SECONDS=float(os.environ.get("GIN_RUMMY_JWT_JWKS_COOLDOWN_SECONDS") or 30),
    )
    app.config.update(config or {})
    store = reader = app.config.get("STORE")
    owned = ()
    if store is None:
        url = app.config.get("DATABASE_URL") or os.environ.get("DATABASE_URL")
        store = EventStore(connect(url))
        # Streams read through a small pool of their own: a crowd of them catching up
        # never takes the connections that actions need.
        reader = EventStore(connect(url, min_size=1, max_size=4), cache_size=0)
        owned = (store.pool, reader.pool)
        if app.config["IDEMPOTENCY_PURGE_SECONDS"]:
            purge_periodically(store.pool, every=float(app.config["IDEMPOTENCY_PURGE_SECONDS"]))
    limits = StreamLimits(
        per_token=_count_limit(app.config["STREAMS_PER_TOKEN"], "STREAMS_PER_TOKEN"),
        per_address=_count_limit(app.config["STREAMS_PER_ADDRESS"], "STREAMS_PER_ADDRESS"),
        per_process=_count_limit(app.config["STREAMS_PER_PROCESS"], "STREAMS_PER_PROCESS"),
    )
    hub = LiveHub(reader, limits=limits, buffer_events=int(app.config["STREAM_BUFFER_EVENTS"])) if store.pool else None
    probe = Probe(store.pool.conninfo) if store.pool else None
    clock = app.config.get("CLOCK")  # tests: a clock of their own (a function giving an aware datetime)
    matches = MatchService(store, hooks=metrics.HOOKS, **({"clock": clock} if clock else {}))
    presence = Presence(cache_seconds=float(app.config.get("PRESENCE_CACHE_SECONDS", 2.0)))
    app.extensions["gin_rummy"] = Services(store, matches, hub, probe, presence, owned)
    app.extensions["gin_rummy_known_tokens"] = KnownTokens()
    app.extensions["gin_rummy_jwt"] = _jwt_verifier(app.config)
    app.extensions["gin_rummy_signer"] = Signer(
        store, key_file=app.config["SIGNING_KEY_FILE"], signer=app.config["PUBLIC_URL"],
        trusted=[s for s in str(app.config["TRUSTED_JWKS"]).split(",") if s.strip()],
    )
    app.json.sort_keys = False
    proxies = int(app.config["TRUSTED_PROXIES"])
    if proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)

    register_error_handlers(app)
    register_cors(app)
    # Order matters: a refused request (429) must already have its id and its clock.
    register_request_logs(app)  # and the request metrics
    register_rate_limits(app, on_limited=metrics.rate_limited)
    imports = parse_rate(app.config["IMPORT_RATE_LIMIT_PER_ADDRESS"])
    app.extensions["gin_rummy_import_limiter"] = TokenBuckets(imports) if imports else None
    from . import coach, matches, meta, players, records, web

    # Seat views encoded, by (match, version, seat, ...); provenance, by match; the
    # analysis of finished hands, by (match, hand, computer version).
    app.extensions["gin_rummy_views"] = matches.Memo()
    app.extensions["gin_rummy_provenance"] = matches.Memo(8192)
    app.extensions["gin_rummy_analyses"] = matches.Memo(1024)

    app.register_blueprint(meta.bp)
    app.register_blueprint(metrics.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(players.bp)
    app.register_blueprint(records.bp)
    app.register_blueprint(coach.bp)
    app.register_blueprint(web.bp)
    return app


def _jwt_verifier(config) -> JwtVerifier | None:
    if not config.get("JWT_ISSUER"):
        return None
    if not config.get("JWT_AUDIENCE"):
        raise ValueError("GIN_RUMMY_JWT_ISSUER is set: set GIN_RUMMY_JWT_AUDIENCE too (the audience its tokens name)")
    return JwtVerifier(
        config["JWT_ISSUER"], config["JWT_AUDIENCE"], jwks_url=config.get("JWT_JWKS_URL"),
        jwks_file=config.get("JWT_JWKS_FILE"), name_claim=config.get("JWT_NAME_CLAIM") or "name",
        leeway=float(config.get("JWT_LEEWAY_SECONDS", 30)),
        refetch_cooldown=float(config.get("JWT_JWKS_COOLDOWN_SECONDS", 30)),
    )


def _count_limit(value, name: str) -> int | None:
    """A limit on a number of things: a whole number, or 0 / ``off`` for none."""
    text = str(value).strip().lower()
    if text in ("", "0", "off", "none"):
        return None
    if not text.isdigit():
        raise ValueError(f"{name} must be a whole number, or 0 / off for no limit; got {value!r}")
    return int(text)
