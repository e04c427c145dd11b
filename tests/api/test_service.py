"""Health, presets, the OpenAPI document and the docs page."""

from pathlib import Path

import yaml
from openapi_spec_validator import validate

from service.api.openapi import spec_dict, spec_yaml

COMMITTED = Path(__file__).parents[2] / "openapi" / "openapi.yaml"


def test_health_reports_the_database(client):
    r = client.get("/health")
    assert r.status_code == 200 and r.json == {"status": "ok", "database": "ok"}


def test_presets_list_every_ruleset_and_parameter_range(client):
    body = client.get("/rules/presets").json
    assert [p["name"] for p in body["presets"]] == ["classic", "short-stock", "upcard-offer", "bonus-20-10"]
    assert body["parameters"]["knock_limit"] == {"type": "integer", "minimum": 0, "maximum": 10}


def test_the_openapi_document_is_valid_openapi_3_1(app):
    spec = spec_dict(app)
    assert spec["openapi"] == "3.1.0"
    # Relative references (the match record's JSON Schema) resolve beside the document.
    validate(spec, base_uri=COMMITTED.resolve().as_uri())
    assert {"/matches", "/matches/{match_id}", "/matches/{match_id}/actions", "/matches/{match_id}/events"} <= set(spec["paths"])


def test_the_committed_openapi_document_matches_the_code(app):
    assert COMMITTED.read_text() == spec_yaml(app), "run: gin-rummy openapi > openapi/openapi.yaml"
    assert "match-record.schema.json" in COMMITTED.read_text()
    assert yaml.safe_load(COMMITTED.read_text())["info"]["title"] == "Gin Rummy service"


def test_the_served_document_and_docs_page(client):
    assert client.get("/openapi.json").json["openapi"] == "3.1.0"
    page = client.get("/docs")
    assert page.status_code == 200 and page.mimetype == "text/html" and b"openapi.json" in page.data
    assert b"http://" not in page.data and b"https://cdn" not in page.data  # nothing fetched from elsewhere


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
    r = client.get("/health", headers={"Origin": "https://elsewhere.example"})
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


def test_a_database_outage_is_a_503_with_retry_after(store):
    import psycopg

    from service.api import create_app

    class Down:
        class pool:  # nothing listens on port 1
            conninfo = "postgresql://nobody@127.0.0.1:1/none"

        def transaction(self):
            raise psycopg.OperationalError("connection refused")

    app = create_app({"STORE": Down(), "TESTING": True})
    r = app.test_client().post("/matches", json={})
    assert r.status_code == 503 and r.headers["Retry-After"] == "2" and r.json["code"] == "database_unavailable"
    health = app.test_client().get("/health")
    assert health.status_code == 503 and health.json["status"] == "unavailable"
    assert app.test_client().get("/health/live").status_code == 200
