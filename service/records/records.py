"""Checking a match record, without the database.

A record is checked in three steps, the first failure refused with what and where:
the JSON Schema (``openapi/match-record.schema.json``), the record's own consistency
(sequence numbers, times, digest, seats and rules matching the first event), and a
replay of every event through the engine (the computer's moves made again when the
record names this service's ``BOTS_VERSION``).  Writing an import, and exporting:
``service.application.records``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from service.bots import BOTS_VERSION, computer_decision
from service.engine import State
from service.engine.game import TIME_YEARS, parse_time
from service.store.upcasting import current_version, upcast

from .format import FORMAT, FORMAT_VERSION, digest_of, record_seats, result_of
from .replay import ReplayError, plain, replay

#: The most events a record may hold: a 100-point match between people is well under
#: 2,000, one between players who rarely knock may take 7,000 (this service plays and
#: exports such matches: it must import them too).
MAX_RECORD_EVENTS = 10_000
#: The most hands (``hand_dealt`` events) a record may hold: a 100-point match takes a
#: few dozen, one of many dead hands a few hundred. Both counts are checked before
#: anything walks the record.
MAX_RECORD_HANDS = 400

#: How far after this service's clock a recorded time may be (another machine's clock).
CLOCK_SKEW = timedelta(minutes=5)

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "openapi" / "match-record.schema.json"


#: The most characters a refusal quotes of what the record holds (a message, a field's
#: path), and the most messages it lists: a refusal stays small whatever it refuses.
EXCERPT = 200
MAX_MESSAGES = 20


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text``, or its first ``limit`` characters and how long it is."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters in all)"


class RecordError(ValueError):
    """A record that cannot be imported: ``code`` says why, ``index`` names the event.
    The message and the messages by field quote the record in bounded excerpts only."""

    def __init__(self, code: str, message: str, *, index: int | None = None, rule: str | None = None, errors=None):
        super().__init__(excerpt(message, 2 * EXCERPT))
        self.code = code
        self.index = index
        self.rule = rule
        self.errors = None if errors is None else {
            excerpt(str(path), EXCERPT // 2): [excerpt(str(m)) for m in messages][:MAX_MESSAGES]
            for path, messages in list(errors.items())[:MAX_MESSAGES]
        }

    def __reduce__(self):
        # Sent back from the child process that checked the record, as it is (already bounded).
        return _restored, (self.code, self.args[0] if self.args else "", self.index, self.rule, self.errors)


def _restored(code: str, message: str, index: int | None, rule: str | None, errors) -> RecordError:
    error = RecordError.__new__(RecordError)
    Exception.__init__(error, message)
    error.code, error.index, error.rule, error.errors = code, index, rule, errors
    return error


@lru_cache(maxsize=1)
def record_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def _validators():
    """The record schema applied piecewise, with the same result as applying it whole:
    the record without its events, each event's envelope, then its data by its type and
    schema version (what the schema's if/then picks). Checking thousands of events one
    conditional after another is what made whole-record validation slow."""
    schema = record_schema()
    defs = schema["$defs"]
    checker = jsonschema.FormatChecker()

    def make(root: dict):
        return jsonschema.Draft202012Validator({**root, "$defs": defs}, format_checker=checker)

    header = make({**schema, "properties": {**schema["properties"], "events": {"type": "array", "minItems": 1}}})
    envelope = make({k: v for k, v in defs["event"].items() if k != "allOf"})
    versions: dict[str, set[int]] = {}
    data: dict[tuple[str, int | None], Any] = {}
    for rule in defs["event"]["allOf"]:
        condition, then = rule["if"]["properties"], rule["then"]["properties"]
        etype = condition["type"]["const"]
        if "schema_version" in then:
            versions[etype] = set(then["schema_version"]["enum"])
        else:
            version = condition.get("schema_version", {}).get("const")
            data[(etype, version)] = make(then["data"])
    return header, envelope, versions, data


def schema_message(error: jsonschema.ValidationError) -> str:
    """What a schema error says, in plain words: jsonschema's own messages show the
    values as Python writes them ('ZZ', ['AC', '2C', ...]), which people then read."""
    kind, value, wanted = error.validator, error.instance, error.validator_value
    if kind == "enum":
        return f"{plain(value)} is not one of {', '.join(plain(x) for x in wanted)}"
    if kind == "const":
        return f"{plain(value)} should be {plain(wanted)}"
    if kind == "pattern":
        return f"{plain(value)} does not match the pattern {wanted}"
    if kind == "type":
        types = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return f"{plain(value)} is not of type {types}"
    if kind == "required" and isinstance(value, Mapping):
        missing = [k for k in wanted if k not in value]
        return f"{'the field' if len(missing) == 1 else 'the fields'} {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing"
    if kind == "additionalProperties" and isinstance(value, Mapping):
        extra = sorted(k for k in value if k not in error.schema.get("properties", {}))
        return f"{'the field' if len(extra) == 1 else 'the fields'} {', '.join(extra)} {'is' if len(extra) == 1 else 'are'} not allowed here"
    if kind in ("minimum", "maximum"):
        return f"{plain(value)} is {'less' if kind == 'minimum' else 'more'} than the {kind} {wanted}"
    if kind in ("minItems", "maxItems", "minLength", "maxLength", "maxProperties"):
        what = "items" if kind.endswith("Items") else "characters" if kind.endswith("Length") else "fields"
        bound = f"at least {wanted} are needed" if kind.startswith("min") else f"at most {wanted} are allowed"
        return f"{len(value)} {what}: {bound}"
    if kind == "format":
        return f"{plain(value)} is not a valid {wanted}"
    return error.message


def schema_problems(record: Mapping) -> list[tuple[str, str]]:
    """Where the record breaks its JSON Schema: (path, message), in document order."""
    header, envelope, versions, data = _validators()

    def found(validator, value, prefix: str):
        for error in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
            path = "/".join(str(p) for p in error.absolute_path)
            yield ("/".join(x for x in (prefix, path) if x) or "(record)"), schema_message(error)

    problems = list(found(header, record, ""))
    events = record.get("events")
    if isinstance(events, list):
        for i, event in enumerate(events):
            where = f"events/{i}"
            wrong = list(found(envelope, event, where))
            if not wrong:
                etype, version = event["type"], event["schema_version"]
                if version not in versions[etype]:
                    known = ", ".join(map(str, sorted(versions[etype])))
                    wrong = [(f"{where}/schema_version", f"{etype} has schema versions {known}, not {version}")]
                else:
                    validator = data.get((etype, version)) or data[(etype, None)]
                    wrong = list(found(validator, event["data"], f"{where}/data"))
            problems.extend(wrong)
            if len(problems) >= 20:
                break
    return problems


def stored_event_json(e) -> dict:
    return {
        "seq": e.seq,
        "type": e.type,
        "schema_version": e.schema_version,
        "recorded_at": e.recorded_at.isoformat(),
        "data": e.data,
    }


def checked_record(record: Any) -> tuple[tuple[uuid.UUID, list[dict], State], dict]:
    """``check_record``'s answer and what it checked, as one value (for a child process)."""
    checked: dict = {}
    return check_record(record, checked), checked


def check_record(record: Any, checked: dict | None = None) -> tuple[uuid.UUID, list[dict], State]:
    """Validate a record completely without writing anything; return its match id,
    its events at the current schema versions, and the replayed final state.

    ``checked`` (a dict, if given) is told what was verified: ``computer_moves``
    ("verified": every computer move made again by the same ``bots_version`` and found as
    recorded; "unverified": another or no version named; None: no computer seat)."""
    checked = {} if checked is None else checked
    if not isinstance(record, Mapping):
        raise RecordError("invalid_record", "a record is a JSON object")
    if record.get("format") != FORMAT or record.get("format_version") != FORMAT_VERSION:
        raise RecordError(
            "unsupported_format",
            f"expected format {FORMAT!r} version {FORMAT_VERSION}, got {record.get('format')!r} "
            f"version {record.get('format_version')!r}",
        )
    events = record.get("events")
    if isinstance(events, list) and len(events) > MAX_RECORD_EVENTS:
        raise RecordError(
            "record_too_long",
            f"a record holds at most {MAX_RECORD_EVENTS} events (a 100-point match between people is well under 2,000); this one holds {len(events)}",
        )
    hands = sum(1 for e in events if isinstance(e, Mapping) and e.get("type") == "hand_dealt") if isinstance(events, list) else 0
    if hands > MAX_RECORD_HANDS:
        raise RecordError(
            "record_too_long", f"a record holds at most {MAX_RECORD_HANDS} hands (a 100-point match takes a few dozen); this one holds {hands}",
        )
    _integers_only(record)
    problems = schema_problems(record)
    if problems:
        path, message = problems[0]
        index = int(path.split("/")[1]) if path.startswith("events/") else None
        raise RecordError(
            "invalid_record",
            f"the record does not match its schema at {path}: {message}",
            index=index,
            errors={p: [m] for p, m in problems[:20]},
        )
    events = record["events"]
    latest = datetime.now(UTC) + CLOCK_SKEW
    previous = None
    for i, e in enumerate(events):
        if e["seq"] != i + 1:
            raise RecordError("invalid_record", f"events[{i}] has seq {e['seq']}; events are numbered 1, 2, 3 ... without gaps", index=i)
        recorded_at = parse_time(e["recorded_at"])
        if recorded_at is None:
            raise RecordError(
                "invalid_record",
                f"events[{i}] (seq {i + 1}): recorded_at {e['recorded_at']!r} is not an RFC 3339 time with an offset of at most ±14:00 "
                f"in the years {TIME_YEARS[0]} to {TIME_YEARS[1]}",
                index=i,
            )
        if recorded_at.astimezone(UTC).isoformat() != e["recorded_at"]:
            raise RecordError(
                "invalid_record",
                f"events[{i}] (seq {i + 1}): recorded_at {e['recorded_at']!r} must be written in UTC as the service "
                f"writes it ({recorded_at.astimezone(UTC).isoformat()!r}), so that a record is exported as it came",
                index=i,
            )
        if recorded_at > latest:
            raise RecordError("invalid_record", f"events[{i}] (seq {i + 1}): recorded_at {e['recorded_at']} is in the future", index=i)
        # A clocked match's events carry the time of their command, which its deadlines
        # are judged by: one in the future would stop the clock until then.
        at = parse_time(e["data"].get("at"))
        if at is not None and at > latest:
            raise RecordError("invalid_record", f"events[{i}] (seq {i + 1}): at {e['data']['at']} is in the future", index=i)
        if previous is not None and recorded_at < previous:
            raise RecordError(
                "invalid_record", f"events[{i}] (seq {i + 1}): recorded_at {e['recorded_at']} is before the previous event's", index=i
            )
        previous = recorded_at
    latest_version: dict[str, int] = {}
    for i, e in enumerate(events):
        if e["schema_version"] < latest_version.get(e["type"], 0):
            raise RecordError(
                "invalid_record",
                f"events[{i}] (seq {i + 1}): {e['type']} at schema version {e['schema_version']} after one at version "
                f"{latest_version[e['type']]}: a service never writes an older version after a newer one",
                index=i,
            )
        latest_version[e["type"]] = e["schema_version"]
    if record["digest"]["value"] != digest_of(events):
        raise RecordError("digest_mismatch", "the digest does not match the events: the record was changed or damaged")
    try:
        match_id = uuid.UUID(record["match_id"])
    except ValueError:
        raise RecordError("invalid_record", "match_id is not a UUID") from None
    current = upcast_events(events)
    computer = None
    has_computer = any(seat.get("kind") == "computer" for seat in current[0]["data"].get("seats", ()))
    if has_computer and record.get("bots_version") == BOTS_VERSION:
        computer = computer_decision  # the same computer as this service's: each of its moves is made again

    try:
        replayed = replay(current, computer=computer)
    except ReplayError as exc:
        raise RecordError("illegal_event", str(exc), index=exc.index, rule=exc.rule) from None
    state = replayed.state
    # The record has events (current[0] above) and the first, replayed, started the match.
    assert state.rules is not None, "a replayed record began with match_started, which sets the rules"
    if record["rules"] != state.rules.to_json():
        raise RecordError("invalid_record", "the record's rules differ from those its first event started the match with")
    if record["seats"] != record_seats(state):
        raise RecordError("invalid_record", "the record's seats differ from those its first event names")
    if record["result"] != result_of(state):
        raise RecordError(
            "result_mismatch", f"the record's result {plain(record['result'])} does not follow from the play ({plain(result_of(state))})",
            rule="score_mismatch",
        )
    checked["computer_moves"] = ("verified" if computer else "unverified") if has_computer else None
    return match_id, current, state


def _integers_only(record: Any) -> None:
    """Every number in a record is an integer written without a fraction or exponent
    (JSON Schema's "integer" also counts 1.0; a record does not)."""
    pending: list[tuple[Any, str]] = [(record, "")]
    while pending:  # (not recursive: any depth of nesting is walked)
        value, path = pending.pop()
        if isinstance(value, float):
            parts = path.split("/")
            index = int(parts[2]) if len(parts) > 2 and parts[1] == "events" else None
            raise RecordError(
                "invalid_record",
                f"the number {value!r} at {path or '/'} is not an integer: every number in a record is a whole "
                "number written without a fraction or an exponent",
                index=index,
            )
        if isinstance(value, Mapping):
            pending.extend((item, f"{path}/{key}") for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((item, f"{path}/{i}") for i, item in enumerate(value))


class _RecordHistory:
    """Earlier events of the record, for upcasters that need them."""

    def __init__(self, events: list[dict]):
        self.events = events

    def deal(self, hand: int) -> dict:
        return next(e["data"] for e in self.events if e["type"] == "hand_dealt" and e["data"]["hand"] == hand)

    def knock(self) -> dict:
        return next(e["data"] for e in reversed(self.events) if e["type"] == "knocked")


def upcast_events(events: list[dict]) -> list[dict]:
    """The record's events at the current schema version of each type."""
    out: list[dict] = []
    history = _RecordHistory(out)
    for i, e in enumerate(events):
        try:
            data = upcast(e["type"], e["schema_version"], e["data"], history)
        except Exception as exc:  # an unknown future version, or data an upcaster cannot read
            raise RecordError("invalid_record", f"events[{i}] (seq {i + 1}): cannot read schema version {e['schema_version']}: {exc}", index=i) from None
        out.append({**e, "schema_version": current_version(e["type"]), "data": data})
    return out


def schema_text() -> str:
    return SCHEMA_PATH.read_text()


__all__ = ["MAX_RECORD_EVENTS", "MAX_RECORD_HANDS", "RecordError", "check_record", "record_schema", "schema_problems", "stored_event_json", "upcast_events"]
