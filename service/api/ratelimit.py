"""Request rate limits per bearer token and per client address: 429 with Retry-After.

Each limit is a token bucket per key: it holds up to ``burst`` requests and refills at
``rate`` per second; a request takes one, and a request that finds the bucket empty is
refused with 429 ``rate_limited`` and a ``Retry-After`` of the seconds until it would
be served.  A limit is written ``"N/second burst B"`` (also ``N/s``, ``N/minute``,
``N/hour``; without ``burst`` it is N); ``0``, ``off`` or an empty string turns it off.

The buckets live in this process's memory, so every gunicorn worker and every instance
counts on its own: the effective limit of a deployment is the configured one times the
number of worker processes a client's requests are spread over.  That is deliberate: a
shared bucket (in PostgreSQL, say) would cost a round trip and a row lock on every
request, to enforce limits whose purpose is to stop a runaway or hostile client, not to
meter fair use.  The defaults are far above what a person or a front end needs.

Keys: a token's bucket is keyed by a keyed hash of the token (the raw token is never
kept); an address's by ``request.remote_addr``, which honours X-Forwarded-For only
when the app is told to trust that many proxies (``TRUSTED_PROXIES``, see
``service.api``).  Health checks and ``/metrics`` are never limited.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, request

from .errors import Problem

#: Endpoints that are never limited: probes must see the service as it is.
EXEMPT_ENDPOINTS = frozenset({"meta.health", "meta.live", "metrics.metrics"})

#: Most keys one limiter remembers; the least recently seen is forgotten first (a
#: forgotten key starts again with a full bucket).
MAX_KEYS = 100_000

_UNITS = {"s": 1, "m": 60, "h": 3600}
_SPEC = re.compile(
    r"^(?P<count>\d+(?:\.\d+)?)\s*(?:/|per)\s*(?P<unit>s|secs?|seconds?|m|mins?|minutes?|h|hours?)"
    r"(?:\s*,?\s*burst\s+(?P<burst>\d+))?$"
)


@dataclass(frozen=True)
class Rate:
    """``per_second`` requests a second on average, ``burst`` at once."""

    per_second: float
    burst: int

    def __str__(self) -> str:
        return f"{self.per_second:g}/second burst {self.burst}"


def parse_rate(spec: str | None) -> Rate | None:
    """A limit from its text, or None when it is off.

    >>> parse_rate("20/second burst 60")
    Rate(per_second=20.0, burst=60)
    >>> parse_rate("120/minute"), parse_rate("0"), parse_rate("off")
    (Rate(per_second=2.0, burst=120), None, None)
    """
    text = (spec or "").strip().lower()
    if text in ("", "0", "off", "none"):
        return None
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"a rate limit reads like '20/second burst 60' (or '0' for none), got {spec!r}")
    count = float(match["count"])
    if count <= 0:
        return None
    burst = int(match["burst"]) if match["burst"] else max(1, math.ceil(count))
    if burst < 1:
        raise ValueError(f"a rate limit's burst must be at least 1, got {spec!r}")
    return Rate(count / _UNITS[match["unit"][0]], burst)


class TokenBuckets:
    """One token bucket per key, all with the same rate; safe to share between threads."""

    def __init__(self, rate: Rate, *, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS):
        self.rate = rate
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Take one request from the key's bucket: 0 when allowed, else the seconds to wait."""
        now = self.clock()
        with self._lock:
            tokens, when = self._buckets.pop(key, (float(self.rate.burst), now))
            tokens = min(float(self.rate.burst), tokens + (now - when) * self.rate.per_second)
            if tokens >= 1:
                tokens -= 1
                wait = 0.0
            else:
                wait = (1 - tokens) / self.rate.per_second
            self._buckets[key] = (tokens, now)  # re-inserted last: the most recently seen
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            return wait

    def __len__(self) -> int:
        return len(self._buckets)


class RateLimiter:
    """The app's limits: per token and per address (either may be None, i.e. off)."""

    def __init__(self, per_token: Rate | None, per_address: Rate | None, *, clock: Callable[[], float] = time.monotonic):
        self.per_token = TokenBuckets(per_token, clock=clock) if per_token else None
        self.per_address = TokenBuckets(per_address, clock=clock) if per_address else None
        # Bucket keys are a keyed hash of the token: this process's memory never holds a
        # token, nor the hash the database looks tokens up by.
        self._key = secrets.token_bytes(32)

    def token_key(self, token: str) -> str:
        return hashlib.blake2b(token.encode(), key=self._key, digest_size=16).hexdigest()

    def check(self, token: str | None, address: str | None) -> tuple[str, float] | None:
        """``(scope, seconds to wait)`` when the address's or the token's limit is
        spent, else None.  The address is checked first: a client that makes up a
        new token for every request is still one address."""
        if self.per_address is not None:
            wait = self.per_address.take(address or "unknown")
            if wait:
                return "address", wait
        if self.per_token is not None and token:
            wait = self.per_token.take(self.token_key(token))
            if wait:
                return "token", wait
        return None


def too_many_requests(scope: str, wait: float) -> Problem:
    seconds = max(1, math.ceil(wait))
    who = "this token" if scope == "token" else "this client address"
    return Problem(
        429,
        "rate_limited",
        f"too many requests from {who}; retry after {seconds} second{'s' if seconds != 1 else ''}",
        headers={"Retry-After": str(seconds)},
    )


def _bearer(header: str) -> str | None:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def register_rate_limits(app: Flask, on_limited: Callable[[str], None] | None = None) -> RateLimiter:
    """Check every request against the limits of ``RATE_LIMIT_PER_TOKEN`` and
    ``RATE_LIMIT_PER_ADDRESS`` (before the view runs, so a refused request costs little)."""
    limiter = RateLimiter(parse_rate(app.config.get("RATE_LIMIT_PER_TOKEN")), parse_rate(app.config.get("RATE_LIMIT_PER_ADDRESS")))
    app.extensions["gin_rummy_rate_limiter"] = limiter
    if limiter.per_token is None and limiter.per_address is None:
        return limiter

    @app.before_request
    def _limit():
        if request.endpoint in EXEMPT_ENDPOINTS:
            return None
        refused = limiter.check(_bearer(request.headers.get("Authorization", "")), request.remote_addr)
        if refused is None:
            return None
        scope, wait = refused
        if on_limited is not None:
            on_limited(scope)
        raise too_many_requests(scope, wait)

    return limiter
