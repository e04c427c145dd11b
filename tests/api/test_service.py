"""Health, presets, the OpenAPI document and the docs page."""

import json
import re
from pathlib import Path

import yaml
from openapi_spec_validator import validate

from service.api.openapi import spec_dict, spec_yaml
from service.records.records import record_schema

COMMITTED = Path(__file__).parents[2] / "openapi" / "openapi.yaml"


def test_health_reports_the_database(client):
    r = client.get("/health")
    assert r.status_code == 200 and r.json == {"status": "ok", "database": "ok"}


def test_presets_list_every_ruleset_and_parameter_range(client):
    body = client.get("/rules/presets").json
    assert [p["name"] for p in body["presets"]] == ["classic", "short-stock", "upcard-offer", "bonus-20-10", "oklahoma", "straight", "hollywood"]
    assert body["parameters"]["knock_limit"] == {"type": "integer", "minimum": 0, "maximum": 10}


def test_the_openapi_document_is_valid_openapi_3_1(app):
    spec = spec_dict(app)
    assert spec["openapi"] == "3.1.0"
    validate(spec)
    assert {"/matches", "/matches/{match_id}", "/matches/{match_id}/actions", "/matches/{match_id}/events"} <= set(spec["paths"])


def test_the_committed_openapi_document_matches_the_code(app):
    assert COMMITTED.read_text() == spec_yaml(app), "run: gin-rummy openapi > openapi/openapi.yaml"
    assert yaml.safe_load(COMMITTED.read_text())["info"]["title"] == "Gin Rummy service"


def test_the_document_is_self_contained_with_the_record_schema_in_its_components(app):
    spec = spec_dict(app)
    refs = set(re.findall(r'"\$ref": "([^"]*)"', json.dumps(spec)))
    kinds = ("#/components/schemas/", "#/components/headers/")
    assert refs and all(ref.startswith(kinds) for ref in refs), sorted(refs)
    schemas = {ref.removeprefix(kinds[0]) for ref in refs if ref.startswith(kinds[0])}
    assert schemas <= set(spec["components"]["schemas"])
    assert {ref.removeprefix(kinds[1]) for ref in refs if ref.startswith(kinds[1])} <= set(spec["components"]["headers"])
    record = spec["components"]["schemas"]["MatchRecord"]
    file = record_schema()
    assert "$id" not in record and "$defs" not in record and record["required"] == file["required"]
    assert spec["components"]["schemas"]["MatchRecordHandDealt"]["properties"].keys() == file["$defs"]["hand_dealt"]["properties"].keys()


def test_the_served_document_and_docs_page(client):
    assert client.get("/openapi.json").json["openapi"] == "3.1.0"
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html" and b"openapi.json" in page.data
    assert b"http://" not in page.data and b"https://" not in page.data  # nothing fetched from elsewhere
    # Swagger UI and the favicon, served by the service itself.
    text = page.get_data(as_text=True)
    assets = re.findall(r'(?:href|src)="(docs/[^"]+)"', text)
    assert {"docs/swagger-ui.css", "docs/swagger-ui-bundle.js", "docs/favicon.svg"} <= set(assets)
    assert re.search(r'<link rel="icon"[^>]*href="docs/favicon.svg"', text)
    assert "validatorUrl: null" in text  # Swagger UI would send the document to validator.swagger.io
    for asset in assets:
        r = client.get("/" + asset)
        assert r.status_code == 200 and len(r.data) > 100, asset
    assert client.get("/docs/favicon.svg").mimetype == "image/svg+xml"
    assert client.get("/docs/swagger-ui-bundle.js").mimetype == "text/javascript"
    assert b"SwaggerUIBundle" in client.get("/docs/swagger-ui-bundle.js").data
    r = client.get("/docs/oauth2-redirect.html")  # the package's other files are not served
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_the_api_reference_files_are_gzipped_for_clients_that_accept_it_and_kept_an_hour(client):
    import gzip

    for path in ("/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/openapi.json"):
        plain = client.get(path)
        packed = client.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
        assert "Content-Encoding" not in plain.headers and packed.headers["Content-Encoding"] == "gzip", path
        assert gzip.decompress(packed.data) == plain.data, path
        assert len(packed.data) < len(plain.data) / 3, path  # text compresses well: the bundle 1.7 MB to 0.45 MB
        assert "Accept-Encoding" in packed.headers["Vary"], path
        again = client.get(path, headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]})
        assert again.status_code == 304 and not again.data, path
        assert plain.headers["ETag"] != packed.headers["ETag"], path  # one per representation
    assert client.get("/docs/swagger-ui-bundle.js").headers["Cache-Control"] == "public, max-age=3600"
    assert client.get("/openapi.json").headers["Cache-Control"] == "no-cache"  # the document follows an upgrade at once


