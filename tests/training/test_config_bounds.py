"""Every number of a training config is bounded at validation, and the YAML reader bounds nesting and
number literals: each refusal is one line naming the key (and the file, when it comes from one)."""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Any

import pytest
import yaml

from cardlab.agents.bot import MAX_HIDDEN_LAYERS, MAX_LAYER_UNITS, MAX_PARAMETERS
from cardlab.envs.declared import Declared
from cardlab.training.arena.single_seat import make_game_env
from cardlab.training.harness.config import TrainConfig, config_from_dict, load_config
from cardlab.training.harness.config_bounds import (
    ROLLOUT_HIGH,
    SEED_HIGH,
    bounded,
    check_bounds,
    check_choices,
    numbers,
    word,
)
from tests.training.test_config import small


def refusal(data: Any) -> str:
    with pytest.raises(ValueError) as info:
        config_from_dict(data)
    message = str(info.value)
    assert "\n" not in message and len(message) < 600  # one line, bounded (the accepted keys may be listed)
    return message


def with_value(pattern: str, value: Any) -> dict[str, Any]:
    """The small valid config with the number at `pattern` (a list item as ``[]``: the first) set."""
    data = small()
    if pattern == "opponents[].weight":
        return {**data, "opponents": [{"spec": "random", "weight": value}]}
    if pattern == "policy.net_arch[]":
        return {**data, "policy": {"net_arch": [value]}}
    *sections, key = pattern.split(".")
    section = data
    for name in sections:
        section = section.setdefault(name, {})
    section[key] = value
    return data


def test_every_number_of_the_config_is_declared_and_its_default_holds() -> None:
    """`numbers` refuses a number field not declared with `option`; the ones left unbounded say why."""
    for path, bound, value in numbers(TrainConfig()):
        assert bound.in_range(value), (path, value)
        assert bound.low is not None or bound.name in ("num_players", "actors"), bound.name


DEFAULTS = {bound.name: value for _, bound, value in numbers(TrainConfig())}
RANGED = list({b.name: b for _, b, _ in numbers(TrainConfig()) if b.low is not None}.items())


@pytest.mark.parametrize(("pattern", "bound"), RANGED, ids=[p for p, _ in RANGED])
def test_a_number_past_either_end_of_its_range_is_refused_naming_the_key(pattern: str, bound: Declared
                                                                         ) -> None:
    assert bound.low is not None and bound.high is not None
    whole = isinstance(DEFAULTS[pattern], int)
    key = pattern.replace("[]", "[0]")
    too_high = bound.high + 1 if whole else bound.high * 2
    message = refusal(with_value(pattern, int(too_high) if whole else too_high))
    assert message.startswith(f"{key}=") and " is out of range; accepted: " in message
    too_low = bound.low if bound.above else bound.low - 1
    assert refusal(with_value(pattern, int(too_low) if whole else float(too_low))).startswith(f"{key}=")
    if not whole:
        for value in (float("inf"), float("nan")):
            assert refusal(with_value(pattern, value)).startswith(f"{key}=")


_GAME = make_game_env("huit", 2).game
HUIT_60K = (_GAME.layout.size + 1) * 60_000 + 60_001 * 60_000 + 60_001 * _GAME.num_actions
"""weights and biases of a Huit 2p actor with two hidden layers of 60,000 units"""


@pytest.mark.parametrize(("changes", "words"), [
    ({"ppo": {"learning_rate": 1e400}},
     "ppo.learning_rate=inf is out of range; accepted: a value > 0 and <= 1"),
    ({"opponents": [{"spec": "random", "weight": float("inf")}]}, "opponents[0].weight=inf is out of range"),
    ({"seed": 2**40}, f"seed=1099511627776 is out of range; accepted: a value >= 0 and <= {SEED_HIGH:,}"),
    ({"seed": 10**400}, "seed=<a number of about 400 digits> is out of range"),
    ({"ppo": {"learning_rate": 10**400}}, "ppo.learning_rate=<a number of about 400 digits> is out of range"),
    ({"policy": {"net_arch": [100_000, 100_000]}},
     f"policy.net_arch[0]=100000 is out of range; accepted: layer sizes >= 1 and <= {MAX_LAYER_UNITS:,}"),
    ({"policy": {"net_arch": [60_000, 60_000]}}, "policy.net_arch=[60000, 60000] makes an actor of "
                                                  f"{HUIT_60K:,} parameters: use at most {MAX_PARAMETERS:,}"),
    ({"policy": {"net_arch": [8] * (MAX_HIDDEN_LAYERS + 1)}},
     f"policy.net_arch has {MAX_HIDDEN_LAYERS + 1} hidden layers: use at most {MAX_HIDDEN_LAYERS}"),
    ({"num_envs": 4096, "ppo": {"n_steps": 1024, "batch_size": 32}},
     "ppo.n_steps=1024 is not accepted with num_envs: 4096 (4,194,304 transitions per rollout); accepted: "
     f"ppo.n_steps * num_envs <= {ROLLOUT_HIGH:,} (each transition holds an observation in memory)"),
], ids=["lr-1e400", "weight-inf", "seed-2**40", "seed-400-digits", "lr-400-digits", "wide-layers",
        "parameters", "layers", "rollout"])
