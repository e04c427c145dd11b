"""Webhooks for the front end's own backend: the operator's endpoints and their log.

The operator names endpoints in the settings (``GIN_RUMMY_WEBHOOKS``: a process started
with it makes the endpoints of the settings exactly those, by URL; a process without it
leaves them as they are) or adds them through the operator API (``add``: the secret is
made here unless given, and shown in that answer only).  Each endpoint takes the kinds
of notification it names (``feed.KINDS``), from the moment it is added.  What is sent,
how it is signed and retried: service/webhooks.py; the outbox: service/store/webhooks.py.

Everything here is for the operator only.  A secret is never in an event, a log line,
a record or any answer but the one that made it.
"""

from __future__ import annotations

import base64
import secrets
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from service import feed, webhooks
from service.settings import Settings, SettingsError, WebhookEndpoint, check_webhook_secret, check_webhook_url
from service.store import EventStore
from service.store import webhooks as rows
from service.store.periodic import run_periodically

from .callers import Callers
from .errors import Conflict, Forbidden, Invalid, NotFound
from .hooks import Hooks
from .matches import Page
from .unit_of_work import UnitOfWork

STATES = ("pending", "delivered", "failed")


def endpoint_not_found(endpoint: object) -> NotFound:
    return NotFound(f"no webhook endpoint {endpoint}", code="webhook_not_found")


def delivery_not_found(what: object) -> NotFound:
    return NotFound(f"no delivery {what}", code="delivery_not_found")


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def checked_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """The kinds named (none: every kind), or ValueError naming the unknown ones."""
    named = tuple(dict.fromkeys(kinds))
    unknown = [kind for kind in named if kind not in feed.KINDS]
    if unknown:
        raise ValueError(f"no notification kind {', '.join(unknown)} (the kinds: {', '.join(feed.KINDS)})")
    return named or feed.KINDS


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def endpoint_json(endpoint: rows.Endpoint, counts: dict) -> dict:
    return {
        "id": str(endpoint.id), "url": endpoint.url, "kinds": list(endpoint.kinds), "origin": endpoint.origin,
        "description": endpoint.description, "created_at": endpoint.created_at.isoformat(),
        "deliveries": {**counts, "oldest_pending": _iso(counts["oldest_pending"])},
    }


def delivery_json(delivery: rows.Delivery) -> dict:
    return {
        "webhook_id": webhooks.message_id(delivery.notification_id),
        "notification": str(delivery.notification_id),
        "kind": delivery.kind,
        "state": delivery.state,
        "attempts": delivery.attempts,
        "created_at": delivery.created_at.isoformat(),
        "last_attempt_at": _iso(delivery.last_attempt_at),
        "last_status": delivery.last_status,
        "last_error": delivery.last_error,
        "next_attempt_at": _iso(delivery.next_attempt_at),
        "finished_at": _iso(delivery.finished_at),
        "payload": delivery.payload,
    }


