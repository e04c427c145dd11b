"""Webhooks: the operator's endpoints, the Standard Webhooks deliveries of the
notifications to a receiver on loopback, their retries and their log."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from service import feed
from service.api import create_app
from service.store import webhooks as rows
from tests.store.test_global_order import settled
from tests.support.webhooks import SECRET, Receiver

from .conftest import OPERATOR, UNLIMITED, bearer
from .test_notifications import draw_and_discard, guest, invited, notes


def make_app(store, **settings):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, **settings})


@pytest.fixture
def hooks_app(store):
    """The app, retrying at once (no wait after a failure), and its endpoints removed after."""
    app = make_app(store, WEBHOOK_FIRST_RETRY_SECONDS="0", WEBHOOK_TIMEOUT_SECONDS="1")
    yield app
    with store.connection() as conn:
        conn.execute("DELETE FROM webhook_endpoints")


def application(app):
    return app.extensions["gin_rummy"]


def add(client, url, **body):
    r = client.post("/webhooks", json={"url": url, **body}, headers=bearer(OPERATOR))
    assert r.status_code == 201, r.json
    return r.json


def deliver(app) -> list[str]:
    """Fold what is stored into the feeds, then send what is due, in this thread."""
    settled(application(app).store)
    feed.catch_up(application(app).store)
    return application(app).webhooks.deliverer.deliver_due()


def your_moves(client, headers) -> list[dict]:
    return [n for n in notes(client, headers)["items"] if n["kind"] == "your_move"]


def test_only_the_operator_manages_webhooks_and_a_secret_is_shown_once(hooks_app):
    client = hooks_app.test_client()
    _, ann = guest(client, "Ann")
    assert client.get("/webhooks", headers=ann).status_code == 403
    assert client.post("/webhooks", json={"url": "https://example.com/x"}, headers=ann).status_code == 403
    assert client.get("/webhooks").status_code == 401

    made = add(client, "https://push.example.com/gin", kinds=["your_move", "reminder"], description="push")
    assert made["secret"].startswith("whsec_") and 24 <= len(base64.b64decode(made["secret"][6:])) <= 64
    assert made["kinds"] == ["your_move", "reminder"] and made["origin"] == "operator"
    assert made["deliveries"] == {"pending": 0, "delivered": 0, "failed": 0, "oldest_pending": None}
    listed = client.get("/webhooks", headers=bearer(OPERATOR)).json["items"]
    assert [each["id"] for each in listed] == [made["id"]]
    assert "secret" not in listed[0] and made["secret"] not in str(listed)
    one = client.get(f"/webhooks/{made['id']}", headers=bearer(OPERATOR)).json
    assert "secret" not in one and one["url"] == "https://push.example.com/gin"

    every = add(client, "http://127.0.0.1:9/all", secret=SECRET)
    assert every["secret"] == SECRET and every["kinds"] == list(feed.KINDS)

    assert client.delete(f"/webhooks/{made['id']}", headers=bearer(OPERATOR)).status_code == 200
    r = client.get(f"/webhooks/{made['id']}", headers=bearer(OPERATOR))
    assert r.status_code == 404 and r.json["code"] == "webhook_not_found"
    assert client.get("/webhooks/not-an-id", headers=bearer(OPERATOR)).json["code"] == "webhook_not_found"


@pytest.mark.parametrize("body, field", [
    ({"url": "ftp://example.com/x"}, "url"),
    ({"url": "https://"}, "url"),
    ({}, "url"),
    ({"url": "https://example.com", "kinds": ["your_turn"]}, "kinds"),
    ({"url": "https://example.com", "secret": "not-a-secret"}, "secret"),
    ({"url": "https://example.com", "secret": "whsec_" + base64.b64encode(b"short").decode()}, "secret"),
    ({"url": "https://example.com", "extra": 1}, "extra"),
])
def test_an_endpoint_that_cannot_be_used_is_refused_and_nothing_is_stored(hooks_app, body, field):
    client = hooks_app.test_client()
    r = client.post("/webhooks", json=body, headers=bearer(OPERATOR))
    assert r.status_code == 422 and r.headers["Content-Type"] == "application/problem+json", r.json
    assert field in r.json["errors"], r.json
    assert client.get("/webhooks", headers=bearer(OPERATOR)).json["items"] == []


def test_every_your_move_reaches_the_receiver_signed_with_the_feeds_id_and_no_card(hooks_app):
    client = hooks_app.test_client()
    with Receiver() as receiver:
        endpoint = add(client, receiver.url, kinds=["your_move"], secret=SECRET)
        a, ann = guest(client, "Ann")
        b, bob = guest(client, "Bob")
        mid = invited(client, ann, bob, turn_seconds=3 * 86_400)
        # Ann's seat starts: she draws and discards, then Bob.
        draw_and_discard(client, mid, ann)
        draw_and_discard(client, mid, bob)
        assert deliver(hooks_app) == ["delivered"] * 3
        assert deliver(hooks_app) == []  # nothing is sent twice

        expected = {f"notification_{n['id']}": (a["id"], n) for n in your_moves(client, ann)}
        expected |= {f"notification_{n['id']}": (b["id"], n) for n in your_moves(client, bob)}
        assert len(expected) == 3  # Ann's first move, Bob's, Ann's again
        got = receiver.got()
        assert all(each["verified"] for each in got)
        assert {each["id"]: each["payload"] for each in got} == {
            webhook_id: {"type": "your_move", "timestamp": n["created_at"], "data": {"player": player, **n}}
            for webhook_id, (player, n) in expected.items()
        }
        hand = client.get(f"/matches/{mid}", headers=ann).json["hand"]
        assert not any(card in str(got) for card in hand)

        log = client.get(f"/webhooks/{endpoint['id']}/deliveries", headers=bearer(OPERATOR)).json
        assert [d["webhook_id"] for d in log["items"]] == sorted(expected, key=lambda w: -int(w.split("_")[1]))
        assert {(d["state"], d["attempts"], d["last_status"]) for d in log["items"]} == {("delivered", 1, 200)}
        counts = client.get(f"/webhooks/{endpoint['id']}", headers=bearer(OPERATOR)).json["deliveries"]
        assert counts == {"pending": 0, "delivered": 3, "failed": 0, "oldest_pending": None}


def test_a_receiver_answering_500_is_retried_until_it_answers_and_keeps_the_webhook_id(hooks_app):
    client = hooks_app.test_client()
    answers = [500, 503, 200]
    with Receiver(status=lambda: answers.pop(0) if answers else 200) as receiver:
        endpoint = add(client, receiver.url, kinds=["invite_accepted"], secret=SECRET)
        _, ann = guest(client, "Ann")
        _, bob = guest(client, "Bob")
        invited(client, ann, bob)
        assert deliver(hooks_app) == ["retried"]
        log = client.get(f"/webhooks/{endpoint['id']}/deliveries", headers=bearer(OPERATOR)).json["items"]
        assert [(d["state"], d["attempts"], d["last_status"], d["last_error"]) for d in log] == [("pending", 1, 500, "answered 500")]
        assert deliver(hooks_app) == ["retried"]
        assert deliver(hooks_app) == ["delivered"]
        got = receiver.got()
        assert [each["answered"] for each in got] == [500, 503, 200]
        assert len({each["id"] for each in got}) == 1 and all(each["verified"] for each in got)
        (done,) = client.get(f"/webhooks/{endpoint['id']}/deliveries?state=delivered", headers=bearer(OPERATOR)).json["items"]
        assert (done["attempts"], done["last_status"], done["last_error"], done["next_attempt_at"]) == (3, 200, None, None)


def test_the_waits_double_from_the_first_retry_and_end_with_the_period():
    from random import Random

    from service.webhooks import Schedule

    made = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    schedule = Schedule(first=5.0, period=3600.0)

    class Middle(Random):
        def uniform(self, a, b):
            return 1.0  # no jitter

    waits = []
    for attempt in range(1, 8):
        now = made + timedelta(seconds=10 * attempt)
        waits.append((schedule.next_attempt(attempt, made, now, Middle()) - now).total_seconds())
    assert waits == [5, 10, 20, 40, 80, 160, 320]
    late = made + timedelta(seconds=3500)
    assert schedule.next_attempt(9, made, late, Middle()) == made + timedelta(seconds=3600)  # the last, at the period's end
    assert schedule.next_attempt(10, made, made + timedelta(seconds=3600), Middle()) is None  # failed
    assert Schedule(first=5.0, period=10 * 86_400).next_attempt(20, made, made, Middle()) == made + timedelta(hours=1)


def test_a_delivery_fails_after_the_period_and_the_operator_sends_it_again(store):
    app = make_app(store, WEBHOOK_RETRY_PERIOD_SECONDS="0", WEBHOOK_TIMEOUT_SECONDS="0.5")
    client = app.test_client()
    status = [500]
    try:
        with Receiver(status=lambda: status[0]) as receiver:
            endpoint = add(client, receiver.url, kinds=["invite_accepted"], secret=SECRET)
            _, ann = guest(client, "Ann")
            _, bob = guest(client, "Bob")
            invited(client, ann, bob)
            assert deliver(app) == ["failed"]
            (failed,) = client.get(f"/webhooks/{endpoint['id']}/deliveries?state=failed", headers=bearer(OPERATOR)).json["items"]
            assert (failed["attempts"], failed["last_status"]) == (1, 500) and failed["finished_at"] is not None
            assert client.get(f"/webhooks/{endpoint['id']}", headers=bearer(OPERATOR)).json["deliveries"]["failed"] == 1

            status[0] = 204
            url = f"/webhooks/{endpoint['id']}/deliveries/{failed['notification']}/retry"
            again = client.post(url, headers=bearer(OPERATOR)).json
            assert (again["state"], again["finished_at"]) == ("pending", None)
            assert deliver(app) == ["delivered"]
            assert [each["answered"] for each in receiver.got()] == [500, 204]
            assert len({each["id"] for each in receiver.got()}) == 1
            r = client.post(f"/webhooks/{endpoint['id']}/deliveries/123/retry", headers=bearer(OPERATOR))
            assert r.status_code == 404 and r.json["code"] == "delivery_not_found"
    finally:
        with store.connection() as conn:
            conn.execute("DELETE FROM webhook_endpoints")


def test_a_receiver_slower_than_the_timeout_is_retried(hooks_app):
    client = hooks_app.test_client()
    with Receiver(delay=1.5) as receiver:
        endpoint = add(client, receiver.url, kinds=["invite_accepted"], secret=SECRET)
        _, ann = guest(client, "Ann")
        _, bob = guest(client, "Bob")
        invited(client, ann, bob)
        started = time.monotonic()
        assert deliver(hooks_app) == ["retried"]
        assert time.monotonic() - started < 1.4  # the timeout (1 s), not the receiver's 1.5 s
        (pending,) = client.get(f"/webhooks/{endpoint['id']}/deliveries", headers=bearer(OPERATOR)).json["items"]
        assert pending["last_status"] is None and "timed out" in pending["last_error"]


def test_an_endpoint_is_sent_what_is_made_after_it_and_a_rebuild_of_the_feeds_sends_nothing_again(hooks_app):
    client = hooks_app.test_client()
    store = application(hooks_app).store
    with Receiver() as receiver:
        _, ann = guest(client, "Ann")
        _, bob = guest(client, "Bob")
        before = invited(client, ann, bob)
        settled(store)
        feed.catch_up(store)
        endpoint = add(client, receiver.url, kinds=["your_move", "invite_accepted"], secret=SECRET)
        after = invited(client, ann, bob)
        assert deliver(hooks_app) == ["delivered", "delivered"]  # the second match's join and first move
        assert {each["payload"]["data"]["match"] for each in receiver.got()} == {after}
        assert before != after
        feed.rebuild(store)
        assert deliver(hooks_app) == []
        with store.connection() as conn:
            assert len(rows.log(conn, __import__("uuid").UUID(endpoint["id"]), None, None, 100)) == 2


def test_a_claimed_delivery_is_not_claimed_again_until_its_lease_ends(hooks_app):
    client = hooks_app.test_client()
    store = application(hooks_app).store
    add(client, "http://127.0.0.1:9/nobody", kinds=["invite_accepted"], secret=SECRET)
    _, ann = guest(client, "Ann")
    _, bob = guest(client, "Bob")
    invited(client, ann, bob)
    settled(store)
    feed.catch_up(store)
    with store.transaction() as conn:
        (first,) = rows.claim(conn, 10, timedelta(seconds=0.5))
    with store.transaction() as conn:
        assert rows.claim(conn, 10, timedelta(seconds=0.5)) == []  # another process's claim finds nothing
    time.sleep(0.6)
    with store.transaction() as conn:
        (again,) = rows.claim(conn, 10, timedelta(seconds=60))
    assert (again.notification_id, again.attempt) == (first.notification_id, 2)
    with store.connection() as conn:
        # The first attempt's late outcome does not undo the second's claim...
        assert not rows.finish(conn, first, "pending", 500, "answered 500", datetime.now(UTC))
        # ... but a delivery is a delivery, whichever attempt made it.
        assert rows.finish(conn, first, "delivered", 200, None, None)


def test_the_settings_make_their_endpoints_exactly_and_the_api_cannot_remove_them(store):
    configured = f'[{{"url": "https://a.example.com/hook", "secret": "{SECRET}", "kinds": ["your_move"]}}]'
    app = make_app(store, WEBHOOKS=configured)
    application(app).webhooks.sync(application(app).settings.webhooks)
    client = app.test_client()
    try:
        (endpoint,) = client.get("/webhooks", headers=bearer(OPERATOR)).json["items"]
        assert (endpoint["url"], endpoint["origin"], endpoint["kinds"]) == ("https://a.example.com/hook", "settings", ["your_move"])
        r = client.delete(f"/webhooks/{endpoint['id']}", headers=bearer(OPERATOR))
        assert r.status_code == 409 and r.json["code"] == "webhook_from_settings"
        again = make_app(store, WEBHOOKS=configured.replace('["your_move"]', "[]"))
        application(again).webhooks.sync(application(again).settings.webhooks)
        (same,) = client.get("/webhooks", headers=bearer(OPERATOR)).json["items"]
        assert same["id"] == endpoint["id"] and same["created_at"] == endpoint["created_at"] and same["kinds"] == list(feed.KINDS)
        application(again).webhooks.sync(())
        assert client.get("/webhooks", headers=bearer(OPERATOR)).json["items"] == []
    finally:
        with store.connection() as conn:
            conn.execute("DELETE FROM webhook_endpoints")


def test_a_settings_endpoint_with_an_unknown_kind_stops_the_start(store):
    from service.settings import SettingsError

    app = make_app(store, WEBHOOKS=f'[{{"url": "https://a.example.com/hook", "secret": "{SECRET}", "kinds": ["your_turn"]}}]')
    with pytest.raises(SettingsError, match="GIN_RUMMY_WEBHOOKS: no notification kind your_turn"):
        application(app).webhooks.sync(application(app).settings.webhooks)


@pytest.mark.parametrize("value, message", [
    ("not json", "a JSON list"),
    ('{"url": "https://x"}', "a JSON list of objects"),
    (f'[{{"url": "mailto:x", "secret": "{SECRET}"}}]', "http:// or https://"),
    ('[{"url": "https://x.example.com"}]', "whsec_"),
    (f'[{{"url": "https://x.example.com", "secret": "{SECRET}"}}, {{"url": "https://x.example.com", "secret": "{SECRET}"}}]', "at most once"),
])
def test_the_webhooks_setting_is_refused_with_its_name(value, message):
    from service.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match=f"GIN_RUMMY_WEBHOOKS: .*{message}"):
        Settings.from_env({"GIN_RUMMY_WEBHOOKS": value})


def test_a_webhook_secret_is_never_in_an_event_a_record_or_a_log_line(hooks_app, capsys, caplog):
    client = hooks_app.test_client()
    with Receiver(status=lambda: 500) as receiver:
        add(client, receiver.url, secret=SECRET)
        _, ann = guest(client, "Ann")
        _, bob = guest(client, "Bob")
        mid = invited(client, ann, bob)
        deliver(hooks_app)
        events = client.get(f"/matches/{mid}/events", headers=bearer(OPERATOR)).json
        record = client.get(f"/matches/{mid}/record", headers=bearer(OPERATOR))
        raw = SECRET.removeprefix("whsec_")
        for text in (str(events), record.get_data(as_text=True), capsys.readouterr().err, caplog.text):
            assert raw not in text
        signed = Webhook(SECRET).sign("notification_1", datetime.now(UTC), "{}").split(",")[1]
        assert signed not in caplog.text


def test_a_slow_receiver_holds_back_its_own_deliveries_not_another_endpoints(store):
    """Two senders: one endpoint takes at most one of them, so the quick receiver gets
    its three while the slow one still holds its first."""
    app = make_app(store, WEBHOOK_SENDERS="2", WEBHOOK_TIMEOUT_SECONDS="10", WEBHOOK_POLL_SECONDS="0.05")
    client = app.test_client()
    deliverer = application(app).webhooks.deliverer
    stop = None
    try:
        with Receiver(delay=4.0) as slow, Receiver() as quick:
            add(client, slow.url, kinds=["invite_accepted"], secret=SECRET)
            add(client, quick.url, kinds=["invite_accepted"], secret=SECRET)
            _, ann = guest(client, "Ann")
            _, bob = guest(client, "Bob")
            for _ in range(3):
                invited(client, ann, bob)
            settled(store)
            feed.catch_up(store)
            stop = deliverer.start()
            started = time.monotonic()
            while len(quick.got()) < 3 and time.monotonic() - started < 3.5:
                time.sleep(0.05)
            assert len(quick.got()) == 3, "the quick receiver was not held back by the slow one"
            assert slow.arrived == 1 and slow.got() == []  # its one sender is still waiting for its answer
    finally:
        if stop is not None:
            stop.set()
        with store.connection() as conn:
            conn.execute("DELETE FROM webhook_endpoints")


def test_the_metrics_count_each_attempt_by_outcome_and_the_lag_of_each_delivery(hooks_app):
    client = hooks_app.test_client()

    def counted() -> dict[str, float]:
        text = client.get("/metrics").get_data(as_text=True)
        found = {}
        for line in text.splitlines():
            if line.startswith("gin_rummy_webhook_attempts_total{"):
                found[line.split('"')[1]] = float(line.split()[-1])
            elif line.startswith("gin_rummy_webhook_lag_seconds_count"):
                found["lag_count"] = float(line.split()[-1])
        return found

    before = counted()
    answers = [500]
    with Receiver(status=lambda: answers.pop(0) if answers else 200) as receiver:
        add(client, receiver.url, kinds=["invite_accepted"], secret=SECRET)
        _, ann = guest(client, "Ann")
        _, bob = guest(client, "Bob")
        invited(client, ann, bob)
        assert deliver(hooks_app) == ["retried"]
        assert deliver(hooks_app) == ["delivered"]
    after = counted()
    for name, more in (("retried", 1), ("delivered", 1), ("lag_count", 1)):
        assert after.get(name, 0) - before.get(name, 0) == more, (name, before, after)
