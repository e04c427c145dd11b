"""Hostile-input tests: the API fuzzed from its own OpenAPI document, and a load smoke run."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from service.store import EventStore, connect
from service.store.migrate import upgrade

#: Requests sent per operation label ("GET /matches/{match_id}") during this session, and
#: the statuses they got; the fuzz tests add to them and the summary below prints them.
FUZZED: Counter = Counter()
STATUSES: defaultdict[str, Counter] = defaultdict(Counter)


@pytest.fixture(scope="module")
def own_store(server):
    """A store on a database of the module's own: the fuzzer makes hundreds of matches,
    which tests counting the matches of the session's database should not see."""
    url = server.create_database("gin_rummy_fuzz")
    upgrade(url)
    pool = connect(url, min_size=1, max_size=4)
    try:
        yield EventStore(pool)
    finally:
        pool.close()
        server.drop_database(url)


def pytest_terminal_summary(terminalreporter):
    if not FUZZED:
        return
    if terminalreporter.verbosity < 0:  # a quiet run (the default): one line, -v for the table
        terminalreporter.write_line(
            f"schemathesis fuzzed {sum(FUZZED.values())} requests over {len(FUZZED)} operations (-v: the table)"
        )
        return
    width = max(map(len, FUZZED))
    terminalreporter.write_sep("-", "schemathesis: requests fuzzed per operation (and the statuses answered)")
    for label in sorted(FUZZED):
        statuses = " ".join(f"{status}×{n}" for status, n in sorted(STATUSES[label].items()))
        terminalreporter.write_line(f"{label:<{width}}  {FUZZED[label]:>5}  {statuses}")
    terminalreporter.write_line(f"{'total':<{width}}  {sum(FUZZED.values()):>5} requests over {len(FUZZED)} operations")
