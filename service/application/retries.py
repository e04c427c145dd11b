"""Joins and rematches safe to retry: their Idempotency-Key, and their seat token given again.

A join or a rematch gives a seat token, shown once and kept only as a hash, so the
answer to a retry whose first answer was lost could not hold it.  With an
``Idempotency-Key``, the request's record (``idempotency_keys``, saved in the same
transaction as what the request did) also keeps its token **sealed**: the token's 32
random bytes XORed with ``HMAC-SHA256(retry secret, "seat-token" | match | scope |
key)``.  That pad is the record's own (match, scope and key are the record's primary
key: no two tokens are sealed with one pad), and only a request with the same key can
make it again.  A retry with the same key and the same body finds the record, unseals
the token, checks it against the hash kept for its seat, and is answered as the first
time: the same seat, the same token, the view as it was then (``Views.context_then``).
The same key with another body is 422 ``idempotency_key_reused``, as for an action.

- The **retry secret** is ``GIN_RUMMY_RETRY_SECRET``; unset, one the service made,
  kept in its database (``service_secrets``) and read once per process.  With the
  configured one, what the database holds unseals nothing; with the database's, a
  reader of the whole database within the day could.
- A sealed token goes with its record: purged after ``IDEMPOTENCY_RETENTION`` (a day).
  A retry after that acts anew (a join then finds its seat taken: 409 ``seat_taken``).
- **Who may retry**: a join by a player is the player's (scope ``join:player:<id>``),
  a join by name alone anyone's who sends the same key, code and name (``join``), so
  that key should be unguessable (a random UUID); a rematch is the asking seat's of
  the finished match (``rematch:seat:<n>``).
"""

from __future__ import annotations

import hmac
import secrets
import uuid

from service.store import IdempotencyRecord, NewIdempotencyRecord, find_idempotency_record, seat_of_token, service_secret

from . import tokens
from .errors import Invalid


def check_reuse(record: IdempotencyRecord, fingerprint: str) -> None:
    """A record found for a key: refused when it answered another request."""
    if record.fingerprint != fingerprint:
        raise Invalid("this Idempotency-Key was used for a different request in this match", code="idempotency_key_reused")


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def _pad_of(secret: bytes, *binding: str) -> bytes:
    return hmac.new(secret, "\0".join(binding).encode(), "sha256").digest()


class Retries:
    """The retry secret of one application, and the seals made with it."""

    def __init__(self, configured: str | None):
        self._secret = configured.encode() if configured else None

    def secret(self, conn) -> bytes:
        """The retry secret: read (made by the first process to ask) outside any
        transaction, so that what a process keeps was committed."""
        if self._secret is None:
            self._secret = service_secret(conn, "retry", lambda: secrets.token_bytes(32))
        return self._secret

    @staticmethod
    def _pad(secret: bytes, match_id: uuid.UUID, record: NewIdempotencyRecord) -> bytes:
        return _pad_of(secret, "seat-token", str(match_id), record.scope, record.key)

    @staticmethod
    def seal_bound(secret: bytes, binding: tuple[str, ...], token: str) -> bytes:
        """A seat token sealed for a row of another kind than an Idempotency-Key's record,
        named by ``binding`` (its own: no two tokens are sealed with one pad)."""
        return _xor(tokens.seat_token_bytes(token), _pad_of(secret, *binding))

    @staticmethod
    def unseal_bound(secret: bytes, binding: tuple[str, ...], sealed: bytes, token_match: uuid.UUID) -> str:
        """The seat token of ``token_match`` that ``seal_bound`` sealed with ``binding``."""
        return tokens.seat_token(token_match, _xor(bytes(sealed), _pad_of(secret, *binding)))

    def seal(self, secret: bytes, match_id: uuid.UUID, record: NewIdempotencyRecord, token: str) -> bytes:
        """``token`` sealed for the record of ``record`` in ``match_id``."""
        return _xor(tokens.seat_token_bytes(token), self._pad(secret, match_id, record))

    def unseal(
        self, conn, secret: bytes, match_id: uuid.UUID, record: NewIdempotencyRecord, sealed: bytes | None,
        token_match: uuid.UUID, seat: int,
    ) -> str | None:
        """The token of ``seat`` in ``token_match`` sealed in the record, or None when it
        is not that seat's (the retry secret changed since)."""
        if sealed is None:
            return None
        token = tokens.seat_token(token_match, _xor(bytes(sealed), self._pad(secret, match_id, record)))
        return token if seat_of_token(conn, token_match, tokens.hash_token(token)) == seat else None

    @staticmethod
    def find(conn, match_id: uuid.UUID, asked: NewIdempotencyRecord) -> IdempotencyRecord | None:
        """The record of an earlier request with this key, or None; 422 when that request was another."""
        found = find_idempotency_record(conn, match_id, asked.scope, asked.key)
        if found is not None:
            check_reuse(found, asked.fingerprint)
        return found
