"""Reading record files (``import``, ``replay FILE``, ``analyse FILE``), without the database.

A file holds one JSON document (a record as ``gin-rummy export MATCH`` writes it) or JSON
Lines (NDJSON: a record a line, as ``gin-rummy export`` of several matches writes them).
What makes a file no record file at all — it does not exist, it is empty, nothing in it
reads as JSON — is :class:`Unreadable`, one line; in a file of JSON Lines, a line that is
not JSON is a :class:`json.JSONDecodeError` among the values, for the command to say
which line (at most ``MAX_PROBLEMS`` of them: ``more_problems``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from service.records.format import FORMAT, FORMAT_VERSION

#: What a match record is, for a value that is not one.
WHAT_A_RECORD_IS = (
    f'a record is a JSON object with "format": "{FORMAT}", "format_version": {FORMAT_VERSION}, "match_id", "rules",'
    ' "seats", "events", "result" and "digest", as `gin-rummy export` writes it'
    " (the service serves its JSON Schema at /match-record.schema.json)"
)

#: The most lines of one file a command names as not records; the rest are counted.
MAX_PROBLEMS = 5


class Unreadable(Exception):
    """A file that holds no record: the message (one line) names the file and says why."""


class NoSuchFile(Unreadable):
    """A file that is not there (its message: ``no such file: PATH``)."""


def values_in(path: str) -> list[tuple[str, Any]]:
    """The JSON values of a record file ('-': standard input), each with where it came from
    (``PATH`` for a file of one document, ``PATH:N`` for line N of JSON Lines); a line that
    is not JSON is its ``JSONDecodeError``.  :class:`Unreadable` when the file holds no
    record at all."""
    source = _source(path)
    if path == "-" and sys.stdin.isatty():  # `gin-rummy import` alone, waiting on the terminal
        print("gin-rummy: reading records from standard input (Ctrl-D ends it; or name the files)", file=sys.stderr)
    text = sys.stdin.read() if path == "-" else _read(path)
    if not text.strip():
        raise Unreadable(f"{source}: holds no match record (" + ("standard input was empty)" if path == "-" else "the file is empty)"))
    try:
        return [(source, json.loads(text))]
    except json.JSONDecodeError as whole:
        lines = [(f"{source}:{number}", _value(line)) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
        if not any(isinstance(value, dict) for _, value in lines):
            # No line is an object: one document, broken (or no JSON at all), not JSON Lines.
            raise Unreadable(f"{source}: not a match record (not JSON: {_where(whole)})") from None
        return lines


def not_json(error: json.JSONDecodeError) -> str:
    """Why a line of JSON Lines is no record: it is not JSON."""
    return f"not a match record (not JSON: column {error.colno}: {error.msg})"


def not_a_record(value: Any) -> str | None:
    """Why ``value`` is no match record at all (one line), or None when it says it is one
    (whether it is a valid one is for the checks of its import or replay to say)."""
    if isinstance(value, dict) and value.get("format") == FORMAT:
        return None
    if isinstance(value, dict):
        this = f'its "format" is {value["format"]!r}' if "format" in value else 'this is a JSON object without "format"'
    elif isinstance(value, list):
        this = "this is a JSON array"
        if value and all(isinstance(each, dict) and each.get("format") == FORMAT for each in value):
            this += " of records: give them one a line (JSON Lines), as `gin-rummy export` writes several"
    else:
        this = "this is " + ("null" if value is None else json.dumps(value) if isinstance(value, bool) else
                             "a string" if isinstance(value, str) else "a number")
    return f"not a match record: {WHAT_A_RECORD_IS}; {this}"


def more_problems(path: str, count: int) -> str | None:
    """The line after the first ``MAX_PROBLEMS`` of ``count`` problems of a file, or None."""
    if count <= MAX_PROBLEMS:
        return None
    return f"{_source(path)}: ... and {count - MAX_PROBLEMS} more line(s) that are not match records"


def _source(path: str) -> str:
    return "stdin" if path == "-" else path


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except FileNotFoundError:
        raise NoSuchFile(f"no such file: {path}") from None
    except IsADirectoryError:
        raise Unreadable(f"{path}: is a directory, not a record file") from None
    except UnicodeDecodeError:
        raise Unreadable(f"{path}: not a match record (not text: records are JSON in UTF-8)") from None
    except OSError as exc:
        raise Unreadable(f"{path}: cannot be read: {exc.strerror}") from None


def _value(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        return exc


def _where(error: json.JSONDecodeError) -> str:
    return f"line {error.lineno} column {error.colno}: {error.msg}"
