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

The database is ``DATABASE_URL``, or the embedded server (see ``service.store.database``).
A command is a function ``(args) -> exit status`` registered in ``build_parser``; one that
needs the database gets it from ``_database()`` (its URL, checked: see
``service.store.readiness``) or ``_store()`` (whose pool ``main`` closes at the end), so
that a database that cannot be reached or is not migrated is one line saying what to do,
never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from contextlib import suppress

from service.store import EventStore, connect, data_dir, database_url
from service.store.migrate import downgrade, upgrade


def serve(args: argparse.Namespace) -> int:
    if problem := _cannot_listen(args.host, args.port):
        print(f"gin-rummy: {problem}", file=sys.stderr)
        return 1
    url = _database(upgrade_behind=True)  # whatever revision it is at, as a deployment's instances do
    # gunicorn runs in a process of its own, which imports nothing before its gevent
    # workers patch the standard library (psycopg must be imported after that: see
    # service.gunicorn_conf).  This process stays, holding the embedded server (if
    # any) until gunicorn exits, then stopping it cleanly.
    env = {
        **os.environ,
        "DATABASE_URL": url,  # every worker uses the same database, embedded or not
        "GIN_RUMMY_BIND": f"{args.host}:{args.port}",
        "GIN_RUMMY_WORKERS": str(args.workers),
        "GIN_RUMMY_CONNECTIONS": str(args.connections),
    }
    command = [sys.executable, "-m", "gunicorn", "--config", "python:service.gunicorn_conf", "service.wsgi:app"]
    print(f"gin-rummy: serving on http://{args.host}:{args.port}/ (API docs at /docs)", file=sys.stderr)
    if not os.environ.get("DATABASE_URL"):
        print(f"gin-rummy: the embedded database keeps its data in {data_dir()} (Ctrl-C stops the service and it)",
              file=sys.stderr)
    gunicorn = subprocess.Popen(command, env=env)

    def forward(signum, frame):
        # Ctrl+C reaches both processes (one process group); SIGTERM may reach only
        # this one.  A hangup stops the server (to gunicorn, HUP means reload).
        with suppress(ProcessLookupError):
            gunicorn.send_signal(signal.SIGTERM if signum == signal.SIGHUP else signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    status = gunicorn.wait()
    return 0 if status in (0, -signal.SIGINT, -signal.SIGTERM) else status


def _cannot_listen(host: str, port: int) -> str | None:
    """Why gunicorn could not listen on host:port (one line, with the fix), or None.

    gunicorn would say "Connection in use", retry five times and give up with "Can't
    connect"; a bind here, released at once, finds it out first."""
    import errno
    import socket

    try:
        addresses = {info[4]: info for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)}
    except socket.gaierror as exc:
        return f"cannot serve on {host!r}: {exc.strerror} — give an address of this machine with --host (default 127.0.0.1)"
    for family, kind, proto, _, address in addresses.values():
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn does
            try:
                sock.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return (f"port {port} on {host} is in use (another gin-rummy serve?) — choose another with --port,"
                            f" e.g. `gin-rummy serve --port {port + 1 if port < 65535 else 8000}`")
                if exc.errno == errno.EACCES:
                    return f"not allowed to serve on port {port} (ports below 1024 need privileges) — choose another with --port"
                return f"cannot serve on {host}:{port}: {exc.strerror} — check --host and --port"
    return None


def db_upgrade(args: argparse.Namespace) -> int:
    upgrade(_database(migrate=False), args.revision)
    print(f"database upgraded to {args.revision}")
    return 0


def db_downgrade(args: argparse.Namespace) -> int:
    downgrade(_database(migrate=False), args.revision)
    print(f"database downgraded to {args.revision}")
    return 0


