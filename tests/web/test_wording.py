"""What the reference web client says, where it once said it badly: a computer's level
named once, a refused import as one plain sentence, the card just drawn explained, and
the score bar naming the hand whose result is on screen."""

from __future__ import annotations

import copy
import json
import uuid

import pytest

from service.records.format import digest_of

from .support import KNOCK_DEAL, Client, FixedDeals, api

web = pytest.mark.web


def hotseat_knock(base: str) -> tuple[str, dict]:
    """A single hand between Ann and Bob (through the API): Ann takes the upcard and
    knocks discarding K♠.  Answers the match id and the seat tokens."""
    made = api(base, "POST", "/matches", {"rules": {"preset": "classic", "single_hand": True}, "seats": [{"name": "Ann"}, {"name": "Bob"}]})
    tokens = {s["seat"]: s["token"] for s in made["seats"]}
    for action in ({"type": "draw", "source": "discard"}, {"type": "knock", "card": "KS"}):
        api(base, "POST", f"/matches/{made['id']}/actions", action, token=tokens[0])
    return made["id"], tokens


@web
def test_the_history_names_a_computers_level_once(client: Client):
    for seat in ({"kind": "computer", "level": "hard"}, {"kind": "computer", "level": "easy", "name": "Robo"}):
        made = api(client.base, "POST", "/matches", {"rules": {"preset": "classic"}, "seats": [{"name": "Ann"}, seat]})
        client.keep_seat(made["id"], {0: made["seats"][0]["token"]}, mode="computer")
    client.page.reload()  # the history, read again with the seat tokens kept
    client.page.wait_for_selector("#history-list li.match")
    labels = client.page.locator("#history-list .what b").all_inner_texts()
    assert sorted(labels) == ["Ann vs Computer (hard)", "Ann vs Robo (easy)"], labels


@web
def test_a_refused_import_says_why_in_one_plain_sentence(app, client: Client, tmp_path):
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(KNOCK_DEAL)
    match_id, tokens = hotseat_knock(client.base)
    record = api(client.base, "GET", f"/matches/{match_id}/export", token=tokens[0])
    assert record["events"][3]["type"] == "knocked"

    def refused(change) -> str:
        forged = copy.deepcopy(record)
        forged["match_id"] = str(uuid.uuid4())
        del forged["signature"]
        change(forged["events"][3])
        forged["digest"]["value"] = digest_of(forged["events"])
        path = tmp_path / f"{forged['match_id']}.json"
        path.write_text(json.dumps(forged))
        client.page.evaluate("document.getElementById('toast').hidden = true")
        client.page.set_input_files("#import-file", str(path))
        toast = client.page.locator("#toast.error:not([hidden])")
        toast.wait_for()
        return toast.inner_text()

    client.open("#/history")
    client.page.wait_for_selector("#history-status")
    # Not one of the event types: the types are listed as words, not as a Python list.
    said = refused(lambda e: e.update(type="bogus"))
    assert said.startswith("Import refused: the record does not match its schema at events/3/type: bogus is not one of "), said
    assert "match_started, seat_joined" in said
    # A knock of a card Ann does not hold: her hand as cards, the event named once.
    said = refused(lambda e: e["data"].update(card="QH"))
    assert said.startswith("Import refused: events[3] (seq 4): knocked: QH is not in seat 0's hand (2D 3S "), said
    assert said.endswith("(card_not_in_hand)"), said
    for text in (said, refused(lambda e: e.update(type="bogus"))):
        assert "[" not in text.replace("events[3]", "") and "'" not in text.replace("seat 0's", ""), text
        assert "(event" not in text and text.count("events[3]") + text.count("events/3") == 1, text


@web
def test_the_card_just_drawn_is_explained(app, client: Client):
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(KNOCK_DEAL)
    page = client.page
    client.start_hotseat("classic", single=True)
    client.draw("#stock")
    drawn = page.locator("#hand .card.drawn")
    assert drawn.count() == 1 and drawn.get_attribute("data-card") == KNOCK_DEAL[21]  # the stock's top card
    assert drawn.get_attribute("aria-label") == "2 of clubs, just drawn"
    assert drawn.get_attribute("title") == "The card you just drew"
    assert drawn.locator(".drawn-tag").inner_text() == "just drawn"
    assert page.locator("#hand .drawn-tag").count() == 1


@web
def test_the_score_bar_names_the_hand_whose_result_is_shown(app, client: Client):
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(KNOCK_DEAL)
    page = client.page
    client.start_hotseat("classic", single=False)
    assert page.inner_text("#score-meta").endswith("· hand 1")
    client.draw("#pile")
    client.click_card("KS")
    page.click("#knock")  # one arrangement of the least deadwood: no step
    page.wait_for_selector("#result")
    # Hand 2 is dealt already; the bar is about hand 1 while its result is on screen.
    assert page.inner_text("#score-meta").endswith("· after hand 1")
    assert page.locator(".scorebar .player.to-act").count() == 0
    page.click("#next-hand")
    page.wait_for_selector("#cover")
    assert page.inner_text("#score-meta").endswith("· hand 2")
