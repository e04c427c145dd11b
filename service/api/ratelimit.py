"""Request rate limits per bearer token and per client address: 429 with Retry-After.

Each limit is a token bucket per key: it holds up to ``burst`` requests and refills at
``rate`` per second; a request takes one, and a request that finds the bucket empty is
refused with 429 ``rate_limited`` and a ``Retry-After`` of the seconds until it would
be served.  A limit is written ``"N/second burst B"`` (also ``N/s``, ``N/minute``,
``N/hour``; without ``burst`` it is N); ``0``, ``off`` or an empty string turns it off.

Every answer to a request the limits counted says where the caller stands, in the
headers of the IETF's RateLimit fields (draft-ietf-httpapi-ratelimit-headers), one item
per limit that applies, named by its scope::

    RateLimit-Policy: "address";q=3000;w=3, "token";q=300;w=3
    RateLimit: "address";r=2987;t=1, "token";r=288;t=1

``q`` is the burst (the requests that may be made at once) and ``w`` the seconds the
bucket takes to refill from empty; ``r`` the requests left now and ``t`` the seconds
until the bucket is full again.  Why these rather than the older ``X-RateLimit-*``
headers: they are on the standards track, and they name each of several limits (per
token and per address) in one field, where ``X-RateLimit-Limit`` holds one number.

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
import secrets
import time
from collections.abc import Callable

from flask import Flask, g, request

from service.lru import LRU
from service.settings import Rate, parse_rate

from .errors import Problem
from .http import bearer_of

__all__ = ["Rate", "RateLimiter", "TokenBuckets", "parse_rate", "register_rate_limits"]

#: Endpoints that are never limited: probes must see the service as it is.
EXEMPT_ENDPOINTS = frozenset({"meta.health", "meta.live", "metrics.metrics"})

#: Most keys one limiter remembers; the least recently seen is forgotten first (a
#: forgotten key starts again with a full bucket).
MAX_KEYS = 100_000

class TokenBuckets:
    """One token bucket per key (an ``LRU``: the least recently seen key is forgotten
    first, and starts again with a full bucket), all with the same rate; safe to share
    between threads."""

    def __init__(self, rate: Rate, *, clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS):
        self.rate = rate
        self.clock = clock
        self._buckets: LRU[str, tuple[float, float]] = LRU(max_keys)  # key -> (tokens, when)

    def take(self, key: str) -> float:
        """Take one request from the key's bucket: 0 when allowed, else the seconds to wait."""
        return self.take_counted(key)[0]

    def take_counted(self, key: str) -> tuple[float, float]:
        """``take``, and the requests left in the bucket after it (a fraction: refilling)."""
        now = self.clock()
        rate = self.rate

        def refill_and_take(bucket: tuple[float, float] | None) -> tuple[tuple[float, float], tuple[float, float]]:
            tokens, when = bucket if bucket is not None else (float(rate.burst), now)
            tokens = min(float(rate.burst), tokens + (now - when) * rate.per_second)
            if tokens >= 1:
                return (tokens - 1, now), (0.0, tokens - 1)
            return (tokens, now), ((1 - tokens) / rate.per_second, tokens)

        return self._buckets.compute(key, refill_and_take)

    def policy_item(self, name: str) -> str:
        """This limit's item of ``RateLimit-Policy``."""
        return f'"{name}";q={self.rate.burst};w={max(1, math.ceil(self.rate.burst / self.rate.per_second))}'

    def item(self, name: str, remaining: float) -> str:
        """This limit's item of ``RateLimit`` with ``remaining`` requests left."""
        full_in = max(0, math.ceil((self.rate.burst - remaining) / self.rate.per_second))
        return f'"{name}";r={max(0, math.floor(remaining))};t={full_in}'

    def keys(self) -> list[str]:
        return self._buckets.keys()

    def __len__(self) -> int:
        return len(self._buckets)


class RateLimiter:
    """The app's limits: per token and per address (either may be None, i.e. off)."""

    def __init__(
        self, per_token: Rate | None, per_address: Rate | None, *, clock: Callable[[], float] = time.monotonic,
        on_limited: Callable[[str], None] | None = None,
    ):
        self.per_token = TokenBuckets(per_token, clock=clock) if per_token else None
        self.per_address = TokenBuckets(per_address, clock=clock) if per_address else None
        #: Told the scope (``address`` or ``token``) of each request refused.
        self.on_limited = on_limited
        # Bucket keys are a keyed hash of the token: this process's memory never holds a
        # token, nor the hash the database looks tokens up by.
        self._key = secrets.token_bytes(32)

    @property
    def off(self) -> bool:
        return self.per_token is None and self.per_address is None

    def admit(self, token: str | None, address: str | None) -> dict[str, str]:
        """The RateLimit fields of a request the limits let through; raises the 429 of
        one they refuse."""
        fields: dict[str, str] = {}
        refused = self.check(token, address, fields)
        if refused is not None:
            if self.on_limited is not None:
                self.on_limited(refused[0])
            raise too_many_requests(*refused, fields)
        return fields

    def token_key(self, token: str) -> str:
        return hashlib.blake2b(token.encode(), key=self._key, digest_size=16).hexdigest()

    def check(self, token: str | None, address: str | None, headers: dict[str, str] | None = None) -> tuple[str, float] | None:
        """``(scope, seconds to wait)`` when the address's or the token's limit is
        spent, else None.  The address is checked first: a client that makes up a
        new token for every request is still one address.  ``headers`` gets the
        RateLimit fields of the limits counted."""
        counted: list[tuple[str, TokenBuckets, float]] = []
        refused = None
        if self.per_address is not None:
            wait, left = self.per_address.take_counted(address or "unknown")
            counted.append(("address", self.per_address, left))
            if wait:
                refused = ("address", wait)
        if refused is None and self.per_token is not None and token:
            wait, left = self.per_token.take_counted(self.token_key(token))
            counted.append(("token", self.per_token, left))
            if wait:
                refused = ("token", wait)
        if headers is not None and counted:
            headers["RateLimit-Policy"] = ", ".join(buckets.policy_item(name) for name, buckets, _ in counted)
            headers["RateLimit"] = ", ".join(buckets.item(name, left) for name, buckets, left in counted)
        return refused


def too_many_requests(scope: str, wait: float, headers: dict[str, str] | None = None) -> Problem:
    seconds = max(1, math.ceil(wait))
    who = "this token" if scope == "token" else "this client address"
    return Problem(
        429,
        "rate_limited",
        f"too many requests from {who}; retry after {seconds} second{'s' if seconds != 1 else ''}",
        headers={**(headers or {}), "Retry-After": str(seconds)},
    )


def register_rate_limits(
    app: Flask, per_token: Rate | None, per_address: Rate | None, on_limited: Callable[[str], None] | None = None
) -> RateLimiter:
    """Check every request against the limits per token and per address (the settings'
    ``rate_limit_per_token`` and ``rate_limit_per_address``), before the view runs, so a
    refused request costs little."""
    limiter = RateLimiter(per_token, per_address, on_limited=on_limited)
    app.extensions["gin_rummy_rate_limiter"] = limiter
    if limiter.off:
        return limiter

    @app.before_request
    def _limit():
        if request.endpoint in EXEMPT_ENDPOINTS:
            return None
        g.rate_limit_fields = limiter.admit(bearer_of(request.headers.get("Authorization", "")), request.remote_addr)
        return None

    @app.after_request
    def _fields(response):
        fields = g.pop("rate_limit_fields", None)
        if fields:
            response.headers.update(fields)
        return response

    return limiter
