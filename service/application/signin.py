"""Sign-in by the front end's own identity provider: a JWT verified against its JWKS.

A JWT is accepted when ``JwtVerifier`` is configured (issuer, audience, keys): its
signature (RS256, ES256 or EdDSA, by a key of the JWKS named by its ``kid``; an RSA key
of fewer than 2,048 bits is never used) is checked by PyJWT, with its issuer and
audience; its ``sub`` (a non-empty string), ``exp``, ``nbf`` and ``iat`` (numbers) are
checked here, and so is its lifetime (at most ``max_lifetime`` seconds).  The ``sub``
becomes a player, made on first sight and named from a claim.  A refusal says which
check failed, in our words: it repeats nothing of the token.

The key set is a file, read again as soon as it changes (its inode, size or mtime, looked
at on every verification: one ``stat``), or a URL, fetched again once its copy is
``jwks_lifetime`` seconds old or a token names a key it lacks.  Each reading that
changes the keys is a new ``generation``: a caller remembering a verified token checks
it is still the current one, so a withdrawn key stops working for tokens already seen.
(Guests have a player token of ours instead: ``service.application.tokens``.)
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from service.engine.game import NAME_LENGTH
from service.settings import Settings
from service.store import players as store_players

from .errors import Unauthorized

log = logging.getLogger(__name__)

ALGORITHMS = ("RS256", "ES256", "EdDSA")
#: The fewest bits of an RSA key this service verifies with (NIST SP 800-131A).
MIN_RSA_BITS = 2048
#: A file changed this recently is read again on the next look (a file system keeping
#: coarse mtimes could show a second change within the same tick as no change).
SETTLE_NS = 2_000_000_000
TIME_CLAIMS = ("exp", "nbf", "iat")
#: The codes of a refused sign-in token (the API reference lists them).
REFUSALS = (
    "unsupported_algorithm", "invalid_header", "unknown_key", "weak_key", "invalid_signature", "token_expired",
    "token_not_yet_valid", "lifetime_too_long", "wrong_issuer", "wrong_audience", "missing_claim", "invalid_claim",
    "invalid_token",
)
#: Terminal escape sequences (CSI ``ESC [ … final``, OSC ``ESC ] … BEL/ST``, and two-character ones).
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[0-~]")


def clean_name(value: object, fallback: str = "Player") -> str:
    """A name given by an identity provider, made fit to show: no control or formatting
    characters, spaces collapsed, at most NAME_LENGTH characters."""
    if not isinstance(value, str):
        return fallback
    value = ESCAPES.sub(" ", value)
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in value)
    name = " ".join(kept.split())[:NAME_LENGTH].strip()
    return name or fallback


def is_seconds(value: object) -> bool:
    """A NumericDate: a number (not a boolean, not a string), finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


class JwtRefused(Unauthorized):
    """A sign-in token refused: ``code`` names the check it failed."""

    def __init__(self, code: str, message: str):
        super().__init__(message, code=code, reason=code)


@dataclass(frozen=True)
class KeySet:
    """One reading of the issuer's JWKS: its usable keys by id, the RSA keys too short
    to use (their bits), and the generation it is."""

    generation: int
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    weak: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Verified:
    """A token's verified claims, and the generation of the key set that verified it."""

    claims: dict
    generation: int


