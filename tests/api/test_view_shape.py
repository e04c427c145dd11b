"""The view is served as ``view_for`` builds it, without a schema dump: so it must already
be exactly what ``SeatViewSchema`` documents, field for field, in every phase."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from service.api import schemas as s
from service.application.views import view_for
from service.engine import PRESETS, fold
from tests.support.play import play_match


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_view_built_is_the_view_documented(preset):
    rng = random.Random(f"view-shape-{preset}")
    schema = s.SeatViewSchema()
    phases = set()
    checked = 0
    for _ in range(2):
        _, events = play_match(rng, {"preset": preset})
        state = None
        for i, event in enumerate(events):
            state = fold([event], state)
            if i % 5 and i != len(events) - 1:
                continue
            for seat in (0, 1):
                view = json.loads(json.dumps(view_for(state, seat, uuid.uuid4())))
                assert schema.validate(view) == {}, view
                assert schema.dump(view) == view
                phases.add(view["phase"])
                checked += 1
    assert checked > 100
    assert {"draw", "discard", "match_over"} <= phases
