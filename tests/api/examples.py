"""The OpenAPI document's examples, captured from a real session of the service.

    python -m tests.api.examples [--database-url URL] [--only OPERATION_ID ...]

plays the session below against the app on scratch databases (``--database-url`` is a
PostgreSQL server's admin URL; without it an embedded server is started) and writes what
every request sent and got to ``service/api/examples.json``, which ``service.api.openapi``
puts into the document (then run ``gin-rummy openapi > openapi/openapi.yaml``).
``--only`` rewrites the examples of those operations alone and keeps the others as they
are, so adding an endpoint does not change every other example.

The file maps an operation id to ``{"request": body, "responses": {status: {media type:
example}}}``: the body of the first request of that operation that succeeded, and the
first answer of each status and media type.  ``tests/api/test_openapi_examples.py``
checks that every operation has one for its body and each success response, that each
validates against its schema, and that this session still gets an answer of every
status and media type the file holds, with the same fields.

A new endpoint gets its examples by a call here (in ``session``), then a run with
``--only`` and its operation id.  Its documented refusals come by themselves, mostly:
``gaps`` asks every operation for each one the session did not meet (no token, a seat's
token, a body that is not JSON...), and ``limits`` a service at its limits for the 429s
and 503s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import re
import secrets
import sys
import uuid
from pathlib import Path
from unittest import mock

from service import feed
from service.api import create_app
from service.api.openapi import spec_dict
from service.api.records import MAX_RECORD_BYTES
from tests.store.test_global_order import settled
from tests.support.matches import greedy_action_on_view
from tests.support.webhooks import Receiver

EXAMPLES = Path(__file__).resolve().parents[2] / "service" / "api" / "examples.json"
OPERATOR = "operator-token-for-the-examples"
#: The examples' session plays far faster than a person; the limits have tests of their own.
UNLIMITED = {
    "RATE_LIMIT_PER_TOKEN": "off", "RATE_LIMIT_PER_ADDRESS": "off", "IMPORT_RATE_LIMIT_PER_ADDRESS": "off",
    "GUESTS_PER_ADDRESS": "off", "INVITES_PER_ADDRESS": "off", "PUBLIC_MATCHES_PER_PLAYER": "off",
    "CPU_PER_ADDRESS": "off", "CPU_PER_TOKEN": "off", "HEAVY_JOBS_PER_PROCESS": "off",
}
#: Lines of a long text answer (the metrics) kept in its example.
TEXT_LINES = 12
#: The response headers whose operations and statuses the session records for the
#: document (service.api.openapi.HEADERS: the others follow from rules).
RECORDED_HEADERS = ("ETag", "Location", "Idempotent-Replayed")


def make_app(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED})
    app.extensions["gin_rummy"].play.deal_rng = random.Random("the examples' deals")
    return app


class Recorder:
    """A test client that keeps, per operation, the first successful request body and
    the first answer of each status and media type."""

    def __init__(self, app):
        self.app = app
        self.client = app.test_client()
        self.urls = app.url_map.bind("localhost")
        self.examples: dict[str, dict] = {}
        # Only the answers the document lists (not the generic ones of "default").
        with app.app_context():
            document = spec_dict(app)
        self.documented = {
            op["operationId"]: set(op["responses"]) for item in document["paths"].values() for op in item.values()
        }

    def call(self, method: str, path: str, *, token: str | None = None, json_body=None, keep=None, **kwargs):
        headers = dict(kwargs.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        response = self.client.open(path, method=method, json=json_body, headers=headers, **kwargs)
        endpoint, _ = self.urls.match(path.split("?")[0], method=method)
        operation = endpoint.split(".")[-1]  # the operationId (service.api.openapi)
        entry = self.examples.setdefault(operation, {"responses": {}})
        if json_body is not None and response.status_code < 300 and "request" not in entry:
            entry["request"] = json_body
        status = str(response.status_code)
        seen = [name for name in RECORDED_HEADERS if name in response.headers]
        if seen and status in self.documented.get(operation, ()):
            known = entry.setdefault("headers", {}).setdefault(status, [])
            known[:] = [name for name in RECORDED_HEADERS if name in known or name in seen]
        if response.status_code not in (204, 304) and str(response.status_code) in self.documented.get(operation, ()):
            media = response.mimetype
            answer = response.get_json() if media == "application/json" or media.endswith("+json") else response.get_data(as_text=True)
            if keep is not None:
                answer = keep(answer)
            entry["responses"].setdefault(str(response.status_code), {}).setdefault(media, answer)
        return response


def abbreviated_document(document: dict) -> dict:
    """The OpenAPI document cut to one operation and the schemas it names (the whole one,
    examples and all, would be an example of itself)."""
    live = {method: {k: v for k, v in op.items()} for method, op in document["paths"]["/health/live"].items()}
    for op in live.values():
        for response in op["responses"].values():
            for media in response.get("content", {}).values():
                media.pop("example", None)
    schemas = document["components"]["schemas"]
    return {
        "openapi": document["openapi"],
        "info": {k: v for k, v in document["info"].items() if k != "description"},
        "paths": {"/health/live": live},
        "components": {"schemas": {name: schemas[name] for name in ("Health", "Problem")}},
    }


def abbreviated_schema(schema: dict) -> dict:
    return {key: schema[key] for key in ("$schema", "$id", "title", "type", "required")}


def abbreviated_catalogue(catalogue: dict) -> dict:
    """The catalogue of error codes cut to a few entries and rules."""
    keep = ("illegal_move", "version_mismatch", "rate_limited")
    problems = [entry for entry in catalogue["problems"] if entry["code"] in keep]
    return {**catalogue, "problems": problems, "rules": catalogue["rules"][:3]}


def first_lines(text: str, count: int = TEXT_LINES) -> str:
    return "".join(text.splitlines(keepends=True)[:count])


def session(api: Recorder, importer: Recorder) -> None:
    """Every operation, called as a client would; ``importer`` is a second service, to
    import a record this one exported."""
    call = api.call
    # The service.
    call("GET", "/health")
    call("GET", "/health/live")
    call("GET", "/rules/presets")
    call("GET", "/.well-known/jwks.json")
    call("GET", "/docs")
    call("GET", "/openapi.json", keep=abbreviated_document)
    call("GET", "/match-record.schema.json", keep=abbreviated_schema)
    call("GET", "/problems", headers={"Accept": "application/json"}, keep=abbreviated_catalogue)
    call("GET", "/problems", headers={"Accept": "text/html"}, keep=first_lines)
    call("GET", "/problems/version_mismatch", headers={"Accept": "application/json"})
    call("GET", "/problems/version_mismatch", headers={"Accept": "text/html"}, keep=first_lines)
    call("GET", "/problems/no_such_code", headers={"Accept": "application/json"})  # 404

    # The operator's webhook endpoint, sent the notifications of everything below.
    receiver = Receiver().__enter__()
    hook = call("POST", "/webhooks", token=OPERATOR, json_body={
        "url": receiver.url, "kinds": ["your_move", "match_ended"], "description": "our push service",
    }).get_json()

    # A player, against the computer: one hand played to its end.
    call("POST", "/players", json_body={"name": ""})  # 422
    ann = call("POST", "/players", json_body={"name": "Ann"}).get_json()
    call("PATCH", "/players/me", token=ann["token"], json_body={"name": "Ann Lee"})
    call("GET", "/players/me", token=ann["token"])
    call("POST", "/matches", json_body={"rules": {"preset": "nope"}})  # 422
    call("POST", "/matches", data="{", content_type="application/json")  # 400
    call("POST", "/matches", data="rules=classic", content_type="application/x-www-form-urlencoded")  # 415
    with mock.patch.object(secrets, "randbelow", lambda n: 20261201 % n):  # the computer's seed
        created = call(
            "POST", "/matches", token=ann["token"],
            json_body={"rules": {"preset": "classic"}, "single_hand": True,
                       "seats": [{"name": "Ann", "kind": "human"}, {"kind": "computer", "level": "medium"}]},
        ).get_json()
    match_id, token = created["id"], created["seats"][0]["token"]
    match = f"/matches/{match_id}"
    call("GET", match)  # 401
    call("GET", f"/matches/{uuid.UUID(int=1, version=4)}", token=OPERATOR)  # 404
    view = call("GET", match, token=token).get_json()
    call("GET", match, token=token, headers={"If-None-Match": f'"{view["version"]}"'})  # 304: no example
    call("POST", f"{match}/actions", token=token, json_body={"type": "draw"})  # 422: from where?
    call("POST", f"{match}/actions", token=token, json_body={"type": "discard", "card": view["hand"][0]})  # 409
    call("POST", f"{match}/actions", token=token, json_body=greedy_action_on_view(view), headers={"If-Match": '"1"'})  # 412
    for _ in range(200):
        view = call("GET", match, token=token).get_json()
        if view["status"] == "finished":
            break
        action = greedy_action_on_view(view)
        sent = {"If-Match": f'"{view["version"]}"', "Idempotency-Key": str(uuid.uuid4())}
        call("POST", f"{match}/actions", token=token, json_body=action, headers=sent)
    else:
        raise AssertionError("the hand against the computer did not end")
    call("POST", f"{match}/actions", token=token, json_body=action, headers=sent)  # the same again: replayed
    call("GET", f"{match}/events?after=0&limit=3", token=token)
    call("GET", f"{match}/stream?after={view['version'] - 2}&wait=0", token=token)
    call("GET", f"{match}/hands", token=token)
    call("GET", f"{match}/hands/1", token=token)
    call("GET", f"{match}/hands/1/analysis", token=token)
    call("GET", f"{match}/analysis", token=token)
    call("GET", f"{match}/audit", token=token)
    call("GET", f"{match}/state?version=3", token=OPERATOR)
    call("GET", f"{match}/export?format=text", token=token)
    call("GET", "/matches", token=token)
    call("GET", "/players/me/matches", token=ann["token"])
    call("GET", "/players/me/notifications?after=0&limit=3", token=ann["token"])
    call("GET", "/players/me/stream?after=0&wait=0", token=ann["token"])
    call("GET", f"/players/{ann['id']}")
    call("GET", "/leaderboard?limit=5")
    call("GET", "/metrics", keep=service_metrics)

    # A hint, in a match of its own (a match with a hint is never rated).
    coached = call("POST", "/matches", json_body={"rules": {"preset": "classic", "hints": True}}).get_json()
    call("GET", f"/matches/{coached['id']}/hint", token=coached["seats"][0]["token"])

    # Two people: an invite, the lobby, joining, resigning, a rematch from both sides.
    invited = call("POST", "/matches", json_body={"seats": [{"name": "Ann"}, {"kind": "open"}], "public": True}).get_json()
    online = f"/matches/{invited['id']}"
    call("GET", "/lobby?limit=1")
    call("POST", f"{online}/join", json_body={"code": "not-the-code", "name": "Bob"})  # 403
    bob = call("POST", f"{online}/join", json_body={"code": invited["invite"]["code"], "name": "Bob"}).get_json()
    call("POST", f"{online}/join", json_body={"code": invited["invite"]["code"], "name": "Cleo"})  # 409
    ann_seat = invited["seats"][0]["token"]
    call("POST", f"{online}/actions", token=ann_seat, json_body={"type": "resign"})
    call("POST", f"{online}/rematch", token=ann_seat)  # 201
    call("POST", f"{online}/rematch", token=bob["token"])  # 200: the same rematch

    refusals(api, match_id, bob["token"])

    # Records: one exported, then imported into another service, twice.
    record = call("GET", f"{online}/export", token=ann_seat).get_json()
    call("GET", "/matches/export?status=finished", token=OPERATOR, keep=first_lines_of_ndjson)
    importer.call("POST", "/matches/import", json_body=record)  # 201
    importer.call("POST", "/matches/import", json_body=record)  # 200: already here

    # Matchmaking: Dee waits, a second ticket of hers is refused, Eli's fits hers.
    dee = call("POST", "/players", json_body={"name": "Dee"}).get_json()
    eli = call("POST", "/players", json_body={"name": "Eli"}).get_json()
    spec = {"kind": "live", "turn_seconds": 30, "single_hand": True, "rated": True}
    call("POST", "/matchmaking/tickets", token=dee["token"], json_body={**spec, "rules": {"turn_seconds": 30}})  # 422
    waiting = call("POST", "/matchmaking/tickets", token=dee["token"], json_body=spec).get_json()
    call("POST", "/matchmaking/tickets", token=dee["token"], json_body=spec)  # 409 ticket_open
    call("GET", f"/matchmaking/tickets/{waiting['id']}", token=dee["token"])  # still waiting
    call("GET", f"/matchmaking/tickets/{waiting['id']}", token=eli["token"])  # 404: not Eli's
    call("POST", "/matchmaking/tickets", token=eli["token"], json_body=spec)  # 201 paired at once
    call("DELETE", f"/matchmaking/tickets/{waiting['id']}", token=dee["token"])  # 409 ticket_paired
    alone = call("POST", "/matchmaking/tickets", token=eli["token"], json_body={"kind": "correspondence"}).get_json()
    call("DELETE", f"/matchmaking/tickets/{alone['id']}", token=eli["token"])  # 200 cancelled

    # A rated match between Dee and Eli (a move each, then Eli resigns): their rating histories.
    rated = call("POST", "/matches", token=dee["token"], json_body={"seats": [{"kind": "human"}, {"kind": "open"}]}).get_json()
    call("POST", f"/matches/{rated['id']}/join", token=eli["token"], json_body={"code": rated["invite"]["code"]})
    moved: set[int] = set()
    while moved != {0, 1}:
        for player in (dee, eli):
            view = api.client.get(f"/matches/{rated['id']}", headers={"Authorization": f"Bearer {player['token']}"}).get_json()
            if view["turn"] == view["seat"]:
                api.client.post(f"/matches/{rated['id']}/actions", json=greedy_action_on_view(view),
                                headers={"Authorization": f"Bearer {player['token']}"})
                moved.add(view["seat"])
                break
    api.client.post(f"/matches/{rated['id']}/actions", json={"type": "resign"}, headers={"Authorization": f"Bearer {eli['token']}"})
    settled(api.app.extensions["gin_rummy"].store)
    call("GET", f"/players/{dee['id']}/ratings")
    call("GET", f"/players/{dee['id']}/ratings?limit=0")  # 422
    call("GET", f"/players/{uuid.uuid4()}/ratings")  # 404
    call("GET", "/players/me/data", token=dee["token"], keep=lambda text: first_lines(text, 2))

    # Webhooks: what the endpoint was sent, its log, a delivery sent again.
    try:
        webhooks(api, hook, dee["token"])
    finally:
        receiver.__exit__(None, None, None)


def webhooks(api: Recorder, hook: dict, player_token: str) -> None:
    call = api.call
    call("POST", "/webhooks", token=OPERATOR, json_body={"url": "ftp://example.com", "kinds": ["your_turn"]})  # 422
    call("GET", "/webhooks", token=player_token)  # 403
    application = api.app.extensions["gin_rummy"]
    settled(application.store)
    feed.catch_up(application.store)
    application.webhooks.deliverer.deliver_due(1000)
    call("GET", "/webhooks", token=OPERATOR)
    call("GET", f"/webhooks/{hook['id']}", token=OPERATOR)
    log = call("GET", f"/webhooks/{hook['id']}/deliveries?limit=2", token=OPERATOR).get_json()
    call("GET", f"/webhooks/{hook['id']}/deliveries?state=sent", token=OPERATOR)  # 422
    call("POST", f"/webhooks/{hook['id']}/deliveries/{log['items'][0]['notification']}/retry", token=OPERATOR)
    call("POST", f"/webhooks/{hook['id']}/deliveries/1/retry", token=OPERATOR)  # 404
    call("DELETE", f"/webhooks/{hook['id']}", token=OPERATOR)
    call("GET", f"/webhooks/{hook['id']}", token=OPERATOR)  # 404
    extra = call("POST", "/webhooks", token=OPERATOR, json_body={"url": "https://push.example.com/hooks"}).get_json()
    call("DELETE", f"/webhooks/{extra['id']}", token=OPERATOR)


def service_metrics(text: str) -> str:
    """The service's own metrics (not the Python process's), their first lines."""
    lines = [line for line in text.splitlines(keepends=True) if "gin_rummy_" in line.split("{")[0]]
    return "".join(lines[:TEXT_LINES])


def refusals(api: Recorder, match_id: str, other_token: str) -> None:
    """The refusals every operation on a match may answer: no token (401), a token of
    another match (403), a match that is not there (404), a query it does not take (422).
    Nothing changes: each is refused."""
    nowhere = str(uuid.UUID(int=2, version=4))
    for rule in sorted(api.app.url_map.iter_rules(), key=lambda r: r.rule):
        view = api.app.view_functions.get(rule.endpoint)
        meta = getattr(view, "__openapi__", None)
        if meta is None or "match_id" not in rule.arguments:
            continue
        for method in sorted(rule.methods & {"GET", "POST", "PATCH"}):
            def path(match, rule=rule):
                return rule.rule.replace("<match_id>", match).replace("<int:number>", "1")

            # A valid body (the one that succeeded before), so that the refusal is the caller's.
            operation = rule.endpoint.split(".")[-1]
            body = api.examples.get(operation, {}).get("request", {}) if meta["body"] is not None else None
            api.call(method, path(match_id), json_body=body)
            api.call(method, path(match_id), token=other_token, json_body=body)
            api.call(method, path(nowhere), token=OPERATOR, json_body=body)
            if meta["query"] is not None:
                api.call(method, path(match_id) + "?no_such_parameter=1", token=OPERATOR, json_body=body)


def first_lines_of_ndjson(text: str) -> str:
    return first_lines(text, 1)


def deletions(api: Recorder, signed: Recorder, issuer) -> None:
    """A guest deletes themselves; the operator deletes a signed-in player by subject
    (``signed``: the service with an identity provider, ``issuer``)."""
    fay = api.call("POST", "/players", json_body={"name": "Fay"}).get_json()
    api.call("DELETE", "/players/me", token=fay["token"])
    api.call("DELETE", "/players/me", token=fay["token"])  # 401: the token no longer works
    gil = issuer.token(sub="user-4711", name="Gil")
    signed.call("GET", "/players/me", token=gil)
    signed.call("DELETE", "/players?subject=user-4711", token=gil)  # 403: the operator's
    signed.call("DELETE", "/players?subject=user-4711", token=OPERATOR)
    signed.call("DELETE", "/players?subject=user-4711", token=OPERATOR)  # 404: no more


#: A query each operation takes (so that a refusal is the caller's, not the query's).
QUERIES = {"delete_subject": "?subject=user-4711"}


def filled(rule: str, match_id: str) -> str:
    """A route's path with its arguments: the match's id, 1 for a number, a UUID of nothing."""
    nothing = str(uuid.UUID(int=6, version=4))
    numbers = ("number", "notification_id")
    return re.sub(r"<(?:int:)?(\w+)>", lambda m: "1" if m.group(1) in numbers else match_id if m.group(1) == "match_id" else nothing, rule)


def gaps(api: Recorder) -> None:
    """The refusals of every operation that the session above did not meet, as a client
    meets them: no token (401), a seat's token where a player's or the operator's is needed
    (403), a body that is not JSON (400) or not sent as JSON (415), a query parameter the
    operation does not take (422), a match id that is no match's (404)."""
    call = api.call
    created = call("POST", "/matches", json_body={"rules": {"preset": "classic", "hints": False}}).get_json()
    match, seat = f"/matches/{created['id']}", created["seats"][0]["token"]
    player = call("POST", "/players", json_body={"name": "Hal"}).get_json()["token"]
    call("GET", f"{match}?seat=7", token=OPERATOR)  # 422
    call("GET", f"{match}/hint", token=seat)  # 409 hints_off
    call("POST", f"{match}/rematch", token=seat)  # 409 no_rematch
    call("POST", f"{match}/rematch", token=seat, headers={"Idempotency-Key": "\x01"})  # 400
    call("PATCH", "/players/me", token=player, json_body={"name": ""})  # 422
    call("POST", f"{match}/join", json_body={"name": ""})  # 422
    call("POST", "/matches", token="not-a-token", json_body={})  # 401: a token is optional, a wrong one refused
    call("POST", f"{match}/join", token="not-a-token", json_body={})  # 401
    call("DELETE", f"/matchmaking/tickets/{uuid.UUID(int=3, version=4)}", token=player)  # 404
    call("GET", f"/players/{uuid.UUID(int=4, version=4)}")  # 404
    call("GET", f"/webhooks/{uuid.UUID(int=5, version=4)}/deliveries", token=OPERATOR)  # 404
    call("DELETE", f"/webhooks/{uuid.UUID(int=5, version=4)}", token=OPERATOR)  # 404
    call("POST", "/matches/import", json_body={"format": "a record of another service"})  # 422
    call("POST", "/matches/import", data=b" " * (MAX_RECORD_BYTES + 1), content_type="application/json")  # 413
    for rule in sorted(api.app.url_map.iter_rules(), key=lambda r: r.rule):
        meta = getattr(api.app.view_functions.get(rule.endpoint), "__openapi__", None)
        if meta is None:
            continue
        operation = rule.endpoint.split(".")[-1]
        path = filled(rule.rule, created["id"])

        def missing(status: int, operation=operation) -> bool:
            documented = str(status) in api.documented.get(operation, ())
            return documented and str(status) not in api.examples.get(operation, {}).get("responses", {})

        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            query = QUERIES.get(operation, "")
            # A body the operation took (so that the refusal is the token's, not the body's).
            body = api.examples.get(operation, {}).get("request", {}) if meta["body"] is not None else None
            if missing(401):
                call(method, path + query, json_body=body)
            if missing(403) and "match_id" not in rule.arguments:
                call(method, path + query, token=seat, json_body=body)
            if meta["body"] is not None and missing(400):
                call(method, path, data="{", content_type="application/json")
            if meta["body"] is not None and missing(415):
                call(method, path, data="name=Hal", content_type="application/x-www-form-urlencoded")
            if meta["query"] is not None and missing(422):
                call(method, path + "?no_such_parameter=1", token=OPERATOR)
            if "match_id" in rule.arguments and missing(404):
                call(method, path.replace(created["id"], "not-a-match"), token=OPERATOR)


