"""Errors split by meaning, as python-chess does.

``CommandError``: the command is malformed (unknown type, missing field, not a card).
``IllegalMoveError``: the command is well-formed but the rules forbid it now.
Both carry a stable machine-readable code; an illegal move also names the rule.
"""

from __future__ import annotations


class EngineError(ValueError):
    code = "engine_error"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def detail(self) -> str:
        return str(self)


class CommandError(EngineError):
    """The command cannot be read: unknown type, missing or malformed field."""

    code = "invalid_command"


class IllegalMoveError(EngineError):
    """A readable command that the rules forbid in this state.

    ``rule`` is a stable code for the rule broken, e.g. ``not_your_turn``,
    ``card_not_in_hand``, ``no_return``, ``knock_limit``.
    """

    code = "illegal_move"

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
