"""The administration commands: the schema, the read models, the signing keys, the
OpenAPI document."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

from service import feed, ratings
from service.api import create_app
from service.api.openapi import spec_yaml
from service.records.signing import new_key
from service.store import EventStore, signing_keys
from service.store.idempotency import purge_idempotency_records
from service.store.migrate import downgrade, upgrade

from .common import database, pool_of


def db_upgrade(args: argparse.Namespace) -> int:
    upgrade(database(args.settings, migrate=False), args.revision)
    print(f"database upgraded to {args.revision}")
    return 0


def db_downgrade(args: argparse.Namespace) -> int:
    downgrade(database(args.settings, migrate=False), args.revision)
    print(f"database downgraded to {args.revision}")
    return 0


def db_purge_idempotency(args: argparse.Namespace) -> int:
    with pool_of(args.settings) as pool:
        count = purge_idempotency_records(pool, timedelta(hours=args.older_than_hours))
    print(f"deleted {count} idempotency records older than {args.older_than_hours:g} hours")
    return 0


def projections_rebuild(args: argparse.Namespace) -> int:
    with pool_of(args.settings) as pool:
        store = EventStore(pool)
        count = store.rebuild_projections()
        rated = ratings.rebuild(store, args.settings.rated_players)
        noted = feed.rebuild(store)
    print(f"rebuilt the read models of {count} matches, the ratings of {rated} rated matches and {noted} notifications")
    return 0


def openapi(args: argparse.Namespace) -> int:
    # The document follows from the routes and schemas alone: no database is needed.
    print(spec_yaml(create_app({"STORE": EventStore(pool=None)})), end="")
    return 0


def keys(args: argparse.Namespace) -> int:
    """``keys list``: the signing keys; ``keys rotate``: a new key signs from now on (the
    old ones stay published, so records they signed still verify)."""
    with pool_of(args.settings) as pool:
        store = EventStore(pool)
        if args.action == "rotate":
            if args.settings.signing_key_file:
                print("gin-rummy: the signing key is GIN_RUMMY_SIGNING_KEY_FILE; rotate it by configuring another file",
                      file=sys.stderr)
                return 1
            with store.transaction() as conn:
                kid = new_key(conn, retire_others=True)
            print(f"key {kid} signs from now on (running services take it up within a minute)")
            return 0
        with store.connection() as conn:
            rows = signing_keys.keys(conn)
        for row in rows:
            state = f"retired {row.retired_at.isoformat()}" if row.retired_at else "signing"
            print(f"{row.key_id}  made {row.created_at.isoformat()}  {state}")
        if not rows:
            print("no key yet: the service makes one when it first signs a record")
        return 0
