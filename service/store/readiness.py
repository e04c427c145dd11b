"""Is the database there, and migrated?  One-line answers for the ``gin-rummy`` command.

``ensure_ready(url, configured=...)`` connects once and reads the schema's revision:

- it raises :class:`NotReady`, whose message is one line saying what to do, when the
  server cannot be reached (the database does not exist, the server is not running, the
  user or password is wrong, ...), when the schema is behind this version's migrations
  (``gin-rummy db upgrade``), or ahead of them (a newer version migrated it);
- it applies the migrations itself to a database that has none yet (a fresh
  ``createdb``, or the embedded server's), and to one behind when ``upgrade_behind``
  (``gin-rummy serve``, as a deployment's instances do) or when it is the embedded
  database (the command's own);
- it returns a line saying what it migrated, or None when the database was at the
  latest revision already.

``redact(url)`` is ``url`` without its password, for messages: no message here prints one.
"""

from __future__ import annotations

import shlex
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

#: Seconds to wait for the server before saying it cannot be reached.
CONNECT_TIMEOUT = 10

EMBEDDED_HINT = "or unset DATABASE_URL to use the embedded database"


class NotReady(Exception):
    """The database cannot be used as it is; the message (one line) says what to do."""


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***`` (a URL or a ``key=value`` string)."""
    if "://" in url:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostinfo = netloc.rpartition("@")
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hostinfo}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, "***" if k == "password" else v) for k, v in pairs], safe="*")
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the DATABASE_URL given (not a valid connection string)"
    if "password" in params:
        params["password"] = "***"
    return " ".join(f"{key}={value}" for key, value in params.items())


def unreachable(url: str, error: Exception, *, configured: bool = True) -> str:
    """One line: why ``url`` could not be reached (from psycopg's ``error``), and the fix."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    reason = first.rsplit(" failed: ", 1)[-1] if " failed: " in first else first
    reason = reason.removeprefix("FATAL:").strip().removeprefix("connection failed:").strip()
    lower = reason.lower()
    where = "DATABASE_URL" if configured else "the embedded database"
    params = _params(url)
    if "database" in lower and "does not exist" in lower:
        name = params.get("dbname") or (reason.split('"')[1] if '"' in reason else "")
        command = ["createdb"]
        for flag, key in (("-h", "host"), ("-p", "port"), ("-U", "user")):
            if params.get(key) and not (key == "port" and params[key] == "5432"):
                command += [flag, params[key]]
        fix = f"create it with `{shlex.join([*command, name])}`"
        if configured:
            fix += f" {EMBEDDED_HINT}"
    elif "password authentication failed" in lower or "no password supplied" in lower:
        fix = f"check the user and password in {where}"
    elif "role" in lower and "does not exist" in lower:
        fix = f"check the user name in {where} (or create the role with `createuser`)"
    elif "refused" in lower or "no such file or directory" in lower or "timeout" in lower:
        fix = "is PostgreSQL running there? Start it, or fix DATABASE_URL" + (f", {EMBEDDED_HINT}" if configured else "")
    elif "resolve host" in lower or "name or service not known" in lower:
        fix = "check the host name in DATABASE_URL" + (f", {EMBEDDED_HINT}" if configured else "")
    else:
        fix = f"check DATABASE_URL, {EMBEDDED_HINT}" if configured else "check GIN_RUMMY_DATA_DIR and the embedded server's log"
    return f"cannot connect to {redact(url)}: {reason} — {fix}"


def _params(url: str) -> dict[str, str]:
    try:
        return {k: str(v) for k, v in psycopg.conninfo.conninfo_to_dict(url).items()}
    except psycopg.ProgrammingError:
        return {}


def revision_of(url: str, *, configured: bool = True) -> str | None:
    """The schema revision the database is at (None: no migrations applied yet)."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
            regclass = conn.execute("SELECT to_regclass('alembic_version')").fetchone()
            assert regclass is not None, "a SELECT of one value and no FROM returns one row"
            if regclass[0] is None:
                return None
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except psycopg.OperationalError as exc:
        raise NotReady(unreachable(url, exc, configured=configured)) from None
    return row[0] if row else None


def check_connection(url: str, *, configured: bool = True) -> None:
    """Return when the server of ``url`` accepts a connection; NotReady otherwise."""
    revision_of(url, configured=configured)


def ensure_ready(url: str, *, configured: bool = True, upgrade_behind: bool = False) -> str | None:
    """The database of ``url`` at this version's latest revision (see the module's text)."""
    from alembic.script import ScriptDirectory

    from .migrate import alembic_config, upgrade

    script = ScriptDirectory.from_config(alembic_config(url))
    head = script.get_current_head()
    current = revision_of(url, configured=configured)
    if current == head:
        return None
    known = current is None or _known(script, current)
    if not known:
        raise NotReady(
            f"the database {redact(url)} is at revision {current}, which this version of gin-rummy does not know"
            " (a newer version migrated it): upgrade gin-rummy"
        )
    if current is not None and configured and not upgrade_behind:
        raise NotReady(
            f"the database {redact(url)} is at revision {current}, behind this version's {head}:"
            " run `gin-rummy db upgrade` (`gin-rummy serve` also does it)"
        )
    upgrade(url)
    where = redact(url) if configured else "the embedded database"
    return f"applied the migrations to {where} (it had none)" if current is None else f"migrated {where} from {current} to {head}"


def _known(script, revision: str) -> bool:
    from alembic.util import CommandError

    try:
        return script.get_revision(revision) is not None
    except CommandError:
        return False
