"""A webhook receiver on loopback, as a front end's backend would run one: it verifies
every delivery with the ``standardwebhooks`` library and keeps what it got."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # the base64 of 24 bytes


class Receiver:
    """Answers ``status()`` (200 unless told otherwise) after ``delay`` seconds; keeps
    every delivery: its headers, its body and whether its signature verified."""

    def __init__(self, secret: str = SECRET, *, status: Callable[[], int] = lambda: 200, delay: float = 0.0):
        self.webhook = Webhook(secret)
        self.status = status
        self.delay = delay
        self.deliveries: list[dict] = []
        #: Deliveries that reached the receiver (counted before it waits to answer).
        self.arrived = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    receiver.arrived += 1
                if receiver.delay:
                    time.sleep(receiver.delay)
                try:
                    payload = receiver.webhook.verify(body, dict(self.headers))
                    verified = True
                except WebhookVerificationError:
                    payload, verified = json.loads(body), False
                answer = receiver.status()
                with receiver._lock:
                    receiver.deliveries.append({
                        "id": self.headers.get("webhook-id"), "timestamp": self.headers.get("webhook-timestamp"),
                        "verified": verified, "payload": payload, "answered": answer, "at": time.time(),
                    })
                self.send_response(answer)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks/gin-rummy"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def got(self) -> list[dict]:
        with self._lock:
            return list(self.deliveries)

    def accepted(self) -> dict[str, dict]:
        """The deliveries answered 2xx, deduplicated by ``webhook-id`` (the first kept)."""
        unique: dict[str, dict] = {}
        for each in self.got():
            if 200 <= each["answered"] < 300:
                unique.setdefault(each["id"], each)
        return unique
