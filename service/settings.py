"""Every setting of the service, in one typed object read from the environment once.

``Settings.from_env()`` reads them (``os.environ``, or any mapping given) when a process
starts -- ``create_app``, each ``gin-rummy`` command, ``service.gunicorn_conf`` -- and
the object is handed down to what needs a value; nothing else reads the environment.
Each setting is a field below with its environment variable, its type, its default and
what it means (the README's configuration table lists the same variables, and a test
holds the two together).  A value that cannot be read is refused at start with the
variable's name: ``GIN_RUMMY_TRUSTED_PROXIES: not a whole number ('two')``.

A few settings have no variable (``env`` None): they are the service's fixed limits, which
only a test or an embedding program changes, through ``create_app``'s configuration.

Why not environs: it reads ``os.environ`` only, and settings are also read from a
mapping (``create_app``'s configuration, the environment a command hands to gunicorn);
a marshmallow field per setting (the library environs builds on) parses each value the
same way from either.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import multiprocessing
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from marshmallow import ValidationError, fields


class SettingsError(ValueError):
    """A setting whose value cannot be read; the message names its variable."""


@dataclass(frozen=True)
class Rate:
    """``per_second`` requests a second on average, ``burst`` at once."""

    per_second: float
    burst: int

    def __str__(self) -> str:
        return f"{self.per_second:g}/second burst {self.burst}"


_UNITS = {"s": 1, "m": 60, "h": 3600}
_RATE = re.compile(
    r"^(?P<count>\d+(?:\.\d+)?)\s*(?:/|per)\s*(?P<unit>s|secs?|seconds?|m|mins?|minutes?|h|hours?)"
    r"(?:\s*,?\s*burst\s+(?P<burst>\d+))?$"
)
OFF = ("", "0", "off", "none")


def parse_rate(spec: str | None) -> Rate | None:
    """A rate limit from its text, or None when it is off.

    >>> parse_rate("20/second burst 60")
    Rate(per_second=20.0, burst=60)
    >>> parse_rate("120/minute"), parse_rate("0"), parse_rate("off")
    (Rate(per_second=2.0, burst=120), None, None)
    """
    text = (spec or "").strip().lower()
    if text in OFF:
        return None
    match = _RATE.match(text)
    if match is None:
        raise ValueError(f"a rate limit reads like '20/second burst 60' (or '0' for none), got {spec!r}")
    count = float(match["count"])
    if count <= 0:
        return None
    burst = int(match["burst"]) if match["burst"] else max(1, math.ceil(count))
    if burst < 1:
        raise ValueError(f"a rate limit's burst must be at least 1, got {spec!r}")
    return Rate(count / _UNITS[match["unit"][0]], burst)


def parse_count_limit(value: object) -> int | None:
    """A limit on a number of things: a whole number, or 0 / ``off`` for none."""
    text = str(value).strip().lower()
    if text in OFF:
        return None
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"a whole number, or 0 / off for no limit; got {value!r}")
    return int(text)


def _words(value: object) -> tuple[str, ...]:
    """A comma-separated list (a list given as is)."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def _switch(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("off", "0", "no")


def _one_of(*choices: str) -> Callable[[object], str]:
    def read(value: object) -> str:
        text = str(value).strip().lower()
        if text not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return text

    return read


def _whole(value: object) -> int:
    number = _INT(value)
    if number < 0:
        raise ValueError("a whole number, 0 or more")
    return number


