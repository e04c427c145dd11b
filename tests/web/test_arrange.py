"""Laying out melds by hand in the reference web client: the knocker's arrangement step
and the defender's melds and layoffs, on fixed deals between two people on one device,
each choice checked in the event the service recorded."""

from __future__ import annotations

import pytest

from .support import KNOCK_DEAL, OPERATOR, Client, FixedDeals, api, full_deck

web = pytest.mark.web


def deal(app, *decks) -> None:
    app.extensions["gin_rummy"].play.deal_rng = FixedDeals(*decks)


def recorded(client: Client, etype: str) -> dict:
    events = api(client.base, "GET", f"/matches/{client.match_id}/events?after=0", token=OPERATOR)["events"]
    return next(e["data"] for e in events if e["type"] == etype)


def shown_deadwood(page, panel: str) -> int:
    return int(page.inner_text(f"#{panel}-deadwood"))


def as_sets(melds) -> set[frozenset]:
    return {frozenset(m) for m in melds}


def reveal(client: Client) -> None:
    client.page.click("#reveal")
    client.page.wait_for_selector("#hand .card, #defense .card")


@web
def test_the_knocker_lays_out_its_own_melds_and_the_defender_chooses_its_layoff(app, client: Client):
    deal(app, KNOCK_DEAL)
    page = client.page
    client.start_hotseat("bonus-20-10")
    client.draw("#pile")  # Ann takes the upcard 4♥

    # Knock opens the step with the best melds made: 7♣ 7♦ 7♥ and 3♠-6♠, A♣ 2♦ 4♥ loose.
    client.click_card("KS")
    page.click("#knock")
    page.wait_for_selector("#arrange")
    assert page.locator("#hand").count() == 0  # the ten cards are in the step, once
    assert shown_deadwood(page, "arrange") == 1 + 2 + 4
    assert "knock limit is 10" in page.inner_text("#arrange")
    assert page.inner_text("#confirm-knock") == "Knock with 7" and page.is_disabled("#arrange-best")
    assert page.locator("#arrange .bench-meld").count() == 2

    # Breaking the run frees 3♠ 4♠ 5♠ 6♠: exactly their values join the deadwood.
    page.click('#arrange .bench-meld:has([data-card="3S"]) button.break')
    assert shown_deadwood(page, "arrange") == 7 + 3 + 4 + 5 + 6
    assert page.is_disabled("#confirm-knock") and "over the knock limit" in page.inner_text("#arrange-verdict")

    # 4♠ 5♠ 6♠ picked make a run again, leaving 3♠ as deadwood.
    page.click('#arrange .bench-loose [data-card="4S"]')
    page.click('#arrange .bench-loose [data-card="6S"]')
    assert "not a meld" not in page.inner_text("#picked-note") and page.is_disabled("#make-meld")
    page.click('#arrange .bench-loose [data-card="5S"]')
    assert page.inner_text("#picked-note").endswith("a run.")
    page.click("#make-meld")
    assert shown_deadwood(page, "arrange") == 7 + 3
    assert page.inner_text("#confirm-knock") == "Knock with 10" and page.is_enabled("#arrange-best")

    # Not a meld: 3♠ A♣ 2♦ is refused before anything is sent.
    for card in ("3S", "AC", "2D"):
        page.click(f'#arrange .bench-loose [data-card="{card}"]')
    assert "not a meld" in page.inner_text("#picked-note") and page.is_disabled("#make-meld")
    for card in ("3S", "AC", "2D"):
        page.click(f'#arrange .bench-loose [data-card="{card}"]')

    version = page.get_attribute("#table", "data-version")
    page.click("#confirm-knock")
    client.wait_for_change(version)
    knocked = recorded(client, "knocked")
    assert knocked["card"] == "KS" and not knocked["gin"] and knocked["deadwood"] == 10
    assert as_sets(knocked["melds"]) == {frozenset({"7C", "7D", "7H"}), frozenset({"4S", "5S", "6S"})}
    assert sorted(knocked["deadwood_cards"]) == sorted(["AC", "2D", "3S", "4H"])
    run = next(i for i, m in enumerate(knocked["melds"]) if "4S" in m)
    sevens = 1 - run

    # Bob's defense opens with the suggestion: his kings and diamonds, 7♠ onto the run.
    assert client.phase() == "cover"
    reveal(client)
    page.wait_for_selector("#defense")
    assert page.locator("#hand").count() == 0
    assert shown_deadwood(page, "defense") == 2 + 5 + 8
    assert page.locator(f'#defense .target[data-meld="{run}"] .laidoff[data-card="7S"]').count() == 1
    assert page.is_disabled("#defense-suggestion")

    # Taken back, 7♠ counts again; a card that fits nowhere cannot be laid off.
    page.click(f'#defense .target[data-meld="{run}"] .laidoff[data-card="7S"]')
    assert shown_deadwood(page, "defense") == 15 + 7
    page.click('#defense .bench-loose [data-card="2H"]')
    assert page.is_disabled(f"#lay-off-{run}") and page.is_disabled(f"#lay-off-{sevens}")
    page.click('#defense .bench-loose [data-card="2H"]')

    # Bob lays 7♠ off as the fourth seven instead.
    page.click('#defense .bench-loose [data-card="7S"]')
    page.click(f"#lay-off-{sevens}")
    assert page.locator(f'#defense .target[data-meld="{sevens}"] .laidoff[data-card="7S"]').count() == 1
    assert shown_deadwood(page, "defense") == 15
    assert page.is_enabled("#defense-suggestion")

    # Breaking his kings costs their 30; "Use the suggestion" puts everything back.
    page.click('#defense .bench-meld:has([data-card="KC"]) button.break')
    assert shown_deadwood(page, "defense") == 15 + 30
    page.click("#defense-suggestion")
    assert shown_deadwood(page, "defense") == 15
    assert page.locator(f'#defense .target[data-meld="{run}"] .laidoff[data-card="7S"]').count() == 1

    # Once more onto the sevens, and confirmed.
    page.click(f'#defense .target[data-meld="{run}"] .laidoff[data-card="7S"]')
    page.click('#defense .bench-loose [data-card="7S"]')
    page.click(f'#defense .target[data-meld="{sevens}"]')  # the whole meld is a target too
    assert page.locator(f'#defense .target[data-meld="{sevens}"] .laidoff[data-card="7S"]').count() == 1
    page.click("#confirm-defense")
    page.wait_for_selector("#result")

    defended = recorded(client, "defended")
    assert defended["layoffs"] == [{"card": "7S", "meld": sevens}] and defended["automatic"] is False
    assert as_sets(defended["melds"]) == {frozenset({"KC", "KD", "KH"}), frozenset({"9D", "TD", "JD"})}
    assert defended["deadwood"] == 15
    ended = recorded(client, "hand_ended")
    assert (ended["result"], ended["winner"], ended["points"]) == ("knock", 0, 5)
    assert "Ann scores 5: 15 − 10." in page.inner_text("#result .points")
    assert page.locator('#result .side:first-child .laidoff[data-card="7S"]').count() == 1


