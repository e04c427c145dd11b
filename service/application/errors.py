"""The application's refusals: one base class, mapped to a problem document once.

Every refusal a use case decides is an ``ApplicationError``: a stable ``code``, a
``detail`` for people, and a ``kind`` saying what sort of refusal it is, which the API
answers with one HTTP status per kind (``service.api.errors``).  What the layers below
refuse keeps its own type -- the engine's ``CommandError`` and ``IllegalMoveError``,
the store's ``MatchNotFound`` and ``ConcurrencyError`` -- and is mapped once too.

>>> error = SeatTaken("no seat of this match is open")
>>> error.kind, error.code, str(error)
('conflict', 'seat_taken', 'no seat of this match is open')
"""

from __future__ import annotations

from typing import Any

#: The kinds of refusal, each answered with one status.
KINDS = (
    "unauthorized",  # no identity, or one that cannot be checked
    "forbidden",  # an identity that may not do this
    "not_found",
    "conflict",  # the match's state does not allow it now
    "precondition_failed",  # the client acted on a version that is gone
    "invalid",  # the request says something that cannot be done
    "rate_limited",
    "unavailable",  # this instance cannot serve it now; retry
)


class ApplicationError(Exception):
    kind = "invalid"
    code = "invalid_request"

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        rule: str | None = None,
        errors: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        retry_after: int | None = None,
        version: int | None = None,
    ):
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        #: The game rule broken, when there is one.
        self.rule = rule
        #: Field -> messages, for a request that names what is wrong with it.
        self.errors = errors
        #: More members of the problem document (``current_version``, ``index``...).
        self.extra = extra or {}
        #: Seconds after which a retry may succeed.
        self.retry_after = retry_after
        #: The match's version now, when the refusal is about it.
        self.version = version


class Unauthorized(ApplicationError):
    kind = "unauthorized"
    code = "invalid_token"

    def __init__(self, detail: str = "the token is not valid", *, code: str | None = None, reason: str | None = None):
        super().__init__(detail, code=code)
        #: Why a sign-in token was refused (its check), told to the client beside the code.
        self.reason = reason


class Forbidden(ApplicationError):
    kind = "forbidden"
    code = "forbidden"


class HiddenUntilOver(Forbidden):
    """What a seat asked for would show cards it may not see yet."""

    code = "hidden_until_over"

    def __init__(self, what: str):
        super().__init__(f"{what} would reveal hidden cards: seats see it once it is over")


class NotFound(ApplicationError):
    kind = "not_found"
    code = "not_found"


class Conflict(ApplicationError):
    kind = "conflict"
    code = "conflict"


class SeatTaken(Conflict):
    code = "seat_taken"


class NoRematch(Conflict):
    code = "no_rematch"


class VersionMismatch(ApplicationError):
    """The client's If-Match version is not the match's current version."""

    kind = "precondition_failed"
    code = "version_mismatch"

    def __init__(self, expected: int, current: int):
        super().__init__(
            f"the match is at version {current}, not {expected}; reload the match and act on the current version",
            extra={"current_version": current}, version=current,
        )
        self.expected = expected
        self.current = current


class Invalid(ApplicationError):
    kind = "invalid"
    code = "invalid_request"


class RateLimited(ApplicationError):
    kind = "rate_limited"
    code = "rate_limited"


class Unavailable(ApplicationError):
    kind = "unavailable"
    code = "unavailable"
