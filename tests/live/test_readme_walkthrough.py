"""The README's curl walkthrough, run exactly as it is written, against a started
``gin-rummy serve``: if the README goes stale, this fails.

The service is started and the block run at once, so the block's own wait for
readiness is what lets it begin.  Then what it printed is checked against the rules:
the match ended, and the totals are the points the hand scored."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.scale.cluster import Instance, tail

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("bash", "curl", "jq")),
    reason="the README's walkthrough needs bash, curl and jq",
)


def walkthrough() -> str:
    block = re.search(r"<!-- walkthrough[^>]*-->\n```sh\n(.*?)```", README.read_text(), re.S)
    assert block, "the README's walkthrough block is gone"
    return block.group(1)


@pytest.fixture
def started(database_url):
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-walkthrough-"))
    instance = Instance("walkthrough", folder, database_url, workers=1)
    instance.start()  # not waited for: the walkthrough waits itself
    yield instance, folder
    instance.stop()
    shutil.rmtree(folder, ignore_errors=True)


def test_the_readme_walkthrough_plays_a_hand_to_its_end(started):
    instance, folder = started
    api = f"http://127.0.0.1:{instance.port}"
    run = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", walkthrough()],
        cwd=folder, env={"PATH": os.environ["PATH"], "API": api},
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, f"{run.stderr}\n{run.stdout}\n{tail(instance.log)}"
    lines = run.stdout.splitlines()

    # Step 0 waited until the service was ready.
    assert json.loads(lines[0]) == {"status": "ok", "database": "ok"}
    # Step 2: a fresh deal, Ann (seat 0) to draw with 10 cards.
    table = json.loads(lines[1])
    assert (table["phase"], table["turn"], len(table["hand"])) == ("draw", 0, 10)
    # Step 3: the draw gave Ann 11 cards, with the deadwood after each discard.
    drawn = json.loads(lines[2])
    assert drawn["events"] == ["card_drawn"] and len(drawn["hand"]) == 11
    assert set(drawn["discard_deadwood"]) == set(drawn["hand"])
    # Step 4: Ann's discard is the one leaving the least deadwood; the computer answered.
    answered = json.loads(lines[3])
    discarded = answered[0]["data"]["card"]
    assert drawn["discard_deadwood"][discarded] == min(drawn["discard_deadwood"].values())
    assert [e["type"] for e in answered[:2]] == ["card_discarded", "card_drawn"]

    # Step 5: one line per event, in order, ending the match (unless the computer's first
    # turn, in step 4, already ended it with a knock or Gin).
    played = [line.split(" ") for line in lines[4:-3]]
    seqs = [int(fields[0]) for fields in played]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    if played:
        assert played[-1][1] == "match_ended" and played[-2][1] == "hand_ended"
        result = played[-2][2]
    else:
        assert answered[-1]["type"] == "match_ended"
        result = answered[-2]["data"]["result"]

    # Step 6: the totals are the hand's points, to its winner (a dead hand scores nothing).
    match = json.loads(lines[-3])
    hand = json.loads(lines[-2])
    assert match["status"] == "finished" and match["result"] == hand["result"] == result
    if hand["result"] == "dead":
        assert match["scores"] == [0, 0] and hand["points"] == 0
    else:
        assert match["winner"] == hand["winner"] and match["scores"][hand["winner"]] == hand["points"] > 0
        assert match["scores"][1 - hand["winner"]] == 0
    record = json.loads((folder / "record.json").read_text())
    summary = json.loads(lines[-1])
    assert summary == {
        "events": len(record["events"]), "digest": record["digest"]["value"],
        "signed_by": record["signature"]["key_id"],
    }
    assert summary["events"] == record["events"][-1]["seq"] and (not seqs or seqs[-1] == summary["events"])
