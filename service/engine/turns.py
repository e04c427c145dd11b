"""The deciders of a hand's turns: taking or passing the upcard, drawing, discarding,
knocking or going Gin, and the defense that settles the hand."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import CARD_INDEX, CardError
from .commands import card_field, command_field, require_turn, seat_of, summary
from .errors import CommandError, IllegalMoveError
from .evolvers import evolve
from .layoffs import Defense, LayoffError, best_defense, best_layout, check_defense
from .melds import ArrangementError, best_melds, check_arrangement, deadwood_of_mask
from .rules import doubled
from .scoring import enter, hollywood_winner, settlement
from .state import DEFENSE, DISCARD, DRAW, UPCARD_OFFER, Event, State


def _remove(hand: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1 :]


def pass_upcard(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = seat_of(command)
    require_turn(state, seat, UPCARD_OFFER)
    return [Event("upcard_passed", {"seat": seat})]


def draw(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = seat_of(command)
    source = command_field(command, "source")
    if source not in ("stock", "discard"):
        raise CommandError(f"source must be 'stock' or 'discard', got {source!r}", "invalid_source")
    if state.phase == UPCARD_OFFER:
        require_turn(state, seat, UPCARD_OFFER)
        if source == "stock":
            raise IllegalMoveError(
                "upcard_offer", "the upcard is on offer: take it (draw from the discard pile) or pass"
            )
    else:
        require_turn(state, seat, DRAW)
        if source == "discard" and state.stock_only:
            raise IllegalMoveError("stock_only", "both players passed the upcard: the starter draws from the stock")
    if source == "stock":
        card = state.deck[state.stock_pos]
    else:
        card = state.discard_pile[-1]
    return [Event("card_drawn", {"seat": seat, "source": source, "card": card})]


def _check_discard(state: State, seat: int, card: str) -> tuple[str, ...]:
    require_turn(state, seat, DISCARD)
    hand = state.hands[seat]
    if card not in hand:
        raise IllegalMoveError("card_not_in_hand", f"{card} is not in seat {seat}'s hand ({' '.join(sorted(hand))})")
    if card == state.taken_from_discard:
        raise IllegalMoveError(
            "no_return", f"{card} was taken from the discard pile this turn and cannot be discarded now"
        )
    return _remove(hand, card)


def _after_hand_events(state: State, result: str, winner: int | None, points: int, double: bool = False) -> list[Event]:
    rules = state.rules
    assert rules is not None  # a hand was dealt: the match has started
    scores = list(state.scores)
    hands_won = list(state.hands_won)
    if winner is not None:
        scores[winner] += points
        hands_won[winner] += 1
    ended: dict[str, Any] = {
        "hand": state.hand_number,
        "result": result,
        "winner": winner,
        "points": points,
        "scores": scores,
        # The reveal that lets anyone check the deal's commitment.
        "deck": list(state.deck),
        "salt": state.salt,
    }
    if double:
        ended["doubled"] = True
    games = state.games
    if rules.hollywood:
        if winner is not None:
            games = enter(rules, games, winner, points)
        ended["games"] = list(games)
        finished = all(game["winner"] is not None for game in games)
        match_winner = hollywood_winner(games)
    else:
        match_winner = winner
        finished = rules.single_hand or (winner is not None and scores[winner] >= rules.target_score)
        games = ({"scores": scores, "hands": hands_won, "winner": winner},)
    events = [Event("hand_ended", ended)]
    if finished:
        data: dict[str, Any] = {"winner": match_winner, "scores": scores, "reason": "score"}
        if rules.match_bonuses:
            data.update(settlement(rules, games))
        events.append(Event("match_ended", data))
    return events


def discard(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = seat_of(command)
    card = card_field(command)
    _check_discard(state, seat, card)
    events = [Event("card_discarded", {"seat": seat, "card": card})]
    assert state.rules is not None  # a hand was dealt: the match has started
    if state.stock_count <= state.rules.dead_hand_stock:
        events += _after_hand_events(state, "dead", None, 0)
    return events


def _arrangement_field(command: Mapping[str, Any], name: str) -> list[list[object]] | None:
    value = command.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(m, list) for m in value):
        raise CommandError(f"{name} must be a list of melds, each a list of card codes", "invalid_arrangement")
    return value


def knock_or_gin(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = seat_of(command)
    card = card_field(command)
    melds = _arrangement_field(command, "melds")
    remaining = _check_discard(state, seat, card)
    rules = state.rules
    assert rules is not None  # a hand was dealt: the match has started
    defender = 1 - seat
    if melds is None:
        arrangement = best_melds(remaining)
        if 0 < arrangement.deadwood <= state.knock_limit:
            # Of the layouts with this deadwood, the one that leaves the defender most
            # (the engine knows both hands when it resolves the knock).
            arrangement = best_layout(remaining, state.hands[defender])
    else:
        try:
            arrangement = check_arrangement(remaining, melds)
        except (ArrangementError, CardError) as exc:
            raise IllegalMoveError("invalid_meld", f"knocker's melds: {exc}") from None
        least = deadwood_of_mask(sum(1 << CARD_INDEX[c] for c in remaining))
        if not rules.knocker_arranges and least < arrangement.deadwood and least <= state.knock_limit:
            raise IllegalMoveError(
                "arrangement_not_allowed",
                f"under these rules the knocker lays out one of its arrangements of the least deadwood ({least}); "
                f"these melds leave {arrangement.deadwood} ({', '.join(arrangement.unmelded)})",
            )
    gin = arrangement.deadwood == 0
    if command["type"] == "gin" and not gin:
        raise IllegalMoveError(
            "not_gin", f"Gin needs 0 deadwood; discarding {card} leaves {arrangement.deadwood} {summary(state)}"
        )
    if arrangement.deadwood > state.knock_limit:
        limit = state.knock_limit
        raise IllegalMoveError(
            "knock_limit",
            f"knocking needs deadwood of {limit} or less{_limit_reason(state)}; discarding {card} leaves "
            f"{arrangement.deadwood} ({', '.join(arrangement.unmelded)})",
        )
    knocked = Event(
        "knocked",
        {
            "seat": seat,
            "card": card,
            "gin": gin,
            "melds": [list(m) for m in arrangement.melds],
            "deadwood_cards": list(arrangement.unmelded),
            "deadwood": arrangement.deadwood,
        },
    )
    if not gin and rules.defender_arranges:
        return [knocked]
    after_knock = evolve(state, knocked)
    if gin:
        own = best_melds(state.hands[defender])
        defense = Defense(own.melds, (), own.unmelded, own.deadwood)
    else:
        defense = best_defense(arrangement.melds, state.hands[defender])
    return [knocked] + _settle(after_knock, defense, automatic=True)


def _settle(state: State, defense: Defense, automatic: bool) -> list[Event]:
    knock = state.knock
    assert knock is not None  # settled after the knock
    knocker = knock["seat"]
    defender = 1 - knocker
    defended = Event("defended", {"seat": defender, "automatic": automatic, **defense.to_json()})
    k, d = knock["deadwood"], defense.deadwood
    rules = state.rules
    assert rules is not None  # a hand was dealt: the match has started
    if knock.get("big_gin"):
        assert rules.big_gin_bonus is not None  # Big Gin is refused without its bonus
        result, winner, points = "gin", knocker, d + rules.big_gin_bonus
    elif knock["gin"]:
        result, winner, points = "gin", knocker, d + rules.gin_bonus
    elif d <= k:
        result, winner, points = "undercut", defender, k - d + rules.undercut_bonus
    else:
        result, winner, points = "knock", knocker, d - k
    double = doubled(rules, state.upcard)
    if double:
        points *= 2
    return [defended] + _after_hand_events(evolve(state, defended), result, winner, points, double)


def _limit_reason(state: State) -> str:
    assert state.rules is not None  # a hand was dealt: the match has started
    if not state.rules.oklahoma:
        return ""
    return f" (under oklahoma the first upcard, {state.upcard}, sets this hand's limit{': Gin only' if state.knock_limit == 0 else ''})"


def big_gin(state: State, command: Mapping[str, Any]) -> list[Event]:
    """Big Gin: after the draw all eleven cards meld; they are laid down, none discarded."""
    seat = seat_of(command)
    require_turn(state, seat, DISCARD)
    rules = state.rules
    assert rules is not None  # a hand was dealt: the match has started
    if rules.big_gin_bonus is None:
        raise IllegalMoveError("no_big_gin", "these rules do not play Big Gin (big_gin_bonus is not set)")
    hand = state.hands[seat]
    arrangement = best_melds(hand)
    if arrangement.deadwood:
        raise IllegalMoveError(
            "not_big_gin",
            f"Big Gin needs all eleven cards melded; the best melds leave {arrangement.deadwood} "
            f"({', '.join(arrangement.unmelded)}) {summary(state)}",
        )
    knocked = Event(
        "knocked",
        {
            "seat": seat,
            # Nothing is discarded: the card is the one drawn this turn, the hand's last
            # (evolve appends a drawn card to the hand).
            "card": hand[-1],
            "gin": True,
            "big_gin": True,
            "melds": [list(m) for m in arrangement.melds],
            "deadwood_cards": [],
            "deadwood": 0,
        },
    )
    own = best_melds(state.hands[1 - seat])
    return [knocked] + _settle(evolve(state, knocked), Defense(own.melds, (), own.unmelded, own.deadwood), automatic=True)


def defend(state: State, command: Mapping[str, Any]) -> list[Event]:
    seat = seat_of(command)
    require_turn(state, seat, DEFENSE)
    melds = _arrangement_field(command, "melds")
    layoffs = command.get("layoffs")
    assert state.knock is not None  # the defense step follows a knock
    knocker_melds = state.knock["melds"]
    hand = state.hands[seat]
    if melds is None and layoffs is None:
        return _settle(state, best_defense(knocker_melds, hand), automatic=False)
    if layoffs is None:
        layoffs = []
    if not isinstance(layoffs, list) or not all(isinstance(x, dict) and {"card", "meld"} <= set(x) for x in layoffs):
        raise CommandError('layoffs must be a list of {"card": code, "meld": index}', "invalid_arrangement")
    try:
        # Melds left out: the best melds of the cards the layoffs leave.
        defense = check_defense(knocker_melds, hand, melds, [(x["card"], x["meld"]) for x in layoffs])
    except (LayoffError, ArrangementError) as exc:
        raise IllegalMoveError("invalid_layoff", f"defense: {exc}") from None
    return _settle(state, defense, automatic=False)