def limits(store) -> Recorder:
    """The answers of a service at its limits: a client over its rate (429), an instance
    computing all the imports and analyses it takes at once (503 busy) or opening no more
    streams (503 shutting_down), the metrics behind their token (401)."""
    limited = Recorder(create_app({
        "STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED,
        "METRICS_TOKEN": "a-metrics-token-for-the-examples", "HEAVY_JOBS_PER_PROCESS": "1",
    }))
    call = limited.call
    created = call("POST", "/matches", json_body={"rules": {"preset": "classic"}}).get_json()
    match, seat = f"/matches/{created['id']}", created["seats"][0]["token"]
    player = call("POST", "/players", json_body={"name": "Ivy"}).get_json()["token"]
    call("GET", "/metrics")  # 401
    application = limited.app.extensions["gin_rummy"]
    with mock.patch.object(application.costs, "_running", application.settings.heavy_jobs_per_process):
        call("GET", f"{match}/analysis", token=OPERATOR)  # 503 busy
        call("GET", f"{match}/hands/1/analysis", token=OPERATOR)
        call("POST", "/matches/import", json_body={"format": "gin-rummy-match-record"})
    with mock.patch.object(application.streams, "hub", None):
        call("GET", "/players/me/stream?wait=0", token=player)  # 503 shutting_down
    assert application.probe is not None, "the examples' store has a pool"
    with mock.patch.object(application.probe, "check", side_effect=OSError("the database is away")):
        call("GET", "/health")  # 503
    rated = Recorder(create_app({
        "STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, "RATE_LIMIT_PER_ADDRESS": "1/hour",
    }))
    rated.call("GET", "/rules/presets")  # the one request of the hour
    for path in (f"{match}/analysis", f"{match}/hands/1/analysis", f"{match}/stream?wait=0", "/players/me/stream?wait=0"):
        rated.call("GET", path, token=seat)  # 429
    for path in ("/matches", "/players", "/matches/import"):
        rated.call("POST", path, json_body={})
    for operation, entry in rated.examples.items():
        merge(limited.examples.setdefault(operation, {"responses": {}}), entry)
    for app in (limited.app, rated.app):
        app.extensions["gin_rummy"].hub.shutdown()
    return limited


