"""Sign-in by the front end's own identity provider: a JWT verified against its JWKS.

A JWT is accepted when ``JwtVerifier`` is configured (issuer, audience, keys): its
signature (RS256, ES256 or EdDSA, by a key of the JWKS named by its ``kid``), expiry,
not-before, issuer and audience are checked by PyJWT, and its ``sub`` becomes a player,
made on first sight and named from a claim.  A refusal says which check failed.
(Guests have a player token of ours instead: ``service.application.tokens``.)
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
import uuid
from pathlib import Path

import jwt

from service.engine.game import NAME_LENGTH
from service.settings import Settings
from service.store import players as store_players

from .errors import Unauthorized

ALGORITHMS = ("RS256", "ES256", "EdDSA")
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


class JwtRefused(Unauthorized):
    """A sign-in token refused: ``code`` names the check it failed."""

    def __init__(self, code: str, message: str):
        super().__init__(message, code=code, reason=code)


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
    ):
        if not (jwks_url or jwks_file):
            raise ValueError("a JWT issuer needs its keys: GIN_RUMMY_JWT_JWKS_URL or GIN_RUMMY_JWT_JWKS_FILE")
        self.issuer, self.audience, self.name_claim, self.leeway = issuer, audience, name_claim, leeway
        # The key set is kept 5 minutes (a key the provider withdraws stops working by
        # then); a token naming a key not in it fetches it again, at most once per
        # ``refetch_cooldown`` seconds, so made-up key ids cannot flood the provider.
        self._client = None
        if jwks_url:
            self._client = jwt.PyJWKClient(jwks_url, lifespan=300, timeout=5, cooldown_duration=refetch_cooldown)
        self._file = Path(jwks_file) if jwks_file else None
        self._keys: dict[str, jwt.PyJWK] = {}
        self._lock = threading.Lock()

    def _key(self, kid: str | None) -> jwt.PyJWK:
        if kid is None:
            raise JwtRefused("unknown_key", "the token names no key (kid)")
        if self._client is not None:
            try:
                return self._client.get_signing_key(kid)  # fetches the JWKS again for an unknown kid
            except jwt.PyJWKClientError as exc:
                raise JwtRefused("unknown_key", f"no key {kid!r} in the issuer's JWKS ({exc})") from None
        with self._lock:
            if kid not in self._keys:  # the file may have been updated with a new key
                # Without a JWKS URL there is a JWKS file (the constructor refuses neither).
                assert self._file is not None, "a JWT issuer has a JWKS URL or a JWKS file"
                keys = jwt.PyJWKSet.from_dict(json.loads(self._file.read_text())).keys
                self._keys = {key.key_id: key for key in keys if key.key_id}
            if kid not in self._keys:
                raise JwtRefused("unknown_key", f"no key {kid!r} in the issuer's JWKS")
            return self._keys[kid]

    def claims(self, token: str) -> dict:
        """The verified claims of ``token``, or JwtRefused naming what failed."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise JwtRefused("invalid_token", "the token is not a well-formed JWT") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise JwtRefused("unsupported_algorithm", f"tokens signed with {algorithm!r} are not accepted; use one of {', '.join(ALGORITHMS)}")
        key = self._key(header.get("kid"))
        try:
            return jwt.decode(
                token, key, algorithms=list(ALGORITHMS), audience=self.audience, issuer=self.issuer,
                leeway=self.leeway, options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise JwtRefused("token_expired", "the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise JwtRefused("token_not_yet_valid", "the token is not valid yet (nbf or iat in the future)") from None
        except jwt.InvalidIssuerError:
            raise JwtRefused("wrong_issuer", f"the token was not issued by {self.issuer}") from None
        except jwt.InvalidAudienceError:
            raise JwtRefused("wrong_audience", f"the token is not meant for {self.audience}") from None
        except jwt.MissingRequiredClaimError as exc:
            raise JwtRefused("missing_claim", f"the token lacks the {exc.claim!r} claim") from None
        except jwt.InvalidSignatureError:
            raise JwtRefused("invalid_signature", "the token's signature does not verify") from None
        except jwt.InvalidTokenError as exc:
            raise JwtRefused("invalid_token", f"the token is not valid: {type(exc).__name__}") from None

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
    return JwtVerifier(
        settings.jwt_issuer, settings.jwt_audience, jwks_url=settings.jwt_jwks_url, jwks_file=settings.jwt_jwks_file,
        name_claim=settings.jwt_name_claim or "name", leeway=settings.jwt_leeway_seconds,
        refetch_cooldown=settings.jwt_jwks_cooldown_seconds,
    )
