"""The reference web client, end to end in headless Chromium.

A person's path through the page: a single hand against the computer played with the
mouse and the keyboard, resumed after a reload, replayed event by event, exported and
imported into another service; and a hand between two people on one device, where a
hand is never on screen while the other player holds the device.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from service.application.records import home_of

from .support import Client, operator_view, pretty

web = pytest.mark.web

#: Enough turns to finish any hand (31 stock cards).
MAX_MOVES = 200



def assert_points_shown(page, last_hand: dict) -> None:
    """The result names the hand's points; a dead hand (the stock ran down) says nobody scores."""
    shown = page.inner_text("#result .points")
    if last_hand["result"] == "dead":
        assert last_hand["points"] == 0 and "nobody scores" in shown, shown
    else:
        assert str(last_hand["points"]) in shown, shown

def test_the_page_and_its_modules_are_served_with_their_types(live_server):
    with urllib.request.urlopen(f"{live_server}/") as page:
        assert page.headers.get_content_type() == "text/html" and b'src="/web/app.js"' in page.read()
    for name, kind in [("app.js", "text/javascript"), ("table.js", "text/javascript"), ("style.css", "text/css")]:
        with urllib.request.urlopen(f"{live_server}/web/{name}") as response:
            assert response.headers.get_content_type() == kind
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{live_server}/web/__init__.py")  # the package's Python is not served
    assert missing.value.code == 404


def test_the_client_routes_are_not_api_operations(app):
    from service.api.openapi import spec_dict

    paths = spec_dict(app)["paths"]
    assert "/" not in paths and not any(p == "/web" or p.startswith("/web/") for p in paths)


@web
def test_a_single_hand_against_the_computer_replayed_exported_and_imported(client: Client, context, other_server):
    page = client.page
    match_id = client.new_match(preset="classic", opponent="computer", level="easy", names=("Ann", "Computer"))
    assert client.phase() == "draw" and len(client.hand()) == 10
    assert page.inner_text("#deadwood-value") == str(operator_view(client.base, match_id)["deadwood"])

    # A second tab on the same match follows it live, through the event stream.
    watcher = context.new_page()
    watcher.goto(f"{client.base}/#/play/{match_id}")
    watcher.wait_for_selector("#hand .card")

    # The first turn: take the upcard (the no-return rule shows on it), then discard by keyboard.
    upcard = page.get_attribute("#pile .card", "data-card")
    version = page.get_attribute("#table", "data-version")
    page.click("#pile")
    client.wait_for_change(version)
    now = page.get_attribute("#table", "data-version")
    watcher.wait_for_function("v => document.querySelector('#table').dataset.version === v", arg=now)
    assert watcher.locator(f'#hand [data-card="{upcard}"].no-return').count() == 1
    watcher.close()
    taken = page.locator(f'#hand [data-card="{upcard}"]')
    assert "no-return" in taken.get_attribute("class") and taken.get_attribute("aria-disabled") == "true"
    assert "cannot go back" in page.inner_text("#status")
    assert page.locator("#hand .lock").count() == 1
    taken.click(force=True)  # aria-disabled: refused by the page, with the reason
    assert page.locator(f'#hand [data-card="{upcard}"]').count() == 1
    assert "cannot be discarded" in page.inner_text("#toast")

    # Reload: the match resumes where it was (the token is kept by the browser).
    hand = sorted(client.hand())
    page.reload()
    page.wait_for_selector("#hand .card")
    assert client.match_id == match_id and sorted(client.hand()) == hand and client.phase() == "discard"

    choice = client.discard_choice()
    page.focus(f'#hand [data-card="{choice}"]')
    version = page.get_attribute("#table", "data-version")
    page.keyboard.press("Enter")  # select
    assert page.get_attribute(f'#hand [data-card="{choice}"]', "aria-pressed") == "true"
    assert pretty(choice) in page.inner_text("#preview")  # the deadwood after this discard, live
    page.keyboard.press("Enter")  # discard
    client.wait_for_change(version)
    assert choice not in client.hand()

    # The computer answers within the same request; play until the hand is scored.
    for _ in range(MAX_MOVES):
        if client.phase() == "result":
            break
        assert page.is_disabled("#knock") or page.locator("#hand .card.selected").count()
        client.play_turn()
    assert client.phase() == "result"

    truth = operator_view(client.base, match_id)
    last = truth["last_hand"]
    result = page.inner_text("#result")
    assert truth["status"] == "finished" and "Match over" in result
    assert_points_shown(page, last)
    if last["result"] != "dead":
        assert page.locator("#result .side").count() == 2  # both arrangements
        for card in last["knock"]["melds"][0]:
            assert page.locator(f'#result .side:first-child [data-card="{card}"]').count() == 1
    scores = page.locator(".scorebar .score").all_inner_texts()
    assert scores == [str(s) for s in truth["scores"]]

    # The replay viewer steps through the hand event by event.
    page.click("#replay-link")
    page.wait_for_selector("#replay-board")
    detail_plays = page.evaluate(
        f"""async () => {{
            const token = JSON.parse(localStorage.getItem("gin-rummy.matches"))["{match_id}"].tokens[0];
            const r = await fetch("/matches/{match_id}/hands/1", {{headers: {{Authorization: "Bearer " + token}}}});
            return (await r.json()).plays;
        }}"""
    )
    last_step = len(detail_plays) + (1 if last["defense"] else 0) + 1  # the deal is step 0; the score last
    assert page.inner_text("#replay-step") == f"0 / {last_step}"
    assert "dealt" in page.inner_text("#replay-caption")
    captions = []
    for _ in range(len(detail_plays)):
        page.click("#replay-next")
        captions.append(page.inner_text("#replay-caption"))
    first = detail_plays[0]
    assert first == {"seq": first["seq"], "seat": 0, "action": "draw", "source": "discard", "card": upcard}
    assert captions[0] == f"Ann takes {pretty(upcard)} from the discard pile."
    page.keyboard.press("End")
    assert page.locator("#replay-board .result").count() == 1
    final_title = page.inner_text("#replay-board .result-title")
    page.keyboard.press("ArrowLeft")
    assert page.locator("#replay-board .result").count() == 0
    assert page.inner_text("#replay-step") == f"{last_step - 1} / {last_step}"

    # Export the record to a file from the history.
    page.click("#nav-history")
    row = page.locator(f'#history-list li[data-id="{match_id}"]')
    row.wait_for()
    assert "Ann won" in row.inner_text() or "Computer won" in row.inner_text() or "finished" in row.inner_text()
    with page.expect_download() as download:
        row.locator("button.export").click()
    path = download.value.path()
    record = json.loads(Path(path).read_text())
    assert download.value.suggested_filename == f"gin-rummy-{match_id}.json"
    assert record["format"] == "gin-rummy-match-record" and record["match_id"] == match_id

    # Import it into another service, from a browser that has never seen the match.
    other = Client(context.new_page(), other_server)
    other.open("#/history")
    other.page.wait_for_selector("#history-status")
    other.page.set_input_files("#import-file", path)
    # That service does not know this one's key: the record gets an id of its own there.
    home = home_of(uuid.UUID(match_id), record["digest"]["value"], verified=False)
    imported = other.page.locator(f'#history-list li[data-id="{home}"]')
    imported.wait_for()
    assert "imported" in imported.inner_text()
    imported.locator("a.replay").click()
    other.page.wait_for_selector("#replay-board")
    other.page.keyboard.press("End")
    assert other.page.inner_text("#replay-board .result-title") == final_title
    assert not other.errors, other.errors
    other.page.close()


