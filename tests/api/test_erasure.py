"""A player deletes themselves: afterwards no surface names them or links them to their
matches, the events are never changed, records still verify, and the others' ratings
stand (a rebuild from the events gives them again)."""

from __future__ import annotations

import json

from service.cli import main as cli
from service.records.records import check_record

from .conftest import OPERATOR, bearer
from .test_ratings import app, clock, face_off, readable, resign, rows, settle  # noqa: F401 - the app on a clock

NAME = "Zyxwa Quorrel"


def guest(client, name):
    r = client.post("/players", json={"name": name})
    assert r.status_code == 201
    return r.json, bearer(r.json["token"])


def bodies_seen(client, match_ids, headers_list, player_ids) -> list[tuple[str, str]]:
    """(what, body) of every read a seat, the other player or the operator may make."""
    seen = []

    def get(path, headers):
        r = client.get(path, headers=headers)
        seen.append((f"GET {path} {r.status_code}", r.get_data(as_text=True)))

    for headers in headers_list:
        for mid in match_ids:
            for path in ("", "/events?after=0&limit=500", "/stream?after=0&wait=0", "/export", "/export?format=text",
                         "/audit", "/hands", "/hands/1", "/state?version=2", "/analysis"):
                get(f"/matches/{mid}{path}", headers)
        for path in ("/matches", "/players/me", "/players/me/matches", "/players/me/notifications?limit=500",
                     "/players/me/stream?wait=0", "/players/me/data", "/matches/export"):
            get(path, headers)
    for path in ("/lobby", "/leaderboard?limit=100", *(f"/players/{p}" for p in player_ids),
                 *(f"/players/{p}/ratings" for p in player_ids)):
        get(path, {})
    return seen


def test_after_a_deletion_no_surface_names_the_player_and_the_rest_stands(app, store, database_url, monkeypatch, capsys):  # noqa: F811
    client = app.test_client()
    her, h = guest(client, NAME)
    bob, b = guest(client, "Bob")
    finished = face_off(client, h, b)
    resign(client, finished, b)  # she wins: a rated match
    running = face_off(client, b, h)
    client.post("/matchmaking/tickets", json={"kind": "correspondence"}, headers=h)
    settle(client)
    before_record = client.get(f"/matches/{finished}/export", headers=b).json
    assert NAME in json.dumps(before_record)
    bobs_rating = client.get(f"/players/{bob['id']}").json
    bobs_history = client.get(f"/players/{bob['id']}/ratings").json["items"]
    her_seat_token = client.post(f"/matches/{running}/join", json={}, headers=h)  # (a refusal: already seated)
    assert her_seat_token.status_code in (403, 409)
    with store.connection() as conn:
        events_before = conn.execute("SELECT count(*), md5(string_agg(data::text, '' ORDER BY position)) FROM events").fetchone()

    r = client.delete("/players/me", headers=h)
    assert r.status_code == 200, r.json
    assert r.json["id"] == her["id"] and r.json["matches"] == 2

    # Her tokens stop working at once.
    assert client.get("/players/me", headers=h).status_code == 401
    assert client.get(f"/matches/{running}", headers=h).status_code == 401
    # No surface names her, in any case or encoding, nor gives her player id.
    seen = bodies_seen(client, [finished, running], [b, bearer(OPERATOR)], [her["id"], bob["id"]])
    assert len(seen) > 40
    forms = {NAME.lower(), json.dumps(NAME)[1:-1].lower(), NAME.lower().replace(" ", "%20"), her["id"]}
    # (A 404 for her id echoes the id asked for: that is the caller's own input.)
    leaks = [what for what, body in seen for form in forms if form in body.lower() and her["id"] not in what]
    assert not leaks, leaks
    view = client.get(f"/matches/{running}", headers=b).json
    pseudonym = view["seats"][1]["name"]  # her seat in the match Bob made
    assert pseudonym.startswith("Deleted player ") and len(pseudonym) == len("Deleted player ") + 4
    assert client.get(f"/players/{her['id']}").status_code == 404
    # The events are as they were: never updated, never deleted, the append-only trigger in place.
    with store.connection() as conn:
        assert conn.execute("SELECT count(*), md5(string_agg(data::text, '' ORDER BY position)) FROM events").fetchone() == events_before
        assert conn.execute("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'events'::regclass AND NOT tgisinternal").fetchone()[0] >= 1
    # Records made now verify; the one exported before is as it was (out of the service's hands).
    after_record = client.get(f"/matches/{finished}/export", headers=b).json
    assert check_record(after_record)[0] is not None and NAME not in json.dumps(after_record)
    assert check_record(before_record)[0] is not None
    assert client.get(f"/matches/{finished}/audit", headers=b).json["ok"] is True
    # Bob's rating and history stand; the pseudonym plays her side of them.
    assert client.get(f"/players/{bob['id']}").json == bobs_rating
    after = client.get(f"/players/{bob['id']}/ratings").json["items"]
    assert [(h_["match"], h_["rating"]) for h_ in after] == [(h_["match"], h_["rating"]) for h_ in bobs_history]
    assert after[0]["opponent"]["name"] is None and after[0]["opponent"]["id"] != her["id"]
    # A rebuild from the events gives the same read models again, the feeds included.
    settle(client)
    readable(store)
    client.get("/players/me/notifications", headers=b)  # the feeds caught up
    kept = read_models(store)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert cli(["projections", "rebuild"]) == 0
    capsys.readouterr()
    assert read_models(store) == kept


