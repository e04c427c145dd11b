"""Time as data: the seat's deadline under a clock, and the times commands carry.

Under rules with a clock (``turn_seconds``) every command carries ``at``, the time the
service received it, and every event it causes records that time (``stamped``).  The
engine never reads a clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from .commands import command_field
from .errors import CommandError, IllegalMoveError
from .rules import rules_from_json
from .state import PLAYING, Event, State


def deadline(state: State) -> datetime | None:
    """When the seat to act runs out of time, under a clock (None: no clock running)."""
    seconds = state.rules.turn_seconds if state.rules is not None else None
    if seconds is None or state.phase not in PLAYING or state.turn is None or state.turn_since is None:
        return None
    return datetime.fromisoformat(state.turn_since) + timedelta(seconds=seconds)


#: An RFC 3339 time: seconds, at most microseconds, and its offset (Z, or at most ±14:00).
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-](?:0\d|1[0-3]):[0-5]\d|[+-]14:00)")
#: The years a time may fall in (so that any deadline after it can still be written).
TIME_YEARS = (2000, 9000)


def parse_time(value: object) -> datetime | None:
    """``value`` as an aware datetime if it is an RFC 3339 time (see TIME) between the
    years TIME_YEARS, else None."""
    if not isinstance(value, str) or not TIME.fullmatch(value):
        return None
    try:
        at = datetime.fromisoformat(value)
        year = at.astimezone(UTC).year
    except (ValueError, OverflowError):
        return None
    return at if TIME_YEARS[0] <= year <= TIME_YEARS[1] else None


def time_field(command: Mapping[str, Any]) -> datetime:
    value = command_field(command, "at")
    at = parse_time(value)
    if at is None:
        raise CommandError(
            f"at must be an RFC 3339 time with its offset, e.g. 2026-12-01T09:30:00.000+00:00; got {value!r}", "invalid_time"
        )
    return at


def stamped(state: State, command: Mapping[str, Any], events: list[Event]) -> list[Event]:
    """Under a clock, every event records the time of its command (never earlier than
    the match's last event)."""
    rules = state.rules
    if rules is None and events and events[0].type == "match_started":
        rules = rules_from_json(events[0].data["rules"])
    if rules is None or rules.turn_seconds is None:
        return events
    at = time_field(command)
    if state.last_at is not None and at < datetime.fromisoformat(state.last_at):
        raise IllegalMoveError("time_went_back", f"at {command['at']} is before the match's last event ({state.last_at})")
    stamp = command["at"]
    return [Event(e.type, {**e.data, "at": stamp}) for e in events]
