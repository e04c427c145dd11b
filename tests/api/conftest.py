import pytest

from service.api import create_app

OPERATOR = "operator-secret-for-tests"
#: Tests play whole matches at machine speed, far beyond a person's request rate;
#: the limits have tests of their own (test_limits.py).
UNLIMITED = {
    "RATE_LIMIT_PER_TOKEN": "off", "RATE_LIMIT_PER_ADDRESS": "off", "IMPORT_RATE_LIMIT_PER_ADDRESS": "off",
    "GUESTS_PER_ADDRESS": "off", "INVITES_PER_ADDRESS": "off", "PUBLIC_MATCHES_PER_PLAYER": "off",
    "CPU_PER_ADDRESS": "off", "CPU_PER_TOKEN": "off", "HEAVY_JOBS_PER_PROCESS": "off",
}


@pytest.fixture
def app(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED})
    yield app
    app.extensions["gin_rummy"].hub.shutdown()  # its LISTEN connection, if a stream opened one


@pytest.fixture
def client(app):
    return app.test_client()


#: The actions that end a match instead of playing the cards.
ENDINGS = ("resign", "claim_timeout", "abort")


def plays(view: dict) -> list[dict]:
    """The view's legal plays of the cards (``legal_actions`` also lists resign, and
    may list a timeout claim or abort, whoever's turn it is)."""
    return [a for a in view["legal_actions"] if a["type"] not in ENDINGS]


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def operator():
    return bearer(OPERATOR)


class Player:
    """A seat driven through the HTTP API."""

    def __init__(self, client, match_id: str, token: str):
        self.client, self.match_id, self.headers = client, match_id, bearer(token)

    def view(self):
        r = self.client.get(f"/matches/{self.match_id}", headers=self.headers)
        assert r.status_code == 200, r.json
        return r.json

    def act(self, action: dict, **headers):
        return self.client.post(f"/matches/{self.match_id}/actions", json=action, headers={**self.headers, **headers})


@pytest.fixture
def new_match(client):
    """Create a match from a body; returns (response json, players by seat)."""

    def make(body=None):
        r = client.post("/matches", json=body if body is not None else {})
        assert r.status_code == 201, r.json
        data = r.json
        players = {s["seat"]: Player(client, data["id"], s["token"]) for s in data["seats"] if s["token"]}
        return data, players

    return make
