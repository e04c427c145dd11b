"""Online play in the reference web client: two people on two devices.

Each person is a browser context of their own (their own localStorage, so their own
seat token): one makes "Play a friend" and copies the invite link, the other opens it,
gives a name and joins; a hand is played in which each move shows on the other device
within a second, through the event stream, without a reload; a resignation with its
confirmation; the rematch, joined from both sides.  Also the lobby, the invite page's
errors and cancel, the clock and a timeout claim, and resign between two people on
one device.
"""

from __future__ import annotations

import re
import uuid

import pytest

from .support import Client, api, operator_view

web = pytest.mark.web

DESKTOP = {"width": 1000, "height": 860}
PHONE = {"width": 390, "height": 844}
#: How long the other device may take to show a move (milliseconds).
LIVE = 1_000
#: Enough turns to finish any hand.
MAX_MOVES = 200


def seat_of(client: Client) -> int:
    return int(client.page.get_attribute("#table", "data-seat"))


def join_by_link(client: Client, url: str, name: str) -> str:
    client.page.goto(url)
    client.page.fill("#join-name", name)
    client.page.click("#join")
    client.page.wait_for_selector("#hand .card")
    return client.match_id


def play_hand(a: Client, b: Client) -> int:
    """Both devices play until the hand is scored; every move shows on the other device
    within LIVE ms of the mover's click.  Answers the number of moves."""
    by_seat = {seat_of(a): a, seat_of(b): b}
    moves = 0
    for _ in range(MAX_MOVES):
        if a.phase() == "result" and b.phase() == "result":
            return moves
        turn = a.page.get_attribute("#table", "data-turn")
        assert turn == b.page.get_attribute("#table", "data-turn"), "the devices disagree on whose turn it is"
        mover = by_seat[int(turn)]
        watcher = b if mover is a else a
        mover.play_turn()
        watcher.wait_for_version(mover.version(), timeout=LIVE)
        moves += 1
    raise AssertionError("the hand did not end")


@web
def test_two_people_on_two_devices_play_resign_and_rematch(devices, live_server):
    ann = devices(DESKTOP, clipboard=True)
    bob = devices(PHONE)  # Bob plays on a phone
    match_id = ann.new_match(preset="classic", single=False, opponent="friend", names=("Ann",), clock="30")

    # The invite page: the link, copied to the clipboard; waiting for the friend.
    link = ann.page.input_value("#invite-url")
    assert re.fullmatch(rf"{re.escape(live_server)}/#/join/{match_id}/[\w-]+", link), link
    ann.page.click("#copy")
    assert ann.page.evaluate("navigator.clipboard.readText()") == link
    assert "Waiting for your friend" in ann.page.inner_text("#waiting")
    ann.page.reload()  # the invite is kept with the token: the page shows it again
    assert ann.page.input_value("#invite-url") == link

    # Bob opens the link on his own device, gives his name and joins.
    bob.page.goto(link)
    assert bob.overflow() <= 0
    bob.page.fill("#join-name", "Bob")
    bob.page.click("#join")
    bob.page.wait_for_selector("#hand .card")
    assert bob.match_id == match_id and seat_of(bob) == 1
    # Ann's invite page turns into the table by itself (stream: seat_joined, hand_dealt).
    ann.page.wait_for_selector("#hand .card", timeout=3_000)
    assert "Bob" in ann.page.inner_text(".scorebar") and "Ann" in bob.page.inner_text(".scorebar")
    ann.wait_for_version(bob.version(), timeout=LIVE)
    # At a person's pace: the service keeps its answer to who follows a match 2 s, and
    # the other player's stream opened just after the join.
    ann.page.wait_for_timeout(2_100)

    # The clock: the seat to act counts down, both see it.
    assert ann.page.get_attribute("#clock", "data-seat") == "0" and "mine" in ann.page.get_attribute("#clock", "class")
    assert bob.page.inner_text("#clock-who").startswith("Ann's time")
    assert re.fullmatch(r"0:[0-3]\d", bob.page.inner_text("#clock-left"))
    assert bob.page.locator("#claim").count() == 0 and bob.page.locator("#resign").count() == 1

    # A whole hand, each move seen live by the other device.
    moves = play_hand(ann, bob)
    assert moves >= 2
    truth = operator_view(live_server, match_id)
    assert truth["last_hand"]["hand"] == 1 and truth["status"] == "active"
    for client in (ann, bob):
        assert client.page.locator(".scorebar .score").all_inner_texts() == [str(x) for x in truth["scores"]]
    # Each sees the other follow the match (a live stream open).
    ann.page.wait_for_selector("#presence[data-connected=true]", timeout=5_000)
    bob.page.wait_for_selector("#presence[data-connected=true]", timeout=5_000)
    assert bob.overflow() <= 0

    # The next hand: Bob resigns, after a confirmation he may decline.
    ann.page.click("#next-hand")
    bob.page.click("#next-hand")
    bob.page.wait_for_selector("#hand .card")
    bob.page.click("#resign")
    assert "Ann wins it" in bob.page.inner_text("#resign-confirm")
    bob.page.click("#cancel-resign")
    assert bob.page.locator("#resign-confirm").count() == 0 and bob.page.locator("#result").count() == 0
    bob.page.click("#resign")
    bob.page.click("#confirm-resign")
    bob.page.wait_for_selector("#result[data-reason=resigned]")
    ann.page.wait_for_selector("#result[data-reason=resigned]", timeout=LIVE)
    assert ann.page.inner_text("#end-reason") == "Bob resigned: Ann wins the match."
    assert bob.page.inner_text("#end-reason") == "Bob resigned: Ann wins the match."
    truth = operator_view(live_server, match_id)
    assert truth["end_reason"] == "resigned" and truth["winner"] == 0

    # The rematch: Ann asks first and lands on the new table; Bob's button then says so.
    # Bob's page has looked at the finished match for a while first (it asks every 3 s
    # whether a rematch was made: there is no event for it on the finished match).
    assert ann.page.inner_text("#rematch") == "Rematch" and bob.page.inner_text("#rematch") == "Rematch"
    bob.page.wait_for_timeout(3_500)
    ann.page.click("#rematch")
    ann.page.wait_for_function("old => !location.hash.includes(old)", arg=match_id)
    ann.page.wait_for_selector("#hand .card")
    rematch_id = ann.match_id
    bob.page.wait_for_function(
        "() => document.querySelector('#rematch')?.textContent === 'Join the rematch'", timeout=10_000
    )
    assert "Ann wants a rematch" in bob.page.inner_text("#rematch-note")
    bob.page.click("#rematch")
    bob.page.wait_for_function("old => !location.hash.includes(old)", arg=match_id)
    bob.page.wait_for_selector("#hand .card")
    assert bob.match_id == rematch_id != match_id
    # The seats are swapped: Bob starts the rematch; it is played live as well.
    new = operator_view(live_server, rematch_id)
    assert [s["name"] for s in new["seats"]] == ["Bob", "Ann"] and new["turn"] == 0
    assert seat_of(bob) == 0 and seat_of(ann) == 1
    ann.wait_for_version(bob.version(), timeout=LIVE)
    bob.play_turn()
    ann.wait_for_version(bob.version(), timeout=LIVE)