def _optional_text(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def _marshmallow(kind: fields.Field) -> Callable[[object], Any]:
    def read(value: object) -> Any:
        try:
            return kind.deserialize(value)
        except ValidationError as exc:
            raise ValueError("; ".join(map(str, exc.messages))) from None

    return read


_INT = _marshmallow(fields.Integer(strict=False))
_FLOAT = _marshmallow(fields.Float(allow_nan=False))


def _seconds(value: object) -> float:
    number = _FLOAT(value)
    if number < 0:
        raise ValueError("a number of seconds, 0 or more")
    return number


def _rate(value: object) -> Rate | None:
    return value if isinstance(value, Rate) else parse_rate(None if value is None else str(value))


@dataclass(frozen=True)
class WebhookEndpoint:
    """An endpoint named by ``GIN_RUMMY_WEBHOOKS``: its URL, its secret (``whsec_`` and
    the base64 of 24 to 64 bytes) and the kinds of notification it takes (none named:
    every kind)."""

    url: str
    secret: str = field(repr=False)
    kinds: tuple[str, ...] = ()


def check_webhook_url(url: object) -> str:
    text = str(url).strip()
    parts = re.match(r"^(https?)://([^/?#\s]+)", text)
    if parts is None:
        raise ValueError(f"a webhook URL is http:// or https:// and a host, got {text!r}")
    return text


def check_webhook_secret(secret: object) -> str:
    text = str(secret)
    raw = text.removeprefix("whsec_")
    try:
        key = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not text.startswith("whsec_") or not 24 <= len(key) <= 64:
        raise ValueError("a webhook secret is whsec_ and the base64 of 24 to 64 random bytes")
    return text


def _webhooks(value: object) -> tuple[WebhookEndpoint, ...] | None:
    """``GIN_RUMMY_WEBHOOKS``: a JSON list of {"url", "secret", "kinds"}; unset: None."""
    if value is None or isinstance(value, tuple):
        return value
    try:
        items = json.loads(str(value)) if str(value).strip() else []
    except json.JSONDecodeError:
        raise ValueError('a JSON list such as [{"url": "https://...", "secret": "whsec_...", "kinds": ["your_move"]}]') from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ValueError("a JSON list of objects, each with url, secret and (optional) kinds")
    made = []
    for item in items:
        unknown = set(item) - {"url", "secret", "kinds"}
        if unknown:
            raise ValueError(f"a webhook has url, secret and kinds, not {', '.join(sorted(unknown))}")
        kinds = item.get("kinds") or []
        if not isinstance(kinds, list) or not all(isinstance(kind, str) for kind in kinds):
            raise ValueError("a webhook's kinds are a list of notification kinds")
        made.append(WebhookEndpoint(check_webhook_url(item.get("url", "")), check_webhook_secret(item.get("secret", "")), tuple(kinds)))
    if len({each.url for each in made}) != len(made):
        raise ValueError("each webhook URL at most once")
    return tuple(made)


def setting(env: str | None, parse: Callable[[object], Any], default: Any, doc: str) -> Any:
    """A field of ``Settings``: read from ``env`` by ``parse``; ``default`` when it is unset."""
    return field(default=default, metadata={"env": env, "parse": parse, "doc": doc})


def _default_workers() -> int:
    return min(4, multiprocessing.cpu_count() * 2)


@dataclass(frozen=True)
class Settings:
    # --- the database -------------------------------------------------------------------
    database_url: str | None = setting(
        "DATABASE_URL", _optional_text, None,
        "The PostgreSQL server (postgresql://user:password@host:5432/dbname); unset: the embedded server.",
    )
    replica_database_url: str | None = setting(
        "GIN_RUMMY_REPLICA_DATABASE_URL", _optional_text, None,
        "A standby of DATABASE_URL's primary for the heavy reads (exports, audits, hands, past states, analyses, the leaderboard, "
        "the lobby, finished matches' events); unset: every read is made on DATABASE_URL.",
    )
    replica_wait_seconds: float = setting(
        "GIN_RUMMY_REPLICA_WAIT_SECONDS", _seconds, 1.0,
        "How long a read waits for the standby to replay what the primary had committed before it reads the primary instead.",
    )
    data_dir: Path | None = setting(
        "GIN_RUMMY_DATA_DIR", lambda v: Path(str(v)).expanduser() if v else None, None,
        "Where the embedded server keeps its data (unset: the user's data folder).",
    )
    # --- who may do what ----------------------------------------------------------------
    operator_token: str | None = setting(
        "GIN_RUMMY_OPERATOR_TOKEN", _optional_text, None,
        "The token that reads every match (support, auditing); unset: there is no operator.",
    )
    metrics_token: str | None = setting(
        "GIN_RUMMY_METRICS_TOKEN", _optional_text, None, "When set, GET /metrics needs it as a bearer token."
    )
    cors_origins: tuple[str, ...] = setting(
        "GIN_RUMMY_CORS_ORIGINS", _words, ("localhost",),
        "Browser origins allowed from another site (comma-separated); * any; localhost (the default) a page on this "
        "machine, any port; none: no other site.",
    )
    trusted_proxies: int = setting(
        "GIN_RUMMY_TRUSTED_PROXIES", _INT, 0,
        "How many proxies stand in front: the client address is then the N-th last X-Forwarded-For entry.",
    )
    # --- limits -------------------------------------------------------------------------
    rate_limit_per_token: Rate | None = setting(
        "GIN_RUMMY_RATE_LIMIT_PER_TOKEN", _rate, Rate(100.0, 300), "Requests per bearer token and worker process."
    )
    rate_limit_per_address: Rate | None = setting(
        "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS", _rate, Rate(1000.0, 3000), "Requests per client address and worker process."
    )
    import_rate_limit_per_address: Rate | None = setting(
        "GIN_RUMMY_IMPORT_RATE_LIMIT_PER_ADDRESS", _rate, Rate(0.5, 30), "Record imports per client address."
    )
    max_content_length: int = setting(None, _INT, 64 * 1024, "The largest request body in bytes (records: their own).")
    guests_per_address: Rate | None = setting(
        "GIN_RUMMY_GUESTS_PER_ADDRESS", _rate, Rate(10 / 60, 20), "Guest players made per client address (all processes)."
    )
    invites_per_address: Rate | None = setting(
        "GIN_RUMMY_INVITES_PER_ADDRESS", _rate, Rate(20 / 3600, 10),
        "Matches with an open seat (an invite, public or not) made per client address (all processes).",
    )
    public_matches_per_player: int | None = setting(
        "GIN_RUMMY_PUBLIC_MATCHES_PER_PLAYER", parse_count_limit, 3, "Public matches in the lobby at once per player."
    )
    cpu_per_address: Rate | None = setting(
        "GIN_RUMMY_CPU_PER_ADDRESS", _rate, Rate(0.1, 30),
        "CPU-seconds of imports and analyses per client address (all processes).",
    )
    cpu_per_token: Rate | None = setting(
        "GIN_RUMMY_CPU_PER_TOKEN", _rate, Rate(0.1, 30), "CPU-seconds of analyses per player, seat or operator."
    )
    heavy_jobs_per_process: int | None = setting(
        "GIN_RUMMY_HEAVY_JOBS_PER_PROCESS", parse_count_limit, 1,
        "Imports and analyses computed at once in one process; more are answered 503 busy.",
    )
    # --- live streams -------------------------------------------------------------------
    streams_per_token: int | None = setting(
        "GIN_RUMMY_STREAMS_PER_TOKEN", parse_count_limit, 4, "Live streams open at once per seat, in one process."
    )
    streams_per_address: int | None = setting(
        "GIN_RUMMY_STREAMS_PER_ADDRESS", parse_count_limit, 100, "Live streams open at once per client address."
    )
    streams_per_process: int | None = setting(
        "GIN_RUMMY_STREAMS_PER_PROCESS", parse_count_limit, 4000, "Live streams open at once in one process."
    )
    stream_heartbeat_seconds: float = setting(
        "GIN_RUMMY_STREAM_HEARTBEAT_SECONDS", _FLOAT, 15.0, "A keep-alive comment after that many quiet seconds."
    )
    stream_buffer_events: int = setting(
        "GIN_RUMMY_STREAM_BUFFER_EVENTS", _INT, 256, "Recent events kept per followed match; a client further behind is dropped."
    )
    stream_send_timeout_seconds: float = setting(
        "GIN_RUMMY_STREAM_SEND_TIMEOUT_SECONDS", _FLOAT, 30.0, "A stream whose client takes nothing that long is closed."
    )
    stream_send_buffer_bytes: int = setting(
        "GIN_RUMMY_STREAM_SEND_BUFFER_BYTES", _INT, 64 * 1024, "A stream socket's send buffer."
    )
    presence_cache_seconds: float = setting(
        None, _FLOAT, 2.0, "How long a process keeps its answer to which seats follow a match live."
    )
    # --- sign-in by the front end's identity provider -------------------------------------
    jwt_issuer: str | None = setting("GIN_RUMMY_JWT_ISSUER", _optional_text, None, "The issuer of sign-in JWTs; unset: none.")
    jwt_audience: str | None = setting("GIN_RUMMY_JWT_AUDIENCE", _optional_text, None, "The audience they name.")
    jwt_jwks_url: str | None = setting("GIN_RUMMY_JWT_JWKS_URL", _optional_text, None, "The issuer's public keys (a URL).")
    jwt_jwks_file: str | None = setting("GIN_RUMMY_JWT_JWKS_FILE", _optional_text, None, "... or a file of them.")
    jwt_name_claim: str = setting(
        "GIN_RUMMY_JWT_NAME_CLAIM", lambda v: str(v) or "name", "name", "The claim a new player's name comes from."
    )
    jwt_leeway_seconds: float = setting(
        "GIN_RUMMY_JWT_LEEWAY_SECONDS", _FLOAT, 30.0, "The clock skew allowed on exp and nbf."
    )
    jwt_jwks_cooldown_seconds: float = setting(
        "GIN_RUMMY_JWT_JWKS_COOLDOWN_SECONDS", _FLOAT, 30.0, "The least seconds between two fetches for unknown key ids."
    )
    jwt_jwks_lifetime_seconds: float = setting(
        "GIN_RUMMY_JWT_JWKS_LIFETIME_SECONDS", _FLOAT, 300.0,
        "How long keys fetched from the JWKS URL are used before it is fetched again (a removed key works at most so long).",
    )
    jwt_max_lifetime_seconds: float = setting(
        "GIN_RUMMY_JWT_MAX_LIFETIME_SECONDS", _FLOAT, 24 * 3600.0,
        "The longest a token may live (exp - iat, or exp - now without iat); a longer one is refused.",
    )
    # --- ratings ------------------------------------------------------------------------
    rated_players: str = setting(
        "GIN_RUMMY_RATED_PLAYERS", _one_of("all", "signed-in"), "all",
        "Whose matches are rated: all players (guests too), or only players signed in by the identity provider.",
    )
    leaderboard_min_opponents: int = setting(
        "GIN_RUMMY_LEADERBOARD_MIN_OPPONENTS", _whole, 3,
        "Distinct opponents, established when played, a player needs to be on the leaderboard.",
    )
    # --- notifications ------------------------------------------------------------------
    reminder_before_seconds: float = setting(
        "GIN_RUMMY_REMINDER_BEFORE_SECONDS", _FLOAT, 12 * 3600.0,
        "A player is reminded of a move this long before its deadline, under clocks of at least twice that (default 12 hours).",
    )
    reminder_sweep_seconds: float = setting(
        "GIN_RUMMY_REMINDER_SWEEP_SECONDS", _FLOAT, 60.0,
        "How often each process looks for reminders due (0: never; a reminder is sent once, by whichever looks first).",
    )
    # --- matchmaking --------------------------------------------------------------------
    matchmaking_poll_seconds: int = setting(
        "GIN_RUMMY_MATCHMAKING_POLL_SECONDS", _whole, 30,
        "A live matchmaking ticket not polled (GET) for this many seconds lapses: its player has left.",
    )
    matchmaking_round_seconds: int = setting(
        "GIN_RUMMY_MATCHMAKING_ROUND_SECONDS", _whole, 10,
        "Seconds between two background rounds of pairing waiting matchmaking tickets in each process (0: none).",
    )
    # --- webhooks -----------------------------------------------------------------------
    webhooks: tuple[WebhookEndpoint, ...] | None = setting(
        "GIN_RUMMY_WEBHOOKS", _webhooks, None,
        'Webhook endpoints, a JSON list of {"url", "secret", "kinds"}; unset: those the operator API added only.',
    )
    webhook_timeout_seconds: float = setting(
        "GIN_RUMMY_WEBHOOK_TIMEOUT_SECONDS", _FLOAT, 10.0, "How long a webhook receiver has to answer an attempt."
    )
    webhook_first_retry_seconds: float = setting(
        "GIN_RUMMY_WEBHOOK_FIRST_RETRY_SECONDS", _FLOAT, 5.0,
        "The wait after a webhook's first failed attempt; it doubles after each one (at most an hour).",
    )
    webhook_retry_period_seconds: float = setting(
        "GIN_RUMMY_WEBHOOK_RETRY_PERIOD_SECONDS", _FLOAT, 3 * 24 * 3600.0,
        "How long after its notification a webhook is retried before it fails (default 3 days).",
    )
    webhook_senders: int = setting(
        "GIN_RUMMY_WEBHOOK_SENDERS", _whole, 16, "Webhook attempts under way at once in each process (0: this process sends none)."
    )
    webhook_poll_seconds: float = setting(
        "GIN_RUMMY_WEBHOOK_POLL_SECONDS", _FLOAT, 1.0, "How often each process looks for webhook deliveries due."
    )
    webhook_log_days: float = setting(
        "GIN_RUMMY_WEBHOOK_LOG_DAYS", _FLOAT, 7.0, "How long the delivery log keeps a delivered or failed webhook."
    )
    # --- signed records -----------------------------------------------------------------
    signing_key_file: str | None = setting(
        "GIN_RUMMY_SIGNING_KEY_FILE", _optional_text, None, "An Ed25519 key (PEM) to sign exports with; unset: the service's own."
    )
    public_url: str | None = setting(
        "GIN_RUMMY_PUBLIC_URL", _optional_text, None, "The service's base URL, named in its signatures."
    )
    trusted_jwks: tuple[str, ...] = setting(
        "GIN_RUMMY_TRUSTED_JWKS", _words, (), "Other services' key sets (URLs or files) whose signatures imports check."
    )
    # --- background work ----------------------------------------------------------------
    retry_secret: str | None = setting(
        "GIN_RUMMY_RETRY_SECRET", _optional_text, None,
        "Seals the seat token a join or rematch with an Idempotency-Key gives, for its retry (unset: kept in the database).",
    )
    idempotency_purge_seconds: float = setting(
        None, _FLOAT, 3600.0, "How often a service that connected on its own purges old Idempotency-Key answers (0: never)."
    )
    # --- the server ---------------------------------------------------------------------
    request_log: bool = setting("GIN_RUMMY_REQUEST_LOG", _switch, True, "One JSON line per request on standard error.")
    bind: str = setting("GIN_RUMMY_BIND", str, "0.0.0.0:8000", "gunicorn's address (service/gunicorn_conf.py).")
    workers: int = setting("GIN_RUMMY_WORKERS", _INT, None, "gunicorn's processes (default twice the cores, at most 4).")
    connections: int = setting(
        "GIN_RUMMY_CONNECTIONS", _INT, 5000, "Simultaneous connections per process, live streams included."
    )
    metrics_dir: str | None = setting(
        "PROMETHEUS_MULTIPROC_DIR", _optional_text, None,
        "Where gunicorn's workers share their metrics (the server makes one when unset).",
    )

    def __post_init__(self) -> None:
        if self.workers is None:
            object.__setattr__(self, "workers", _default_workers())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings of ``environ`` (default ``os.environ``), then ``overrides`` by
        field name (given as a value of the field's type, or as its text)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for each in dataclasses.fields(cls):
            env = each.metadata["env"]
            if env is not None and env in environ:
                values[each.name] = _parsed(each, environ[env], env)
        return cls(**values).overridden(**overrides)

    def overridden(self, **overrides: Any) -> Settings:
        """These settings with ``overrides`` by field name (values, or their text)."""
        known = {each.name: each for each in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - set(known))
        if unknown:
            raise SettingsError(f"no such setting: {', '.join(unknown)}")
        if not overrides:
            return self
        return dataclasses.replace(self, **{name: _parsed(known[name], raw, name.upper()) for name, raw in overrides.items()})

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Each environment variable read, with what it sets."""
        return {f.metadata["env"]: f.metadata["doc"] for f in dataclasses.fields(cls) if f.metadata["env"]}



def _parsed(each: dataclasses.Field, raw: object, where: str) -> Any:
    try:
        return each.metadata["parse"](raw)
    except (ValueError, TypeError) as exc:
        raise SettingsError(f"{where}: {exc} ({raw!r})") from None


def setting_names() -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(Settings))
