"""Helpers for tests that play matches through the REST API, on the views it answers
(``tests/api/conftest.py`` has the clients and fixtures)."""

from __future__ import annotations

from tests.api.conftest import plays


def greedy_action_on_view(view):
    """Knock or go Gin when allowed, else throw the card that leaves the least deadwood
    (the view's discard_deadwood), else draw from the stock (or take what is offered)."""
    actions = plays(view)
    enders = [a for a in actions if a["type"] in ("gin", "knock")]
    if enders:
        return enders[0]
    discards = [a for a in actions if a["type"] == "discard"]
    if discards:
        return min(discards, key=lambda a: view["discard_deadwood"][a["card"]])
    return next((a for a in actions if a.get("source") == "stock"), actions[0])


def play_to_the_end(players, limit=2000):
    """Each human seat plays greedily, with If-Match, until the match ends."""
    for _ in range(limit):
        for player in players.values():
            view = player.view()
            if view["status"] == "finished":
                return view
            if plays(view):
                r = player.act(greedy_action_on_view(view), **{"If-Match": f'"{view["version"]}"'})
                assert r.status_code == 200, r.json
    raise AssertionError("the match did not end")
