"""Driving the reference web client in headless Chromium (Playwright for Python).

Debian's ``chromium`` is used as is (``executable_path``); ``playwright install`` is
never needed.  The app runs in a real HTTP server on a free port, in a thread.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import random
import threading
import urllib.request
from collections.abc import Iterator

from werkzeug.serving import make_server

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
OPERATOR = "operator-secret-for-web-tests"
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)"
    return None


@contextlib.contextmanager
def serving(app) -> Iterator[str]:
    """Serve a Flask app on 127.0.0.1 and a free port; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="web-test-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class FixedDeals(random.Random):
    """A deal generator for the service (``MatchService.deal_rng``) that deals these decks
    in turn, then shuffles as usual: a test knows the cards.  A deal gives the starter
    ``deck[0:10]``, the other seat ``deck[10:20]``, turns up ``deck[20]``."""

    def __init__(self, *decks: list[str]):
        super().__init__("fixed deals")
        self.decks = [list(d) for d in decks]

    def shuffle(self, x) -> None:
        if self.decks:
            deck = self.decks.pop(0)
            assert sorted(deck) == sorted(x), "a fixed deck holds the 52 cards once each"
            x[:] = deck
        else:
            super().shuffle(x)


def full_deck(*cards: str) -> list[str]:
    """These cards first, then the rest of the deck in a fixed order."""
    from service.engine.cards import DECK

    return list(cards) + [c for c in DECK if c not in cards]


#: A deal where the starter (Ann) takes the upcard 4♥ and may knock discarding K♠:
#: 7♣ 7♦ 7♥ and 3♠ 4♠ 5♠ 6♠ leave A♣ 2♦ 4♥, 7 deadwood.  Bob holds 7♠, which fits both
#: of those melds (a fourth 7, or the run's next card), K♣ K♦ K♥ and 9♦ 10♦ J♦.
KNOCK_DEAL = full_deck(
    "3S", "4S", "5S", "6S", "7H", "7D", "7C", "AC", "2D", "KS",  # Ann, the starter
    "KC", "KD", "KH", "9D", "TD", "JD", "7S", "2H", "5C", "8C",  # Bob
    "4H",  # the upcard
)