def conflicts(store, other_store) -> Recorder:
    """Two refusals of a state a service was set up in: the same match gone two ways on two
    services that sign with one key (409 ``match_exists``, a record of it imported where it
    went the other way), and an endpoint of the settings (409 ``webhook_from_settings``)."""
    import tempfile

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = Path(tempfile.mkdtemp(prefix="gin-rummy-examples-")) / "signing.pem"
    key.write_bytes(ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32))).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    secret = "whsec_" + "ZXhhbXBsZXMnIHNlY3JldCBvZiB0aGUgc2V0dGluZ3M="
    here = Recorder(create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED,
                                "SIGNING_KEY_FILE": str(key)}))
    there = Recorder(create_app({
        "STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, "SIGNING_KEY_FILE": str(key),
        "WEBHOOKS": f'[{{"url": "https://push.example.com/settings", "secret": "{secret}", "kinds": ["match_ended"]}}]',
    }))
    created = here.call("POST", "/matches", json_body={"seats": [{"kind": "human"}, {"kind": "computer", "level": "easy"}],
                                                       "rules": {"preset": "classic", "starter": "seat_0"}}).get_json()
    match, seat = f"/matches/{created['id']}", created["seats"][0]["token"]
    record = here.call("GET", f"{match}/export", token=OPERATOR).get_json()  # the match so far, signed
    imported = there.call("POST", "/matches/import", json_body=record).get_json()  # 201: its own id, a seat token
    there_seat = next(s["token"] for s in imported["seats"] if s["token"])
    for recorder, token, source in ((here, seat, "stock"), (there, there_seat, "discard")):
        recorder.client.post(f"{match}/actions", json={"type": "draw", "source": source}, headers={"Authorization": f"Bearer {token}"})
    gone_on = here.call("GET", f"{match}/export", token=OPERATOR).get_json()
    there.call("POST", "/matches/import", json_body=gone_on)  # 409 match_exists
    application = there.app.extensions["gin_rummy"]
    application.webhooks.sync(application.settings.webhooks)
    try:
        (endpoint,) = [e for e in there.call("GET", "/webhooks", token=OPERATOR).get_json()["items"] if e["origin"] == "settings"]
        there.call("DELETE", f"/webhooks/{endpoint['id']}", token=OPERATOR)  # 409 webhook_from_settings
    finally:
        application.webhooks.sync(())
    for app in (here.app, there.app):
        app.extensions["gin_rummy"].hub.shutdown()
    for operation, entry in there.examples.items():
        merge(here.examples.setdefault(operation, {"responses": {}}), entry)
    return here