class Webhooks:
    def __init__(self, store: EventStore, callers: Callers, settings: Settings, hooks: Hooks):
        self.store = store
        self.callers = callers
        self.settings = settings
        schedule = webhooks.Schedule(settings.webhook_first_retry_seconds, settings.webhook_retry_period_seconds)
        self.deliverer = webhooks.Deliverer(
            store, timeout=settings.webhook_timeout_seconds, schedule=schedule, senders=settings.webhook_senders,
            poll=settings.webhook_poll_seconds, report=hooks.webhook_attempted,
            # A process that stored events and died before folding them: any other folds them.
            before_poll=lambda: feed.catch_up_quietly(store, wait=False),
        )

    # --- the settings' endpoints --------------------------------------------------------

    def sync(self, configured: Iterable[WebhookEndpoint]) -> None:
        """Make the endpoints of the settings exactly ``configured`` (SettingsError for
        an unknown kind)."""
        made = []
        for each in configured:
            try:
                made.append((each.url, each.secret, checked_kinds(each.kinds)))
            except ValueError as exc:
                raise SettingsError(f"GIN_RUMMY_WEBHOOKS: {exc}") from None
        with self.store.transaction() as conn:
            rows.sync(conn, made)

    def start(self) -> Callable[[], None]:
        """Deliver in this process's background threads (and purge the old log hourly);
        the returned function stops it."""
        stop = self.deliverer.start()
        keep = timedelta(days=self.settings.webhook_log_days)

        def purge() -> None:
            with self.store.connection() as conn:
                rows.purge(conn, keep)

        purging = run_periodically("webhook log purge", 3600.0, purge)

        def stop_both() -> None:
            stop.set()
            purging.set()

        return stop_both

    # --- the operator's API -------------------------------------------------------------

    def _operator(self, uow: UnitOfWork, token: str) -> None:
        if not self.callers.identify(uow, token).is_operator:
            raise Forbidden("only the operator manages webhooks")

    def _endpoint(self, uow: UnitOfWork, endpoint_id: uuid.UUID) -> rows.Endpoint:
        endpoint = rows.endpoint(uow.conn, endpoint_id)
        if endpoint is None:
            raise endpoint_not_found(endpoint_id)
        return endpoint

    def list(self, token: str) -> list[dict]:
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            return [endpoint_json(each, rows.counts(uow.conn, each.id)) for each in rows.endpoints(uow.conn)]

    def get(self, token: str, endpoint_id: uuid.UUID) -> dict:
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            endpoint = self._endpoint(uow, endpoint_id)
            return endpoint_json(endpoint, rows.counts(uow.conn, endpoint.id))

    def add(self, token: str, body: dict) -> dict:
        """A new endpoint, with its secret (this answer alone shows it)."""
        errors: dict[str, list[str]] = {}

        def checked(name: str, check: Callable, default):
            try:
                return check(body[name]) if name in body else default
            except ValueError as exc:
                errors[name] = [str(exc)]
                return default

        url = checked("url", check_webhook_url, None)
        secret = checked("secret", check_webhook_secret, None)
        kinds = checked("kinds", checked_kinds, feed.KINDS)
        if url is None and not errors:
            errors["url"] = ["the receiver's URL is required"]
        if errors:
            raise Invalid("the webhook endpoint is not valid", errors=errors)
        secret = secret or new_secret()
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            made = uow.write(lambda conn: rows.add(conn, url, secret, kinds, body.get("description", "")), alone=True)
            uow.commit()
        counts = {"pending": 0, "delivered": 0, "failed": 0, "oldest_pending": None}
        return {**endpoint_json(made.value, counts), "secret": secret}

    def remove(self, token: str, endpoint_id: uuid.UUID) -> dict:
        """Delete an endpoint the operator API added, and its deliveries; it as it was."""
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            endpoint = self._endpoint(uow, endpoint_id)
            if endpoint.origin == "settings":
                raise Conflict(
                    "this endpoint is named by GIN_RUMMY_WEBHOOKS: remove it there", code="webhook_from_settings"
                )
            last = endpoint_json(endpoint, rows.counts(uow.conn, endpoint_id))
            uow.write(lambda conn: rows.remove(conn, endpoint_id), alone=True)
            uow.commit()
        return last

    def deliveries(self, token: str, endpoint_id: uuid.UUID, state: str | None, before: int | None, limit: int) -> Page:
        """The endpoint's delivery log, newest first; the cursor is the last one's notification."""
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            self._endpoint(uow, endpoint_id)
            found = rows.log(uow.conn, endpoint_id, state, before, limit + 1)
        items = [delivery_json(each) for each in found[:limit]]
        return Page(items, str(found[limit - 1].notification_id) if len(found) > limit else None)

    def redeliver(self, token: str, endpoint_id: uuid.UUID, notification_id: int) -> dict:
        """Send a delivery again now (a failed one, or one the receiver lost)."""
        with UnitOfWork(self.store) as uow:
            self._operator(uow, token)
            self._endpoint(uow, endpoint_id)
            done = uow.write(lambda conn: rows.redeliver(conn, endpoint_id, notification_id), alone=True)
            uow.commit()
            if not done.value:
                raise delivery_not_found(f"of notification {notification_id} to this endpoint")
            found = rows.delivery(uow.conn, endpoint_id, notification_id)
        assert found is not None, "it was just made pending"
        self.deliverer.wake()
        return delivery_json(found)
