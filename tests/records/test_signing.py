"""Signed exports: the JWKS, the README's verification lines run as they stand,
signatures checked on import, trusted keys of another service, rotation, a key file."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from werkzeug.serving import make_server

from service.api import create_app
from service.cli import main as cli
from service.records.signing import key_id
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory

OP = bearer(OPERATOR)
README = Path(__file__).resolve().parents[2] / "README.md"


def app_of(store, **config):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, **config})


def finished_record(store, client) -> dict:
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 30})
    match = MatchFactory.create(store=store, start=start)
    return client.get(f"/matches/{match.match_id}/export", headers=OP).json


def verification_lines() -> str:
    text = README.read_text()
    block = re.search(r"<!-- verify-record[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert block, "the README's verification block is gone"
    return block.group(1)


@pytest.fixture
def served(store):
    """The service on a real socket (the README's lines fetch its JWKS over HTTP)."""
    app = app_of(store)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def run_lines(tmp_path, api: str, record: dict) -> subprocess.CompletedProcess:
    (tmp_path / "record.json").write_text(json.dumps(record))
    return subprocess.run(
        [sys.executable, "-c", verification_lines()], cwd=tmp_path, capture_output=True, text=True,
        env={"GIN_RUMMY_API": api, "PATH": "/usr/bin:/bin"}, timeout=60,
    )


def test_the_readmes_lines_verify_a_real_export_and_catch_a_change(store, served, tmp_path):
    app, api = served
    record = finished_record(store, app.test_client())
    ok = run_lines(tmp_path, api, record)
    assert ok.returncode == 0, ok.stderr
    assert f"key {record['signature']['key_id']}" in ok.stdout
    changed = copy.deepcopy(record)
    changed["match_id"] = "77777777-7777-4777-8777-777777777777"  # the digest still checks out
    bad = run_lines(tmp_path, api, changed)
    assert bad.returncode != 0 and "InvalidSignature" in bad.stderr


def test_the_jwks_lists_the_signing_key_as_an_ed25519_okp_key(store):
    client = app_of(store).test_client()
    keys = client.get("/.well-known/jwks.json").json["keys"]
    record = finished_record(store, client)
    assert keys[0]["kid"] == record["signature"]["key_id"]
    assert {k: keys[0][k] for k in ("kty", "crv", "alg", "use")} == {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig"}
    assert record["signature"]["algorithm"] == "Ed25519" and len(record["signature"]["value"]) == 86


def test_a_signed_record_changed_anywhere_is_refused_by_the_service_that_signed_it(store, other_store):
    client = app_of(store).test_client()
    record = finished_record(store, client)
    # Into a service that trusts nobody: the key is unknown there, so it is as if unsigned.
    elsewhere = app_of(other_store).test_client()
    changed = copy.deepcopy(record)
    changed["match_id"] = "33333333-3333-4333-8333-333333333333"  # not covered by the digest
    r = elsewhere.post("/matches/import", json=changed)
    assert r.status_code == 201 and r.json["provenance"]["signature"]["status"] == "unknown_key"
    # Into the service that signed it (say after a restore): refused.
    changed["match_id"] = "44444444-4444-4444-8444-444444444444"
    r = client.post("/matches/import", json=changed)
    assert r.status_code == 422 and r.json["code"] == "signature_invalid", r.json
    assert client.get(f"/matches/{changed['match_id']}", headers=OP).status_code == 404


def test_another_services_signature_is_verified_when_its_jwks_is_trusted(store, other_store, tmp_path):
    client = app_of(store).test_client()
    record = finished_record(store, client)
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(client.get("/.well-known/jwks.json").json))
    trusting = app_of(other_store, TRUSTED_JWKS=str(jwks)).test_client()
    r = trusting.post("/matches/import", json=record)
    assert r.status_code in (200, 201), r.json
    assert r.json["provenance"]["signature"] == {"status": "verified", "key_id": record["signature"]["key_id"], "signer": str(jwks)}
    exported = trusting.get(f"/matches/{record['match_id']}/export", headers=OP).json
    assert exported["provenance"]["origin"] == "imported"
    assert exported["signature"]["key_id"] != record["signature"]["key_id"]  # signed again, by the importer
    tampered = copy.deepcopy(record)
    tampered["match_id"] = "55555555-5555-4555-8555-555555555555"
    r = trusting.post("/matches/import", json=tampered)
    assert r.status_code == 422 and r.json["code"] == "signature_invalid"


def test_an_unsigned_record_is_imported_as_unsigned(store, other_store):
    record = finished_record(store, app_of(store).test_client())
    del record["signature"]
    r = app_of(other_store).test_client().post("/matches/import", json=record)
    assert r.status_code in (200, 201) and r.json["provenance"]["signature"]["status"] == "unsigned"


def test_after_a_rotation_new_exports_use_the_new_key_and_old_ones_still_verify(store, database_url, monkeypatch, capsys):
    from service.records import signing

    monkeypatch.setattr(signing, "RELOAD_SECONDS", 0)  # see the rotation at once
    client = app_of(store).test_client()
    before = finished_record(store, client)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert cli(["keys", "rotate"]) == 0
    rotated = capsys.readouterr().out.split()[1]
    after = finished_record(store, client)
    assert after["signature"]["key_id"] == rotated != before["signature"]["key_id"]
    kids = [k["kid"] for k in client.get("/.well-known/jwks.json").json["keys"]]
    assert kids[0] == rotated and before["signature"]["key_id"] in kids
    assert cli(["keys", "list"]) == 0 and "retired" in capsys.readouterr().out
    copy_of_before = copy.deepcopy(before)
    copy_of_before["match_id"] = "66666666-6666-4666-8666-666666666666"
    assert client.post("/matches/import", json=copy_of_before).json["code"] == "signature_invalid"  # still checked


def test_a_configured_key_file_signs_and_is_published(store, tmp_path):
    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "signing.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    client = app_of(store, SIGNING_KEY_FILE=str(pem), PUBLIC_URL="https://gin.example.test").test_client()
    record = finished_record(store, client)
    assert record["signature"]["key_id"] == key_id(key.public_key())
    assert record["signature"]["signer"] == "https://gin.example.test"
    assert client.get("/.well-known/jwks.json").json["keys"][0]["kid"] == key_id(key.public_key())
