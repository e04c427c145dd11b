"""Sign-in hardening: a JWT is refused, with a 401 and a code in our own words, when its
key was withdrawn, its key is weak, its header or claims are odd, or it lives too long
(the identity provider of the test and its JWKS come from test_players)."""

from __future__ import annotations

import inspect
import json
import logging
import os
import re
import time
import warnings

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from jwt.utils import base64url_encode

from .conftest import bearer
from .test_players import AUDIENCE, ISSUER, Issuer, JwksServer, guest, signed_in_app


@pytest.fixture
def provider():
    return Issuer()


def write(path, jwks: dict, *, mtime_ns: int | None = None, size: int = 0):
    """Replace the JWKS file as an operator's tool would (a new file renamed over it),
    padded with spaces to ``size`` bytes."""
    staged = path.with_suffix(".new")
    staged.write_text(json.dumps(jwks).ljust(size))
    if mtime_ns is not None:
        os.utime(staged, ns=(mtime_ns, mtime_ns))
    os.replace(staged, path)


def with_header(provider, header: dict) -> str:
    """A token signed by the provider's rsa-1 with a header PyJWT would not write (it
    refuses a kid that is not a string)."""
    _alg, private, _ = provider.keys["rsa-1"]
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600}
    segments = [base64url_encode(json.dumps(part).encode()) for part in ({"alg": "RS256", **header}, payload)]
    signature = RSAAlgorithm(RSAAlgorithm.SHA256).sign(b".".join(segments), private)
    return b".".join([*segments, base64url_encode(signature)]).decode()


# --- 2: a key removed from the JWKS stops working --------------------------------------------


def test_a_key_removed_from_the_jwks_stops_working_for_tokens_already_seen(store, provider, tmp_path):
    path = tmp_path / "jwks.json"
    a_minute_ago = time.time_ns() - 60 * 10**9  # long settled: the file's stamp is trusted
    write(path, provider.jwks({"rsa-1", "ec-1"}), mtime_ns=a_minute_ago)
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    sub = f"removed-{time.time_ns()}"
    seen = provider.token("rsa-1", sub=sub)
    assert client.get("/players/me", headers=bearer(seen)).status_code == 200
    assert client.get("/players/me", headers=bearer(seen)).status_code == 200  # remembered
    # The same size and the same mtime: only the inode tells the new file from the old.
    before = path.stat()
    write(path, provider.jwks({"ec-1"}), mtime_ns=a_minute_ago, size=before.st_size)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns) and after.st_ino != before.st_ino
    for token in (seen, provider.token("rsa-1", sub=sub, jti="new")):
        r = client.get("/players/me", headers=bearer(token))
        assert (r.status_code, r.json["code"]) == (401, "unknown_key"), r.json
    assert client.get("/players/me", headers=bearer(provider.token("ec-1", sub=sub))).status_code == 200


def test_a_jwks_file_that_cannot_be_read_verifies_no_token_until_it_can(store, provider, tmp_path, caplog):
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    token = provider.token(sub=f"unreadable-{time.time_ns()}")
    assert client.get("/players/me", headers=bearer(token)).status_code == 200
    caplog.set_level(logging.WARNING)
    for broken in ('{"keys": [', "[]"):
        path.write_text(broken)
        for _ in range(3):
            r = client.get("/players/me", headers=bearer(token))
            assert (r.status_code, r.json["code"]) == (401, "unknown_key"), r.json
    said = [rec.getMessage() for rec in caplog.records if "cannot be read" in rec.getMessage()]
    assert len(said) == 2, said  # once for each broken content, not per request
    write(path, provider.jwks())
    assert client.get("/players/me", headers=bearer(token)).status_code == 200


