"""Prometheus metrics at GET /metrics: what is counted, how it is labelled, who may read it."""

import os
import subprocess
import sys
import textwrap

from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from service.api import create_app
from tests.support.matches import greedy_action_on_view

from .conftest import OPERATOR, bearer, plays


def sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def scrape(client, headers=None) -> dict:
    """The served metrics as {(sample name, frozenset of labels): value}."""
    r = client.get("/metrics", headers=headers or {})
    assert r.status_code == 200 and r.content_type.startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.get_data(as_text=True))
        for s in family.samples
    }


def test_requests_are_counted_by_method_route_template_and_status(client, new_match):
    data, players = new_match()
    route = "/matches/<match_id>"
    before = sample("gin_rummy_http_requests_total", method="GET", route=route, status="200")
    latency = sample("gin_rummy_http_request_duration_seconds_count", method="GET", route=route)
    players[0].view()
    players[0].view()
    client.get(f"/matches/{data['id']}")  # no token: 401
    served = scrape(client)
    key = ("gin_rummy_http_requests_total", frozenset({"method": "GET", "route": route, "status": "200"}.items()))
    assert served[key] == before + 2
    assert sample("gin_rummy_http_requests_total", method="GET", route=route, status="401") >= 1
    assert sample("gin_rummy_http_request_duration_seconds_count", method="GET", route=route) == latency + 3
    text = client.get("/metrics").get_data(as_text=True)
    assert data["id"] not in text  # routes are templates, never the ids of matches


def test_unknown_paths_and_methods_do_not_make_new_series(client):
    client.get("/probe/for/something/1234")
    client.open("/matches", method="BREW")
    text = client.get("/metrics").get_data(as_text=True)
    assert "/probe/for" not in text and "BREW" not in text
    assert sample("gin_rummy_http_requests_total", method="GET", route="unmatched", status="404") >= 1
    assert sample("gin_rummy_http_requests_total", method="other", route="unmatched", status="405") >= 1


def test_actions_and_the_computers_decisions_are_counted(new_match):
    _, players = new_match({"seats": [{"name": "Ann"}, {"kind": "computer", "level": "hard"}]})
    person = sample("gin_rummy_actions_total", type="draw", by="person")
    computer = sum(sample("gin_rummy_actions_total", type=t, by="computer") for t in ("draw", "pass", "discard", "knock", "gin"))
    decisions = sample("gin_rummy_bot_decision_seconds_count", level="hard")
    player = players[0]
    view = player.view()
    while not any(a["type"] == "draw" for a in plays(view)):  # the upcard offer, if any
        assert player.act(plays(view)[0]).status_code == 200
        view = player.view()
    assert player.act({"type": "draw", "source": "stock"}).status_code == 200
    assert player.act(greedy_action_on_view(player.view())).status_code == 200  # the computer answers
    assert sample("gin_rummy_actions_total", type="draw", by="person") == person + 1
    after = sum(sample("gin_rummy_actions_total", type=t, by="computer") for t in ("draw", "pass", "discard", "knock", "gin"))
    assert after >= computer + 1
    assert sample("gin_rummy_bot_decision_seconds_count", level="hard") >= decisions + 1
    assert sample("gin_rummy_bot_decision_seconds_sum", level="hard") > 0


def test_conflicts_are_counted_by_status_and_problem_code(new_match):
    _, players = new_match({"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    stale = sample("gin_rummy_conflicts_total", status="412", code="version_mismatch")
    illegal = sample("gin_rummy_conflicts_total", status="409", code="illegal_move")
    assert players[0].act({"type": "pass"}, **{"If-Match": '"1"'}).status_code == 412
    turn = players[0].view()["turn"]
    assert players[1 - turn].act({"type": "draw", "source": "stock"}).status_code == 409
    assert sample("gin_rummy_conflicts_total", status="412", code="version_mismatch") == stale + 1
    assert sample("gin_rummy_conflicts_total", status="409", code="illegal_move") == illegal + 1


def test_rate_limited_requests_are_counted(store):
    client = create_app({"STORE": store, "TESTING": True, "RATE_LIMIT_PER_ADDRESS": "1/minute burst 1"}).test_client()
    before = sample("gin_rummy_rate_limited_total", scope="address")
    client.get("/rules/presets")
    assert client.get("/rules/presets").status_code == 429
    assert sample("gin_rummy_rate_limited_total", scope="address") == before + 1
    assert sample("gin_rummy_http_requests_total", method="GET", route="/rules/presets", status="429") >= 1


def test_the_metrics_token_when_configured_is_the_only_way_in(store):
    client = create_app({"STORE": store, "TESTING": True, "OPERATOR_TOKEN": OPERATOR, "METRICS_TOKEN": "scrape-me"}).test_client()
    for headers in ({}, bearer(OPERATOR), bearer("scrape-m"), {"Authorization": "Basic scrape-me"}):
        r = client.get("/metrics", headers=headers)
        assert r.status_code == 401 and r.mimetype == "application/problem+json" and r.json["code"] == "unauthorized"
    assert "gin_rummy_http_requests_total" in client.get("/metrics", headers=bearer("scrape-me")).get_data(as_text=True)


def test_metrics_are_open_without_a_metrics_token(client):
    assert client.get("/metrics").status_code == 200


def test_several_worker_processes_are_summed_through_the_multiprocess_directory(tmp_path):
    """What gunicorn's workers do: each counts into PROMETHEUS_MULTIPROC_DIR, any of them
    answers /metrics with the sum, and a dead worker's counts are kept."""
    worker = textwrap.dedent(
        """
        from service.api import metrics
        metrics.HOOKS.action_applied("discard", "person")
        metrics.HOOKS.bot_decided("easy", 0.01)
        """
    )
    reader = textwrap.dedent(
        """
        import sys
        from service import gunicorn_conf
        from service.api import metrics
        from service.settings import Settings
        gunicorn_conf.child_exit(None, type("Worker", (), {"pid": int(sys.argv[1])}))
        sys.stdout.write(metrics.exposition(Settings.from_env().metrics_dir).decode())
        """
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for _ in range(3):  # three workers, one after another
        subprocess.run([sys.executable, "-c", worker], env=env, check=True)
    pids = [name.split("_")[-1].removesuffix(".db") for name in os.listdir(tmp_path) if name.startswith("counter_")]
    assert len(pids) == 3
    out = subprocess.run([sys.executable, "-c", reader, pids[0]], env=env, check=True, capture_output=True, text=True).stdout
    assert 'gin_rummy_actions_total{by="person",type="discard"} 3.0' in out
    assert 'gin_rummy_bot_decision_seconds_count{level="easy"} 3.0' in out


def test_the_server_starts_its_counts_from_zero(tmp_path):
    (tmp_path / "counter_123.db").write_bytes(b"old")
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    code = "from service import gunicorn_conf; gunicorn_conf.on_starting(None)"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert list(tmp_path.iterdir()) == []
