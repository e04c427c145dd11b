"""A Server-Sent Events reader for the tests, and a player driving a match over HTTP."""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid

from tests.api.conftest import plays
from tests.scale.cluster import LOOPBACK


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


class Stream:
    """``GET /matches/{id}/stream`` read in a thread of its own: ``ids`` the event ids
    received in order, ``comments`` the comment lines, ``ended`` once the server closed it."""

    def __init__(
        self, port: int, match_id: str | None, token: str, *, wait: int = 60, last_event_id: int | None = None, path: str | None = None,
    ):
        self.port, self.match_id, self.token, self.wait = port, match_id, token, wait
        #: What is followed: the match's stream, or another (``/players/me/stream``).
        self.path = path or f"/matches/{match_id}/stream"
        self.last_event_id = last_event_id
        self.status: int | None = None
        self.problem: dict | None = None
        self.ids: list[int] = []
        self.types: list[str] = []
        self.comments: list[str] = []
        self.ended = threading.Event()
        self.opened = threading.Event()
        self.error: BaseException | None = None
        self._conn: http.client.HTTPConnection | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Stream:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._conn = conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=120)
            headers = {**bearer(self.token), "Accept": "text/event-stream"}
            if self.last_event_id is not None:
                headers["Last-Event-ID"] = str(self.last_event_id)
            conn.request("GET", f"{self.path}?wait={self.wait}", headers=headers)
            response = conn.getresponse()
            self.status = response.status
            if response.status != 200:
                self.problem = json.loads(response.read() or b"null")
                return
            self.opened.set()
            event_id = event_type = None
            while True:
                line = response.fp.readline()
                if not line:
                    return
                line = line.decode().rstrip("\n")
                if line.startswith(":"):
                    self.comments.append(line[1:].strip())
                elif line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("event: "):
                    event_type = line[7:]
                elif line == "" and event_id is not None:
                    self.ids.append(event_id)
                    self.types.append(event_type)
                    event_id = event_type = None
        except (OSError, http.client.HTTPException) as exc:
            self.error = exc
        finally:
            self.opened.set()
            self.ended.set()

    def wait_for(self, seq: int, timeout: float = 20) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ids and self.ids[-1] >= seq:
                return True
            if self.ended.is_set():
                return bool(self.ids) and self.ids[-1] >= seq
            time.sleep(0.01)
        return False

    def close(self) -> None:
        if self._conn is not None and self._conn.sock is not None:
            try:
                self._conn.sock.shutdown(2)
            except OSError:
                pass
        self.ended.wait(10)


def call(port: int, method: str, path: str, body=None, headers=None, timeout: float = 30) -> tuple[int, dict | None]:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body)
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def new_match(port: int) -> tuple[str, dict[int, str]]:
    status, body = call(port, "POST", "/matches", {"seats": [{"name": "Ann"}, {"name": "Bob"}]})
    assert status == 201, body
    return body["id"], {s["seat"]: s["token"] for s in body["seats"]}


def play(port: int, match_id: str, tokens: dict[int, str], actions: int) -> int:
    """Play ``actions`` actions of a two-people match (the least-deadwood discard, never
    a knock, so the match goes on); returns the match's version after them."""
    version = 0
    seat = 0
    done = 0
    while done < actions:
        status, view = call(port, "GET", f"/matches/{match_id}", headers=bearer(tokens[seat]))
        assert status == 200, view
        if not plays(view):
            seat = 1 - seat
            continue
        action = steady(view)
        headers = {**bearer(tokens[seat]), "If-Match": f'"{view["version"]}"', "Idempotency-Key": uuid.uuid4().hex}
        status, answer = call(port, "POST", f"/matches/{match_id}/actions", action, headers)
        assert status == 200, answer
        version = answer["view"]["version"]
        done += 1
    return version


def steady(view: dict) -> dict:
    """Draw from the stock, discard the card leaving the least deadwood; never end the hand."""
    actions = plays(view)
    discards = [a for a in actions if a["type"] == "discard"]
    if discards:
        return min(discards, key=lambda a: view["discard_deadwood"][a["card"]])
    return next((a for a in actions if a.get("source") == "stock"), actions[0])