#: Classic rules: after taking J♣, Ann may knock discarding K♦ with 4♠ 6♠ or 5♥ 5♦ loose
#: (5♠ in the set, or in the run: 10 either way); Bob's 5♣ fits only the set.
TIE_DEAL = full_deck(
    "5H", "5D", "5S", "4S", "6S", "7C", "8C", "9C", "TC", "KD",  # Ann
    "5C", "2H", "3D", "8H", "9S", "KC", "QH", "JH", "TH", "6D",  # Bob
    "JC",  # the upcard
)


@web
def test_under_classic_rules_the_step_offers_only_the_least_deadwood_and_only_when_there_is_a_choice(app, client: Client):
    deal(app, TIE_DEAL, KNOCK_DEAL, TIE_DEAL)
    page = client.page
    client.start_hotseat("classic")
    client.draw("#pile")
    client.click_card("KD")
    page.click("#knock")
    page.wait_for_selector("#arrange")
    assert "more than one arrangement" in page.inner_text("#arrange") and shown_deadwood(page, "arrange") == 10

    # The set broken, its fives leave 15 more: over the limit, and not the least.
    page.click('#arrange .bench-meld:has([data-card="5H"]) button.break')
    assert shown_deadwood(page, "arrange") == 25 and page.is_disabled("#confirm-knock")
    # 4♠ 5♠ 6♠ instead: the other arrangement of 10, which Bob's 5♣ cannot be laid off onto.
    for card in ("4S", "5S", "6S"):
        page.click(f'#arrange .bench-loose [data-card="{card}"]')
    page.click("#make-meld")
    assert shown_deadwood(page, "arrange") == 10 and page.is_enabled("#confirm-knock")
    page.click("#confirm-knock")
    page.wait_for_selector("#result")  # the defense is automatic under these rules
    knocked = recorded(client, "knocked")
    assert as_sets(knocked["melds"]) == {frozenset({"4S", "5S", "6S"}), frozenset({"7C", "8C", "9C", "TC", "JC"})}
    assert recorded(client, "defended")["layoffs"] == []

    # With one arrangement of the least deadwood there is nothing to choose: Knock knocks.
    client.start_hotseat("classic")
    client.draw("#pile")
    client.click_card("KS")
    page.click("#knock")
    page.wait_for_selector("#result")
    assert page.locator("#arrange").count() == 0
    assert recorded(client, "knocked")["deadwood"] == 7

    # The same tie, left to the service: it knows Bob's hand, and lays out the run too.
    client.start_hotseat("classic")
    client.draw("#pile")
    client.click_card("KD")
    page.click("#knock")
    page.wait_for_selector("#arrange")
    page.click("#arrange-auto")
    page.wait_for_selector("#result")
    knocked = recorded(client, "knocked")
    assert as_sets(knocked["melds"]) == {frozenset({"4S", "5S", "6S"}), frozenset({"7C", "8C", "9C", "TC", "JC"})}
    assert knocked["deadwood"] == 10 and recorded(client, "defended")["layoffs"] == []


