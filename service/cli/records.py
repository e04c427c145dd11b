"""The record commands: export, import, replay (hands or movetext), analyse, audit.

``replay`` and ``analyse`` read a record file without the database.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid

from service.application.records import RecordRefused
from service.coach.analysis import analyse as analyse_events
from service.coach.analysis import summary
from service.records.hands import audit as audit_events
from service.records.hands import hand_detail, hand_text, match_text, split_hands
from service.records.records import (
    RecordError,
    schema_problems,
    stored_event_json,
    upcast_events,
)
from service.records.text import printable, record_text
from service.settings import Settings
from service.store import MatchNotFound

from .common import application, match_id, open_store
from .record_files import MAX_PROBLEMS, NoSuchFile, Unreadable, more_problems, not_a_record, not_json, values_in


def export(args: argparse.Namespace) -> int:
    records = application(args.settings).records
    out = open(args.output, "w") if args.output else sys.stdout
    try:
        if len(args.matches) == 1:
            try:
                record = records.record_of(match_id(args.matches[0]))[0]
            except MatchNotFound:
                print(f"gin-rummy: no match {args.matches[0]}", file=sys.stderr)
                return 1
            out.write(json.dumps(record, indent=2) + "\n")
            return 0
        every = (
            (records.record_of(match_id(m))[0] for m in args.matches) if args.matches else records.records(status=args.status)
        )
        count = 0
        for record in every:
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
            count += 1
        print(f"exported {count} match(es)", file=sys.stderr)
        return 0
    finally:
        if out is not sys.stdout:
            out.close()


def import_(args: argparse.Namespace) -> int:
    # The files are read first: one that holds no record at all is a line of its own
    # (the wrong file named, most likely), and nothing is imported.
    paths, files = args.files or ["-"], []
    for path in paths:
        try:
            files.append(values_in(path))
        except NoSuchFile as exc:
            print(f"gin-rummy import: {exc}", file=sys.stderr)
        except Unreadable as exc:
            print(exc, file=sys.stderr)
    if len(files) < len(paths):
        return 1
    records = application(args.settings).records
    failed = 0
    for path, values in zip(paths, files, strict=True):
        problems = 0
        for where, record in values:
            problem = not_json(record) if isinstance(record, json.JSONDecodeError) else not_a_record(record)
            if problem is not None:
                problems += 1
                if problems <= MAX_PROBLEMS:
                    print(f"{where}: {problem}", file=sys.stderr)
                continue
            try:
                # An unfinished match goes on to where a person acts.
                result = records.import_record(record)
            except RecordRefused as exc:
                at = f" (events[{exc.index}], seq {exc.index + 1}" + (f", rule {exc.rule})" if exc.rule else ")") if exc.index is not None else ""
                print(f"{where}: refused: {exc.code}: {exc}{at}", file=sys.stderr)
                failed += 1
                continue
            if result.created:
                tokens = ", ".join(f"seat {seat}: {token}" for seat, token in sorted(result.tokens.items()))
                print(f"{where}: imported match {result.match_id}{_elsewhere(result)}" + (f" — tokens (shown once) {tokens}" if tokens else ""))
            else:
                print(f"{where}: match {result.match_id}{_elsewhere(result)} was already here")
        if more := more_problems(path, problems):
            print(more, file=sys.stderr)
        failed += problems
    return 1 if failed else 0


def _elsewhere(result) -> str:
    """Where the match is, when not at the record's id (its signature is not verified here)."""
    if result.match_id == result.record_id:
        return ""
    return f" (the record names {result.record_id}; unverified records get an id of their own here)"


def replay(args: argparse.Namespace) -> int:
    source_is_file = args.match == "-" or os.path.isfile(args.match)
    style = args.format or ("text" if source_is_file else "hands")
    if style == "text" and args.hand is not None:
        print("gin-rummy: --hand goes with --format hands", file=sys.stderr)
        return 1
    records = _record_files(args.match) if source_is_file else _stored_record(args.settings, args.match)
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
    try:
        values = values_in(path)
    except Unreadable as exc:
        yield path, str(exc)
        return
    for where, record in values:
        if isinstance(record, json.JSONDecodeError):
            yield where, f"{where}: {not_json(record)}"
        elif problem := not_a_record(record):
            yield where, f"{where}: {problem}"
        elif problems := schema_problems(record):
            yield where, f"{where}: the record does not match its schema at {problems[0][0]}: {problems[0][1]}"
        else:
            yield where, record


def _stored_record(settings: Settings, match: str):
    try:
        wanted = uuid.UUID(match)
    except ValueError:
        yield match, f"{match!r} is neither a match id nor a record file"
        return
    try:
        yield match, application(settings).records.record_of(wanted, signed=False)[0]
    except MatchNotFound:
        yield match, f"no match {match}"


def _hands_text(record: dict, hand: int | None) -> str | None:
    """The record's hands as readable sentences (all, or only hand ``hand``)."""
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
    source_is_file = args.match == "-" or os.path.isfile(args.match)
    records = _record_files(args.match) if source_is_file else _stored_record(args.settings, args.match)
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
    store = open_store(args.settings)
    ids = [match_id(m) for m in args.matches] or [
        row.match_id for row in store.summaries(limit=1_000_000, newest_first=False)
    ]
    bad = 0
    for each in ids:
        report = audit_events([stored_event_json(e) for e in store.read(each)])
        if report["events"] == 0:
            print(f"{each}: no such match")
            bad += 1
        elif report["ok"]:
            print(f"{each}: ok ({report['events']} events, {len(report['hands'])} hands)")
        else:
            bad += 1
            for problem in report["problems"]:
                print(f"{each}: MISMATCH at seq {problem['seq']}: {problem['rule']}: {problem['detail']}")
    print(f"audited {len(ids)} match(es), {bad} with problems", file=sys.stderr)
    return 1 if bad else 0
