"""The coach in the reference web client: a hint at the table, followed by the mouse and
by its own button, and the replay's marks of each decision with the seats' accuracy --
each checked against what the API recorded and answers."""

from __future__ import annotations

import json

import pytest

from .support import Client, api, play_carelessly, pretty

web = pytest.mark.web

def played(base: str, match_id: str, token: str, after: int, seat: int = 0) -> dict:
    """The first play of ``seat`` after seq ``after``, as the action that made it."""
    events = api(base, "GET", f"/matches/{match_id}/events?after={after}", token=token)["events"]
    for e in events:
        d = e["data"]
        if d.get("seat") != seat:
            continue
        if e["type"] == "card_drawn":
            return {"type": "draw", "source": d["source"]}
        if e["type"] == "upcard_passed":
            return {"type": "pass"}
        if e["type"] == "card_discarded":
            return {"type": "discard", "card": d["card"]}
        if e["type"] == "knocked":
            return {"type": "gin" if d["gin"] else "knock", "card": d["card"]}
    raise AssertionError(f"no play of seat {seat} after seq {after}: {events}")


def the_play(action: dict) -> dict:
    return {k: action[k] for k in ("type", "source", "card") if k in action}


def ask_hint(client: Client, token: str) -> dict:
    """Press Hint; the hint shown, checked against the hint_shown event it recorded."""
    page = client.page
    page.click("#hint")
    page.wait_for_selector("#hint-text:not(.refused)")
    shown = json.loads(page.get_attribute("#hint-text", "data-action"))
    recorded = api(client.base, "GET", f"/matches/{client.match_id}/events?after={client.version() - 1}", token=token)["events"]
    assert [e["type"] for e in recorded] == ["hint_shown"], recorded
    data = recorded[0]["data"]
    assert data["action"] == shown and data["seat"] == 0
    assert page.inner_text("#hint-reason") == data["reason"] and data["reason"]
    assert page.is_disabled("#hint")  # asked once for this turn
    return {"action": shown, "seq": recorded[0]["seq"]}


def follow_with_the_mouse(client: Client, action: dict) -> None:
    """Play the hint by what it marks on the table: a pile, Pass, or a card of the hand."""
    page = client.page
    version = page.get_attribute("#table", "data-version")
    kind = action["type"]
    if kind == "draw":
        target = "#stock" if action["source"] == "stock" else "#pile"
        assert page.locator(f"{target}.hinted .hint-tag").count() == 1
        assert page.locator(".pile.hinted").count() == 1 and "(the hint)" in page.get_attribute(target, "aria-label")
        page.click(target)
    elif kind == "pass":
        assert page.locator("#pass.hinted").count() == 1
        page.click("#pass")
    else:
        card = page.locator(f'#hand .card.hinted[data-card="{action["card"]}"]')
        assert card.count() == 1 and page.locator("#hand .card.hinted").count() == 1
        assert card.get_attribute("aria-label").endswith("(the hint)")
        client.click_card(action["card"])
        if kind == "discard":
            client.click_card(action["card"])
        else:
            client.end_hand(kind)
    client.wait_for_change(version)


@web
def test_a_person_asks_for_hints_against_the_computer_and_plays_them(client: Client):
    page = client.page
    match_id = client.new_match(preset="classic", single=True, opponent="computer", level="medium", names=("Ann", "Computer"))
    token = page.evaluate(f'JSON.parse(localStorage.getItem("gin-rummy.matches"))["{match_id}"].tokens[0]')
    view = api(client.base, "GET", f"/matches/{match_id}", token=token)
    assert view["rules"]["hints"] is True
    # Against the computer no rating is at stake: no note about it.
    assert page.is_visible("#hint") and page.locator("#hint-note").count() == 0

    # Twice by the mouse on what the hint marks, then by its own button (asked by key).
    followed = 0
    for _ in range(200):
        phase = client.phase()
        if phase == "result":
            break
        if phase == "defense":  # no hint for a defense: it is confirmed as suggested
            client.play_turn()
            continue
        if followed < 2:
            hint = ask_hint(client, token)
            assert "Hint: " in page.inner_text("#hint-text")
            follow_with_the_mouse(client, hint["action"])
        else:
            page.keyboard.press("h")
            page.wait_for_selector("#hint-text:not(.refused)")
            hint = {"action": json.loads(page.get_attribute("#hint-text", "data-action")), "seq": client.version()}
            version = page.get_attribute("#table", "data-version")
            page.click("#play-hint")
            client.wait_for_change(version)
        followed += 1
        assert played(client.base, match_id, token, hint["seq"]) == the_play(hint["action"])
        # Once played, the hint is gone, and nothing on the table is marked.
        assert page.locator("#hint-text, .hinted").count() == 0
    assert client.phase() == "result" and followed >= 3

    # Every play of Ann's followed a hint: the analysis finds nothing to fault in them.
    analysis = api(client.base, "GET", f"/matches/{match_id}/hands/1/analysis", token=token)
    assert analysis["counts"][0]["mistake"] == analysis["counts"][0]["blunder"] == 0
    assert analysis["accuracy"][0] == 100.0


