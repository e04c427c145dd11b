"""Every token the service hands out, in one place: its format, its hash, its parse.

- A **seat token** reads ``gr1.<match id>.<secret>``, a **player token**
  ``gp1.<player id>.<secret>``: each names what it is for (not secret), then 256
  random bits.  Only a hash of each is kept (``seat_tokens``, ``players``), and a
  request's token is found by its hash, so no comparison in Python sees one.
- An **invite code** (192 random bits) lets a player take a match's open seat; only
  its hash is kept with the match.
- The **operator** and **metrics** tokens come from the settings; a token sent is
  compared with them in constant time, as hashes, so not even the length shows.

The secrets are random enough that a plain SHA-256 is a sound hash: there is no
dictionary word to guess them from.

>>> token = seat_token(uuid.UUID(int=1))
>>> token.startswith("gr1.00000000000000000000000000000001."), match_of_token(token)
(True, UUID('00000000-0000-0000-0000-000000000001'))
>>> match_of_token("gp1.00000000000000000000000000000001.x") is None
True
>>> hash_token("abc") == hash_token("abc") != hash_token("abd")
True
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid

SEAT = "gr1"
PLAYER = "gp1"


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The hash a token is stored and looked up by."""
    return hashlib.sha256(token.encode()).hexdigest()


def seat_token(match_id: uuid.UUID, raw: bytes | None = None) -> str:
    """A new seat token of the match (``raw``: its 32 random bytes, when chosen already)."""
    raw = secrets.token_bytes(32) if raw is None else raw
    return f"{SEAT}.{match_id.hex}.{base64.urlsafe_b64encode(raw).rstrip(b'=').decode()}"


def seat_token_bytes(token: str) -> bytes:
    """The 32 random bytes of a seat token (``seat_token``'s ``raw``)."""
    secret = token.rsplit(".", 1)[1]
    return base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))


def player_token(player_id: uuid.UUID) -> str:
    return f"{PLAYER}.{player_id.hex}.{new_secret()}"


def _named(token: str, prefix: str) -> uuid.UUID | None:
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != prefix:
        return None
    try:
        return uuid.UUID(hex=parts[1])
    except ValueError:
        return None


def match_of_token(token: str) -> uuid.UUID | None:
    """The match a seat token names, or None when it is not shaped like one."""
    return _named(token, SEAT)


def player_of_token(token: str) -> uuid.UUID | None:
    """The player a player token names, or None when it is not shaped like one."""
    return _named(token, PLAYER)


def looks_like_jwt(token: str) -> bool:
    """A sign-in token of the front end's identity provider (three parts, a JSON header)."""
    return token.count(".") == 2 and token.startswith("eyJ")


def new_invite() -> str:
    return secrets.token_urlsafe(24)


def invite_matches(code: str, code_hash: str) -> bool:
    return hmac.compare_digest(hash_token(code), code_hash)


def same_secret(given: str, configured: str) -> bool:
    """Whether ``given`` is the configured secret, in constant time (as hashes)."""
    return hmac.compare_digest(hashlib.sha256(given.encode()).digest(), hashlib.sha256(configured.encode()).digest())