@web
def test_two_people_on_one_device_never_see_each_others_hand(client: Client):
    page = client.page
    match_id = client.new_match(preset="bonus-20-10", single=True, opponent="hotseat", names=("Ann", "Bob"))

    def check_secrecy(revealed: int | None) -> None:
        """No card of a hand not revealed is on the page, unless its owner took it from
        the discard pile or laid it out knocking (then both players saw it)."""
        on_page = client.shown_cards()
        for seat in (0, 1):
            if seat == revealed:
                continue
            truth = operator_view(client.base, match_id, seat=1 - seat)
            public = set(truth["opponent"]["known_cards"])
            if truth["knock"] and truth["knock"]["seat"] == seat:
                public |= {c for meld in truth["knock"]["melds"] for c in meld} | set(truth["knock"]["deadwood_cards"])
            hidden = set(truth["hidden"]["hands"][seat]) - public
            assert not on_page & hidden, f"{sorted(on_page & hidden)} of seat {seat} shown while seat {revealed} plays"

    reloaded = False
    reveals = 0
    for _ in range(MAX_MOVES):
        phase = client.phase()
        if phase == "result":
            break
        if phase == "cover":
            assert page.locator("#hand").count() == 0
            check_secrecy(None)
            to_act = int(page.get_attribute("#cover", "data-next"))
            assert operator_view(client.base, match_id)["turn"] == to_act
            assert f"Pass the device to {('Ann', 'Bob')[to_act]}" in page.inner_text("#cover")
            page.click("#reveal")
            page.wait_for_selector("#hand .card, #defense .card")  # a defense lays out the hand in its step
            reveals += 1
            assert int(page.get_attribute("#table", "data-seat")) == to_act
            if client.phase() != "defense":
                assert sorted(client.hand()) == sorted(operator_view(client.base, match_id)["hidden"]["hands"][to_act])
            check_secrecy(to_act)
            if not reloaded and reveals == 3:
                # A reload never shows a hand without a new reveal.
                page.reload()
                page.wait_for_selector("#cover")
                assert page.locator("#hand").count() == 0
                reloaded = True
            continue
        seat = int(page.get_attribute("#table", "data-seat"))
        check_secrecy(seat)
        client.play_turn()
    assert client.phase() == "result" and reveals >= 2 and reloaded

    truth = operator_view(client.base, match_id)
    assert truth["status"] == "finished"
    assert_points_shown(page, truth["last_hand"])


@web
def test_who_starts_each_hand_is_a_match_option(client: Client):
    page = client.page
    client.open()
    page.wait_for_selector("#preset option", state="attached")
    page.check("input[name=hands][value=single]")
    assert page.is_disabled("#starter")  # one hand: the first player starts it
    page.check("input[name=hands][value=match]")
    assert page.is_enabled("#starter")
    labels = page.locator("#starter option").evaluate_all("els => els.map(e => [e.value, e.textContent])")
    assert [value for value, _ in labels] == ["alternate", "seat_0", "loser"]
    match_id = client.new_match(single=False, starter="loser")
    assert operator_view(client.base, match_id)["rules"]["starter"] == "loser"
    client.open()
    page.wait_for_selector("#preset option", state="attached")
    assert page.input_value("#starter") == "loser"  # the choice is remembered
    match_id = client.new_match(single=False, starter="alternate")
    assert operator_view(client.base, match_id)["rules"]["starter"] == "alternate"