def test_an_ingress_error_handed_to_the_service_is_its_problem_document(client):
    # ingress-nginx, with the service as its default backend for its own errors, sends
    # them to "/" with the status in X-Code and the method kept.
    r = client.post("/", headers={"X-Code": "502", "X-Original-URI": "/matches?secret=1"})
    assert (r.status_code, r.mimetype, r.json["code"], r.headers["Retry-After"]) == (
        502, "application/problem+json", "service_unreachable", "5")
    assert r.json["title"] == "Bad Gateway" and "secret" not in r.get_data(as_text=True)
    r = client.get("/", headers={"X-Code": "504"})
    assert (r.status_code, r.json["code"], r.json["title"]) == (504, "service_timeout", "Gateway Timeout")
    assert client.put("/", headers={"X-Code": "413"}).json["code"] == "body_too_large"
    assert client.get("/", headers={"X-Code": "not a status"}).status_code == 502
    # Without it, "/" is the web client's page, and only GET.
    assert client.get("/").mimetype == "text/html" and client.head("/").status_code == 200
    r = client.post("/")
    assert r.status_code == 405 and r.headers["Allow"] == "GET, HEAD" and r.json["code"] == "method_not_allowed"


def test_unknown_paths_and_methods_are_problems_too(client):
    r = client.get("/nowhere")
    assert r.status_code == 404 and r.mimetype == "application/problem+json" and r.json["code"] == "not_found"
    r = client.delete("/matches")
    assert r.status_code == 405 and r.json["code"] == "method_not_allowed"