class JwtVerifier:
    """Verifies bearer JWTs of one issuer and audience against a JWKS (a URL, fetched
    and cached, fetched again for a key id it does not know; or a file)."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_url: str | None = None,
        jwks_file: str | None = None,
        name_claim: str = "name",
        leeway: float = 0,
        refetch_cooldown: float = 30,
        jwks_lifetime: float = 300,
        max_lifetime: float = 24 * 3600,
    ):
        if not (jwks_url or jwks_file):
            raise ValueError("a JWT issuer needs its keys: GIN_RUMMY_JWT_JWKS_URL or GIN_RUMMY_JWT_JWKS_FILE")
        self.issuer, self.audience, self.name_claim, self.leeway = issuer, audience, name_claim, leeway
        self.max_lifetime = max_lifetime
        # The key set is kept ``jwks_lifetime`` seconds (a key the provider withdraws
        # stops working by then); a token naming a key not in it fetches it again, at
        # most once per ``refetch_cooldown`` seconds, so made-up key ids cannot flood
        # the provider.
        self._client = None
        if jwks_url:
            self._client = jwt.PyJWKClient(jwks_url, lifespan=jwks_lifetime, timeout=5, cooldown_duration=refetch_cooldown)
        self._file = Path(jwks_file) if jwks_file else None
        self._stamp: tuple[int, int, int, int] | None = None  # the file's (device, inode, size, mtime) read last
        self._source: object = None  # what the current key set was made from (the file's text, the client's set)
        self._keys = KeySet(0)
        self._complained: object = None  # the stamp of the unreadable file last logged
        self._said_weak: set[tuple[str, int]] = set()
        # One reading at a time: a request does not see a key set half made.
        self._lock = threading.Lock()

    # --- the key set ---------------------------------------------------------------------

    def generation(self) -> int:
        """The generation of the key set as it is now (read again when it changed or
        its copy is too old)."""
        return self._current().generation

    def _current(self, kid: str | None = None) -> KeySet:
        with self._lock:
            if self._client is None:
                self._read_file()
                return self._keys
            try:
                if kid is not None and kid not in self._keys.keys and kid not in self._keys.weak:
                    self._client.get_signing_key(kid)  # fetches again for an unknown kid (cooldown)
            except jwt.PyJWKClientError:
                pass  # the key set read below lacks it: unknown_key
            try:
                jwk_set = self._client.get_jwk_set()  # the cached copy while it is young enough
            except jwt.PyJWTError:
                raise JwtRefused("unknown_key", "the issuer's keys cannot be fetched now") from None
            if jwk_set is not self._source:
                self._use(jwk_set, jwk_set.keys)
            return self._keys

    def _read_file(self) -> None:
        assert self._file is not None, "a JWT issuer has a JWKS URL or a JWKS file"
        try:
            stat = self._file.stat()
            stamp = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        except OSError:
            stamp = None
        if stamp is not None and stamp == self._stamp:
            return
        # A file changed within SETTLE_NS is looked at again next time, whatever its stamp.
        settled = stamp is not None and time.time_ns() - stamp[3] > SETTLE_NS
        self._stamp = stamp if settled else None
        try:
            text = self._file.read_text()
            if text != self._source:
                jwks = json.loads(text)
                if not isinstance(jwks, dict):
                    raise ValueError("a JWKS is a JSON object")
                self._use(text, jwt.PyJWKSet.from_dict(jwks).keys)
        except (OSError, ValueError, jwt.PyJWTError) as exc:
            # Fail closed: a key set that cannot be read verifies nothing until it can.
            if self._source is not None or stamp != self._complained:
                self._complained = stamp
                log.warning("the JWKS file %s cannot be read (%s): no sign-in token is accepted until it can", self._file, exc)
            self._use(None, [])

    def _use(self, source: object, keys: list[jwt.PyJWK]) -> None:
        """Make ``keys`` (read from ``source``) the key set, a new generation."""
        usable: dict[str, jwt.PyJWK] = {}
        weak: dict[str, int] = {}
        for key in keys:
            if not key.key_id or key.public_key_use not in ("sig", None):
                continue
            if isinstance(key.key, RSAPublicKey) and key.key.key_size < MIN_RSA_BITS:
                weak[key.key_id] = key.key.key_size
                said = (key.key_id, key.key.public_numbers().n)
                if said not in self._said_weak:  # once per key, not per reading or request
                    self._said_weak.add(said)
                    log.warning(
                        "the issuer's JWKS key %r is a %d-bit RSA key: it is not used (at least %d bits)",
                        key.key_id, key.key.key_size, MIN_RSA_BITS,
                    )
                continue
            usable[key.key_id] = key
        self._source = source
        self._keys = KeySet(self._keys.generation + 1, usable, weak)

    def _key(self, kid: object) -> tuple[jwt.PyJWK, int]:
        if kid is None:
            raise JwtRefused("unknown_key", "the token names no key (kid)")
        if not isinstance(kid, str):
            raise JwtRefused("invalid_header", "the token's key id (kid) is not a string")
        keys = self._current(kid)
        if kid in keys.weak:
            raise JwtRefused("weak_key", f"the key the token names is too short to trust (RSA keys need at least {MIN_RSA_BITS} bits)")
        if kid not in keys.keys:
            raise JwtRefused("unknown_key", "the token names a key the issuer's key set does not hold")
        return keys.keys[kid], keys.generation

    # --- a token -------------------------------------------------------------------------

    def verify(self, token: str, now: float | None = None) -> Verified:
        """The verified claims of ``token`` (at ``now``), or JwtRefused naming what failed."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise JwtRefused("invalid_token", "the token is not a well-formed JWT") from None
        except jwt.InvalidTokenError:  # a kid not a string, a crit PyJWT does not know
            raise JwtRefused("invalid_header", "the token's header is not one this service accepts") from None
        if "crit" in header:  # no extension is understood here (RFC 7515, 4.1.11)
            raise JwtRefused("invalid_header", "the token's header names critical extensions; none is supported")
        if header.get("alg") not in ALGORITHMS:
            raise JwtRefused("unsupported_algorithm", f"the token's algorithm is not accepted; use one of {', '.join(ALGORITHMS)}")
        key, generation = self._key(header.get("kid"))
        try:
            claims = jwt.decode(
                token, key, algorithms=list(ALGORITHMS), audience=self.audience, issuer=self.issuer,
                # The times and the subject are checked below, with their types.
                options={"require": ["exp", "iss", "aud", "sub"], "verify_exp": False, "verify_nbf": False,
                         "verify_iat": False, "verify_sub": False},
            )
        except jwt.InvalidIssuerError:
            raise JwtRefused("wrong_issuer", f"the token was not issued by {self.issuer}") from None
        except jwt.InvalidAudienceError:
            raise JwtRefused("wrong_audience", f"the token is not meant for {self.audience}") from None
        except jwt.MissingRequiredClaimError as exc:  # exc.claim is one of the four required here
            raise JwtRefused("missing_claim", f"the token lacks the {exc.claim} claim") from None
        except jwt.InvalidSignatureError:
            raise JwtRefused("invalid_signature", "the token's signature does not verify") from None
        except jwt.InvalidAlgorithmError:
            raise JwtRefused("unsupported_algorithm", "the token's algorithm is not the one of the key it names") from None
        except jwt.PyJWTError:
            raise JwtRefused("invalid_token", "the token is not a valid JWT") from None
        self._check(claims, time.time() if now is None else now)
        return Verified(claims, generation)

    def _check(self, claims: dict, now: float) -> None:
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject.strip() or "\x00" in subject:
            raise JwtRefused("invalid_claim", "the token's sub claim must be a non-empty string")
        for name in TIME_CLAIMS:
            if name in claims and not is_seconds(claims[name]):
                raise JwtRefused("invalid_claim", f"the token's {name} claim must be a number of seconds")
        expires = claims["exp"]
        if expires <= now - self.leeway:
            raise JwtRefused("token_expired", "the token has expired")
        if max(claims.get("nbf", 0), claims.get("iat", 0)) > now + self.leeway:
            raise JwtRefused("token_not_yet_valid", "the token is not valid yet (nbf or iat in the future)")
        if expires - claims.get("iat", now) > self.max_lifetime:
            raise JwtRefused(
                "lifetime_too_long", f"the token lives longer than the {self.max_lifetime:g} seconds accepted (exp - iat)"
            )

    def player(self, conn, claims: dict) -> store_players.Player:
        """The player signed in with these (verified) claims, made on first sight."""
        subject = f"{self.issuer} {claims['sub']}"
        name = clean_name(claims.get(self.name_claim) or claims.get("preferred_username"))
        return store_players.player_of_subject(conn, subject, uuid.uuid4(), name)


