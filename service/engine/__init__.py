"""The pure Gin Rummy engine: rules, melds, layoffs, the decider and seat views.

Imports nothing outside the standard library.

>>> best_melds(["AS", "2S", "3S", "7H", "7D", "7C", "KD", "QH", "4C", "9D"]).deadwood
33
"""

from .cards import DECK, CardError, card_value, parse_cards, sort_cards
from .errors import CommandError, EngineError, IllegalMoveError
from .game import (
    Event,
    State,
    check_hint,
    commitment_of,
    decide,
    evolve,
    execute,
    fold,
    legal_actions,
)
from .layoffs import Defense, best_defense, best_layout, check_defense
from .melds import Arrangement, best_discards, best_melds, check_arrangement, deadwood, discard_deadwoods, meld_kind
from .rules import PRESET_DESCRIPTIONS, PRESETS, Rules, RulesError, resolve_rules
from .views import hand_history, redact_event, seat_view

__all__ = [
    "DECK",
    "PRESETS",
    "PRESET_DESCRIPTIONS",
    "Arrangement",
    "CardError",
    "CommandError",
    "Defense",
    "EngineError",
    "Event",
    "IllegalMoveError",
    "Rules",
    "RulesError",
    "State",
    "best_defense",
    "best_discards",
    "best_layout",
    "best_melds",
    "card_value",
    "check_arrangement",
    "check_defense",
    "commitment_of",
    "deadwood",
    "decide",
    "discard_deadwoods",
    "evolve",
    "execute",
    "fold",
    "hand_history",
    "check_hint",
    "legal_actions",
    "meld_kind",
    "parse_cards",
    "redact_event",
    "resolve_rules",
    "seat_view",
    "sort_cards",
]