def test_cross_origin_requests_are_allowed_only_for_configured_origins(store):
    from service.api import create_app

    client = create_app({"STORE": store, "CORS_ORIGINS": "https://play.example"}).test_client()
    r = client.options("/matches", headers={"Origin": "https://play.example", "Access-Control-Request-Method": "POST"})
    assert r.headers["Access-Control-Allow-Origin"] == "https://play.example"
    assert "Idempotency-Key" in r.headers["Access-Control-Allow-Headers"]
    # Every method the API has (a player renames or deletes itself, a ticket is cancelled).
    assert set(r.headers["Access-Control-Allow-Methods"].split(", ")) >= {"GET", "POST", "PATCH", "DELETE"}
    r = client.get("/health", headers={"Origin": "https://elsewhere.example"})
    assert "Access-Control-Allow-Origin" not in r.headers
    # Listed origins replace the default: a page on this machine is not allowed then.
    r = client.get("/health", headers={"Origin": "http://localhost:5173"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_by_default_a_page_on_this_machine_may_call_the_service_and_no_other_site(store):
    from service.api import create_app

    client = create_app({"STORE": store}).test_client()
    for origin in ("http://localhost:5173", "http://127.0.0.1:3000", "http://[::1]:8080", "https://localhost"):
        r = client.options("/matches", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
        assert r.headers.get("Access-Control-Allow-Origin") == origin, origin
    for origin in ("https://elsewhere.example", "http://localhost.example.com", "http://127.0.0.1.nip.io:5173",
                   "http://localhost:notaport", "null"):
        r = client.options("/matches", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
        assert "Access-Control-Allow-Origin" not in r.headers, origin
    closed = create_app({"STORE": store, "CORS_ORIGINS": "none"}).test_client()
    r = closed.options("/matches", headers={"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_every_request_is_logged_as_one_json_line_without_tokens(client, caplog):
    import json
    import logging

    caplog.set_level(logging.INFO, logger="gin_rummy.requests")
    created = client.post("/matches", json={}, headers={"X-Request-Id": "req-42"})
    token = created.json["seats"][0]["token"]
    r = client.get(f"/matches/{created.json['id']}?seat=0", headers={"Authorization": f"Bearer {token}"})
    assert created.headers["X-Request-Id"] == "req-42" and len(r.headers["X-Request-Id"]) == 32
    lines = [json.loads(rec.getMessage()) for rec in caplog.records if rec.name == "gin_rummy.requests"]
    assert lines[0]["request_id"] == "req-42" and lines[0]["status"] == 201 and lines[0]["route"] == "/matches"
    assert lines[1]["path"] == f"/matches/{created.json['id']}" and lines[1]["ms"] >= 0
    assert not any(token in rec.getMessage() or token.split(".")[-1] in rec.getMessage() for rec in caplog.records)


def test_a_servers_request_log_writes_its_lines_in_order_in_batches_each_line_as_logged(client, monkeypatch):
    """The handler a server installs (service.wsgi): lines gathered, then one write, at
    most FLUSH_SECONDS after the first; at once when LIMIT bytes wait."""
    import io
    import json
    import logging
    import time

    from service.api import logs

    class Stream(io.StringIO):
        writes = 0

        def write(self, text):
            Stream.writes += 1
            return super().write(text)

    stream = Stream()
    lines = logs.BatchedLines(stream, flush_seconds=0.2, limit=10_000)
    lines.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("gin_rummy.requests")
    monkeypatch.setattr(logger, "handlers", [lines])
    monkeypatch.setattr(logger, "propagate", False)
    monkeypatch.setattr(logger, "level", logging.INFO)
    for i in range(3):
        assert client.get("/health/live", headers={"X-Request-Id": f"batch-{i}"}).status_code == 200
    assert stream.getvalue() == ""  # gathered, not yet written
    deadline = time.monotonic() + 5
    while not stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    written = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["request_id"] for line in written] == ["batch-0", "batch-1", "batch-2"] and Stream.writes == 1
    assert written[0]["route"] == "/health/live" and written[0]["status"] == 200
    # A full batch is written at once, by the request that filled it; a record logged
    # the usual way (another handler beside it would force that path) reads the same.
    lines.limit = 1
    logger.info("by a record")
    client.get("/health/live", headers={"X-Request-Id": "at-once"})
    assert stream.getvalue().splitlines()[-2] == "by a record"
    assert json.loads(stream.getvalue().splitlines()[-1])["request_id"] == "at-once"


def test_a_database_outage_is_a_503_with_retry_after(store):
    import psycopg

    from service.api import create_app

    class Down:
        class pool:  # nothing listens on port 1
            conninfo = "postgresql://nobody@127.0.0.1:1/none"

        def transaction(self, conn=None):
            raise psycopg.OperationalError("connection refused")

        def connection(self):
            raise psycopg.OperationalError("connection refused")

    app = create_app({"STORE": Down(), "TESTING": True})
    r = app.test_client().post("/matches", json={})
    assert r.status_code == 503 and r.headers["Retry-After"] == "2" and r.json["code"] == "database_unavailable"
    health = app.test_client().get("/health")
    assert health.status_code == 503 and health.json["status"] == "unavailable"
    assert app.test_client().get("/health/live").status_code == 200


def test_the_documents_record_schema_accepts_exactly_what_the_file_accepts(app):
    """The components say the record's event schema otherwise (a oneOf per type and version,
    for code generators): on real records and records changed event by event, both agree."""
    import copy

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    from service.api.openapi import examples

    spec = spec_dict(app)
    registry = Registry().with_resource("urn:doc", Resource(contents=spec, specification=DRAFT202012))
    in_document = Draft202012Validator({"$ref": "urn:doc#/components/schemas/MatchRecord"}, registry=registry)
    in_file = Draft202012Validator(record_schema())
    records = [examples()["import_one"]["request"], examples()["export_one"]["responses"]["200"]["application/json"]]
    cases = []
    for record in records:
        cases.append(record)
        events = record["events"]
        for i, _event in enumerate(events):
            for change in ("data of another type", "unknown version", "version 1", "no data"):
                changed = copy.deepcopy(record)
                target = changed["events"][i]
                if change == "data of another type":
                    target["data"] = copy.deepcopy(events[(i + 1) % len(events)]["data"])
                elif change == "unknown version":
                    target["schema_version"] = 9
                elif change == "version 1":
                    target["schema_version"] = 1
                else:
                    del target["data"]
                cases.append(changed)
    verdicts = [(in_document.is_valid(case), in_file.is_valid(case)) for case in cases]
    assert all(a == b for a, b in verdicts), [i for i, (a, b) in enumerate(verdicts) if a != b]
    assert sum(a for a, _ in verdicts) >= len(records) and sum(not a for a, _ in verdicts) > len(cases) // 2


def test_a_record_event_schema_of_another_shape_keeps_its_branches():
    from service.api.openapi import _event_variants

    event = {
        "properties": {"type": {"enum": ["x"]}, "data": {"type": "object"}},
        "allOf": [
            {"if": {"properties": {"type": {"const": "x"}}}, "then": {"properties": {"schema_version": {"enum": [1]}}}},
            {"if": {"properties": {"type": {"const": "x"}}}, "then": {"properties": {"data": {"required": ["a"]}}}},
        ],
    }
    assert _event_variants(event, {}) is None  # data said inline, not by a schema of its own
    event["allOf"][1]["then"]["properties"]["data"] = {"$ref": "#/components/schemas/X"}
    assert _event_variants(event, {"X": {"type": "object"}})[0]["properties"]["type"] == {"const": "x"}
    event["properties"]["type"]["enum"].append("y")  # a type without its versions
    assert _event_variants(event, {"X": {"type": "object"}}) is None