def verifier_of(settings: Settings) -> JwtVerifier | None:
    """The verifier the settings configure (None: no JWT is accepted)."""
    if not settings.jwt_issuer:
        return None
    if not settings.jwt_audience:
        raise ValueError("GIN_RUMMY_JWT_ISSUER is set: set GIN_RUMMY_JWT_AUDIENCE too (the audience its tokens name)")
    for variable, value in (("GIN_RUMMY_JWT_JWKS_LIFETIME_SECONDS", settings.jwt_jwks_lifetime_seconds),
                            ("GIN_RUMMY_JWT_MAX_LIFETIME_SECONDS", settings.jwt_max_lifetime_seconds)):
        if not value > 0:
            raise ValueError(f"{variable}: a number of seconds above 0, got {value:g}")
    return JwtVerifier(
        settings.jwt_issuer, settings.jwt_audience, jwks_url=settings.jwt_jwks_url, jwks_file=settings.jwt_jwks_file,
        name_claim=settings.jwt_name_claim or "name", leeway=settings.jwt_leeway_seconds,
        refetch_cooldown=settings.jwt_jwks_cooldown_seconds, jwks_lifetime=settings.jwt_jwks_lifetime_seconds,
        max_lifetime=settings.jwt_max_lifetime_seconds,
    )
