"""Signed records: every export carries the service's Ed25519 signature (RFC 8032).

What is signed is the record without its ``signature`` member, as UTF-8 JSON with the
keys sorted and no whitespace -- RFC 8785's canonical form, which for a record (it
holds only integers, strings, booleans and nulls) is exactly
``json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.  The
signature names its key (``key_id``, the key's RFC 7638 JWK thumbprint) and the
public keys are served as a JWKS (RFC 8037 ``OKP`` / ``Ed25519``) at
``/.well-known/jwks.json``, so anyone can check a record with a few lines of code.

Keys: ``SIGNING_KEY_FILE`` (a PEM PKCS#8 Ed25519 private key) when configured, else
the service's own, generated once and kept in the database (``signing_keys``);
``gin-rummy keys rotate`` makes a new one, and the old ones stay published.  A record
signed by a key of this service, or of another service whose JWKS is trusted
(``TRUSTED_JWKS``), is checked on import: a signature that does not verify is refused
(the record was changed after it was signed); a key nobody here knows leaves the
record "signed by an unknown key", like an unsigned one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from service.store import signing_keys

ALGORITHM = "Ed25519"
#: How long a process keeps the keys it read before reading them again (a rotation
#: by another process is seen within this time).
RELOAD_SECONDS = 60.0


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed_bytes(record: Mapping[str, Any]) -> bytes:
    """The bytes a record's signature is over: the record without ``signature``, canonical."""
    body = {k: v for k, v in record.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def public_raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """The RFC 7638 thumbprint of the key's JWK: its id in the JWKS."""
    canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": b64url(public_raw(key))}, separators=(",", ":"))
    return b64url(hashlib.sha256(canonical.encode()).digest())


def jwk(key: Ed25519PublicKey) -> dict:
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(public_raw(key)), "kid": key_id(key), "alg": "EdDSA", "use": "sig"}


class SignatureInvalid(ValueError):
    """A record signed by a known key whose signature does not verify."""


class Signer:
    """This service's signing keys (loaded lazily, reloaded every RELOAD_SECONDS) and
    the keys it trusts for imports."""

    def __init__(self, store, *, key_file: str | None = None, signer: str | None = None, trusted: Sequence[str] = ()):
        self.store = store
        self.key_file = key_file
        self.signer = signer or None
        self.trusted = [source.strip() for source in trusted if source.strip()]
        self._lock = threading.Lock()
        self._loaded_at = -RELOAD_SECONDS
        self._signing: Ed25519PrivateKey | None = None
        self._own: dict[str, Ed25519PublicKey] = {}
        self._trusted: dict[str, Ed25519PublicKey] = {}
        self._trusted_from: dict[str, str] = {}  # key id -> the trusted key set it came from

    # --- keys ---------------------------------------------------------------------------

    def _keys(self) -> tuple[Ed25519PrivateKey, dict[str, Ed25519PublicKey]]:
        with self._lock:
            if time.monotonic() - self._loaded_at >= RELOAD_SECONDS:
                self._signing, self._own = self._load()
                self._loaded_at = time.monotonic()
            # _loaded_at starts a reload period back: the first call has loaded the keys.
            assert self._signing is not None, "the keys are loaded on the first call"
            return self._signing, self._own

    def _load(self) -> tuple[Ed25519PrivateKey, dict[str, Ed25519PublicKey]]:
        with self.store.transaction() as conn:
            stored = signing_keys.keys(conn)
            if self.key_file is None and (not stored or stored[0].retired_at is not None):
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (signing_keys.LOCK_KEY,))
                stored = signing_keys.keys(conn)  # another process may have made one meanwhile
                if not stored or stored[0].retired_at is not None:
                    new_key(conn, retire_others=False)
                    stored = signing_keys.keys(conn)
        own = {row.key_id: Ed25519PrivateKey.from_private_bytes(row.private_key).public_key() for row in stored}
        if self.key_file is not None:
            signing = load_key_file(self.key_file)
        else:
            signing = Ed25519PrivateKey.from_private_bytes(stored[0].private_key)
        own[key_id(signing.public_key())] = signing.public_key()
        return signing, own

    def jwks(self) -> dict:
        """The public keys of this service's signatures, the signing one first."""
        signing, own = self._keys()
        first = key_id(signing.public_key())
        return {"keys": [jwk(own[kid]) for kid in sorted(own, key=lambda k: k != first)]}

    # --- signing and checking ------------------------------------------------------------

    def sign(self, record: dict) -> dict:
        """``record`` with this service's signature as its ``signature`` member."""
        signing, _ = self._keys()
        unsigned = {k: v for k, v in record.items() if k != "signature"}
        value = signing.sign(signed_bytes(unsigned))
        return {
            **unsigned,
            "signature": {"algorithm": ALGORITHM, "key_id": key_id(signing.public_key()), "signer": self.signer, "value": b64url(value)},
        }

    def check(self, record: Mapping[str, Any]) -> dict:
        """What a record's signature says: ``{"status", "key_id", "signer"}``, status
        ``verified`` (by a key of this service or a trusted one), ``unknown_key`` or
        ``unsigned``.  Raises SignatureInvalid for a known key's failing signature.

        The ``signer`` is never taken from the record (its signature does not cover
        it): this service's PUBLIC_URL for its own keys, the trusted key set's location
        for a trusted key, null otherwise."""
        signature = record.get("signature")
        if signature is None:
            return {"status": "unsigned", "key_id": None, "signer": None}
        kid = signature["key_id"]
        _, own = self._keys()
        key = own.get(kid) or self._trusted_key(kid)
        if key is None:
            return {"status": "unknown_key", "key_id": kid, "signer": None}
        try:
            key.verify(unb64url(signature["value"]), signed_bytes(record))
        except (InvalidSignature, ValueError):
            raise SignatureInvalid(
                f"the record's signature by key {kid} does not verify: it was changed after it was signed"
            ) from None
        return {"status": "verified", "key_id": kid, "signer": self.signer if kid in own else self._trusted_from.get(kid)}

    def _trusted_key(self, kid: str) -> Ed25519PublicKey | None:
        if kid in self._trusted or not self.trusted:
            return self._trusted.get(kid)
        for source in self.trusted:  # an unknown id: read the trusted key sets again
            try:
                keys = read_jwks(source)
            except (OSError, ValueError):
                continue
            self._trusted.update(keys)
            self._trusted_from.update(dict.fromkeys(keys, source))
        return self._trusted.get(kid)


def read_jwks(source: str) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 keys of a JWKS, by id, from a URL or a file."""
    if source.startswith(("http://", "https://")):
        with urllib.request.urlopen(source, timeout=5) as answer:  # noqa: S310 - a configured URL
            document = json.load(answer)
    else:
        document = json.loads(Path(source).read_text())
    found = {}
    for key in document.get("keys", []):
        if key.get("kty") == "OKP" and key.get("crv") == "Ed25519" and "x" in key:
            public = Ed25519PublicKey.from_public_bytes(unb64url(key["x"]))
            found[key.get("kid") or key_id(public)] = public
    return found


def load_key_file(path: str) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} holds a {type(key).__name__}, not an Ed25519 private key")
    return key


def new_key(conn, *, retire_others: bool) -> str:
    """Make a signing key and keep it (in ``conn``'s transaction); its id."""
    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    kid = key_id(key.public_key())
    signing_keys.add(conn, kid, raw, retire_others=retire_others)
    return kid
