"""A newcomer's mistakes with ``gin-rummy``, each answered in one line naming the fix (never
a traceback): a DATABASE_URL that is no URL, a record file that is missing, empty, not
JSON or not a record, and where to find the version and the help of every option."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service import cli
from service.cli.record_files import WHAT_A_RECORD_IS
from service.settings import Settings
from tests.store.test_cli_first_hour import NO_MATCH, a_record, one_line

README = Path(__file__).resolve().parents[2] / "README.md"
#: A server nobody listens on: a command that says what is wrong with a file first never gets there.
NOWHERE = "postgresql://nobody@127.0.0.1:1/never_reached"
EXAMPLE = "postgresql://user:password@host:5432/dbname"


def said(capsys) -> tuple[str, str]:
    """(standard output, the one line on standard error), after checking there is no traceback."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.out, one_line(captured.err)


@pytest.mark.parametrize("command", [
    ["serve", "--port", "0"], ["db", "upgrade"], ["db", "downgrade", "base"], ["db", "purge-idempotency"],
    ["import", "RECORD"], ["export"], ["export", NO_MATCH], ["replay", NO_MATCH], ["analyse", NO_MATCH], ["audit"],
    ["keys", "list"], ["keys", "rotate"], ["projections", "rebuild"],
])
@pytest.mark.parametrize("value", ["localhost", "foo"])
def test_a_database_url_that_is_not_a_url_is_one_line_showing_one(command, value, monkeypatch, capsys, tmp_path):
    record = tmp_path / "record.json"
    record.write_text("{}")
    monkeypatch.setenv("DATABASE_URL", value)
    assert cli.main([str(record) if part == "RECORD" else part for part in command]) == 1
    out, line = said(capsys)
    assert line == f"gin-rummy: DATABASE_URL: not a PostgreSQL URL ({value!r}); it reads like {EXAMPLE}"
    assert out == ""


