"""The store's own errors: callers never need to catch a psycopg error by name."""

from __future__ import annotations

from uuid import UUID


class StoreError(Exception):
    """Base of the store's errors."""


class ConcurrencyError(StoreError):
    """The match is not at the expected version: someone else appended first, or the
    caller's version is stale or ahead.  Nothing was written; load again and retry."""

    def __init__(self, match_id: UUID, expected_version: int | None, message: str):
        super().__init__(message)
        self.match_id = match_id
        self.expected_version = expected_version


class MatchNotFound(StoreError, LookupError):
    """No event has been stored for this match."""

    def __init__(self, match_id: UUID):
        super().__init__(f"no match {match_id}")
        self.match_id = match_id
