"""The reference web client on a touch phone (a 390x844 screen, touch, no mouse), where a
tester found it wanting: the card just drawn keeps its tag readable when a card of the
row below is raised, a touch screen is told to tap (and shown no keyboard help) while a
desktop is told to click, a fresh browser joins from the lobby with one tap, and the
invite link is the address the browser used even where the service is asked under
another Host (behind a proxy)."""

from __future__ import annotations

import re

import pytest

from .conftest import make_app
from .support import KNOCK_DEAL, Client, FixedDeals, api, operator_view, serving

web = pytest.mark.web

PHONE = {"width": 390, "height": 844}

#: Points of a box (x, y, width, height) that must show the element itself: its centre
#: and, inset past its rounded corners, the middle of each edge.
BOX_POINTS = """([x, y, w, h]) => [[x + w / 2, y + h / 2], [x + 4, y + h / 2], [x + w - 4, y + h / 2], [x + w / 2, y + 2], [x + w / 2, y + h - 2]]"""


def covered_points(client: Client, selector: str) -> list:
    """The points of the element's box where another element is on top of it."""
    return client.page.evaluate(
        f"""(sel) => {{
            const el = document.querySelector(sel);
            const r = el.getBoundingClientRect();
            return ({BOX_POINTS})([r.x, r.y, r.width, r.height])
                .filter(([x, y]) => {{ const top = document.elementFromPoint(x, y); return !(top && el.contains(top)); }})
                .map(([x, y]) => [x, y, document.elementFromPoint(x, y)?.outerHTML.slice(0, 80)]);
        }}""",
        selector,
    )


@web
def test_the_tag_of_the_card_just_drawn_stays_readable_above_a_raised_card_of_the_next_row(app, devices):
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(KNOCK_DEAL)
    phone = devices(PHONE, touch=True)
    page = phone.page
    phone.start_hotseat("classic", single=True)
    phone.draw("#stock")  # 2♣, just drawn
    page.tap("button.sort:text-is('Rank')")  # A 2 2 3 4 5 6 on the first row, 7 7 7 K below
    tag = page.locator("#hand .card.drawn .drawn-tag")
    box = tag.bounding_box()
    # The card of the second row under the tag: raised once selected, it reaches into it.
    below = page.locator("#hand .card").evaluate_all(
        """(cards, [x, bottom]) => cards.filter((c) => { const r = c.getBoundingClientRect();
               return r.top >= bottom - 10 && r.left <= x && x <= r.right; }).map((c) => c.dataset.card)""",
        [box["x"] + box["width"] / 2, box["y"] + box["height"]],
    )
    assert len(below) == 1, below
    page.tap(f'#hand [data-card="{below[0]}"]')
    page.wait_for_selector(f'#hand .card.selected[data-card="{below[0]}"]')
    page.wait_for_timeout(300)  # the raise is animated
    raised = page.locator(f'#hand [data-card="{below[0]}"]').bounding_box()
    box = tag.bounding_box()
    assert raised["y"] < box["y"] + box["height"], "the raised card reaches into the tag"
    assert tag.inner_text() == "just drawn"
    assert covered_points(phone, "#hand .card.drawn .drawn-tag") == []
    assert phone.overflow() <= 0


@web
def test_a_touch_screen_is_told_to_tap_and_shown_no_keyboard_help(app, devices):
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(KNOCK_DEAL, KNOCK_DEAL)
    for touch, word in ((True, "tap"), (False, "click")):
        person = devices(PHONE if touch else {"width": 1000, "height": 860}, touch=touch)
        page = person.page
        person.start_hotseat("upcard-offer", single=True)
        assert page.inner_text("#status") == f"Take the upcard 4♥ ({word} the pile) or pass."
        page.click("#pass")  # Ann passes; Bob is asked, then the table is Ann's again
        page.wait_for_selector("#cover")
        page.click("#reveal")
        page.click("#pass")
        page.wait_for_selector("#cover")
        page.click("#reveal")
        page.wait_for_selector("#table[data-phase=draw]")
        page.click("#hand .card >> nth=0")  # a card before drawing: the page says how to draw
        assert page.inner_text("#toast") == f"Draw first: {word} the stock or the discard pile."
        person.draw("#stock")
        assert page.inner_text("#status") == f"Choose a card to discard: {word} it once to select, again to discard."
        keys = page.locator("details.keys")
        if touch:
            assert keys.count() == 0 and "click" not in page.inner_text("main").lower()
        else:
            assert "S draw from the stock" in keys.text_content()


