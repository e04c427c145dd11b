"""A whole match as movetext: plain text to read and share, like PGN for chess.

A header of tag lines (``[Name "value"]``), then one line per fact, in the order the
events happened: each hand's deal, every move numbered by its event's ``seq``, the
knocker's and the defender's melds, the layoffs in an order they can be played, the
result and the totals, and how the match ended.  Cards are the API's codes (``TD``,
``AS``); suit symbols appear only in comments (``;`` to the end of the line), which a
program reading the text skips.  The grammar, every line kind and how each maps to the
events: ``docs/movetext.md``.

>>> playable_layoffs([["3D", "4D", "5D"], ["7C", "7D", "7H"]],
...                  [{"card": "AD", "meld": 0}, {"card": "2D", "meld": 0}, {"card": "7S", "meld": 1}])
[('2D', 0), ('AD', 0), ('7S', 1)]
>>> print(quoted('Ann "the Cat"' + chr(7)))
"Ann \\"the Cat\\"\\u0007"
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import sort_cards
from service.engine.layoffs import play_order
from service.engine.rules import OPTIONAL_DEFAULTS, RANGES

from .format import digest_of
from .hands import cards_text, ending_text, hand_detail, split_hands
from .records import upcast_events

#: The version of the movetext grammar, in the ``[Movetext]`` tag.
MOVETEXT_VERSION = 1

#: Characters that never reach a terminal as they are: controls, formatting (bidi
#: overrides), surrogates, private use, unassigned, line and paragraph separators.
UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def record_text(record: Mapping[str, Any]) -> str:
    """The movetext of a match record (the document ``GET /matches/{id}/export`` answers)."""
    events = upcast_events(list(record["events"]))
    names = [printable(seat_name(seat)) for seat in record["seats"]]
    lines = _header(record, events)
    if record.get("digest", {}).get("value") != digest_of(record["events"]):
        lines.append("; the digest does not match the events: the record was changed or damaged")
    hands = {hand[0]["seq"]: hand for hand in split_hands(events)}
    in_hands = {e["seq"] for hand in hands.values() for e in hand}
    for event in events:
        if event["seq"] in hands:
            lines.append("")
            lines.extend(_hand_lines(hands[event["seq"]], names))
        elif event["seq"] in in_hands:
            continue
        elif event["type"] == "seat_joined":
            lines.append(_move(event, _join_action(event["data"])))
        elif event["type"] == "match_ended":
            lines.extend(_ending_lines(event, names))
    status = record["result"]["status"]
    if status == "waiting":
        lines.append("; waiting for a player to take the open seat")
    elif status == "active":
        lines.append("; the match is still being played")
    return "\n".join(lines) + "\n"


# --- the header ---------------------------------------------------------------------


def _header(record: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[str]:
    result = record["result"]
    ended = next((e["data"] for e in reversed(events) if e["type"] == "match_ended"), None)
    tags = [
        ("Movetext", str(MOVETEXT_VERSION)),
        ("Match", record["match_id"]),
        ("Rules", rules_text(record["rules"])),
    ]
    for seat in record["seats"]:
        tags.append((f"Seat{seat['seat'] + 1}", seat_text(seat)))
        if seat.get("player"):
            tags.append((f"Seat{seat['seat'] + 1}Player", seat["player"]))
    started = events[0]["data"] if events and events[0]["type"] == "match_started" else {}
    if started.get("paired"):
        tags.append(("Paired", "true"))
    if started.get("rated") is False:
        tags.append(("Rated", "false"))
    tags += [
        ("Started", events[0].get("recorded_at", "") if events else ""),
        ("Status", result["status"]),
        ("Result", result_token(result, ended)),
        ("Scores", _scores(result["scores"])),
        ("Hands", str(result["hands"])),
        ("Termination", ended["reason"] if ended else "unterminated"),
        ("Digest", f"{record['digest']['algorithm']}:{record['digest']['value']}"),
    ]
    return [f"[{name} {quoted(value)}]" for name, value in tags]


def rules_text(rules: Mapping[str, Any]) -> str:
    """The preset, then every parameter as ``name=value`` (JSON literals, ``null``: not
    set; a choice by its name, bare); an optional parameter the rules leave out at its
    default is written with its default.

    >>> from service.engine import resolve_rules
    >>> print(rules_text(resolve_rules({"preset": "short-stock"}).to_json()))
    short-stock, upcard_offer=false, dead_hand_stock=2, gin_bonus=25, undercut_bonus=25, knock_limit=10, target_score=100, single_hand=false, knocker_arranges=false, defender_arranges=false, turn_seconds=null, starter=alternate, hints=null
    """
    names = [name for name in RANGES if name not in VARIANTS or name in rules]
    values = (rules.get(name, OPTIONAL_DEFAULTS.get(name)) for name in names)
    return ", ".join([
        str(rules.get("preset")),
        *(f"{name}={value if isinstance(value, str) else json.dumps(value)}" for name, value in zip(names, values)),
    ])


#: The parameters of the variants (Oklahoma, Big Gin, Hollywood, the match bonuses):
#: written only when the rules set them, so the rules line of a match without them is
#: as it was before they existed.
VARIANTS = ("oklahoma", "spade_doubles", "big_gin_bonus", "hollywood", "game_bonus", "box_bonus", "shutout_doubles")


def seat_name(seat: Mapping[str, Any]) -> str:
    """The name a seat goes by in comments (an open seat has none yet)."""
    return seat.get("name") or f"Seat {seat['seat'] + 1}"


def seat_text(seat: Mapping[str, Any]) -> str:
    """``NAME (human)``, ``NAME (computer, LEVEL)`` or ``(open)``; a computer seat that
    kept its default name ``Computer (LEVEL)`` is written just so."""
    name, kind = seat.get("name"), seat.get("kind")
    if kind == "open" or name is None:
        return "(open)"
    if kind == "computer":
        if name == f"Computer ({seat.get('level')})":
            return name
        return f"{name} (computer, {seat.get('level')})"
    return f"{name} ({kind})"


def result_token(result: Mapping[str, Any], ended: Mapping[str, Any] | None) -> str:
    """As in PGN: ``1-0`` seat 1 won, ``0-1`` seat 2 won, ``1/2-1/2`` a single hand
    ended dead, ``*`` not over or called off."""
    if result["status"] != "finished" or ended is None or ended.get("reason") == "aborted":
        return "*"
    return {0: "1-0", 1: "0-1"}.get(result["winner"], "1/2-1/2")


# --- a hand ---------------------------------------------------------------------------


def _hand_lines(hand_events: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[str]:
    detail = hand_detail(hand_events)
    deal = detail["deal"]
    at = {e["seq"]: e["data"].get("at") for e in hand_events}
    starter = detail["starter"]
    lines = [
        _stamped(f"hand {detail['hand']} starter {seat_code(starter)}", at[hand_events[0]["seq"]])
        + f"  ; {names[starter]} starts"
    ]
    for seat, cards in enumerate(deal["hands"]):
        lines.append(f"deal {seat_code(seat)} {' '.join(cards)}  ; {cards_text(sort_cards(cards))}")
    lines.append(f"upcard {deal['upcard']}  ; {cards_text([deal['upcard']])}")
    lines.append(f"stock {' '.join(deal['stock'])}")
    check = "the deck and salt give it" if deal["commitment_valid"] else "the deck and salt do NOT give it"
    lines.append(f"commitment {deal['commitment']}  ; {check}")
    lines.append(f"salt {quoted(deal['salt'])}")
    for play in detail["plays"]:
        lines.append(_stamped(f"{play['seq']}. {seat_code(play['seat'])} {_play_action(play)}", at[play["seq"]]))
    knock, defense = detail["knock"], detail["defense"]
    if knock:
        lines.append(_melds_line(knock["seat"], knock["melds"]))
        lines.append(_deadwood_line(knock["seat"], knock))
    if knock and defense:
        lines.append(_melds_line(defense["seat"], defense["melds"]))
        grown = [list(meld) for meld in knock["melds"]]
        for card, meld in playable_layoffs(knock["melds"], defense["layoffs"]):
            lines.append(f"layoff {seat_code(defense['seat'])} {card} on {'-'.join(grown[meld])}")
            grown[meld] = sort_cards([*grown[meld], card])
        lines.append(_deadwood_line(defense["seat"], defense))
    end = detail["end"]
    if end:
        lines.append(_result_line(end, names))
        if "games" in end:
            lines.append(_games_line(end["games"]))
    for event in hand_events:
        if event["type"] == "match_ended":
            lines.extend(_ending_lines(event, names))
    return lines


def _play_action(play: Mapping[str, Any]) -> str:
    action = play["action"]
    if action == "pass":
        return "pass"
    if action == "draw":
        return f"draw {play['source']} {play['card']}"
    return f"{action} {play['card']}"  # discard, knock, gin or big_gin (the card drawn that made the eleven)


def _melds_line(seat: int, melds: Sequence[Sequence[str]]) -> str:
    return " ".join([f"melds {seat_code(seat)}", *("-".join(meld) for meld in melds)])


def _deadwood_line(seat: int, arrangement: Mapping[str, Any]) -> str:
    return " ".join([f"deadwood {seat_code(seat)}", *arrangement["deadwood_cards"], f"= {arrangement['deadwood']}"])


def _result_line(end: Mapping[str, Any], names: Sequence[str]) -> str:
    totals = f"totals {_scores(end['scores'])}"
    if end["winner"] is None:
        return f"result {end['result']} {totals}  ; dead hand: nobody scores"
    winner = end["winner"]
    doubled = " doubled" if end.get("doubled") else ""
    return (
        f"result {end['result']} {seat_code(winner)} {end['points']}{doubled} {totals}"
        f"  ; {names[winner]} scores {end['points']}{' (doubled: a spade upcard)' if doubled else ''}"
    )


def _games_line(games: Sequence[Mapping[str, Any]]) -> str:
    """Hollywood's three games after a hand: ``games 120-20=S1 90-0 50-0`` (``=S1``: the
    game is decided, won by seat 1)."""
    return " ".join(["games", *(_scores(g["scores"]) + (f"={seat_code(g['winner'])}" if g["winner"] is not None else "") for g in games)])


def _settlement_lines(data: Mapping[str, Any]) -> list[str]:
    """A match ended on the scores under match bonuses: each game's settlement, then the
    totals (``game 1 points 120-20 hands 3-1 winner S1 totals 295-45``)."""
    lines = []
    for number, game in enumerate(data["games"], 1):
        winner = seat_code(game["winner"]) if game["winner"] is not None else "-"
        shutout = " shutout" if game["shutout"] else ""
        lines.append(
            f"game {number} points {_scores(game['scores'])} hands {_scores(game['hands'])} winner {winner} "
            f"totals {_scores(game['totals'])}{shutout}"
        )
    lines.append(f"match totals {_scores(data['totals'])}")
    return lines


def playable_layoffs(
    knocker_melds: Sequence[Sequence[str]], layoffs: Sequence[Mapping[str, Any]]
) -> list[tuple[str, int]]:
    """The layoffs as ``(card, meld index)`` in an order in which they can be played
    (the engine's ``play_order``): recorded so since ``defended`` version 2, and put so
    here whatever order a record gives."""
    return list(play_order(knocker_melds, [(x["card"], x["meld"]) for x in layoffs]))


# --- outside the hands ----------------------------------------------------------------


def _join_action(data: Mapping[str, Any]) -> str:
    action = f"join {quoted(data['name'])}"
    return action + (f" player {data['player']}" if data.get("player") else "")


#: The move a seat made to end the match, by ``match_ended``'s reason (none for the score).
ENDING_MOVES = {"resigned": "resign", "timeout": "claim_timeout", "aborted": "abort"}


def _ending_lines(event: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    data = event["data"]
    reason = data.get("reason", "score")
    lines = []
    if reason in ENDING_MOVES:
        lines.append(_move(event, ENDING_MOVES[reason]))
    winner = data["winner"]
    if reason == "score":
        told = f"{names[winner]} wins the match" if winner is not None else "nobody wins the match"
    else:
        told = ending_text(data, names)
    who = seat_code(winner) if winner is not None else "-"
    lines.append(f"end {reason} {who} {_scores(data['scores'])}  ; {told}")
    if "totals" in data:
        lines.extend(_settlement_lines(data))
    return lines


def _move(event: Mapping[str, Any], action: str) -> str:
    return _stamped(f"{event['seq']}. {seat_code(event['data']['seat'])} {action}", event["data"].get("at"))


# --- tokens ---------------------------------------------------------------------------


def seat_code(seat: int) -> str:
    """``S1`` for seat 0, ``S2`` for seat 1 (as the ``[Seat1]`` and ``[Seat2]`` tags)."""
    return f"S{seat + 1}"


def _scores(scores: Sequence[int]) -> str:
    return f"{scores[0]}-{scores[1]}"


def _stamped(line: str, at: str | None) -> str:
    """A line with its time under a clock: `` @2026-12-01T09:30:00.000+00:00``."""
    return f"{line} @{at}" if at else line


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on written as an escape
    (``\\u0007``), for display; names in records hold none, but text may come from
    anywhere."""
    return "".join(_escape(ch) if unicodedata.category(ch) in UNPRINTABLE else ch for ch in text)


def quoted(text: str) -> str:
    """A string token: in double quotes; ``"`` and ``\\`` escaped with a backslash, and
    unprintable characters as ``\\uXXXX`` (``\\UXXXXXXXX``), so it reads back exactly."""
    body = "".join(
        "\\" + ch if ch in '"\\' else _escape(ch) if unicodedata.category(ch) in UNPRINTABLE else ch for ch in text
    )
    return f'"{body}"'
