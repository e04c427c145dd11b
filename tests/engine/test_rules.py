import pytest

from service.engine import PRESETS, RulesError, resolve_rules


def test_default_is_the_classic_preset():
    r = resolve_rules()
    assert (r.preset, r.upcard_offer, r.dead_hand_stock, r.gin_bonus, r.undercut_bonus, r.knock_limit) == (
        "classic", False, 0, 25, 25, 10,
    )


def test_each_seed_ruleset_is_a_preset():
    assert {"classic", "short-stock", "upcard-offer", "bonus-20-10"} <= set(PRESETS)
    assert set(PRESETS) - {"classic", "short-stock", "upcard-offer", "bonus-20-10"} == {"oklahoma", "straight", "hollywood"}
    assert PRESETS["short-stock"].dead_hand_stock == 2 and not PRESETS["short-stock"].upcard_offer
    assert PRESETS["upcard-offer"].upcard_offer and PRESETS["upcard-offer"].dead_hand_stock == 2
    b = PRESETS["bonus-20-10"]
    assert (b.gin_bonus, b.undercut_bonus, b.upcard_offer, b.dead_hand_stock) == (20, 10, True, 2)
    assert b.knocker_arranges and b.defender_arranges


def test_overrides_apply_on_top_of_a_preset():
    r = resolve_rules({"preset": "short-stock", "gin_bonus": 30, "single_hand": True})
    assert (r.preset, r.dead_hand_stock, r.gin_bonus, r.single_hand) == ("short-stock", 2, 30, True)


@pytest.mark.parametrize(
    ("spec", "parameter"),
    [
        ({"knock_limit": 11}, "knock_limit"),
        ({"knock_limit": -1}, "knock_limit"),
        ({"gin_bonus": "25"}, "gin_bonus"),
        ({"target_score": 0}, "target_score"),
        ({"upcard_offer": 1}, "upcard_offer"),
        ({"dead_hand_stock": 2.0}, "dead_hand_stock"),
        ({"big_gin": 31}, "big_gin"),
        ({"preset": "gulf"}, "preset"),
        ({"starter": "winner"}, "starter"),
        ({"starter": 0}, "starter"),
        ({"starter": None}, "starter"),
    ],
)
def test_values_outside_the_sensible_range_are_refused_naming_the_parameter(spec, parameter):
    with pytest.raises(RulesError) as err:
        resolve_rules(spec)
    assert err.value.parameter == parameter
    assert parameter in str(err.value)


def test_resolved_rules_resolve_to_themselves():
    r = resolve_rules({"preset": "bonus-20-10", "knock_limit": 7})
    assert resolve_rules(r.to_json()) == r


def test_the_starter_defaults_to_alternate_and_is_recorded_only_otherwise():
    from service.engine.rules import rules_from_json

    default = resolve_rules()
    assert default.starter == "alternate" and "starter" not in default.to_json()
    assert default.to_json(complete=True)["starter"] == "alternate"
    assert rules_from_json(default.to_json()) == default  # a record from before the parameter
    loser = resolve_rules({"preset": "short-stock", "starter": "loser"})
    assert loser.to_json()["starter"] == "loser" and rules_from_json(loser.to_json()) == loser
    assert all(p.starter == "alternate" for p in PRESETS.values())
