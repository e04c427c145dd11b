import pytest

from service.engine import DECK, CardError, card_value, parse_cards, sort_cards


def test_deck_has_52_distinct_two_character_codes():
    assert len(DECK) == 52 and len(set(DECK)) == 52
    assert {c[0] for c in DECK} == set("A23456789TJQK")
    assert {c[1] for c in DECK} == set("CDHS")


@pytest.mark.parametrize(("card", "value"), [("AS", 1), ("2C", 2), ("9H", 9), ("TD", 10), ("JC", 10), ("QH", 10), ("KS", 10)])
def test_card_values_ace_one_faces_ten(card, value):
    assert card_value(card) == value


@pytest.mark.parametrize("bad", ["10D", "1S", "AX", "as", "", "T", None, 7, "KSS"])
def test_anything_but_a_card_code_is_refused_naming_the_input(bad):
    with pytest.raises(CardError) as err:
        parse_cards([bad])
    assert repr(bad) in str(err.value)


def test_a_card_given_twice_is_refused():
    with pytest.raises(CardError, match="7H"):
        parse_cards(["7H", "2C", "7H"])


def test_a_bare_string_is_not_taken_for_a_list_of_cards():
    with pytest.raises(CardError):
        parse_cards("AS")


def test_sorting_by_suit_or_by_rank():
    cards = ["KS", "AH", "2C", "AC"]
    assert sort_cards(cards) == ["AC", "2C", "AH", "KS"]
    assert sort_cards(cards, by="rank") == ["AC", "AH", "2C", "KS"]
