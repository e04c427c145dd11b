"""The document's security: one scheme per kind of token, and per operation the kinds it
takes (service.api.docs.TOKENS), held true: a kind listed is taken, any other refused."""

from __future__ import annotations

import uuid

import pytest

from service.api import create_app
from service.api.docs import OPTIONAL_TOKENS, TOKENS
from service.api.openapi import SCHEMES, spec_dict
from service.store import EventStore

from .conftest import OPERATOR, bearer
from .test_players import Issuer, signed_in_app

SCHEME = {kind: name for kind, (name, _, _) in SCHEMES.items()}


@pytest.fixture(scope="module")
def document():
    return spec_dict(create_app({"STORE": EventStore(pool=None)}))


def by_id(document) -> dict[str, dict]:
    return {op["operationId"]: op for item in document["paths"].values() for op in item.values()}


def test_every_operation_that_needs_a_token_names_the_kinds_it_takes(document):
    ops = by_id(document)
    app = create_app({"STORE": EventStore(pool=None)})
    needing = {view.__name__ for view in app.view_functions.values() if getattr(view, "__openapi__", {}).get("auth")}
    assert needing == set(TOKENS), f"name the kinds of token in service.api.docs.TOKENS: {sorted(needing ^ set(TOKENS))}"
    assert set(OPTIONAL_TOKENS) <= set(ops) and not set(OPTIONAL_TOKENS) & needing
    schemes = document["components"]["securitySchemes"]
    assert {"bearer", *SCHEME.values()} == set(schemes)
    assert all(s["type"] == "http" and s["scheme"] == "bearer" for s in schemes.values())
    for operation, kinds in {**TOKENS, **OPTIONAL_TOKENS}.items():
        optional = [{}] if operation in OPTIONAL_TOKENS else []
        assert ops[operation]["security"] == optional + [{SCHEME[kind]: []} for kind in kinds], operation
        assert "401" in ops[operation]["responses"], operation
    assert all("security" not in op for name, op in ops.items() if name not in TOKENS and name not in OPTIONAL_TOKENS)


@pytest.fixture
def world(store, tmp_path):
    """A match a signed-in player (seat 0) and a guest player (seat 1) play, and a token of each kind."""
    issuer = Issuer()
    jwks = tmp_path / "jwks.json"
    import json

    jwks.write_text(json.dumps(issuer.jwks()))
    app = signed_in_app(store, JWT_JWKS_FILE=str(jwks))
    client = app.test_client()
    jwt = issuer.token(sub=f"user-{uuid.uuid4()}")
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=bearer(jwt))
    assert created.status_code == 201, created.json
    guest = client.post("/players", json={"name": "Gus"}).json["token"]
    joined = client.post(f"/matches/{created.json['id']}/join", json={"code": created.json["invite"]["code"]}, headers=bearer(guest))
    assert joined.status_code == 201, joined.json
    tokens = {"seat": created.json["seats"][0]["token"], "player": guest, "jwt": jwt, "operator": OPERATOR}
    yield client, created.json["id"], tokens
    app.extensions["gin_rummy"].hub.shutdown()


#: A sample of operations, one or more of each set of kinds: (operationId, method, path).
SAMPLE = [
    ("get_match", "GET", "/matches/{id}"),
    ("list_matches", "GET", "/matches"),
    ("get_events", "GET", "/matches/{id}/events"),
    ("hands", "GET", "/matches/{id}/hands"),
    ("get_hint", "GET", "/matches/{id}/hint"),
    ("me", "GET", "/players/me"),
    ("my_matches", "GET", "/players/me/matches"),
    ("get_ticket", "GET", f"/matchmaking/tickets/{uuid.UUID(int=9, version=4)}"),
    ("export_many", "GET", "/matches/export"),
    ("list_webhooks", "GET", "/webhooks"),
]


def test_a_kind_listed_is_taken_and_any_other_refused(world):
    client, match_id, tokens = world
    refused_unlisted, refused_listed = [], []
    for operation, method, path in SAMPLE:
        listed = set(TOKENS[operation])
        for kind, token in tokens.items():
            r = client.open(path.format(id=match_id), method=method, headers=bearer(token))
            if kind in listed and r.status_code in (401, 403):
                refused_listed.append(f"{operation} {kind}: {r.status_code} {r.json}")
            if kind not in listed and r.status_code not in (401, 403):
                refused_unlisted.append(f"{operation} {kind}: {r.status_code}")
        assert client.open(path.format(id=match_id), method=method).status_code == 401, operation
    assert not refused_listed, "a kind the document lists is refused:\n" + "\n".join(refused_listed)
    assert not refused_unlisted, "a kind the document does not list is taken:\n" + "\n".join(refused_unlisted)


def test_an_optional_token_is_read_as_none_unless_a_player_s_and_a_wrong_one_is_refused(world):
    client, _, tokens = world
    for kind, token in tokens.items():
        r = client.post("/matches", json={}, headers=bearer(token))
        assert r.status_code == 201, (kind, r.json)
    assert client.post("/matches", json={}, headers=bearer("not-a-token")).status_code == 401
