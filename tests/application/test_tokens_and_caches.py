"""Tokens (format, hash, parse) and the one cache mechanism."""

from __future__ import annotations

import uuid

from service.application import tokens
from service.lru import LRU


def test_a_seat_token_names_its_match_and_a_player_token_its_player():
    match_id, player_id = uuid.uuid4(), uuid.uuid4()
    seat, player = tokens.seat_token(match_id), tokens.player_token(player_id)
    assert tokens.match_of_token(seat) == match_id and tokens.player_of_token(seat) is None
    assert tokens.player_of_token(player) == player_id and tokens.match_of_token(player) is None
    assert len(seat.split(".")[2]) == 43  # 32 random bytes, base64url
    assert tokens.seat_token(match_id) != seat
    assert tokens.match_of_token("gr1.not-hex.x") is None and tokens.match_of_token("gr1.ab") is None


def test_only_a_hash_is_compared_and_the_operator_token_in_constant_time():
    code = tokens.new_invite()
    assert tokens.invite_matches(code, tokens.hash_token(code))
    assert not tokens.invite_matches(code + "x", tokens.hash_token(code))
    assert tokens.same_secret("op", "op") and not tokens.same_secret("op", "op2")
    assert tokens.hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256


def test_the_cache_forgets_the_least_recently_used_and_computes_in_place():
    seen: LRU[str, int] = LRU(2)
    seen.put("a", 1)
    seen.put("b", 2)
    assert seen.get("a") == 1  # a is now the most recent
    seen.put("c", 3)
    assert seen.get("b") is None and seen.keys() == ["a", "c"]
    assert seen.compute("a", lambda old: (old + 10, old)) == 1 and seen.get("a") == 11
    assert seen.compute("c", lambda old: (None, "kept")) == "kept" and seen.get("c") == 3
    nothing: LRU[str, int] = LRU(0)
    nothing.put("a", 1)
    assert nothing.get("a") is None and len(nothing) == 0