@pytest.mark.parametrize(("value", "line"), [
    ("mysql://ann:hunter2@db.example/games",
     f"not a PostgreSQL URL ('mysql://ann:***@db.example/games'); it reads like {EXAMPLE}"),
    ("postgresql://ann:hunter2@db.example/games?sslmode=require&colour=blue",
     "not a valid PostgreSQL URL ('postgresql://ann:***@db.example/games?sslmode=require&colour=blue'):"
     ' invalid URI query parameter: "colour"'),
    ("host=db.example password=hunter2 games",
     "not a connection string ('host=db.example password=*** games'): missing \"=\" after \"games\" in connection info"
     f" string; it reads like {EXAMPLE} or host=HOST dbname=NAME"),
])
def test_a_database_url_that_is_wrong_otherwise_is_one_line_without_its_password(value, line, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", value)
    assert cli.main(["audit"]) == 1
    assert said(capsys) == ("", f"gin-rummy: DATABASE_URL: {line}")


def test_every_form_of_connection_string_psycopg_reads_still_connects(database_url, monkeypatch, capsys):
    parts = urlsplit(database_url)
    host = parts.netloc.rpartition("@")[2]
    userinfo = parts.netloc.rpartition("@")[0]
    if host:  # several hosts in the authority, as a replicated cluster's URL names them
        several = parts._replace(netloc=f"{userinfo}@{host},{host}", query="target_session_attrs=read-write")
    else:  # a socket (the embedded server): the hosts are in the query, comma-separated
        socket = conninfo_to_dict(database_url)["host"]
        several = parts._replace(query=f"host={socket},{socket}&target_session_attrs=read-write")
    forms = [
        urlunsplit(parts._replace(scheme="postgres")),
        urlunsplit(several),
        make_conninfo(**conninfo_to_dict(database_url)),  # host=... dbname=...
    ]
    assert "=" in forms[2] and "://" not in forms[2]
    for url in forms:
        monkeypatch.setenv("DATABASE_URL", url)
        assert cli.main(["keys", "list"]) == 0, url
        captured = capsys.readouterr()
        assert captured.err == "" and captured.out, url


def test_importing_a_missing_file_is_one_line_before_any_database(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DATABASE_URL", NOWHERE)
    missing = tmp_path / "no-such-record.json"
    assert cli.main(["import", str(missing)]) == 1
    assert said(capsys) == ("", f"gin-rummy import: no such file: {missing}")


def test_importing_an_empty_file_is_one_line_and_a_failure(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DATABASE_URL", NOWHERE)
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    assert cli.main(["import", str(empty)]) == 1
    assert said(capsys) == ("", f"{empty}: holds no match record (the file is empty)")
    for command in ("replay", "analyse"):  # which read a record file without the database
        assert cli.main([command, str(empty)]) == 1
        assert said(capsys) == ("", f"gin-rummy: {empty}: holds no match record (the file is empty)")


def test_importing_a_file_that_is_not_json_is_one_line_not_one_per_line(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", NOWHERE)
    assert len(README.read_text().splitlines()) > 100
    assert cli.main(["import", str(README)]) == 1
    assert said(capsys) == ("", f"{README}: not a match record (not JSON: line 1 column 1: Expecting value)")
    assert cli.main(["replay", str(README)]) == 1
    assert said(capsys) == ("", f"gin-rummy: {README}: not a match record (not JSON: line 1 column 1: Expecting value)")


def test_importing_json_that_is_not_a_record_says_what_a_record_is(database_url, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DATABASE_URL", database_url)
    path = tmp_path / "package.json"
    path.write_text(json.dumps({"name": "something", "version": "1.0"}, indent=2))
    assert cli.main(["import", str(path)]) == 1
    out, line = said(capsys)
    assert out == ""
    assert line == f'{path}: not a match record: {WHAT_A_RECORD_IS}; this is a JSON object without "format"'
    assert '"format": "gin-rummy-match-record"' in line and "/match-record.schema.json" in line


def test_a_file_of_records_and_junk_imports_the_records_and_names_the_first_junk_lines(
    store, database_url, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("DATABASE_URL", database_url)
    path = tmp_path / "mixed.ndjson"
    junk = ["oops", '{"format": "something else"}', "[1, 2]", "null", "still oops", "x", "y"]
    path.write_text("\n".join([json.dumps(a_record(store)), *junk]) + "\n")
    assert cli.main(["import", str(path)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert f"{path}:1: imported match " in captured.out
    lines = captured.err.splitlines()
    assert lines[0] == f"{path}:2: not a match record (not JSON: column 1: Expecting value)"
    assert lines[1] == f"{path}:3: not a match record: {WHAT_A_RECORD_IS}; its \"format\" is 'something else'"
    assert lines[2].endswith("; this is a JSON array") and lines[3].endswith("; this is null")
    assert lines[4].startswith(f"{path}:6: not a match record (not JSON")
    assert lines[5:] == [f"{path}: ... and 2 more line(s) that are not match records"]


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"gin-rummy {version('gin-rummy-service')}\n"


def test_the_command_itself_says_it_in_one_line_too(tmp_path):
    """Through the installed script, as a newcomer types it."""
    script = Path(sys.executable).parent / "gin-rummy"
    done = subprocess.run([str(script), "db", "upgrade"], env={"DATABASE_URL": "localhost", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"gin-rummy: DATABASE_URL: not a PostgreSQL URL ('localhost'); it reads like {EXAMPLE}\n"


def every_action(parser: argparse.ArgumentParser, path: str = "gin-rummy"):
    """(the command, the action) of every argument and option, subcommands' included."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        yield path, action
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the lines listing the subcommands
                yield f"{path} {choice.dest}", choice
            for name, subparser in action.choices.items():
                yield from every_action(subparser, f"{path} {name}")


def test_every_argument_and_option_of_every_command_has_a_help():
    found = list(every_action(cli.build_parser(Settings())))
    assert {"gin-rummy serve", "gin-rummy db upgrade", "gin-rummy replay"} <= {path for path, _ in found}  # it walked them
    missing = [f"{path}: {action.metavar or action.dest}" for path, action in found
               if not action.help or action.help == argparse.SUPPRESS or not str(action.help).strip()]
    assert missing == []