@web
def test_a_public_match_is_listed_in_the_lobby_and_joined_from_it(devices, live_server):
    ann = devices()
    cleo = devices(PHONE)
    private_id = ann.new_match(opponent="friend", names=("Ann",))
    public_id = ann.new_match(opponent="friend", names=("Ann",), public=True, clock="259200")
    assert "listed in the lobby" in ann.page.inner_text("#waiting-panel")

    cleo.open("#/lobby")
    entry = cleo.page.locator(f'#lobby-list li[data-id="{public_id}"]')
    entry.wait_for()
    text = entry.inner_text()
    assert "Ann" in text and "classic" in text and "3 days per turn" in text and "just now" in text
    assert cleo.page.locator(f'#lobby-list li[data-id="{private_id}"]').count() == 0
    assert cleo.overflow() <= 0

    # No name yet: the page asks for it.
    cleo.page.fill("#lobby-name", "")
    entry.locator("button.join").click()
    assert cleo.page.evaluate("document.activeElement.id") == "lobby-name"
    cleo.page.fill("#lobby-name", "Cleo")
    entry.locator("button.join").click()
    cleo.page.wait_for_selector("#hand .card")
    assert cleo.match_id == public_id
    ann.page.wait_for_selector("#hand .card", timeout=3_000)
    assert "Cleo" in ann.page.inner_text(".scorebar")
    # A 3-day clock is shown in days and hours.
    assert re.fullmatch(r"2 days 23 h|3 days 0 h", cleo.page.inner_text("#clock-left"))

    # Taken: no longer in the lobby.
    cleo.page.click("#nav-lobby")
    cleo.page.wait_for_function(
        "() => { const s = document.querySelector('#lobby-status'); return s && !s.textContent.startsWith('Loading'); }"
    )
    assert cleo.page.locator(f'#lobby-list li[data-id="{public_id}"]').count() == 0


@web
def test_the_lobby_pages_with_its_cursor(devices, live_server):
    made = []
    for i in range(21):
        body = {"seats": [{"name": f"P{i}"}, {"kind": "open"}], "public": True}
        made.append(api(live_server, "POST", "/matches", body)["id"])
    dana = devices()
    dana.open("#/lobby")
    dana.page.wait_for_selector("#lobby-list li")
    first = dana.page.locator("#lobby-list li").count()
    assert first == 20 and dana.page.is_visible("#lobby-more")
    dana.page.click("#lobby-more")
    dana.page.wait_for_function("n => document.querySelectorAll('#lobby-list li').length > n", arg=first)
    shown = set(dana.page.locator("#lobby-list li").evaluate_all("els => els.map(e => e.dataset.id)"))
    assert set(made) <= shown
    dana.page.click("#lobby-refresh")
    dana.page.wait_for_function("() => document.querySelectorAll('#lobby-list li').length === 20")


