"""Play someone now, in the reference web client: two guests ask for an opponent, the
table opens by itself on both devices once they are paired; waiting can be cancelled."""

from __future__ import annotations

import pytest

from .support import Client
from .test_players import become_guest

web = pytest.mark.web


@pytest.fixture(autouse=True)
def no_tickets(store):
    with store.connection() as conn:
        conn.execute("DELETE FROM matchmaking_tickets")


def ask(client: Client) -> None:
    client.open("#/play-now")
    client.page.select_option("#mm-length", "single")
    client.page.click("#mm-find")


@web
def test_two_guests_asking_to_play_now_are_seated_at_one_table_that_opens_by_itself(devices):
    ann, bob = devices(), devices()
    become_guest(ann, "Ann")
    become_guest(bob, "Bob")
    ask(ann)
    ann.page.wait_for_selector("#mm-waiting:not([hidden])")
    assert "opponents from 1400 to 1600" in ann.page.text_content("#mm-status")
    ask(bob)
    bob.page.wait_for_selector("#hand .card")
    ann.page.wait_for_selector("#hand .card", timeout=10_000)  # the next poll finds the match
    assert ann.match_id == bob.match_id
    seats = {int(c.page.get_attribute("#table", "data-seat")) for c in (ann, bob)}
    assert seats == {0, 1}


@web
def test_waiting_for_an_opponent_can_be_cancelled(devices, store):
    ann = devices()
    become_guest(ann, "Ann")
    ask(ann)
    ann.page.wait_for_selector("#mm-waiting:not([hidden])")
    ann.page.click("#mm-cancel")
    ann.page.wait_for_selector("#mm-form:not([hidden])")
    with store.connection() as conn:
        assert conn.execute("SELECT status FROM matchmaking_tickets").fetchall() == [("cancelled",)]


@web
def test_play_someone_now_asks_for_a_player_first(client: Client):
    client.open("#/play-now")
    assert "continue as a guest" in client.page.text_content("#play-now-needs-player")


@web
def test_the_player_not_to_move_is_told_on_another_screen_when_it_becomes_their_move(devices):
    ann, bob = devices(), devices()
    become_guest(ann, "Ann")
    become_guest(bob, "Bob")
    ask(ann)
    ann.page.wait_for_selector("#mm-waiting:not([hidden])")
    ask(bob)
    bob.page.wait_for_selector("#hand .card")
    ann.page.wait_for_selector("#hand .card", timeout=10_000)
    mover, waiter = (ann, bob) if ann.my_turn() else (bob, ann)
    waiter.open("#/lobby")  # away from the table: only the player's feed can tell
    waiter.page.wait_for_timeout(500)  # its feed followed from the newest notification
    while mover.my_turn():
        mover.play_turn()
    waiter.page.wait_for_function(
        "() => !document.getElementById('toast').hidden"
        " && document.getElementById('toast').textContent.includes('your move')",
        timeout=10_000,
    )
    assert "It is your move in another match." in waiter.page.text_content("#toast")