def pretty(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUITS[card[1]]


def operator_view(base: str, match_id: str, seat: int = 0) -> dict:
    """The operator's view: a seat's view plus ``hidden`` (both hands and the stock)."""
    request = urllib.request.Request(
        f"{base}/matches/{match_id}?seat={seat}", headers={"Authorization": f"Bearer {OPERATOR}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def api(base: str, method: str, path: str, body=None, token: str | None = None) -> dict:
    """One API call from the test itself (not through a page); answers the JSON body."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def play_carelessly(base: str, match_id: str, token: str) -> None:
    """Seat ``token`` plays its match out through the API, carelessly (so that the coach
    finds fault): it takes nothing from the pile, never knocks, and breaks up a meld
    whenever it holds one."""
    for _ in range(200):
        view = api(base, "GET", f"/matches/{match_id}", token=token)
        if view["status"] == "finished":
            return
        legal = [a for a in view["legal_actions"] if a["type"] not in ("resign", "claim_timeout", "abort")]
        melded = {c for meld in view["melds"] for c in meld}
        pick = (
            next((a for a in legal if a["type"] in ("pass", "defend")), None)
            or next((a for a in legal if a.get("source") == "stock"), None)
            or next((a for a in legal if a["type"] == "discard" and a["card"] in melded), None)
            or next(a for a in legal if a["type"] == "discard")
        )
        api(base, "POST", f"/matches/{match_id}/actions", pick, token=token)
    raise AssertionError("the match did not end")


class Client:
    """One browser page on the reference client, and the moves a test makes with it."""

    def __init__(self, page, base: str):
        self.page, self.base = page, base
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.set_default_timeout(20_000)

    # --- screens -----------------------------------------------------------------------

    def open(self, route: str = "") -> None:
        self.page.goto(f"{self.base}/{route}")

    def new_match(
        self,
        *,
        preset="classic",
        single=True,
        opponent="computer",
        level="easy",
        names=("Ann", "Bob"),
        clock="none",
        public=False,
        starter=None,
    ) -> str:
        """A new match through the form; ``opponent="friend"`` ends on the invite page
        (``clock``: "none", "30" or "259200"; ``public``: listed in the lobby; ``starter``:
        who starts each hand of a match to the target, "alternate", "seat_0" or "loser")."""
        page = self.page
        self.open()
        page.wait_for_selector("#preset option", state="attached")
        page.select_option("#preset", preset)
        page.check(f"input[name=hands][value={'single' if single else 'match'}]")
        page.check(f"input[name=opponent][value={opponent}]")
        if opponent == "computer":
            page.select_option("#level", level)
        if starter is not None:
            page.select_option("#starter", starter)
        if page.is_visible("#name1"):  # a player plays under the player's name
            page.fill("#name1", names[0])
        if opponent == "friend":
            page.select_option("#clock", clock)
            page.set_checked("#public", public)
        else:
            page.fill("#name2", names[1])
        page.click("#start")
        page.wait_for_selector("#waiting" if opponent == "friend" else "#hand, #cover, #result")
        return self.match_id

    @property
    def match_id(self) -> str:
        return self.page.evaluate("location.hash").split("/")[2]

    def phase(self) -> str | None:
        if self.page.locator("#result").count():
            return "result"
        if self.page.locator("#cover").count():
            return "cover"
        return self.page.get_attribute("#table", "data-phase")

    def hand(self) -> list[str]:
        return self.page.locator("#hand .card").evaluate_all("els => els.map(e => e.dataset.card)")

    def shown_cards(self) -> set[str]:
        """Every card face anywhere on the page."""
        return set(self.page.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)"))

    def version(self) -> int:
        return int(self.page.get_attribute("#table", "data-version"))

    def my_turn(self) -> bool:
        """Whether this page's seat is to act (its own view: data-seat, data-turn)."""
        table = self.page.locator("#table")
        return table.get_attribute("data-turn") == table.get_attribute("data-seat") and not self.page.locator("#result").count()

    def wait_for_version(self, version: int, timeout: float = 20_000) -> None:
        """Until the page shows the match at ``version`` or later (through its stream)."""
        self.page.wait_for_function(
            "v => { const t = document.querySelector('#table'); return t && Number(t.dataset.version) >= v; }",
            arg=version,
            timeout=timeout,
        )

    def wait_for_change(self, version: str | None) -> None:
        self.page.wait_for_function(
            """(v) => document.querySelector('#result') || document.querySelector('#cover')
                   || (document.querySelector('#table') && document.querySelector('#table').dataset.version !== v
                       && !document.querySelector('#table').classList.contains('busy'))""",
            arg=version,
        )

    def start_hotseat(self, preset: str = "classic", single: bool = True) -> None:
        """A new match between Ann and Bob on this device, with Ann's hand revealed."""
        self.new_match(preset=preset, single=single, opponent="hotseat", names=("Ann", "Bob"))
        self.page.click("#reveal")
        self.page.wait_for_selector("#hand .card")

    def draw(self, source: str = "#stock") -> None:
        """Click the stock (or ``#pile``) and wait until the page shows the draw."""
        version = self.page.get_attribute("#table", "data-version")
        self.page.click(source)
        self.wait_for_change(version)

    def keep_seat(self, match_id: str, tokens: dict, **entry) -> None:
        """Give this browser seat tokens of a match made through the API, as the page
        keeps those it makes itself (saved.js)."""
        if not self.page.url.startswith(self.base):
            self.open("#/history")
        self.page.evaluate(
            """([id, entry]) => {
                const all = JSON.parse(localStorage.getItem("gin-rummy.matches") || "{}");
                all[id] = { created: new Date().toISOString(), resultSeen: 0, ...entry };
                localStorage.setItem("gin-rummy.matches", JSON.stringify(all));
            }""",
            [match_id, {"tokens": {str(k): v for k, v in tokens.items()}, **entry}],
        )

    def overflow(self) -> int:
        """How many pixels the page is wider than its viewport (0: it fits)."""
        return self.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")

    # --- moves ---------------------------------------------------------------------------

    def discard_choice(self) -> str:
        """The card a test discards: the highest unmelded card it may discard."""
        loose = self.page.locator("#hand .group.loose .card:not(.no-return)")
        card = loose.last if loose.count() else self.page.locator("#hand .card:not(.no-return)").last
        return card.get_attribute("data-card")

    def click_card(self, card: str) -> None:
        self.page.click(f'#hand [data-card="{card}"]')

    def end_hand(self, kind: str) -> None:
        """Press Knock or Gin (a card chosen); where the arrangement step opens, knock
        with the melds it suggests."""
        self.page.click(f"#{kind}")
        if self.page.locator("#arrange").count():
            self.page.click("#confirm-knock")

    def play_turn(self) -> None:
        """One legal move through the page: pass the upcard, draw from the stock, knock or
        go Gin when the page allows it, otherwise discard; confirm a defense."""
        page = self.page
        phase = self.phase()
        version = page.get_attribute("#table", "data-version")
        if phase == "upcard_offer":
            page.click("#pass")
        elif phase == "draw":
            page.click("#stock")
        elif phase == "defense":
            page.click("#confirm-defense")
        elif phase == "discard":
            enders = page.locator("#hand .card.can-end")
            if enders.count():
                self.click_card(enders.first.get_attribute("data-card"))
                self.end_hand("gin" if page.locator("#gin:not([disabled])").count() else "knock")
            else:
                card = self.discard_choice()
                self.click_card(card)  # select
                self.click_card(card)  # and discard
        else:
            raise AssertionError(f"no move to make in phase {phase!r}")
        self.wait_for_change(version)
