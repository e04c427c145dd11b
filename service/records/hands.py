"""Hand-by-hand history, the audit, and a hand told as text — all from events alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import commitment_of

from .replay import ReplayError, replay


def split_hands(events: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The events of each hand, from its ``hand_dealt`` to its ``hand_ended`` (or the end);
    a match that ends during a hand (a resignation, a timeout) ends it there."""
    hands: list[list[Mapping[str, Any]]] = []
    for event in events:
        if event["type"] == "hand_dealt":
            hands.append([event])
        elif hands and (event["type"] != "match_ended" or not hand_is_over(hands[-1])):
            hands[-1].append(event)
    return hands


def hand_is_over(hand_events: Sequence[Mapping[str, Any]]) -> bool:
    return any(e["type"] in ("hand_ended", "match_ended") for e in hand_events)


def match_end_during(hand_events: Sequence[Mapping[str, Any]]) -> dict | None:
    """How the match ended during this hand (``reason``, ``seat``, ``winner``), if it did."""
    for e in hand_events:
        if e["type"] == "match_ended":
            return {"reason": e["data"]["reason"], "seat": e["data"].get("seat"), "winner": e["data"]["winner"]}
    return None


def hand_summary(hand_events: Sequence[Mapping[str, Any]]) -> dict:
    dealt = hand_events[0]
    ended = next((e for e in hand_events if e["type"] == "hand_ended"), None)
    summary = {
        "hand": dealt["data"]["hand"],
        "starter": dealt["data"]["starter"],
        "status": "over" if ended else "in_progress",
        "first_seq": dealt["seq"],
        "last_seq": hand_events[-1]["seq"],
        "result": None,
        "winner": None,
        "points": None,
        "scores": None,
        "match_end": match_end_during(hand_events),
    }
    if summary["match_end"] is not None:
        summary["status"] = "over"
    if ended:
        data = ended["data"]
        summary.update(result=data["result"], winner=data["winner"], points=data["points"], scores=data["scores"])
    return summary


def hand_detail(hand_events: Sequence[Mapping[str, Any]]) -> dict:
    """A finished (or, for the operator, running) hand in full: the deal, every play,
    the knock, both arrangements with the layoffs, and the score."""
    dealt = hand_events[0]["data"]
    deck, starter = dealt["deck"], dealt["starter"]
    first, second = deck[0:10], deck[10:20]
    plays, knock, defense, ended = [], None, None, None
    for e in hand_events[1:]:
        t, d = e["type"], e["data"]
        if t == "upcard_passed":
            plays.append({"seq": e["seq"], "seat": d["seat"], "action": "pass"})
        elif t == "card_drawn":
            plays.append({"seq": e["seq"], "seat": d["seat"], "action": "draw", "source": d["source"], "card": d["card"]})
        elif t == "card_discarded":
            plays.append({"seq": e["seq"], "seat": d["seat"], "action": "discard", "card": d["card"]})
        elif t == "knocked":
            action = "big_gin" if d.get("big_gin") else "gin" if d["gin"] else "knock"
            plays.append({"seq": e["seq"], "seat": d["seat"], "action": action, "card": d["card"]})
            knock = d
        elif t == "defended":
            defense = d
        elif t == "hand_ended":
            ended = d
    return {
        **hand_summary(hand_events),
        "deal": {
            "hands": [first, second] if starter == 0 else [second, first],
            "upcard": deck[20],
            "stock": deck[21:],
            "commitment": dealt["commitment"],
            "salt": dealt["salt"],
            "commitment_valid": commitment_of(deck, dealt["salt"]) == dealt["commitment"],
        },
        "plays": plays,
        "knock": knock,
        "defense": defense,
        # (``doubled`` and ``games`` only where the rules play them: Oklahoma, Hollywood.)
        "end": ended and {k: ended[k] for k in ("result", "winner", "points", "scores", "doubled", "games") if k in ended},
    }


def audit(events: Sequence[Mapping[str, Any]]) -> dict:
    """Recompute every hand from the play and check every deal's commitment.

    The replay re-decides every move, so each ``knocked``, ``defended`` and
    ``hand_ended`` is recomputed from the cards and compared with what is stored: any
    score that does not follow from the play is reported with its event.
    """
    problems = []
    try:
        replay(events)
    except ReplayError as exc:
        event = events[exc.index] if exc.index < len(events) else None
        problems.append(
            {"seq": event and event.get("seq"), "index": exc.index, "rule": exc.rule, "detail": str(exc)}
        )
    hands = []
    for hand_events in split_hands(events):
        dealt = hand_events[0]["data"]
        summary = hand_summary(hand_events)
        ok_commitment = commitment_of(dealt["deck"], dealt["salt"]) == dealt["commitment"]
        if not ok_commitment:
            problems.append(
                {"seq": hand_events[0]["seq"], "rule": "commitment_mismatch", "detail": f"hand {summary['hand']}: the deck and salt do not give the commitment"}
            )
        hands.append({**summary, "commitment_valid": ok_commitment})
    return {"ok": not problems, "events": len(events), "hands": hands, "problems": problems}


SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def pretty(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUITS[card[1]]


def cards_text(cards: Sequence[str]) -> str:
    return " ".join(pretty(c) for c in cards) or "—"


def hand_text(detail: Mapping[str, Any], seat_names: Sequence[str]) -> str:
    """A hand told as text, for ``gin-rummy replay``."""
    lines = [f"Hand {detail['hand']} — {seat_names[detail['starter']]} starts"]
    deal = detail["deal"]
    for seat, cards in enumerate(deal["hands"]):
        lines.append(f"  {seat_names[seat]:<16} dealt {cards_text(sorted(cards, key=_order))}")
    lines.append(f"  upcard {pretty(deal['upcard'])}; commitment {deal['commitment'][:16]}… "
                 f"({'valid' if deal['commitment_valid'] else 'INVALID'})")
    for play in detail["plays"]:
        who = seat_names[play["seat"]]
        if play["action"] == "pass":
            lines.append(f"  {play['seq']:>4}  {who} passes the upcard")
        elif play["action"] == "draw":
            lines.append(f"  {play['seq']:>4}  {who} draws {pretty(play['card'])} from the {play['source']}")
        elif play["action"] == "discard":
            lines.append(f"  {play['seq']:>4}  {who} discards {pretty(play['card'])}")
        elif play["action"] == "big_gin":
            lines.append(f"  {play['seq']:>4}  {who} lays down all eleven cards with {pretty(play['card'])}: Big Gin")
        else:
            lines.append(f"  {play['seq']:>4}  {who} discards {pretty(play['card'])} and {'goes Gin' if play['action'] == 'gin' else 'knocks'}")
    if detail["knock"]:
        k = detail["knock"]
        lines.append(f"  {seat_names[k['seat']]} lays out " + "  ".join(cards_text(m) for m in k["melds"])
                     + f"; deadwood {cards_text(k['deadwood_cards'])} = {k['deadwood']}")
    if detail["defense"]:
        d = detail["defense"]
        layoffs = ", ".join(f"{pretty(x['card'])} on meld {x['meld'] + 1}" for x in d["layoffs"]) or "none"
        lines.append(f"  {seat_names[d['seat']]} melds " + ("  ".join(cards_text(m) for m in d["melds"]) or "nothing")
                     + f"; lays off {layoffs}; deadwood {cards_text(d['deadwood_cards'])} = {d['deadwood']}")
    end = detail["end"]
    stopped = detail.get("match_end")
    if end:
        if end["winner"] is None:
            lines.append("  Dead hand: nobody scores.")
        else:
            lines.append(f"  {end['result'].capitalize()}: {seat_names[end['winner']]} scores {end['points']}. "
                         f"Totals {end['scores'][0]}–{end['scores'][1]}.")
    elif stopped:
        lines.append("  " + ending_text(stopped, seat_names))
    else:
        lines.append("  (the hand is still being played)")
    return "\n".join(lines)


def ending_text(end: Mapping[str, Any], seat_names: Sequence[str]) -> str:
    """How a match ended other than by the score, as a sentence."""
    seat = end.get("seat")
    who = seat_names[seat] if seat is not None else "?"
    if end["reason"] == "resigned":
        return f"{who} resigns: {seat_names[end['winner']]} wins the match."
    if end["reason"] == "timeout":
        # The claimer is the winner; a record file `gin-rummy replay` reads is checked only
        # against its schema, which lets a timeout's end leave out its seat.
        claimer = seat if seat is not None else end.get("winner")
        if not isinstance(claimer, int) or claimer not in (0, 1):
            return "A seat's time ran out: the match is over."
        return f"{seat_names[1 - claimer]}'s time ran out: {seat_names[claimer]} claims the match."
    if end["reason"] == "aborted":
        return f"{who} called the match off before anyone joined."
    return "The match is over."


def match_text(events: Sequence[Mapping[str, Any]], seat_names: Sequence[str]) -> list[str]:
    """What happened outside the hands: who joined, and a match called off."""
    lines = []
    for e in events:
        if e["type"] == "seat_joined":
            lines.append(f"{e['data']['name']} joins, in seat {e['data']['seat'] + 1}.")
        elif e["type"] == "match_ended" and e["data"]["reason"] == "aborted":
            lines.append(ending_text(e["data"], seat_names))
    return lines


def _order(card: str) -> tuple[int, int]:
    return ("CDHS".index(card[1]), "A23456789TJQK".index(card[0]))
