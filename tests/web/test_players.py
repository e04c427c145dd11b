"""Players in the reference web client.

A person continues as a guest (a name: a player token kept in the browser) and plays;
on a second device (a browser context of its own) they open the secret link the
profile shows on request, and continue the same match there, live on both.  My games
marks the games waiting for the player's move, and the header counts them.  Two guests
play a rated match (a move each, then one resigns): both profiles show the Glicko-2
ratings.  The leaderboard leaves out two players with five rated matches, still
provisional, and says what a listed player needs (made through the API, to save time).  A name with a control character is refused with the service's message.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from .support import Client, api

web = pytest.mark.web

PHONE = {"width": 390, "height": 844}


def become_guest(client: Client, name: str) -> None:
    """Through the header's "Continue as a guest"."""
    client.open("#/")
    client.page.click("#nav-player")
    client.page.fill("#guest-name", name)
    client.page.click("#guest-start")
    client.page.wait_for_selector("#stat-rating")


def secret_link(client: Client) -> str:
    """The profile's "Use on another device" link (shown only on request)."""
    page = client.page
    page.click("#nav-player")
    page.wait_for_selector("#show-device")
    assert page.locator("#device-link").count() == 0
    page.click("#show-device")
    return page.input_value("#device-link")


def use_link(client: Client, link: str) -> None:
    """Open a player's secret link on this device and accept it."""
    client.page.goto(link)
    client.page.click("#signin-confirm")
    client.page.wait_for_selector("#games")


def chip(client: Client) -> str:
    """The header's player part: the player's name, or the way to become one."""
    name = client.page.locator("#nav-player .name")
    return name.inner_text() if name.count() else client.page.inner_text("#nav-player")


def stored(client: Client, key: str):
    return client.page.evaluate("k => JSON.parse(localStorage.getItem(k))", key)


def pass_the_turn(base: str, match_id: str, token: str) -> None:
    """The player whose token it is plays until it is the other seat's turn."""
    view = api(base, "GET", f"/matches/{match_id}", token=token)
    while view["turn"] == view["seat"]:
        legal = [a for a in view["legal_actions"] if a["type"] in ("pass", "draw", "discard")]
        action = next((a for a in legal if a["type"] == "pass"), None) or next(
            (a for a in legal if a.get("source") == "stock"), legal[-1]
        )
        view = api(base, "POST", f"/matches/{match_id}/actions", action, token=token)["view"]


def a_move_each(base: str, match_id: str, first: str, second: str) -> None:
    """The seat to act plays until it is the other's turn, then the other does: each seat
    has made a move of its own, so the match is rated however it ends."""
    view = api(base, "GET", f"/matches/{match_id}", token=first)
    mover, other = (first, second) if view["turn"] == view["seat"] else (second, first)
    pass_the_turn(base, match_id, mover)
    pass_the_turn(base, match_id, other)


def rated(base: str, player_id: str, matches: int, timeout: float = 30) -> dict:
    """The player's public profile once the service has folded ``matches`` rated matches.

    The service folds a match's end into the ratings only once every transaction older
    than it has ended, on the whole PostgreSQL server (pg_snapshot_xmin): while another
    database of the server holds one open, a profile lags behind.  A person would
    reload the page; the test asks the API until it is there, then checks the page.
    """
    deadline = time.monotonic() + timeout
    while True:
        profile = api(base, "GET", f"/players/{player_id}")
        if profile["matches"] >= matches or time.monotonic() > deadline:
            assert profile["matches"] == matches, profile
            return profile
        time.sleep(0.1)


def versus(base: str, maker: dict, joiner: dict, **rules) -> str:
    """A single hand between two players: ``maker`` makes it, ``joiner`` takes the open seat."""
    body = {"rules": {"preset": "classic", **rules}, "single_hand": True, "seats": [{"kind": "human"}, {"kind": "open"}]}
    made = api(base, "POST", "/matches", body, token=maker["token"])
    api(base, "POST", f"/matches/{made['id']}/join", {"code": made["invite"]["code"]}, token=joiner["token"])
    return made["id"]