def test_out_of_reason_numbers_are_refused_in_one_line(changes: dict[str, Any], words: str) -> None:
    data = small()
    data.update(changes)
    assert words in refusal(data)


def test_the_ends_of_the_ranges_are_accepted() -> None:
    cfg = config_from_dict(small(seed=SEED_HIGH, policy={"net_arch": [1024, 1024]}))
    assert cfg.seed == SEED_HIGH


def yaml_refusal(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300 and str(path) in message
    return message


def test_a_yaml_nested_thousands_deep_is_refused_without_recursion_error(tmp_path: pathlib.Path) -> None:
    text = yaml.safe_dump(small()) + "rules: " + "[" * 3000 + "]" * 3000 + "\n"
    message = yaml_refusal(tmp_path, text)
    assert "rules[0][0]" in message and "nests more than 32 levels deep" in message


def test_a_5001_digit_seed_names_the_file_the_key_and_the_line(tmp_path: pathlib.Path) -> None:
    message = yaml_refusal(tmp_path, "game: huit\nseed: " + "7" * 5001 + "\n")
    assert "seed is a number of 5,001 characters (line 2); at most 100 are accepted" in message
    weight = "1" + "0" * 200 + ".0"
    message = yaml_refusal(tmp_path, f"game: huit\nopponents:\n- {{spec: random, weight: {weight}}}\n")
    assert "opponents[0].weight is a number of 203 characters (line 3)" in message


def test_infinite_numbers_in_yaml_are_refused_naming_the_key(tmp_path: pathlib.Path) -> None:
    text = yaml.safe_dump(small())
    huge_rate = text.replace("ppo:", "ppo:\n  learning_rate: 1e400")
    assert "ppo.learning_rate=inf" in yaml_refusal(tmp_path, huge_rate)
    infinite_weight = text.replace("opponents:\n- random\n", "opponents:\n- spec: random\n  weight: .inf\n")
    assert "opponents[0].weight=inf" in yaml_refusal(tmp_path, infinite_weight)


def test_an_unknown_key_of_any_length_is_named_cut_short() -> None:
    """Found by fuzzing: a 2,000-character unknown key was echoed whole."""
    message = refusal(small(**{"x" * 2000: 1, "seeed": 1}))
    assert message.startswith("unknown config key(s) seeed, xxx")
    assert "; accepted: name, seed, game, " in message


@dataclasses.dataclass
class MadeUpSection:
    """A made-up config section: its number declared once, on the field."""

    made_up: float = bounded(0.5, 0, 2, above=True)
    """a made-up coefficient"""
    made_up_sizes: list[int] = bounded([4], 1, 8)
    """made-up layer sizes, each bounded"""
    made_up_word: str = word("left", ("left", "right"))
    """a made-up word of fixed choices"""


@dataclasses.dataclass
class MadeUpConfig:
    seed: int = bounded(1, 0, SEED_HIGH)
    """a seed"""
    section: MadeUpSection = dataclasses.field(default_factory=MadeUpSection)
    """the made-up section"""


def test_a_made_up_config_number_declared_once_is_checked_naming_its_key_in_one_line() -> None:
    check_bounds(MadeUpConfig())
    sizes = MadeUpConfig(section=MadeUpSection(made_up_sizes=[2, 3]))
    assert [(path, bound.name) for path, bound, _ in numbers(sizes)] == [
        ("seed", "seed"), ("section.made_up", "section.made_up"),
        ("section.made_up_sizes[0]", "section.made_up_sizes[]"),
        ("section.made_up_sizes[1]", "section.made_up_sizes[]")]
    refused = {"section.made_up=0.0 is out of range; accepted: a value > 0 and <= 2":
               MadeUpSection(made_up=0.0),
               "section.made_up_sizes[1]=9 is out of range; accepted: a value >= 1 and <= 8": MadeUpSection(
                   made_up_sizes=[4, 9])}
    for words, section in refused.items():
        with pytest.raises(ValueError, match=f"^{re.escape(words)}$"):
            check_bounds(MadeUpConfig(section=section))


def test_a_made_up_config_word_declared_once_is_checked_naming_its_key_and_the_choices() -> None:
    check_choices(MadeUpConfig(section=MadeUpSection(made_up_word="right")))
    with pytest.raises(ValueError, match=r"^section\.made_up_word='up' is not one of the choices; accepted: "
                                         r"'left', 'right'$"):
        check_choices(MadeUpConfig(section=MadeUpSection(made_up_word="up")))


def test_a_config_number_not_declared_is_a_bug_found_at_once() -> None:
    @dataclasses.dataclass
    class Undeclared:
        count: int = 3

    with pytest.raises(TypeError, match=r"^config field count has no range: declare it with option\(\)$"):
        numbers(Undeclared())
