"""The README speaks to the service's users: its sections come in the order a newcomer
needs them, and it names nothing of how the service was made (source documents, issue
numbers, targets).  Every file and link it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_the_sections_come_in_a_newcomers_order():
    sections = re.findall(r"^## (.+)$", README, re.M)
    assert sections == [
        "Two commands",
        "Play",
        "The API",
        "Configuration",
        "Using your own PostgreSQL",
        "Stopping and resetting the embedded database",
        "Records, replay and audit",
        "Deploying and scaling out",
        "Developing",
    ]
    api = README[README.index("## The API"):README.index("## Configuration")]
    assert api.index("### Endpoints") < api.index("### A first match with curl")
    assert "http://localhost:8000/" in README[README.index("## Play"):README.index("## The API")]


def test_it_makes_no_internal_references():
    for pattern in (r"\bissues?\s+\d", r"#\d{1,3}\b", r"\bthe seeds\b", r"\bseeds'", r"\bseed 00\d", r"\| seeds \|", r"% aimed at", r"closing note",
                    r"\btarget(?:s)? (?:we|you) (?:were )?given", r"\b62%"):
        found = re.search(pattern, README, re.I)
        assert found is None, f"{pattern!r}: ...{README[max(0, found.start() - 60):found.end() + 60]}..."


def test_every_file_it_names_exists():
    named = set(re.findall(r"\]\(((?:docs|service|deploy|openapi|tests|benchmarks)/[^)#\s]+)\)", README))
    named |= set(re.findall(r"`((?:docs|deploy|openapi|benchmarks|tests|service)/[\w./-]+\.\w+)`", README))
    assert len(named) > 20
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert not missing, missing