@web
def test_a_refused_hint_says_why_and_no_hint_where_the_rules_have_none(client: Client):
    page = client.page
    # Two people on one device: the hint is asked, here, with the other seat's token.
    made = api(client.base, "POST", "/matches", {"rules": {"preset": "classic", "single_hand": True}, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    tokens = {s["seat"]: s["token"] for s in made["seats"]}
    client.keep_seat(made["id"], tokens, mode="hotseat")
    client.open(f"#/play/{made['id']}")
    page.click("#reveal")
    page.wait_for_selector("#hint")
    seat = int(page.get_attribute("#hand", "data-seat"))
    page.route(
        "**/hint",
        lambda route: route.continue_(headers={**route.request.headers, "authorization": f"Bearer {tokens[1 - seat]}"}),
    )
    page.click("#hint")
    refused = page.locator("#hint-text.refused")
    refused.wait_for()
    assert "not_your_turn" in refused.inner_text() and "no play to make now" in refused.inner_text()
    assert page.locator(".hinted, #play-hint").count() == 0
    page.unroute("**/hint")

    # Rules without hints: no Hint button at all.
    seats = [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]
    off = api(client.base, "POST", "/matches", {"rules": {"preset": "classic", "single_hand": True, "hints": False}, "seats": seats})
    client.keep_seat(off["id"], {0: off["seats"][0]["token"]}, mode="computer")
    client.open(f"#/play/{off['id']}")
    page.wait_for_selector("#hand .card")
    assert page.locator("#table[data-phase=draw], #table[data-phase=upcard_offer]").count() == 1
    assert page.locator("#hint, #coach").count() == 0


@web
def test_the_replay_marks_each_decision_as_the_analysis_classes_it(client: Client):
    page = client.page
    base = client.base
    seats = [{"name": "Ann"}, {"kind": "computer", "level": "easy", "name": "Computer"}]
    made = api(base, "POST", "/matches", {"rules": {"preset": "classic", "single_hand": True}, "seats": seats})
    match_id, token = made["id"], made["seats"][0]["token"]
    play_carelessly(base, match_id, token)
    analysis = api(base, "GET", f"/matches/{match_id}/hands/1/analysis", token=token)
    whole = api(base, "GET", f"/matches/{match_id}/analysis", token=token)
    assert any(analysis["counts"][0][c] for c in ("inaccuracy", "mistake", "blunder")), analysis["counts"]

    client.keep_seat(match_id, {0: token}, mode="computer", finished=True)
    client.open(f"#/replay/{match_id}/1")
    page.wait_for_selector("#replay-marks button.mark")

    # One mark per decision, of its class and seat, at the step of its event.
    for seat in (0, 1):
        for name, count in analysis["counts"][seat].items():
            assert page.locator(f'#replay-marks button.mark[data-seat="{seat}"][data-class="{name}"]').count() == count, (seat, name)
    detail = api(base, "GET", f"/matches/{match_id}/hands/1", token=token)
    step_of = {play["seq"]: i + 1 for i, play in enumerate(detail["plays"])}
    for d in analysis["decisions"]:
        assert page.get_attribute(f'#replay-marks [data-step="{step_of[d["seq"]]}"]', "data-class") == d["class"]

    # At a costly play: its badge, the better play and why.
    worst = max(analysis["decisions"], key=lambda d: d["cost"])
    page.click(f'#replay-marks [data-step="{step_of[worst["seq"]]}"]')
    verdict = page.inner_text("#replay-verdict")
    assert page.inner_text("#replay-verdict .class-badge") == worst["class"] != "good"
    assert "Better: " in verdict and worst["reason"] in verdict and f"{worst['cost']:.1f}" in verdict
    if worst["best"].get("card"):
        assert pretty(worst["best"]["card"]) in page.inner_text("#replay-verdict .better")
    page.keyboard.press("Home")  # the deal is no decision
    assert page.inner_text("#replay-verdict") == ""

    # Each seat's accuracy in the hand and in the match, as the API gives them.
    for seat in (0, 1):
        row = page.locator(f'#replay-accuracy tr[data-seat="{seat}"]')
        assert float(row.locator(".hand-accuracy b").inner_text()) == analysis["accuracy"][seat]
        assert float(row.locator(".match-accuracy b").inner_text()) == whole["accuracy"][seat]
    assert f"{analysis['counts'][0]['good']} good" in page.inner_text('#replay-accuracy tr[data-seat="0"]')

    # Where the service refuses the analysis, the replay is the same, without marks.
    page.route("**/analysis", lambda route: route.continue_(headers={**route.request.headers, "authorization": "Bearer not-a-token"}))
    with page.expect_response("**/hands/1/analysis") as refusal:
        page.reload()
    assert refusal.value.status == 401
    page.wait_for_selector("#replay-board")
    page.keyboard.press("End")
    assert page.locator("#replay-board .result").count() == 1
    assert page.is_hidden("#replay-marks") and page.is_hidden("#replay-accuracy")