@web
def test_a_guest_plays_and_continues_the_same_match_on_another_device(devices):
    ann = devices()
    ann.open("#/")
    assert chip(ann) == "Continue as a guest"
    assert not ann.page.is_visible("#nav-games")
    become_guest(ann, "Ann")
    player = stored(ann, "gin-rummy.player")
    assert player["name"] == "Ann" and player["token"].startswith("gp1.")
    assert chip(ann) == "Ann" and ann.page.is_visible("#nav-games")
    assert ann.page.inner_text("#stat-rating") == "1500" and ann.page.inner_text("#stat-deviation") == "± 350"
    assert player["token"] not in ann.page.content()  # no secret on screen unasked

    # A match against the computer, made with the player token: this browser keeps no
    # seat token of it, and the seat is the player's.
    match_id = ann.new_match(opponent="computer", level="easy", names=("Ann", "Computer"))
    entry = stored(ann, "gin-rummy.matches")[match_id]
    assert entry["player"] == player["id"] and "tokens" not in entry
    view = api(ann.base, "GET", f"/matches/{match_id}", token=player["token"])
    assert view["seats"][0]["player"] == player["id"] and view["seats"][0]["name"] == "Ann"
    ann.play_turn()

    # The secret link, shown on request, marked secret, hidden again.
    link = secret_link(ann)
    assert link == f"{ann.base}/#/signin/{player['token']}"
    assert "Secret" in ann.page.inner_text("#device-secret")
    ann.page.click("#show-device")
    assert ann.page.locator("#device-link").count() == 0

    # The same person's phone: the link signs it in (and leaves the address bar).
    phone = devices(PHONE)
    phone.page.goto(link)
    phone.page.wait_for_selector("#signin-confirm")
    assert "Play as Ann" in phone.page.inner_text("#signin")
    assert player["token"] not in phone.page.url
    phone.page.click("#signin-confirm")
    phone.page.wait_for_selector(f'#games-playing li[data-id="{match_id}"]')
    assert chip(phone) == "Ann"
    assert phone.overflow() <= 0

    # The desktop follows the table while the phone plays on from My games.
    ann.open(f"#/play/{match_id}")
    ann.page.wait_for_selector("#hand .card")
    phone.page.click(f'#games-playing li[data-id="{match_id}"] .open-game')
    phone.page.wait_for_selector("#hand .card")
    assert phone.version() == ann.version() and phone.hand() == ann.hand()
    phone.play_turn()
    ann.wait_for_version(phone.version(), timeout=2_000)
    assert phone.overflow() <= 0

    # Signing out forgets the player (and what was kept of its matches) on the phone.
    phone.page.click("#nav-player")
    phone.page.click("#sign-out")
    phone.page.click("#confirm-sign-out")
    phone.page.wait_for_selector("#guest-form")
    assert chip(phone) == "Continue as a guest"
    assert stored(phone, "gin-rummy.player") is None
    assert match_id not in (stored(phone, "gin-rummy.matches") or {})
    phone.open(f"#/play/{match_id}")
    phone.page.wait_for_selector("#not-yours")

    # Back, by pasting the link (a password field: not shown) on the guest page.
    phone.page.click("#nav-player")
    phone.page.fill("#signin-token", link.replace(player["token"], player["token"][:-4] + "AAAA"))
    phone.page.click("#signin-start")
    assert "not valid" in phone.page.locator("#signin-error:not([hidden])").inner_text()
    phone.page.fill("#signin-token", f"  {link} ")
    phone.page.click("#signin-start")
    phone.page.wait_for_selector(f'#games-playing li[data-id="{match_id}"]')
    assert chip(phone) == "Ann" and stored(phone, "gin-rummy.player")["token"] == player["token"]


