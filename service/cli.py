"""The ``gin-rummy`` command.

    gin-rummy serve [--host H] [--port P]   apply migrations, then serve the REST API
    gin-rummy db upgrade [REVISION]         apply migrations (default: head)
    gin-rummy db downgrade REVISION         undo migrations down to REVISION ('base': all)
    gin-rummy projections rebuild           recreate the read models from the events
    gin-rummy openapi                       print the OpenAPI document (YAML)

The database is ``DATABASE_URL``, or the embedded server (see ``service.store.database``).
A command is a function ``(args) -> exit status`` registered in ``build_parser``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from service.store import EventStore, connect, database_url
from service.store.migrate import downgrade, upgrade


def serve(args: argparse.Namespace) -> int:
    url = database_url()
    upgrade(url)
    try:
        from service.api import create_app
    except ModuleNotFoundError as exc:
        if exc.name != "service.api":
            raise
        print("gin-rummy: the database is ready, but the REST API (service.api) is not written yet", file=sys.stderr)
        return 1
    # The app (and any worker it starts) then uses the same database, embedded or not.
    os.environ.setdefault("DATABASE_URL", url)
    # Stopping by SIGTERM (a container, a service manager) exits like Ctrl+C, so that the
    # exit handlers run and an embedded server is shut down cleanly.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    create_app().run(host=args.host, port=args.port)
    return 0


def db_upgrade(args: argparse.Namespace) -> int:
    upgrade(database_url(), args.revision)
    print(f"database upgraded to {args.revision}")
    return 0


def db_downgrade(args: argparse.Namespace) -> int:
    downgrade(database_url(), args.revision)
    print(f"database downgraded to {args.revision}")
    return 0


def projections_rebuild(args: argparse.Namespace) -> int:
    with connect(database_url(), max_size=1) as pool:
        count = EventStore(pool).rebuild_projections()
    print(f"rebuilt the read models of {count} matches")
    return 0


def openapi(args: argparse.Namespace) -> int:
    from service.api import create_app
    from service.api.openapi import spec_yaml

    # The document follows from the routes and schemas alone: no database is needed.
    print(spec_yaml(create_app({"STORE": EventStore(pool=None)})), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gin-rummy", description="An event-sourced Gin Rummy service.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    command = commands.add_parser("serve", help="apply migrations, then serve the REST API")
    command.add_argument("--host", default="127.0.0.1")
    command.add_argument("--port", type=int, default=8000)
    command.set_defaults(run=serve)

    db = commands.add_parser("db", help="the database schema").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    command = db.add_parser("upgrade", help="apply migrations")
    command.add_argument("revision", nargs="?", default="head")
    command.set_defaults(run=db_upgrade)
    command = db.add_parser("downgrade", help="undo migrations down to a revision ('base': all)")
    command.add_argument("revision")
    command.set_defaults(run=db_downgrade)

    command = commands.add_parser("openapi", help="print the OpenAPI document of the REST API (YAML)")
    command.set_defaults(run=openapi)

    projections = commands.add_parser("projections", help="the read models").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    command = projections.add_parser("rebuild", help="recreate the read models from the events alone")
    command.set_defaults(run=projections_rebuild)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
