"""The ``gin-rummy`` command.

    gin-rummy serve [--host H] [--port P]   apply migrations, then serve the REST API
    gin-rummy db upgrade [REVISION]         apply migrations (default: head)
    gin-rummy db downgrade REVISION         undo migrations down to REVISION ('base': all)
    gin-rummy projections rebuild           recreate the read models from the events
    gin-rummy keys list|rotate              the keys exports are signed with
    gin-rummy openapi                       print the OpenAPI document (YAML)
    gin-rummy export [MATCH ...] [--status S] [-o FILE]
                                            match records: one as JSON, several or all as NDJSON
    gin-rummy import [FILE ...]             import records (JSON or NDJSON; '-' or none: stdin)
    gin-rummy replay MATCH|FILE [--hand N] [--format hands|text]
                                            print a match's hands as readable text, or its
                                            movetext (docs/movetext.md; a FILE's default,
                                            read without the database)
    gin-rummy audit [MATCH ...]             recompute every hand of the matches (default: all)
    gin-rummy --version                     the version installed

The database is ``DATABASE_URL``, or the embedded server (see ``service.store.database``).
A command is a function ``(args) -> exit status`` registered in ``build_parser``, in a
module by subject: ``serve``, ``admin`` (schema, read models, keys, the OpenAPI
document), ``records`` (export, import, replay, analyse, audit).  The settings are read
from the environment once, by ``main`` (``args.settings``); a command that needs the
database gets it through ``common``, so that a database that cannot be reached or is
not migrated is one line saying what to do, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

import psycopg
from alembic.util import CommandError as MigrationError
from psycopg_pool import PoolTimeout

from service.settings import Settings, SettingsError
from service.store import data_dir
from service.store.readiness import NotReady

from . import admin, common, records, serve


def build_parser(settings: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gin-rummy", description="An event-sourced Gin Rummy service.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The database is DATABASE_URL (postgresql://user:password@host:5432/dbname) or, when it is\n"
            "unset, an embedded PostgreSQL started for you, with its data in\n"
            f"{data_dir(settings)} (GIN_RUMMY_DATA_DIR).  Commands apply the migrations\n"
            "to a database that has none yet.\n"
            "\n"
            "To start: gin-rummy serve, then open http://localhost:8000/ (the web client; the API at /docs).\n"
            "Help on one command: gin-rummy COMMAND --help."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="what to do (gin-rummy COMMAND --help: its options)"
    )

    command = commands.add_parser(
        "serve", help="apply migrations, then serve the REST API and the web client",
        description="Apply the migrations to the database, then serve the REST API and the web client with gunicorn.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    command.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every interface)")
    command.add_argument("--port", type=int, default=8000, help="the port to listen on")
    command.add_argument("--workers", type=int, default=2, help="worker processes")
    command.add_argument(
        "--connections", type=int, default=5000,
        help="simultaneous connections per process, live streams included",
    )
    command.set_defaults(run=serve.serve)

    db = commands.add_parser("db", help="the database schema").add_subparsers(
        dest="action", required=True, metavar="ACTION", help="what to do to the schema"
    )
    command = db.add_parser("upgrade", help="apply migrations")
    command.add_argument(
        "revision", nargs="?", default="head", help="the migration to stop at (default: head, the latest)"
    )
    command.set_defaults(run=admin.db_upgrade)
    command = db.add_parser("downgrade", help="undo migrations down to a revision ('base': all)")
    command.add_argument("revision", help="the migration to go back to, e.g. 0013 ('base': undo them all)")
    command.set_defaults(run=admin.db_downgrade)
    command = db.add_parser(
        "purge-idempotency", help="delete stored answers to Idempotency-Keys (the service also does it hourly)"
    )
    command.add_argument(
        "--older-than-hours", type=float, default=24.0, help="delete the answers stored longer ago than this (default 24)"
    )
    command.set_defaults(run=admin.db_purge_idempotency)

    command = commands.add_parser("openapi", help="print the OpenAPI document of the REST API (YAML)")
    command.set_defaults(run=admin.openapi)

    command = commands.add_parser("export", help="export match records (one: JSON; several or all: NDJSON)")
    command.add_argument("matches", nargs="*", metavar="MATCH", help="the ids of the matches to export (none: every match)")
    command.add_argument("--status", choices=["active", "finished"], help="with no MATCH: only these")
    command.add_argument("-o", "--output", help="write to this file instead of standard output")
    command.set_defaults(run=records.export)

    command = commands.add_parser("import", help="import match records from files or standard input")
    command.add_argument("files", nargs="*", metavar="FILE", help="JSON or NDJSON files; '-' or none: stdin")
    command.set_defaults(run=records.import_)

    command = commands.add_parser("replay", help="print a match's hands as text, or its movetext")
    command.add_argument(
        "match", metavar="MATCH|FILE",
        help="a stored match's id, or a record file as `export` writes it (JSON or NDJSON; '-': stdin), read without the database",
    )
    command.add_argument("--hand", type=int, help="only this hand (1, 2, ...), with --format hands")
    command.add_argument(
        "--format", choices=["hands", "text"],
        help="hands: each hand told in sentences (a MATCH's default); text: the movetext of docs/movetext.md (a FILE's default)",
    )
    command.set_defaults(run=records.replay)

    command = commands.add_parser(
        "analyse", help="weigh every decision of a match's hands: the play, the best play, what it cost"
    )
    command.add_argument(
        "match", metavar="MATCH|FILE",
        help="a stored match's id, or a record file as `export` writes it (JSON or NDJSON; '-': stdin), read without the database",
    )
    command.add_argument("--hand", type=int, help="only this hand (1, 2, ...)")
    command.set_defaults(run=records.analyse)

    command = commands.add_parser("audit", help="recompute every hand and check every deal's commitment")
    command.add_argument("matches", nargs="*", metavar="MATCH", help="the ids of the matches to audit (none: every match)")
    command.set_defaults(run=records.audit)

    key_commands = commands.add_parser("keys", help="the keys records are signed with").add_subparsers(
        dest="action", required=True, metavar="ACTION", help="what to do with the keys"
    )
    key_commands.add_parser("list", help="the signing keys, the one signing first").set_defaults(run=admin.keys)
    key_commands.add_parser("rotate", help="make a new key sign from now on").set_defaults(run=admin.keys)
    projections = commands.add_parser("projections", help="the read models").add_subparsers(
        dest="action", required=True, metavar="ACTION", help="what to do with the read models"
    )
    command = projections.add_parser("rebuild", help="recreate the read models from the events alone")
    command.set_defaults(run=admin.projections_rebuild)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        return _fail(str(exc))
    args = build_parser(settings).parse_args(argv)
    args.settings = settings
    try:
        status = args.run(args)
        sys.stdout.flush()  # so that a closed pipe shows here, not when Python exits
    except BrokenPipeError:
        # The reader went away (`gin-rummy replay ID | head`): stop quietly.  Python
        # flushes standard output again on exit, so it is pointed at devnull first
        # (the recipe of the Python docs' "Note on SIGPIPE").
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    # Whatever goes wrong with the database is one line, never a traceback.
    except NotReady as exc:
        return _fail(str(exc))
    except psycopg.errors.UndefinedTable as exc:  # a schema changed under the command
        return _fail(f"{_first_line(exc)} — run `gin-rummy db upgrade`")
    except (psycopg.OperationalError, PoolTimeout) as exc:  # the server went away meanwhile
        return _fail(f"lost the database: {_first_line(exc)}")
    except MigrationError as exc:  # alembic: an unknown revision, say
        return _fail(f"migrations: {_first_line(exc)}")
    finally:
        while common.open_pools:
            common.open_pools.pop().close()
    return status


def _version() -> str:
    try:
        return version("gin-rummy-service")  # the distribution (pyproject.toml), not the command's name
    except PackageNotFoundError:  # run from a source tree never installed
        return "(version unknown: not installed)"


def _fail(message: str) -> int:
    print(f"gin-rummy: {message}", file=sys.stderr)
    return 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