@web
def test_my_games_badges_the_games_waiting_for_the_players_move(devices, live_server):
    ann = api(live_server, "POST", "/players", {"name": "Ann"})
    bob = api(live_server, "POST", "/players", {"name": "Bob"})
    mine = versus(live_server, ann, bob, turn_seconds=259200)  # Ann starts, under a 3-day clock
    theirs = versus(live_server, bob, ann)  # Bob starts
    over = versus(live_server, ann, bob)
    api(live_server, "POST", f"/matches/{over}/actions", {"type": "resign"}, token=bob["token"])
    waiting = api(live_server, "POST", "/matches", {"seats": [{"kind": "human"}, {"kind": "open"}]}, token=ann["token"])["id"]

    client = devices()
    client.page.clock.install()  # to move the 15 s refresh on
    use_link(client, f"{live_server}/#/signin/{ann['token']}")
    page = client.page
    page.wait_for_selector(f'#games-playing li[data-id="{mine}"]')
    rows = page.locator("#games-playing li").evaluate_all("els => els.map(e => e.dataset.id)")
    assert rows == [mine, theirs, waiting]  # being played (Ann's move first, then newest first), then waiting
    assert page.locator("#games-finished li").evaluate_all("els => els.map(e => e.dataset.id)") == [over]

    def row(match_id):
        return page.locator(f'li[data-id="{match_id}"]')

    assert row(mine).locator(".turn-badge").inner_text() == "Your turn"
    assert re.search(r"your move ·\s*(2 days 23 h|3 days 0 h) left to move", row(mine).inner_text())
    assert row(theirs).locator(".turn-badge").count() == 0 and "Bob's move" in row(theirs).inner_text()
    assert "waiting for a player to join" in row(waiting).inner_text()
    assert "Bob resigned: you won" in row(over).inner_text()
    assert page.text_content("#games-count") == "1 waiting for you"
    assert page.get_attribute(f'li[data-id="{mine}"] a[href^="#/players/"]', "href") == f"#/players/{bob['id']}"

    # Ann plays her turn at the table: back in My games, that game has no badge.
    row(mine).locator(".open-game").click()
    page.wait_for_selector("#hand .card")
    while client.my_turn():
        client.play_turn()
    page.click("#nav-games")
    page.wait_for_selector(f'li[data-id="{mine}"]')
    assert row(mine).locator(".turn-badge").count() == 0 and "Bob's move" in row(mine).inner_text()
    page.wait_for_selector("#games-count", state="hidden")

    # Bob plays in the other game on his own device; the page asks again 15 s later.
    pass_the_turn(live_server, theirs, bob["token"])
    assert row(theirs).locator(".turn-badge").count() == 0
    page.clock.run_for(15_500)
    row(theirs).locator(".turn-badge").wait_for()
    assert page.text_content("#games-count") == "1 waiting for you"

    # In pages: 20 games, then "More".
    for _ in range(18):
        made = api(live_server, "POST", "/matches", {"seats": [{"kind": "human"}, {"kind": "open"}]}, token=ann["token"])
        api(live_server, "POST", f"/matches/{made['id']}/actions", {"type": "abort"}, token=ann["token"])
    page.click("#games-refresh")
    page.wait_for_function("() => document.querySelectorAll('li.game').length === 20")
    page.click("#games-more")
    page.wait_for_function("() => document.querySelectorAll('li.game').length === 22")
    assert page.is_hidden("#games-more")
    assert row(over).count() == 1


@web
def test_two_guests_play_a_rated_match_and_their_profiles_show_the_ratings(devices):
    ann = devices()
    bob = devices(PHONE)
    become_guest(ann, "Ann")
    become_guest(bob, "Bob")
    match_id = ann.new_match(opponent="friend", names=("Ann",))
    bob.page.goto(ann.page.input_value("#invite-url"))
    bob.page.wait_for_selector("#join")  # once the page knows Bob holds no seat of it
    assert "You join as Bob" in bob.page.inner_text("#join-as")
    bob.page.click("#join")
    bob.page.wait_for_selector("#hand .card")
    ann.page.wait_for_selector("#hand .card", timeout=3_000)
    assert "Bob" in ann.page.inner_text(".scorebar")
    # Each plays a move first (through the API, with the player tokens the browsers keep):
    # a match resigned before one of its seats moved is not rated.
    a_move_each(ann.base, match_id, stored(ann, "gin-rummy.player")["token"], stored(bob, "gin-rummy.player")["token"])

    bob.page.click("#resign")
    bob.page.click("#confirm-resign")
    bob.page.wait_for_selector("#result[data-reason=resigned]")
    ann.page.wait_for_selector("#result[data-reason=resigned]", timeout=2_000)
    for client in (ann, bob):
        rated(client.base, stored(client, "gin-rummy.player")["id"], 1)

    # Glicko-2 from 1500/350, one game: 1662 for the winner, 1338 for the loser.
    ann.page.click("#nav-player")
    ann.page.wait_for_function("() => document.querySelector('#stat-matches')?.textContent === '1'")
    assert [ann.page.inner_text(f"#stat-{k}") for k in ("rating", "deviation", "matches", "wins")] == ["1662", "± 290", "1", "1"]
    bob.page.click("#nav-player")
    bob.page.wait_for_function("() => document.querySelector('#stat-matches')?.textContent === '1'")
    assert [bob.page.inner_text(f"#stat-{k}") for k in ("rating", "matches", "wins")] == ["1338", "1", "0"]
    assert bob.overflow() <= 0

    # Ann's My games links the opponent to his public profile.
    ann.page.click("#nav-games")
    ann.page.click(f'li[data-id="{match_id}"] a.opponent-link')
    ann.page.wait_for_selector("#player-stats")
    assert ann.page.inner_text("#player-name") == "Bob" and ann.page.inner_text("#stat-rating") == "1338"

    # The rematch, between the players: Bob asks first, Ann's finished table says so.
    ann.open(f"#/play/{match_id}")
    ann.page.wait_for_selector("#result")
    bob.open(f"#/play/{match_id}")
    bob.page.click("#rematch")
    bob.page.wait_for_function("old => !location.hash.includes(old)", arg=match_id)
    bob.page.wait_for_selector("#hand .card")
    ann.page.wait_for_function("() => document.querySelector('#rematch')?.textContent === 'Join the rematch'", timeout=8_000)
    ann.page.click("#rematch")
    ann.page.wait_for_function("old => !location.hash.includes(old)", arg=match_id)
    ann.page.wait_for_selector("#hand .card")
    assert ann.match_id == bob.match_id
    assert "tokens" not in stored(ann, "gin-rummy.matches")[ann.match_id]