def test_a_key_removed_from_the_jwks_url_stops_working_once_the_cache_lifetime_has_passed(store, provider):
    server = JwksServer(provider, kids={"rsa-1", "ec-1"})
    try:
        client = signed_in_app(
            store, JWT_JWKS_URL=server.url, JWT_JWKS_LIFETIME_SECONDS=1, JWT_JWKS_COOLDOWN_SECONDS=0
        ).test_client()
        seen = provider.token("rsa-1", sub=f"url-removed-{time.time_ns()}")
        assert client.get("/players/me", headers=bearer(seen)).status_code == 200
        server.kids.discard("rsa-1")
        time.sleep(1.2)
        r = client.get("/players/me", headers=bearer(seen))
        assert (r.status_code, r.json["code"]) == (401, "unknown_key"), r.json
        assert server.fetches >= 2
    finally:
        server.close()


def test_a_token_living_longer_than_the_maximum_lifetime_is_refused(store, provider, tmp_path):
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    now = int(time.time())
    day = 24 * 3600
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    cases = [
        ("exp 1e308", provider.token(exp=1e308), 401),
        ("a day and a second", provider.token(iat=now, exp=now + day + 1), 401),
        ("no iat, a day and a minute from now", provider.token(iat=None, exp=now + day + 60), 401),
        ("exactly a day", provider.token(iat=now, exp=now + day), 200),
        ("no iat, an hour from now", provider.token(iat=None, exp=now + 3600), 200),
    ]
    for what, token, status in cases:
        r = client.get("/players/me", headers=bearer(token))
        assert r.status_code == status, (what, r.json)
        if status == 401:
            assert r.json["code"] == "lifetime_too_long", (what, r.json)
    short = signed_in_app(store, JWT_JWKS_FILE=str(path), JWT_MAX_LIFETIME_SECONDS=600).test_client()
    assert short.get("/players/me", headers=bearer(provider.token(iat=now, exp=now + 600))).status_code == 200
    assert short.get("/players/me", headers=bearer(provider.token(iat=now, exp=now + 601))).json["code"] == "lifetime_too_long"


# --- 3: odd headers are a 401, not a 500 ----------------------------------------------------


def test_a_non_string_kid_or_an_unknown_crit_header_is_a_401_on_every_endpoint(store, provider, tmp_path):
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    ann = guest(client, "Ann")
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=bearer(ann["token"]))
    assert created.status_code == 201, created.json
    join = f"/matches/{created.json['id']}/join"
    odd = {
        "kid 7": with_header(provider, {"kid": 7}),
        "kid a list": with_header(provider, {"kid": ["rsa-1"]}),
        "kid an object": with_header(provider, {"kid": {"id": "rsa-1"}}),
        "kid null": with_header(provider, {"kid": None}),
        "crit unknown": provider.token(headers={"crit": ["urn:example:x"], "urn:example:x": 1}),
        "crit exp": provider.token(headers={"crit": ["exp"]}),
        "crit not a list": provider.token(headers={"crit": "urn:example:x"}),
    }
    for what, token in odd.items():
        for method, url, body in (("GET", "/players/me", None), ("POST", "/matches", {}), ("GET", "/matches", None),
                                  ("POST", join, {"code": created.json["invite"]["code"]})):
            r = client.open(url, method=method, json=body, headers=bearer(token))
            assert r.status_code == 401, (what, method, url, r.status_code, r.json)
            assert r.json["code"] in ("invalid_header", "unknown_key"), (what, url, r.json)
    assert client.get(f"/matches/{created.json['id']}", headers=bearer(ann["token"])).json["status"] == "waiting"


# --- 4: weak keys ---------------------------------------------------------------------------