@web
def test_the_join_page_explains_a_refusal_and_the_invite_can_be_called_off(devices, live_server):
    ann = devices()
    bob = devices(PHONE)
    match_id = ann.new_match(opponent="friend", names=("Ann",))
    link = ann.page.input_value("#invite-url")

    def refused(url: str) -> str:
        bob.page.goto(url)
        bob.page.fill("#join-name", "Bob")
        bob.page.click("#join")
        return bob.page.locator("#join-error:not([hidden])").inner_text()

    assert "not valid" in refused(link.rsplit("/", 1)[0] + "/not-the-code")
    assert "no such match" in refused(f"{live_server}/#/join/{uuid.uuid4()}/some-code")
    assert bob.page.is_visible("#join-links")  # where to go instead: the lobby, a new match

    # The same browser that made the match does not join it a second time.
    ann.page.goto(link)
    ann.page.wait_for_selector("#join-known")
    ann.page.click("#open-table")
    ann.page.wait_for_selector("#waiting")

    # Called off: the invite no longer opens a seat.
    ann.page.click("#cancel")
    ann.page.wait_for_selector("#aborted")
    assert operator_view(live_server, match_id)["end_reason"] == "aborted"
    assert "no longer open" in refused(link)
    assert bob.page.is_disabled("#join")


@web
def test_the_clock_runs_out_and_the_other_player_claims_the_match(devices, live_server):
    created = api(
        live_server,
        "POST",
        "/matches",
        {"rules": {"preset": "classic", "turn_seconds": 5}, "single_hand": True, "seats": [{"name": "Ann"}, {"kind": "open"}]},
    )
    match_id = created["id"]
    ann = devices()
    ann.keep_seat(match_id, {0: created["seats"][0]["token"]}, mode="online", invite=created["invite"])
    ann.open(f"#/play/{match_id}")
    ann.page.wait_for_selector("#waiting")
    bob = devices()
    join_by_link(bob, created["invite"]["url"], "Bob")
    ann.page.wait_for_selector("#hand .card", timeout=3_000)

    # Ann is to act and does nothing; both count her time down.
    assert bob.page.inner_text("#clock-who").startswith("Ann's time")
    seen = bob.page.inner_text("#clock-left")
    bob.page.wait_for_function("s => document.querySelector('#clock-left')?.textContent !== s", arg=seen, timeout=2_500)
    # Once it is up, Bob may claim the match (the page asks the service when it reaches zero).
    bob.page.wait_for_selector("#claim", timeout=10_000)
    assert "Ann's time is up" in bob.page.inner_text("#clock")
    ann.page.wait_for_selector("#clock.out")
    assert "Your time is up" in ann.page.inner_text("#clock") and ann.page.locator("#claim").count() == 0
    bob.page.click("#claim")
    bob.page.wait_for_selector("#result[data-reason=timeout]")
    ann.page.wait_for_selector("#result[data-reason=timeout]", timeout=LIVE)
    assert ann.page.inner_text("#end-reason") == "Ann ran out of time: Bob wins the match."
    truth = operator_view(live_server, match_id)
    assert truth["end_reason"] == "timeout" and truth["winner"] == 1


@web
def test_two_people_on_one_device_resign_for_the_player_holding_it(client: Client):
    page = client.page
    match_id = client.new_match(preset="classic", single=True, opponent="hotseat", names=("Ann", "Bob"))
    assert client.phase() == "cover" and page.locator("#resign").count() == 0  # nobody holds the device
    page.click("#reveal")
    page.wait_for_selector("#hand .card")
    to_act = operator_view(client.base, match_id)["turn"]
    player, other = ("Ann", "Bob")[to_act], ("Ann", "Bob")[1 - to_act]
    assert page.inner_text("#resign") == f"Resign for {player}…"
    assert page.locator("#clock").count() == 0  # no clock between two people on one device
    page.click("#resign")
    assert f"{player}, resign the match? {other} wins it." in page.inner_text("#resign-confirm")
    page.click("#confirm-resign")
    page.wait_for_selector("#result[data-reason=resigned]")
    assert page.inner_text("#end-reason") == f"{player} resigned: {other} wins the match."

    # The rematch between the same two people, on the same device: both seats' tokens.
    page.click("#rematch")
    page.wait_for_function("old => !location.hash.includes(old)", arg=match_id)
    page.wait_for_selector("#cover")
    rematch_id = client.match_id
    truth = operator_view(client.base, rematch_id)
    assert [s["name"] for s in truth["seats"]] == ["Bob", "Ann"]
    assert "Pass the device to Bob" in page.inner_text("#cover")