@web
def test_a_fresh_browser_joins_a_match_in_the_lobby_with_one_tap(devices, live_server):
    made = api(live_server, "POST", "/matches", {"seats": [{"name": "Ann"}, {"kind": "open"}], "public": True})
    cleo = devices(PHONE, touch=True)  # nothing saved: no name, no player
    cleo.open("#/lobby")
    join = cleo.page.locator(f'#lobby-list li[data-id="{made["id"]}"] button.join')
    join.tap()
    cleo.page.wait_for_selector("#hand .card")
    assert cleo.match_id == made["id"]
    # Under a name of its own, which the other player sees, and which is offered again.
    name = operator_view(live_server, made["id"])["seats"][1]["name"]
    assert re.fullmatch(r"Player \d{4}", name), name
    assert name in cleo.page.inner_text(".scorebar")
    cleo.open("#/lobby")
    assert cleo.page.input_value("#lobby-name") == name


def behind_a_proxy(app, host: str):
    """The app as a proxy in front of it asks it: under the Host of the proxy's upstream."""

    def wsgi(environ, start_response):
        environ["HTTP_HOST"] = host
        return app(environ, start_response)

    return wsgi


@web
def test_the_invite_link_is_the_address_the_browser_used(store, devices):
    with serving(behind_a_proxy(make_app(store), "localhost:8000")) as base:
        # The service, asked under "localhost", names it in its own link.
        asked = api(base, "POST", "/matches", {"seats": [{"name": "Zed"}, {"kind": "open"}]})
        assert asked["invite"]["url"].startswith("http://localhost:8000/#/join/")
        ann, bob = devices(), devices(PHONE, touch=True)
        ann.base = bob.base = base
        match_id = ann.new_match(opponent="friend", names=("Ann",))
        link = ann.page.input_value("#invite-url")
        assert re.fullmatch(rf"{re.escape(base)}/#/join/{match_id}/[\w-]+", link), link
        bob.page.goto(link)
        bob.page.fill("#join-name", "Bob")
        bob.page.tap("#join")
        bob.page.wait_for_selector("#hand .card")
        assert bob.match_id == match_id
        ann.page.wait_for_selector("#hand .card")


@web
def test_a_page_on_a_loopback_address_links_to_the_public_url(store, devices):
    with serving(make_app(store, PUBLIC_URL="https://gin.example.com/")) as base:
        ann = devices()
        ann.base = base
        match_id = ann.new_match(opponent="friend", names=("Ann",))
        # 127.0.0.1 is no address for a friend's device: the service's public one is.
        assert re.fullmatch(rf"https://gin\.example\.com/#/join/{match_id}/[\w-]+", ann.page.input_value("#invite-url"))


def test_the_services_invite_link_is_at_its_public_url_else_the_forwarded_host(store):
    def invite(app, **headers) -> str:
        answer = app.test_client().post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}, headers=headers)
        return answer.get_json()["invite"]["url"]

    forwarded = {"X-Forwarded-Host": "gin.example.com", "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    assert invite(make_app(store, PUBLIC_URL="https://play.example.org"), **forwarded).startswith("https://play.example.org/#/join/")
    assert invite(make_app(store, TRUSTED_PROXIES=1), **forwarded).startswith("https://gin.example.com/#/join/")
    assert invite(make_app(store), **forwarded).startswith("http://localhost/#/join/")  # no proxy trusted: ignored
