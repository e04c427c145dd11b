"""Counts the scale tests gather, printed at the end of the run (see conftest.py)."""

from __future__ import annotations

#: section -> {name: value}, in the order the tests ran.
REPORT: dict[str, dict] = {}


def note(section: str, **values) -> None:
    REPORT.setdefault(section, {}).update(values)