def read_models(store):
    with store.connection() as conn:
        return (
            *rows(store),
            conn.execute("SELECT * FROM notifications ORDER BY id").fetchall(),
            conn.execute("SELECT * FROM match_turns ORDER BY match_id").fetchall(),
            conn.execute("SELECT match_id, seats FROM match_summaries ORDER BY match_id").fetchall(),
        )


def test_a_deletion_racing_the_players_own_actions_leaves_each_action_applied_once_or_refused(app, store):  # noqa: F811
    """Her actions race her deletion: each is answered 200 (applied, before the deletion
    committed), 401 (her token no longer works) or 403 (her token was taken a moment
    before the deletion, her seat is no longer hers after it), never 500, and the
    match's events are exactly the actions answered 200."""
    import threading

    from tests.support.matches import greedy_action_on_view

    client = app.test_client()
    her, h = guest(client, NAME)
    bob, b = guest(client, "Bob")
    mid = face_off(client, h, b, moves=False)
    answers: list[int] = []
    start = threading.Barrier(2)

    def play() -> None:
        start.wait()
        for _ in range(40):
            view = client.get(f"/matches/{mid}", headers=h)
            if view.status_code != 200:
                answers.append(view.status_code)
                return
            if view.json["turn"] != view.json["seat"]:
                r = client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(client.get(f"/matches/{mid}", headers=b).json), headers=b)
                assert r.status_code == 200, r.json
                continue
            r = client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view.json), headers={**h, "If-Match": f'"{view.json["version"]}"'})
            answers.append(r.status_code)
            if r.status_code != 200:
                return

    player = threading.Thread(target=play)
    player.start()
    start.wait()
    assert client.delete("/players/me", headers=h).status_code == 200
    player.join(30)
    assert answers and set(answers) <= {200, 401, 403}
    with store.connection() as conn:
        (mine,) = conn.execute(
            "SELECT count(*) FROM events WHERE match_id = %s AND actor = 'seat:0'", (mid,)
        ).fetchone()
    assert mine == answers.count(200)
    assert client.get(f"/matches/{mid}", headers=h).status_code == 401
    assert NAME not in client.get(f"/matches/{mid}/events?after=0&limit=500", headers=b).get_data(as_text=True)


def test_a_deletion_on_one_replica_reaches_a_stream_and_the_caches_of_another(database_url, clock):  # noqa: F811
    """Replica A deletes her; replica B, which had her match's state, views and stream
    kept, names her no more once the deletion's notification reaches it."""
    import time

    from service.api import create_app
    from service.store import EventStore, connect, erasure
    from service.store.database import conninfo_of

    from .conftest import UNLIMITED

    apps = []
    for _ in range(2):
        store_ = EventStore(connect(database_url, min_size=1, max_size=6))
        apps.append(create_app({"STORE": store_, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "CLOCK": clock, **UNLIMITED}))
    a, b_app = (app_.test_client() for app_ in apps)
    services = apps[1].extensions["gin_rummy"]
    stop = erasure.listen(conninfo_of(services.store.pool), services.erasure.forget)
    try:
        her, h = guest(a, NAME)
        bob, bb = guest(a, "Bob")
        mid = face_off(a, h, bb)
        assert NAME in b_app.get(f"/matches/{mid}", headers=bb).get_data(as_text=True)  # B keeps the state and the view
        assert NAME in b_app.get(f"/matches/{mid}/stream?after=0&wait=0", headers=bb).get_data(as_text=True)
        assert b_app.get("/players/me", headers=h).status_code == 200  # and her token, found
        assert a.delete("/players/me", headers=h).status_code == 200
        deadline = time.monotonic() + 10
        while b_app.get("/players/me", headers=h).status_code != 401:
            assert time.monotonic() < deadline, "replica B still takes her token"
            time.sleep(0.05)
        for path in ("", "/stream?after=0&wait=0", "/events?after=0&limit=500"):
            assert NAME not in b_app.get(f"/matches/{mid}{path}", headers=bb).get_data(as_text=True), path
    finally:
        stop.set()
        for app_ in apps:
            app_.extensions["gin_rummy"].hub.shutdown()
            app_.extensions["gin_rummy"].store.pool.close()


def test_under_signed_in_ratings_a_deleted_signed_in_players_matches_stay_rated_through_a_rebuild(store, tmp_path):
    import uuid

    from service import ratings

    from .test_players import Issuer, signed_in_app

    issuer = Issuer()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(issuer.jwks()))
    app_ = signed_in_app(store, JWT_JWKS_FILE=str(jwks), RATED_PLAYERS="signed-in")
    client = app_.test_client()
    dana, eli = (bearer(issuer.token(sub=f"erased-{uuid.uuid4()}", name=name)) for name in (NAME, "Eli"))
    eli_id = client.get("/players/me", headers=eli).json["id"]
    client.get("/players/me", headers=dana)
    resign(client, face_off(client, dana, eli), eli)
    settle(client)
    rated = client.get(f"/players/{eli_id}").json
    assert rated["matches"] == 1
    assert client.delete("/players/me", headers=dana).status_code == 200
    readable(store)
    try:
        ratings.rebuild(store, "signed-in")
        assert client.get(f"/players/{eli_id}").json == rated
    finally:
        ratings.rebuild(store, "all")  # the shared database's ratings as every other test rates them
        app_.extensions["gin_rummy"].hub.shutdown()
