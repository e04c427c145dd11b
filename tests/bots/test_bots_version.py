"""The computer's decisions are pinned to its version (bots.BOTS_VERSION).

A record names the version its computer moves were made by, and a service importing a
record of its own version makes every computer move again and refuses one that
differs.  So a change to what any level plays must come with a new BOTS_VERSION:
this test plays fixed matches between the levels and compares every decision with
the fingerprint taken for the current version.  When it fails after a deliberate
change to a bot, bump BOTS_VERSION and put the new fingerprint here.
"""

from __future__ import annotations

import hashlib
import json

from service import bots
from tests.support.arena import play_match

#: The matches played: (levels, deal seed, preset).  The bonus-20-10 one (where the
#: knocker may lay out any arrangement) was added with 2026.12.2, the oklahoma, straight
#: and hollywood ones with 2026.12.3; the fingerprints of earlier versions were taken on
#: the matches there were then (the first three, then four).
MATCHES = (
    (("easy", "medium"), "pin-1", "classic"),
    (("hard", "medium"), "pin-2", "classic"),
    (("hard", "easy"), "pin-3", "classic"),
    (("hard", "medium"), "pin-4", "bonus-20-10"),
    (("hard", "medium"), "pin-5", "oklahoma"),
    (("medium", "hard"), "pin-6", "straight"),
    (("hard", "easy"), "pin-7", "hollywood"),
)

#: BOTS_VERSION -> the SHA-256 of every decision of those matches.
FINGERPRINTS = {
    "2026.12.1": "c77843bb7e9cf9435801498f6119ce67f0b70ebc100dc3922fa1f18f9d04f5b0",
    # The knock lays out the best of the least-deadwood arrangements against the
    # defender's hand; hard weighs those layouts and names one only under knocker_arranges.
    "2026.12.2": "1c2a50f64cee5eb08615d5e2afc85efb7a53d61e885dfbd47051e995ec784e5f",
    # The hand's knock limit (Oklahoma's upcard, Straight Gin's 0), Big Gin taken when it
    # pays at least Gin's bonus, a doubled hand's points doubled; the variants' matches added.
    "2026.12.3": "e3c6887b9aa3e6bc485cea4475fc64a8ddba8cef8ea7564ea2dc800f3aa3fb5f",
}


def decisions() -> str:
    made = []

    def chooser(view, history, level, rng):
        action = bots.choose_action(view, history, level, rng)
        made.append([level, view["version"], action])
        return action

    for levels, deal_seed, preset in MATCHES:
        play_match(levels, {"preset": preset, "target_score": 40}, deal_seed, (11, 12), chooser=chooser)
    return hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()


def test_the_computers_decisions_are_those_of_its_version():
    assert bots.BOTS_VERSION in FINGERPRINTS, f"no fingerprint for BOTS_VERSION {bots.BOTS_VERSION!r}: add {decisions()!r}"
    found = decisions()
    assert found == FINGERPRINTS[bots.BOTS_VERSION], (
        f"the computer plays differently from version {bots.BOTS_VERSION}: bump BOTS_VERSION in service/bots "
        f"and record the fingerprint {found!r} for it"
    )
