"""Scores beyond a hand's points: the games a hand's points go to, when a match ends,
and the settling of a finished game with its bonuses.

A *game* is a race to ``target_score``.  Without ``hollywood`` a match is one game, the
running scores.  Under ``hollywood`` three games run at once: a player's first hand won
is entered in game one, its second in games one and two, its third and every later one
in all three -- in each of those games that is still open (a game is decided when a
total in it reaches the target; after that it takes no entries).  A player shut out of
a game (it was decided before the player entered a score there) makes its next score the
first entry of the next game in play: each win opens one more game for its winner, and
at least the first game still in play.  The games are decided in order, one, two,
three.  The match ends when all three games are decided, and its winner is the player
who won two or more of them.

A game's settlement (``settle``): each player's total is its points plus ``box_bonus``
for each hand it won in that game; the game's winner adds ``game_bonus``; and under
``shutout_doubles`` a winner whose opponent won no hand in the game doubles its total.

>>> from .rules import resolve_rules
>>> rules = resolve_rules({"preset": "hollywood"})
>>> games = new_games()
>>> for seat, points in [(0, 30), (0, 40), (1, 20), (0, 50)]:
...     games = enter(rules, games, seat, points)
>>> [g["scores"] for g in games], [g["winner"] for g in games]
([[120, 20], [90, 0], [50, 0]], [0, None, None])
>>> settle(rules, games[0])["totals"]  # 120 + 3 boxes of 25 + 100; 20 + one box
[295, 45]
"""

from __future__ import annotations

from typing import Any

from .rules import Rules

#: Games run at once under ``hollywood``.
HOLLYWOOD_GAMES = 3

Game = dict[str, Any]


def new_games() -> tuple[Game, ...]:
    """Hollywood's three games before the first hand."""
    return tuple({"scores": [0, 0], "hands": [0, 0], "winner": None} for _ in range(HOLLYWOOD_GAMES))


def opened(games: tuple[Game, ...], seat: int) -> int:
    """How many games ``seat`` has entered scores in: one past the last game holding a
    hand it won (each win is entered in the newest game its winner has opened)."""
    return max((i + 1 for i, game in enumerate(games) if game["hands"][seat]), default=0)


def enter(rules: Rules, games: tuple[Game, ...], seat: int, points: int) -> tuple[Game, ...]:
    """The games after ``seat`` won a hand for ``points``: the win opens one more game
    for ``seat`` (and at least the first game still in play), and is entered in each
    game it has opened that is still open."""
    first_open = next(i for i, game in enumerate(games) if game["winner"] is None)
    reach = min(len(games), max(opened(games, seat) + 1, first_open + 1))
    out = []
    for i, game in enumerate(games):
        if i < reach and game["winner"] is None:
            scores, hands = list(game["scores"]), list(game["hands"])
            scores[seat] += points
            hands[seat] += 1
            game = {"scores": scores, "hands": hands, "winner": seat if scores[seat] >= rules.target_score else None}
        out.append(game)
    return tuple(out)


def hollywood_winner(games: tuple[Game, ...]) -> int | None:
    """The match's winner once every game is decided (the player with most games won),
    else None."""
    if any(g["winner"] is None for g in games):
        return None
    won = [sum(1 for g in games if g["winner"] == seat) for seat in (0, 1)]
    return 0 if won[0] > won[1] else 1


def settle(rules: Rules, game: Game) -> Game:
    """A finished game with each player's total: its points, ``box_bonus`` a hand it
    won there, ``game_bonus`` to the winner, doubled for a shutout."""
    winner = game["winner"]
    totals = [game["scores"][seat] + rules.box_bonus * game["hands"][seat] for seat in (0, 1)]
    shutout = False
    if winner is not None:
        totals[winner] += rules.game_bonus
        if rules.shutout_doubles and game["hands"][1 - winner] == 0:
            shutout = True
            totals[winner] *= 2
    return {**game, "totals": totals, "shutout": shutout}


def settlement(rules: Rules, games: tuple[Game, ...]) -> dict[str, Any]:
    """What ``match_ended`` records of the games under match bonuses: each game settled,
    and the totals summed over them."""
    settled = [settle(rules, game) for game in games]
    return {"games": settled, "totals": [sum(g["totals"][seat] for g in settled) for seat in (0, 1)]}
