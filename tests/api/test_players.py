"""Players through the API: guests and their tokens, seats bound to a player and played
from any device, "my games", names, and sign-in by the front end's own identity
provider (JWTs checked against a JWKS made here)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from service.api import create_app
from tests.store.test_global_order import settled
from tests.support.matches import greedy_action_on_view
from tests.support.webhooks import SECRET as WEBHOOK_SECRET
from tests.support.webhooks import Receiver

from .conftest import OPERATOR, UNLIMITED, bearer, plays

ISSUER = "https://auth.example.test/"
AUDIENCE = "gin-rummy-tests"


def guest(client, name="Ann"):
    r = client.post("/players", json={"name": name})
    assert r.status_code == 201, r.json
    assert r.headers["Cache-Control"] == "no-store"
    return r.json


# --- guests -------------------------------------------------------------------------------


def test_a_guest_gets_an_id_and_a_token_once_and_reads_and_renames_itself(client):
    ann = guest(client, "  Ann  ")
    assert ann["name"] == "Ann" and ann["token"].startswith(f"gp1.{ann['id'].replace('-', '')}.")
    me = client.get("/players/me", headers=bearer(ann["token"]))
    assert me.status_code == 200
    assert me.json["id"] == ann["id"] and me.json["name"] == "Ann" and me.json["signed_in"] is False
    assert me.json["rating"] == {
        "rating": 1500.0, "deviation": 350.0, "matches": 0, "wins": 0, "established": False, "established_opponents": 0,
    }
    assert "token" not in me.json
    renamed = client.patch("/players/me", json={"name": "Annie"}, headers=bearer(ann["token"]))
    assert renamed.status_code == 200 and renamed.json["name"] == "Annie"
    assert client.get("/players/me", headers=bearer(ann["token"])).json["name"] == "Annie"
    profile = client.get(f"/players/{ann['id']}")  # public: no token needed
    assert profile.status_code == 200
    assert profile.json == {
        "id": ann["id"], "name": "Annie", "rating": 1500.0, "deviation": 350.0, "matches": 0, "wins": 0,
        "established": False, "established_opponents": 0,
    }


def test_a_wrong_player_token_or_none_is_refused(client):
    ann = guest(client)
    forged = ann["token"][:-4] + ("AAAA" if not ann["token"].endswith("AAAA") else "BBBB")
    for headers in ({}, bearer(forged), bearer("gp1.not-a-uuid.x")):
        r = client.get("/players/me", headers=headers)
        assert r.status_code == 401 and r.content_type == "application/problem+json", r.json
    assert client.get("/players/00000000-0000-0000-0000-000000000000").status_code == 404
    assert client.get("/players/not-an-id").json["code"] == "player_not_found"


def test_a_seat_token_is_not_a_player(client, new_match):
    _, players = new_match()
    r = client.get("/players/me", headers=players[0].headers)
    assert r.status_code == 403 and r.json["code"] == "forbidden"


@pytest.mark.parametrize(
    "name, problem",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 41, "long"),
        ("Eve\x1b[31m", "control"),
        ("Eve\u202e", "control"),  # right-to-left override: text that reads backwards
        ("A\nB", "control"),
        (7, "string"),
    ],
)
def test_names_are_trimmed_limited_and_refuse_control_characters(client, name, problem):
    for method, path, body in (
        ("post", "/players", {"name": name}),
        ("post", "/matches", {"seats": [{"name": name}, {"kind": "computer", "level": "easy"}]}),
    ):
        r = getattr(client, method)(path, json=body)
        assert r.status_code == 422, (path, r.json)
        assert r.json["code"] == "invalid_request" and "name" in json.dumps(r.json["errors"]), r.json
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}).json
    r = client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"], "name": name})
    assert r.status_code == 422, r.json


def test_a_name_of_forty_characters_is_kept_and_inner_spaces_stay(client):
    name = "Ann " + "x" * 36
    assert guest(client, f"  {name} ")["name"] == name


# --- seats bound to a player, from any device ------------------------------------------------------


def test_a_player_creates_a_match_and_plays_it_from_a_second_device_with_the_same_token(client):
    ann = guest(client)
    phone = laptop = bearer(ann["token"])  # two devices: the same token, nothing else shared
    r = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "computer", "level": "easy"}]}, headers=phone)
    assert r.status_code == 201, r.json
    created = r.json
    seat = created["seats"][0]
    assert seat["player"] == ann["id"] and seat["name"] == "Ann" and seat["token"]
    assert created["seats"][1]["player"] is None
    mid = created["id"]
    for headers in (phone, laptop, phone):
        view = client.get(f"/matches/{mid}", headers=headers).json
        assert view["seat"] == 0 and view["hand"]
        if plays(view):
            assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=headers).status_code == 200
    # The player's token works on every route a seat's does.
    assert client.get(f"/matches/{mid}/events", headers=laptop).status_code == 200
    stream = client.get(f"/matches/{mid}/stream?wait=0", headers=laptop)
    assert stream.status_code == 200
    stream.close()
    # Another player holds no seat of it.
    bob = guest(client, "Bob")
    r = client.get(f"/matches/{mid}", headers=bearer(bob["token"]))
    assert r.status_code == 403 and r.json["code"] == "forbidden"


def test_a_player_joins_an_invite_under_their_name_and_both_play_by_player_tokens(client):
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    created = client.post(
        "/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "single_hand": True}, headers=bearer(ann["token"])
    ).json
    r = client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=bearer(bob["token"]))
    assert r.status_code == 201, r.json
    assert r.json["seat"] == 1
    view = r.json["view"]
    assert [(s["name"], s["player"]) for s in view["seats"]] == [("Ann", ann["id"]), ("Bob", bob["id"])]
    events = client.get(f"/matches/{created['id']}/events", headers=bearer(bob["token"])).json["events"]
    joined = next(e for e in events if e["type"] == "seat_joined")
    assert joined["data"] == {"seat": 1, "name": "Bob", "player": bob["id"]}
    # Without a name and without a player token there is nobody to seat.
    other = client.post("/matches", json={"seats": [{"name": "Cy"}, {"kind": "open"}]}).json
    r = client.post(f"/matches/{other['id']}/join", json={"code": other["invite"]["code"]})
    assert r.status_code == 422 and r.json["errors"] == {"name": ["required without a player token"]}


def test_one_player_on_both_seats_acts_for_the_seat_whose_turn_it_is(client):
    ann = guest(client)
    headers = bearer(ann["token"])
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}]}, headers=headers).json
    assert client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=headers).status_code == 201
    mid = created["id"]
    for _ in range(6):
        view = client.get(f"/matches/{mid}", headers=headers).json
        assert view["seat"] == view["turn"] and plays(view)
        assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=headers).status_code == 200
    both = [client.get(f"/matches/{mid}?seat={seat}", headers=headers).json["seat"] for seat in (0, 1)]
    assert both == [0, 1]


def test_my_games_newest_first_in_pages_with_whose_turn_the_opponent_and_the_score(client):
    ann, bob = guest(client, "Ann"), guest(client, "Bob")
    a, b = bearer(ann["token"]), bearer(bob["token"])
    ids = []
    for _i in range(3):
        created = client.post(
            "/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "rules": {"turn_seconds": 90}}, headers=a
        ).json
        assert client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=b).status_code == 201
        ids.append(created["id"])
    computer = client.post("/matches", json={}, headers=a).json["id"]
    assert client.post(f"/matches/{ids[0]}/actions", json={"type": "resign"}, headers=b).status_code == 200
    page = client.get("/players/me/matches?limit=2", headers=a).json
    assert [m["id"] for m in page["items"]] == [computer, ids[2]] and page["next_cursor"]
    rest = client.get(f"/players/me/matches?limit=2&cursor={page['next_cursor']}", headers=a).json
    assert [m["id"] for m in rest["items"]] == [ids[1], ids[0]] and rest["next_cursor"] is None
    newest = page["items"][1]
    assert newest["seat"] == 0 and newest["opponent"]["name"] == "Bob" and newest["opponent"]["player"] == bob["id"]
    assert newest["status"] == "active" and newest["scores"] == [0, 0] and newest["hand_number"] == 1
    assert newest["your_turn"] == (newest["turn"] == 0) and newest["deadline"] is not None
    assert page["items"][0]["opponent"]["kind"] == "computer" and page["items"][0]["deadline"] is None
    finished = client.get("/players/me/matches?status=finished", headers=a).json["items"]
    assert [(m["id"], m["winner"], m["end_reason"], m["your_turn"]) for m in finished] == [(ids[0], 0, "resigned", False)]
    bobs = client.get("/players/me/matches?status=active", headers=b).json["items"]
    assert [m["id"] for m in bobs] == [ids[2], ids[1]] and all(m["seat"] == 1 for m in bobs)
    assert {m["your_turn"] for m in bobs} == {m["turn"] == 1 for m in bobs}
    assert client.get("/players/me/matches?status=lost", headers=a).status_code == 422
    assert client.get("/players/me/matches?limit=101", headers=a).status_code == 422


# --- bring your own sign-in ------------------------------------------------------------------


class Issuer:
    """An identity provider of the test: key pairs (RSA, EC P-256, Ed25519) and their JWKS."""

    def __init__(self):
        self.keys = {
            "rsa-1": ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048), RSAAlgorithm),
            "ec-1": ("ES256", ec.generate_private_key(ec.SECP256R1()), ECAlgorithm),
            "ed-1": ("EdDSA", ed25519.Ed25519PrivateKey.generate(), OKPAlgorithm),
        }

    def jwks(self, kids=None) -> dict:
        keys = []
        for kid, (alg, private, algorithm) in self.keys.items():
            if kids is None or kid in kids:
                jwk = algorithm.to_jwk(private.public_key(), as_dict=True)
                keys.append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        return {"keys": keys}

    def token(self, kid="rsa-1", *, sub="user-1", name="Dana", headers=None, key=None, **claims) -> str:
        alg, private, _ = self.keys[kid]
        now = int(time.time())
        payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600, "name": name, **claims}
        payload = {k: v for k, v in payload.items() if v is not None}
        return jwt.encode(payload, key or private, algorithm=alg, headers={"kid": kid, **(headers or {})})


@pytest.fixture
def issuer():
    return Issuer()


@pytest.fixture
def jwks_file(issuer, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(issuer.jwks()))
    return path


def signed_in_app(store, **config):
    return create_app(
        {"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE,
         "JWT_LEEWAY_SECONDS": 0, **UNLIMITED, **config}
    )


@pytest.mark.parametrize("kid", ["rsa-1", "ec-1", "ed-1"])
def test_a_jwt_of_the_configured_issuer_signs_a_player_in_made_on_first_sight(store, issuer, jwks_file, kid):
    client = signed_in_app(store, JWT_JWKS_FILE=str(jwks_file)).test_client()
    sub = f"user-{kid}-{time.time_ns()}"
    first = client.get("/players/me", headers=bearer(issuer.token(kid, sub=sub, name="Dana\x1b[2J  Doe")))
    assert first.status_code == 200, first.json
    assert first.json["name"] == "Dana Doe" and first.json["signed_in"] is True  # the claim, cleaned
    again = client.get("/players/me", headers=bearer(issuer.token(kid, sub=sub, name="Someone else")))
    assert again.json["id"] == first.json["id"] and again.json["name"] == "Dana Doe"
    created = client.post("/matches", json={}, headers=bearer(issuer.token(kid, sub=sub)))
    assert created.status_code == 201 and created.json["seats"][0]["player"] == first.json["id"]


def refusals(issuer: Issuer):
    now = int(time.time())
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    unsigned = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "exp": now + 600}, None, algorithm="none")
    hs256 = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "exp": now + 600}, "k" * 32, algorithm="HS256",
                       headers={"kid": "rsa-1"})
    return [
        ("alg none", unsigned, "unsupported_algorithm"),
        ("HS256 with the public key's id", hs256, "unsupported_algorithm"),
        ("expired", issuer.token(exp=now - 5, iat=now - 700), "token_expired"),
        ("not yet valid", issuer.token(nbf=now + 300), "token_not_yet_valid"),
        ("wrong issuer", issuer.token(iss="https://evil.example.test/"), "wrong_issuer"),
        ("wrong audience", issuer.token(aud="another-app"), "wrong_audience"),
        ("unknown key", issuer.token(headers={"kid": "rsa-9"}), "unknown_key"),
        ("signed by another key", issuer.token(key=other), "invalid_signature"),
        ("no subject", issuer.token(sub=None), "missing_claim"),
        ("no expiry", issuer.token(exp=None), "missing_claim"),
    ]


def test_every_jwt_refusal_is_a_401_that_says_which_check_failed(store, issuer, jwks_file):
    client = signed_in_app(store, JWT_JWKS_FILE=str(jwks_file)).test_client()
    for what, token, code in refusals(issuer):
        r = client.get("/players/me", headers=bearer(token))
        assert r.status_code == 401, (what, r.json)
        assert r.content_type == "application/problem+json" and r.json["code"] == code, (what, r.json)
        assert f'error_description="{code}"' in r.headers["WWW-Authenticate"], what
        assert client.post("/matches", json={}, headers=bearer(token)).status_code == 401, what


def test_without_a_configured_issuer_a_jwt_is_just_an_unknown_token(client, issuer):
    r = client.get("/players/me", headers=bearer(issuer.token()))
    assert r.status_code == 401 and r.json["code"] == "invalid_token"


class JwksServer:
    """The identity provider's JWKS endpoint, counting its fetches."""

    def __init__(self, issuer: Issuer, kids):
        self.issuer, self.kids, self.fetches = issuer, set(kids), 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.fetches += 1
                body = json.dumps(owner.issuer.jwks(owner.kids)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/.well-known/jwks.json"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_keys_from_a_jwks_url_are_cached_and_fetched_again_for_an_unknown_key_id(store, issuer):
    jwks = JwksServer(issuer, kids={"rsa-1"})
    try:
        client = signed_in_app(store, JWT_JWKS_URL=jwks.url, JWT_JWKS_COOLDOWN_SECONDS=0).test_client()
        sub = f"url-user-{time.time_ns()}"
        for i in range(3):  # three different tokens (no verified-token shortcut): one fetch
            r = client.get("/players/me", headers=bearer(issuer.token("rsa-1", sub=sub, jti=str(i))))
            assert r.status_code == 200, r.json
        assert jwks.fetches == 1
        # The provider rotates in a new key: a token naming it makes the service fetch again.
        jwks.kids.add("ec-1")
        r = client.get("/players/me", headers=bearer(issuer.token("ec-1", sub=sub)))
        assert r.status_code == 200 and jwks.fetches == 2, (r.json, jwks.fetches)
        r = client.get("/players/me", headers=bearer(issuer.token(headers={"kid": "nobody"}, sub=sub)))
        assert r.status_code == 401 and r.json["code"] == "unknown_key" and jwks.fetches == 3
    finally:
        jwks.close()


def test_made_up_key_ids_fetch_the_jwks_again_at_most_once_per_cooldown(store, issuer):
    jwks = JwksServer(issuer, kids={"rsa-1"})
    try:
        client = signed_in_app(store, JWT_JWKS_URL=jwks.url, JWT_JWKS_COOLDOWN_SECONDS=60).test_client()
        assert client.get("/players/me", headers=bearer(issuer.token(sub=f"cool-{time.time_ns()}"))).status_code == 200
        for i in range(5):
            r = client.get("/players/me", headers=bearer(issuer.token(headers={"kid": f"made-up-{i}"})))
            assert r.json["code"] == "unknown_key"
        assert jwks.fetches == 1
    finally:
        jwks.close()


def test_a_jwks_file_updated_with_a_new_key_is_read_again(store, issuer, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(issuer.jwks({"rsa-1"})))
    client = signed_in_app(store, JWT_JWKS_FILE=str(path)).test_client()
    assert client.get("/players/me", headers=bearer(issuer.token("ed-1"))).json["code"] == "unknown_key"
    path.write_text(json.dumps(issuer.jwks()))
    assert client.get("/players/me", headers=bearer(issuer.token("ed-1"))).status_code == 200


def test_an_issuer_without_an_audience_or_keys_is_a_configuration_error(store):
    with pytest.raises(ValueError, match="AUDIENCE"):
        create_app({"STORE": store, "JWT_ISSUER": ISSUER})
    with pytest.raises(ValueError, match="JWKS"):
        create_app({"STORE": store, "JWT_ISSUER": ISSUER, "JWT_AUDIENCE": AUDIENCE})


# --- the leak walk, players ------------------------------------------------------------------------


def test_no_answer_or_log_line_holds_a_player_token_or_jwt_but_the_one_that_issued_it(store, issuer, jwks_file, caplog):
    with Receiver() as receiver:
        try:
            _walk(store, issuer, jwks_file, caplog, receiver)
        finally:
            with store.connection() as conn:
                conn.execute("DELETE FROM webhook_endpoints")


def _walk(store, issuer, jwks_file, caplog, receiver):
    import logging

    from service import feed as feeds

    from .test_full_matches import cards_in
    from .test_hygiene import Recorder, log_lines

    caplog.set_level(logging.DEBUG)
    app = signed_in_app(store, JWT_JWKS_FILE=str(jwks_file))
    recorder = Recorder()
    recorder.install(app)
    client = app.test_client()
    # The webhooks of every kind go to a receiver: what they send is walked too.
    hook = client.post("/webhooks", json={"url": receiver.url, "secret": WEBHOOK_SECRET}, headers=bearer(OPERATOR)).json
    ann = guest(client, "Ann")
    dana_jwt = issuer.token(sub=f"leak-{time.time_ns()}", name="Dana")
    a, d = bearer(ann["token"]), bearer(dana_jwt)
    dana = client.get("/players/me", headers=d).json
    created = client.post("/matches", json={"seats": [{"kind": "human"}, {"kind": "open"}], "single_hand": True}, headers=a).json
    assert client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"]}, headers=d).status_code == 201
    mid = created["id"]
    for _ in range(30):
        if client.get(f"/matches/{mid}", headers=bearer(OPERATOR)).json["status"] == "finished":
            break
        for seat, headers in ((0, a), (1, d)):
            truth = client.get(f"/matches/{mid}", headers=bearer(OPERATOR)).json
            listing = client.get("/players/me/matches", headers=headers).json
            assert listing["items"][0]["id"] == mid and not cards_in(listing)  # no card at all
            feed = client.get("/players/me/notifications", headers=headers).json
            assert not cards_in(feed)  # nor in a notification
            stream = client.get("/players/me/stream?wait=0", headers=headers)
            sent = stream.get_data(as_text=True).splitlines()
            stream.close()
            streamed = [json.loads(line[6:]) for line in sent if line.startswith("data: ")]
            assert len(streamed) == len(feed["items"]) and not cards_in(streamed)
            view = client.get(f"/matches/{mid}", headers=headers).json
            hidden = set(truth["hidden"]["stock"]) | (set(truth["hidden"]["hands"][1 - seat]) - set(view["opponent"]["known_cards"]))
            if view["phase"] not in ("defense", "match_over"):  # then the hands are shown
                assert not cards_in({k: v for k, v in view.items() if k != "last_hand"}) & hidden
            if plays(view):
                assert client.post(f"/matches/{mid}/actions", json=greedy_action_on_view(view), headers=headers).status_code == 200
        client.get(f"/players/{ann['id']}")
        client.get(f"/players/{dana['id']}")
        client.get("/leaderboard")
    client.patch("/players/me", json={"name": "Annie"}, headers=a)
    client.get(f"/matches/{mid}/export", headers=a)
    settled(store)
    feeds.catch_up(store)
    app.extensions["gin_rummy"].webhooks.deliverer.deliver_due(1000)
    sent = [each["payload"] for each in receiver.got() if each["payload"]["data"]["match"] == mid]
    with store.connection() as conn:
        kinds = {row[0] for row in conn.execute("SELECT kind FROM notifications WHERE match_id = %s", (mid,))}
    assert {p["type"] for p in sent} == kinds >= {"invite_accepted", "your_move"} and not cards_in(sent)
    logged = client.get(f"/webhooks/{hook['id']}/deliveries?limit=500", headers=bearer(OPERATOR)).json
    assert logged["items"] and not cards_in(logged)
    secrets_ = [ann["token"], ann["token"].split(".")[-1], dana_jwt, dana_jwt.split(".")[-1]]
    issued = 0
    for method, path, _auth, _status, body in recorder.responses:
        if (method, path) == ("POST", "/players"):
            issued += 1
            assert ann["token"] in body
            continue
        if (method, path) == ("POST", "/webhooks"):
            assert WEBHOOK_SECRET in body  # shown once, to the operator who made it
            continue
        for secret in [*secrets_, WEBHOOK_SECRET, WEBHOOK_SECRET.removeprefix("whsec_")]:
            assert secret not in body, (method, path)
    assert issued == 1 and len(recorder.responses) > 60
    assert not any(secret in str(p) for p in sent for secret in secrets_)
    secrets_ += [WEBHOOK_SECRET.removeprefix("whsec_")]
    lines = log_lines(caplog)
    assert lines and not any(secret in line for line in lines for secret in secrets_)
    with store.connection() as conn:
        stored = conn.execute("SELECT data::text FROM events WHERE match_id = %s", (mid,)).fetchall()
        noted = conn.execute("SELECT kind, data FROM notifications WHERE match_id = %s", (mid,)).fetchall()
    assert stored and not any(secret in row[0] for row in stored for secret in secrets_)
    # Every notification of the match (the join, each turn, the end): no token, no card.
    assert {kind for kind, _ in noted} >= {"invite_accepted", "your_move"}
    assert not any(secret in str(data) for _, data in noted for secret in secrets_) and not cards_in([d for _, d in noted])