def merge(into: dict, entry: dict) -> None:
    """``entry``'s examples added to ``into``'s: those of a request or status it lacks,
    and the headers it saw."""
    if "request" in entry:
        into.setdefault("request", entry["request"])
    for status, names in entry.get("headers", {}).items():
        known = into.setdefault("headers", {}).setdefault(status, [])
        known[:] = [name for name in RECORDED_HEADERS if name in known or name in names]
    for status, by_media in entry["responses"].items():
        for media_type, answer in by_media.items():
            into["responses"].setdefault(status, {}).setdefault(media_type, answer)


def capture(store, other_store) -> dict[str, dict]:
    """Every operation's examples, from one session on ``store`` (and ``other_store``, the
    service a record is imported into)."""
    import tempfile

    from tests.api.test_players import AUDIENCE, ISSUER, Issuer

    issuer = Issuer()
    jwks = Path(tempfile.mkdtemp(prefix="gin-rummy-examples-")) / "jwks.json"
    jwks.write_text(json.dumps(issuer.jwks()))
    signed_app = create_app({
        "STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED,
        "JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE, "JWT_JWKS_FILE": str(jwks),
    })
    api, importer, signed = Recorder(make_app(store)), Recorder(make_app(other_store)), Recorder(signed_app)
    try:
        session(api, importer)
        deletions(api, signed, issuer)
        gaps(api)
    finally:
        for app in (api.app, importer.app, signed.app):
            app.extensions["gin_rummy"].hub.shutdown()
    examples = api.examples
    for recorder in (importer, signed, limits(store), conflicts(store, other_store)):
        for operation, entry in recorder.examples.items():
            merge(examples.setdefault(operation, {"responses": {}}), entry)
    return {operation: examples[operation] for operation in sorted(examples)}