#: Under bonus-20-10 Ann takes 4♥ and knocks with 10 (A♣ 2♦ 3♣ 4♥ beside 4♠-6♠ and the
#: sevens); Bob's best defense lays 3♠, 7♠ and 8♠ all off onto her run.
CHAIN_DEAL = full_deck(
    "4S", "5S", "6S", "7H", "7D", "7C", "AC", "2D", "3C", "KS",  # Ann
    "3S", "7S", "8S", "KC", "KD", "KH", "9D", "TD", "JD", "2H",  # Bob
    "4H",  # the upcard
)


@web
def test_a_layoff_taken_back_brings_back_only_the_cards_laid_off_beyond_it(app, client: Client):
    deal(app, CHAIN_DEAL)
    page = client.page
    client.start_hotseat("bonus-20-10")
    client.draw("#pile")
    client.click_card("KS")
    page.click("#knock")
    page.wait_for_selector("#arrange")
    page.click("#confirm-knock")
    reveal(client)
    page.wait_for_selector("#defense")
    run = next(i for i, m in enumerate(recorded(client, "knocked")["melds"]) if "4S" in m)
    def laid():
        return {c for c in ("3S", "7S", "8S") if page.locator(f'#defense .target[data-meld="{run}"] .laidoff[data-card="{c}"]').count()}
    assert laid() == {"3S", "7S", "8S"} and shown_deadwood(page, "defense") == 2

    # 7♠ taken back: 8♠ hung on it and comes back too; 3♠, at the other end, stays.
    page.click(f'#defense .target[data-meld="{run}"] .laidoff[data-card="7S"]')
    assert laid() == {"3S"} and shown_deadwood(page, "defense") == 2 + 7 + 8
    page.click("#confirm-defense")
    page.wait_for_selector("#result")
    assert recorded(client, "defended")["layoffs"] == [{"card": "3S", "meld": run}]