def test_an_rsa_key_under_2048_bits_is_refused_and_said_once_in_the_log(store, provider, tmp_path, caplog):
    provider.keys["rsa-weak"] = ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=1024), RSAAlgorithm)
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    caplog.set_level(logging.INFO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyJWT warns signing with it, as the provider would
        weak_tokens = [provider.token("rsa-weak", sub=f"weak-{i}") for i in range(3)]
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        for token in weak_tokens:
            r = client.get("/players/me", headers=bearer(token))
            assert (r.status_code, r.json["code"]) == (401, "weak_key"), r.json
            assert "2048" in r.json["detail"]
        assert client.get("/players/me", headers=bearer(provider.token("rsa-1", sub=f"strong-{time.time_ns()}"))).status_code == 200
    assert [str(w.message) for w in warned if "RSA" in str(w.message)] == []  # never handed to PyJWT
    said = [rec.getMessage() for rec in caplog.records if "rsa-weak" in rec.getMessage()]
    assert len(said) == 1 and "1024" in said[0], said


# --- 5: odd claims --------------------------------------------------------------------------


def test_an_empty_sub_a_string_exp_and_other_odd_claims_are_refused(store, provider, tmp_path):
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    now = int(time.time())
    odd = {
        "sub empty": {"sub": ""},
        "sub blank": {"sub": "   "},
        "sub a number": {"sub": 42},
        "sub true": {"sub": True},
        "sub with NUL": {"sub": "a\x00b"},
        "exp a string": {"exp": str(now + 600)},
        "exp true": {"exp": True},
        "exp NaN-like text": {"exp": "soon"},
        "nbf a string": {"nbf": str(now - 10)},
        "nbf false": {"nbf": False},
        "iat a string": {"iat": str(now)},
        "iat true": {"iat": True},
    }
    signed_in = "SELECT count(*) FROM players WHERE starts_with(subject, %s)"
    with store.connection() as conn:
        before = conn.execute(signed_in, (ISSUER,)).fetchone()[0]
    for what, claims in odd.items():
        r = client.get("/players/me", headers=bearer(provider.token(**claims)))
        assert (r.status_code, r.json["code"]) == (401, "invalid_claim"), (what, r.json)
    with store.connection() as conn:
        assert conn.execute(signed_in, (ISSUER,)).fetchone()[0] == before  # no player made
    fine = client.get("/players/me", headers=bearer(provider.token(sub=f"fine-{now}", exp=now + 600.5, nbf=now - 1.5)))
    assert fine.status_code == 200, fine.json


# --- 6: refusals in our words ---------------------------------------------------------------


def test_a_refusal_echoes_no_kid_no_alg_and_names_no_exception_class(store, provider, tmp_path):
    path = tmp_path / "jwks.json"
    write(path, provider.jwks())
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    ec_private = provider.keys["ec-1"][1]
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "iat": now, "exp": now + 600}
    tokens = {
        "made-up kid": provider.token(headers={"kid": "kid-<b>echoed</b>"}),
        "alg HS512": jwt.encode(claims, "k" * 64, algorithm="HS512", headers={"kid": "rsa-1"}),
        "ES256 on the RSA key": jwt.encode(claims, ec_private, algorithm="ES256", headers={"kid": "rsa-1"}),
        "a kid of 7": with_header(provider, {"kid": 7}),
        "crit": provider.token(headers={"crit": ["urn:example:crit-echoed"], "urn:example:crit-echoed": 1}),
    }
    classes = [name for name, value in inspect.getmembers(jwt.exceptions, inspect.isclass) if issubclass(value, Exception)]
    assert "InvalidAlgorithmError" in classes and len(classes) > 10
    for what, token in tokens.items():
        r = client.get("/players/me", headers=bearer(token))
        assert r.status_code == 401, (what, r.json)
        detail = r.json["detail"]
        for echoed in ("echoed", "HS512", "kid-", "'7'", " 7 "):
            assert echoed not in detail, (what, detail)
        assert not [name for name in classes if name in detail], (what, detail)
        assert "Error" not in detail and "PyJWK" not in detail, (what, detail)


def test_every_refusal_code_is_listed_in_the_api_reference_and_the_readme(client):
    from pathlib import Path

    from service.application import signin

    raised = set(re.findall(r'JwtRefused\(\s*"(\w+)"', inspect.getsource(signin)))
    assert raised == set(signin.REFUSALS) and len(raised) == 13
    bearer_scheme = client.get("/openapi.json").json["components"]["securitySchemes"]["bearer"]["description"]
    readme = Path(__file__).parents[2].joinpath("README.md").read_text()
    sign_in = readme[readme.index("**Bring your own sign-in.**"):readme.index("**Ratings and the leaderboard.**")]
    for code in signin.REFUSALS:
        assert f"`{code}`" in bearer_scheme and f"`{code}`" in sign_in, code