def write(examples: dict, path: Path = EXAMPLES) -> None:
    path.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")


@contextlib.contextmanager
def _stores(admin_url: str | None):
    from service.store import EventStore, connect
    from service.store.database import temporary_server
    from service.store.migrate import scratch_database

    with contextlib.ExitStack() as stack:
        if admin_url is None:
            admin_url = stack.enter_context(temporary_server("gin-rummy-examples-")).get_uri()
        stores = []
        for name in ("gin_rummy_examples", "gin_rummy_examples_import"):
            url = stack.enter_context(scratch_database(admin_url, name))
            pool = stack.enter_context(connect(url, max_size=6))
            stores.append(EventStore(pool))
        yield stores


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL server's admin URL (default: an embedded server)")
    parser.add_argument("--only", nargs="+", metavar="OPERATION_ID", help="rewrite these operations' examples alone")
    parser.add_argument("--headers", action="store_true", help="rewrite the headers seen alone, every example kept")
    args = parser.parse_args(argv)
    with _stores(args.database_url) as (store, other_store):
        captured = capture(store, other_store)
    if args.headers:
        examples = json.loads(EXAMPLES.read_text())
        for operation, entry in examples.items():
            entry.pop("headers", None)
            if captured.get(operation, {}).get("headers"):
                entry["headers"] = captured[operation]["headers"]
        captured = examples
    elif args.only:
        unknown = set(args.only) - set(captured)
        if unknown:
            print(f"not called by the session: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 1
        examples = json.loads(EXAMPLES.read_text()) if EXAMPLES.exists() else {}
        examples.update({operation: captured[operation] for operation in args.only})
        captured = {operation: examples[operation] for operation in sorted(examples)}
    write(captured)
    print(f"wrote {EXAMPLES}: {len(captured)} operations; now run: gin-rummy openapi > openapi/openapi.yaml", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