@web
def test_the_leaderboard_says_who_is_listed_and_leaves_out_provisional_ratings(devices, live_server):
    """Cleo and Dev play 5 rated matches: both are still provisional (deviation above
    110), so neither is listed; the page says what a listed player needs.  (The listing
    itself, of established players, is tests/api/test_ratings.py's.)"""
    client = devices()
    page = client.page
    cleo = api(live_server, "POST", "/players", {"name": "Cleo"})
    dev = api(live_server, "POST", "/players", {"name": "Dev"})
    for game in range(5):
        match_id = versus(live_server, cleo, dev)
        a_move_each(live_server, match_id, cleo["token"], dev["token"])
        loser = cleo if game == 2 else dev
        api(live_server, "POST", f"/matches/{match_id}/actions", {"type": "resign"}, token=loser["token"])
    truth = {p["id"]: rated(live_server, p["id"], 5) for p in (cleo, dev)}
    assert [truth[p["id"]]["established"] for p in (cleo, dev)] == [False, False]
    assert all(truth[p["id"]]["deviation"] > 110 for p in (cleo, dev))
    client.open("#/leaderboard")
    board = api(live_server, "GET", "/leaderboard")
    assert not {cleo["id"], dev["id"]} & {e["id"] for e in board["items"]}
    if not board["items"]:  # no other test made an established player
        page.wait_for_selector("#leaderboard-status:has-text('at least 5 rated matches')")
        assert page.is_hidden("#leaderboard")
        status = page.inner_text("#leaderboard-status")
        assert "deviation at most 110" in status and "at least 3 different established opponents" in status
    else:
        page.wait_for_selector("#leaderboard-rows tr")
        assert page.locator(f'#leaderboard-rows tr[data-id="{cleo["id"]}"]').count() == 0
        assert "at least 3 different established opponents" in page.inner_text("#leaderboard-note")


@web
def test_a_name_with_a_control_character_is_refused_with_the_services_message(devices):
    client = devices(PHONE)
    page = client.page
    client.open("#/profile")
    page.fill("#guest-name", "Ann\x07")
    page.click("#guest-start")
    page.wait_for_selector("#guest-error")
    assert page.inner_text("#guest-error") == "A name holds no control or formatting characters."
    assert stored(client, "gin-rummy.player") is None
    become_guest(client, "Ann")

    page.fill("#rename-name", "An\x1b[31mn")
    page.click("#rename")
    page.wait_for_selector("#rename-error")
    assert page.inner_text("#rename-error") == "A name holds no control or formatting characters."
    assert chip(client) == "Ann"
    page.fill("#rename-name", "  Annie  ")
    page.click("#rename")
    page.wait_for_function("() => document.querySelector('#nav-player .name')?.textContent === 'Annie'")
    assert page.is_hidden("#rename-error") and page.inner_text("#profile-name") == "Annie"
    assert stored(client, "gin-rummy.player")["name"] == "Annie"
    assert client.overflow() <= 0


@web
def test_a_guest_downloads_their_data_then_deletes_the_player_and_the_opponent_sees_a_deleted_player(devices):
    ann, bob = devices(), devices()
    become_guest(ann, "Quorra")
    become_guest(bob, "Bob")
    match_id = ann.new_match(opponent="friend", names=("Quorra",))
    bob.page.goto(ann.page.input_value("#invite-url"))
    bob.page.wait_for_selector("#join")
    bob.page.click("#join")
    bob.page.wait_for_selector("#hand .card")
    assert "Quorra" in bob.page.inner_text(".scorebar")

    ann.page.click("#nav-player")
    with ann.page.expect_download() as download:
        ann.page.click("#download-data")
    lines = [json.loads(line) for line in open(download.value.path()).read().splitlines()]
    assert lines[0]["type"] == "player" and lines[0]["player"]["name"] == "Quorra"
    assert any(line["type"] == "match" and line["match"]["id"] == match_id for line in lines)

    ann.page.click("#delete-player")
    assert "the matches and results stay" in ann.page.inner_text("#delete-confirm")
    ann.page.click("#confirm-delete")
    ann.page.wait_for_selector("#guest-name")  # the browser forgot the player: become one again
    assert stored(ann, "gin-rummy.player") is None

    bob.open("#/games")
    bob.open(f"#/play/{match_id}")
    bob.page.wait_for_function("() => document.querySelector('.scorebar')?.textContent.includes('Deleted player')")
    assert "Quorra" not in bob.page.inner_text("body")