def db_purge_idempotency(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from service.store.idempotency import purge_idempotency_records

    with connect(_database(), max_size=1) as pool:
        count = purge_idempotency_records(pool, timedelta(hours=args.older_than_hours))
    print(f"deleted {count} idempotency records older than {args.older_than_hours:g} hours")
    return 0


def projections_rebuild(args: argparse.Namespace) -> int:
    from service import ratings

    with connect(_database(), max_size=1) as pool:
        store = EventStore(pool)
        count = store.rebuild_projections()
        rated = ratings.rebuild(store)
    print(f"rebuilt the read models of {count} matches and the ratings of {rated} rated matches")
    return 0


def openapi(args: argparse.Namespace) -> int:
    from service.api import create_app
    from service.api.openapi import spec_yaml

    # The document follows from the routes and schemas alone: no database is needed.
    print(spec_yaml(create_app({"STORE": EventStore(pool=None)})), end="")
    return 0


def _database(*, migrate: bool = True, upgrade_behind: bool = False) -> str:
    """The database's URL (DATABASE_URL, or the embedded server's, started if need be),
    checked first: one that cannot be reached raises NotReady, whose one line (printed by
    ``main``) says why and what to do.  With ``migrate``, a database without the schema yet
    (a fresh ``createdb``, the embedded one's first use) is migrated, as ``serve`` does,
    and one behind this version's schema is a NotReady saying to run ``gin-rummy db upgrade``
    (or is migrated too, with ``upgrade_behind``)."""
    from service.store.readiness import check_connection, ensure_ready

    configured = bool(os.environ.get("DATABASE_URL"))
    url = database_url()
    if not migrate:
        check_connection(url, configured=configured)
    elif done := ensure_ready(url, configured=configured, upgrade_behind=upgrade_behind):
        print(f"gin-rummy: {done}", file=sys.stderr)
    return url


#: The pools ``_store`` opened, closed by ``main`` when the command ends (a pool left to
#: the garbage collector at exit can fail to join its own worker threads).
_open_pools: list = []


def _store() -> EventStore:
    """A store on the checked database (``_database``), its pool closed at the command's end."""
    pool = connect(_database(), max_size=2)
    _open_pools.append(pool)
    return EventStore(pool)


def _match_id(raw: str):
    import uuid

    try:
        return uuid.UUID(raw)
    except ValueError:
        raise SystemExit(f"gin-rummy: {raw!r} is not a match id") from None


def export(args: argparse.Namespace) -> int:
    import json

    from service.records.records import export_all, export_match
    from service.store import MatchNotFound

    store = _store()
    signer = _signer(store)
    out = open(args.output, "w") if args.output else sys.stdout
    try:
        if len(args.matches) == 1:
            try:
                record = export_match(store, _match_id(args.matches[0]), signer=signer)[0]
            except MatchNotFound:
                print(f"gin-rummy: no match {args.matches[0]}", file=sys.stderr)
                return 1
            out.write(json.dumps(record, indent=2) + "\n")
            return 0
        records = (
            (export_match(store, _match_id(m), signer=signer)[0] for m in args.matches)
            if args.matches
            else export_all(store, status=args.status, signer=signer)
        )
        count = 0
        for record in records:
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
            count += 1
        print(f"exported {count} match(es)", file=sys.stderr)
        return 0
    finally:
        if out is not sys.stdout:
            out.close()


def _records_in(text: str, source: str):
    """The records of a JSON or NDJSON text, with where each came from."""
    import json

    try:
        yield source, json.loads(text)
        return
    except json.JSONDecodeError:
        pass
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield f"{source}:{number}", json.loads(line)
            except json.JSONDecodeError as exc:
                yield f"{source}:{number}", exc


def _signer(store):
    """The service's signer, configured as the service is (GIN_RUMMY_SIGNING_KEY_FILE,
    GIN_RUMMY_PUBLIC_URL, GIN_RUMMY_TRUSTED_JWKS)."""
    from service.records.signing import Signer

    trusted = [s for s in os.environ.get("GIN_RUMMY_TRUSTED_JWKS", "").split(",") if s.strip()]
    return Signer(store, key_file=os.environ.get("GIN_RUMMY_SIGNING_KEY_FILE") or None,
                  signer=os.environ.get("GIN_RUMMY_PUBLIC_URL") or None, trusted=trusted)


def keys(args: argparse.Namespace) -> int:
    """``keys list``: the signing keys; ``keys rotate``: a new key signs from now on (the
    old ones stay published, so records they signed still verify)."""
    from service.records.signing import new_key
    from service.store import signing_keys

    with connect(_database(), max_size=1) as pool:
        store = EventStore(pool)
        if args.action == "rotate":
            if os.environ.get("GIN_RUMMY_SIGNING_KEY_FILE"):
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


def import_(args: argparse.Namespace) -> int:
    from service.matches import MatchService, seat_token
    from service.records.records import RecordError, import_record

    store = _store()
    proceed = MatchService(store).autoplay  # an unfinished match goes on to where a person acts
    signer = _signer(store)
    failed = 0
    for path in args.files or ["-"]:
        text = sys.stdin.read() if path == "-" else open(path).read()
        for where, record in _records_in(text, "stdin" if path == "-" else path):
            if isinstance(record, Exception):
                print(f"{where}: not JSON: {record}", file=sys.stderr)
                failed += 1
                continue
            try:
                result = import_record(store, record, seat_token, proceed=proceed, signer=signer)
            except RecordError as exc:
                at = f" (events[{exc.index}], seq {exc.index + 1}" + (f", rule {exc.rule})" if exc.rule else ")") if exc.index is not None else ""
                print(f"{where}: refused: {exc.code}: {exc}{at}", file=sys.stderr)
                failed += 1
                continue
            if result.created:
                tokens = ", ".join(f"seat {seat}: {token}" for seat, token in sorted(result.tokens.items()))
                print(f"{where}: imported match {result.match_id}" + (f" — tokens (shown once) {tokens}" if tokens else ""))
            else:
                print(f"{where}: match {result.match_id} was already here")
    return 1 if failed else 0


def replay(args: argparse.Namespace) -> int:
    from service.records.records import RecordError
    from service.records.text import printable, record_text

    source_is_file = args.match == "-" or os.path.isfile(args.match)
    style = args.format or ("text" if source_is_file else "hands")
    if style == "text" and args.hand is not None:
        print("gin-rummy: --hand goes with --format hands", file=sys.stderr)
        return 1
    records = _record_files(args.match) if source_is_file else _stored_record(args.match)
    first = True
    for where, record in records:
        if isinstance(record, str):
            print(f"gin-rummy: {record}", file=sys.stderr)
            return 1
        try:
            text = record_text(record) if style == "text" else _hands_text(record, args.hand)
        except RecordError as exc:  # events of a schema version this service cannot read
            print(f"gin-rummy: {where}: {exc}", file=sys.stderr)
            return 1
        if text is None:
            return 1
        if not first:
            print()
        first = False
        # Names in records hold no control characters, but a file may come from anywhere.
        for line in text.splitlines():
            print(printable(line))
    return 0


def _record_files(path: str):
    """The records of a JSON or NDJSON file ('-': standard input), each with where it
    came from, or a message saying why it is not one; no database is involved."""
    from service.records.format import FORMAT
    from service.records.records import schema_problems

    text = sys.stdin.read() if path == "-" else open(path).read()
    for where, record in _records_in(text, "stdin" if path == "-" else path):
        if isinstance(record, Exception):
            yield where, f"{where}: not JSON: {record}"
        elif not isinstance(record, dict) or record.get("format") != FORMAT:
            yield where, f"{where}: not a match record (format {FORMAT!r})"
        elif problems := schema_problems(record):
            yield where, f"{where}: the record does not match its schema at {problems[0][0]}: {problems[0][1]}"
        else:
            yield where, record


def _stored_record(match: str):
    import uuid

    from service.records.records import export_match
    from service.store import MatchNotFound

    try:
        match_id = uuid.UUID(match)
    except ValueError:
        yield match, f"{match!r} is neither a match id nor a record file"
        return
    try:
        yield match, export_match(_store(), match_id)[0]
    except MatchNotFound:
        yield match, f"no match {match}"


def _hands_text(record: dict, hand: int | None) -> str | None:
    """The record's hands as readable sentences (all, or only hand ``hand``)."""
    from service.records.hands import hand_detail, hand_text, match_text, split_hands
    from service.records.records import upcast_events

    events = upcast_events(record["events"])
    names = [seat.get("name") or f"Seat {i + 1}" for i, seat in enumerate(record["seats"])]
    hands = split_hands(events)
    if hand is not None and not 1 <= hand <= len(hands):
        print(f"gin-rummy: the match has {len(hands)} hand(s)", file=sys.stderr)
        return None
    lines = match_text(events, names) if hand is None else []
    for number in range(1, len(hands) + 1) if hand is None else [hand]:
        lines += [hand_text(hand_detail(hands[number - 1]), names), ""]
    return "\n".join(lines) + "\n"


def analyse(args: argparse.Namespace) -> int:
    from service.coach.analysis import analyse as analyse_events
    from service.coach.analysis import summary
    from service.records.hands import split_hands
    from service.records.records import RecordError, upcast_events
    from service.records.text import printable

    source_is_file = args.match == "-" or os.path.isfile(args.match)
    records = _record_files(args.match) if source_is_file else _stored_record(args.match)
    for where, record in records:
        if isinstance(record, str):
            print(f"gin-rummy: {record}", file=sys.stderr)
            return 1
        try:
            events = upcast_events(record["events"])
        except RecordError as exc:
            print(f"gin-rummy: {where}: {exc}", file=sys.stderr)
            return 1
        count = len(split_hands(events))
        if args.hand is not None and not 1 <= args.hand <= count:
            print(f"gin-rummy: the match has {count} hand(s)", file=sys.stderr)
            return 1
        names = [printable(seat.get("name") or f"Seat {i + 1}") for i, seat in enumerate(record["seats"])]
        numbers = [args.hand] if args.hand is not None else list(range(1, count + 1))
        analysed = analyse_events(events, record["match_id"], set(numbers))
        every = []
        for number in numbers:
            decisions = analysed.get(number, [])
            every += decisions
            print(f"Hand {number}")
            for d in decisions:
                line = f"  seq {d['seq']:>4}  {names[d['seat']]:<16.16} {d['kind']:<8} {_play_text(d['played']):<14} {d['class']:<10}"
                if d["class"] != "good":
                    line += f" -{d['cost']:.1f}: better {_play_text(d['best'])} ({d['reason']})"
                print(line)
            print("  " + _accuracy_text(summary(decisions), names))
        if args.hand is None:
            print("Match: " + _accuracy_text(summary(every), names))
    return 0


def _play_text(play: dict) -> str:
    return " ".join(str(play[k]) for k in ("type", "source", "card") if k in play)


def _accuracy_text(figures: dict, names: list[str]) -> str:
    parts = []
    for seat, name in enumerate(names):
        accuracy, counts = figures["accuracy"][seat], figures["counts"][seat]
        if accuracy is None:
            parts.append(f"{name}: no decisions")
            continue
        classes = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        parts.append(f"{name}: accuracy {accuracy:.1f} ({classes})")
    return "; ".join(parts)


def audit(args: argparse.Namespace) -> int:
    from service.records.hands import audit as audit_events
    from service.records.records import stored_event_json

    store = _store()
    ids = [_match_id(m) for m in args.matches] or [
        row.match_id for row in store.summaries(limit=1_000_000, newest_first=False)
    ]
    bad = 0
    for match_id in ids:
        report = audit_events([stored_event_json(e) for e in store.read(match_id)])
        if report["events"] == 0:
            print(f"{match_id}: no such match")
            bad += 1
        elif report["ok"]:
            print(f"{match_id}: ok ({report['events']} events, {len(report['hands'])} hands)")
        else:
            bad += 1
            for problem in report["problems"]:
                print(f"{match_id}: MISMATCH at seq {problem['seq']}: {problem['rule']}: {problem['detail']}")
    print(f"audited {len(ids)} match(es), {bad} with problems", file=sys.stderr)
    return 1 if bad else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gin-rummy", description="An event-sourced Gin Rummy service.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "The database is DATABASE_URL (postgresql://user:password@host:5432/dbname) or, when it is\n"
            "unset, an embedded PostgreSQL started for you, with its data in\n"
            f"{data_dir()} (GIN_RUMMY_DATA_DIR).  Commands apply the migrations\n"
            "to a database that has none yet.\n"
            "\n"
            "To start: gin-rummy serve, then open http://localhost:8000/ (the web client; the API at /docs).\n"
            "Help on one command: gin-rummy COMMAND --help."
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    command = commands.add_parser(
        "serve", help="apply migrations, then serve the REST API and the web client",
        description="Apply the migrations to the database, then serve the REST API and the web client with gunicorn.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    command.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every interface)")
    command.add_argument("--port", type=int, default=8000, help="the port to listen on")
    command.add_argument("--workers", type=int, default=2, help="processes")
    command.add_argument(
        "--connections", type=int, default=5000,
        help="simultaneous connections per process, live streams included",
    )
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
    command = db.add_parser(
        "purge-idempotency", help="delete stored answers to Idempotency-Keys (the service also does it hourly)"
    )
    command.add_argument("--older-than-hours", type=float, default=24.0, help="default 24")
    command.set_defaults(run=db_purge_idempotency)

    command = commands.add_parser("openapi", help="print the OpenAPI document of the REST API (YAML)")
    command.set_defaults(run=openapi)

    command = commands.add_parser("export", help="export match records (one: JSON; several or all: NDJSON)")
    command.add_argument("matches", nargs="*", metavar="MATCH")
    command.add_argument("--status", choices=["active", "finished"], help="with no MATCH: only these")
    command.add_argument("-o", "--output", help="write to this file instead of standard output")
    command.set_defaults(run=export)

    command = commands.add_parser("import", help="import match records from files or standard input")
    command.add_argument("files", nargs="*", metavar="FILE", help="JSON or NDJSON files; '-' or none: stdin")
    command.set_defaults(run=import_)

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
    command.set_defaults(run=replay)

    command = commands.add_parser(
        "analyse", help="weigh every decision of a match's hands: the play, the best play, what it cost"
    )
    command.add_argument(
        "match", metavar="MATCH|FILE",
        help="a stored match's id, or a record file as `export` writes it (JSON or NDJSON; '-': stdin), read without the database",
    )
    command.add_argument("--hand", type=int, help="only this hand (1, 2, ...)")
    command.set_defaults(run=analyse)

    command = commands.add_parser("audit", help="recompute every hand and check every deal's commitment")
    command.add_argument("matches", nargs="*", metavar="MATCH")
    command.set_defaults(run=audit)

    key_commands = commands.add_parser("keys", help="the keys records are signed with").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    key_commands.add_parser("list", help="the signing keys, the one signing first").set_defaults(run=keys)
    key_commands.add_parser("rotate", help="make a new key sign from now on").set_defaults(run=keys)
    projections = commands.add_parser("projections", help="the read models").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    command = projections.add_parser("rebuild", help="recreate the read models from the events alone")
    command.set_defaults(run=projections_rebuild)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import psycopg
    from alembic.util import CommandError as MigrationError
    from psycopg_pool import PoolTimeout

    from service.store.readiness import NotReady

    args = build_parser().parse_args(argv)
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
        while _open_pools:
            _open_pools.pop().close()
    return status


def _fail(message: str) -> int:
    print(f"gin-rummy: {message}", file=sys.stderr)
    return 1


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
