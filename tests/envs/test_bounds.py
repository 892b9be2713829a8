"""Every count bounded, one checked JSON reader (strict, finite), errors quote a short excerpt only."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import pytest

from cardlab.agents.bot import load_bot
from cardlab.envs import env_class, huit_v1, switch_v1
from cardlab.envs.checked_json import MAX_DEPTH, excerpt, read_json
from cardlab.envs.game_spec import games, get_spec
from cardlab.envs.options import COUNT_HIGH, TOTAL_HIGH
from tests.fakebots import fake_bot


def deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def test_every_whole_number_option_of_every_game_has_an_upper_bound() -> None:
    for game_id in games():
        options = get_spec(game_id).make({}).rules
        for field in dataclasses.fields(options):
            low, high = type(options).limits(field.name)
            if low is not None:
                assert high is not None and high <= COUNT_HIGH, (game_id, field.name)


@pytest.mark.parametrize(("make", "name"), [
    (huit_v1.env, "target_score"), (huit_v1.env, "streak_length"), (huit_v1.env, "streak_bonus"),
    (huit_v1.env, "max_turns"), (switch_v1.env, "target_score"), (switch_v1.env, "max_turns"),
    (switch_v1.env, "hand_size"),
])
def test_huge_rule_options_are_refused_naming_the_range(make: Any, name: str) -> None:
    with pytest.raises(ValueError, match=rf"rule option {name}=<a number of about 400 digits> is out of "
                                         r"range; accepted: \d+ to [\d,]+$"):
        make(**{name: 10**400})


@pytest.mark.parametrize("game", ["huit", "switch"])
@pytest.mark.parametrize(("key", "value"), [
    ("scores", [10**400, 0]), ("scores", [TOTAL_HIGH + 1, 0]), ("hands_played", 10**400),
    ("hand_points", [10**400, 0]), ("score_changes", [0, -(10**400)]),
])
def test_huge_saved_counts_are_refused_at_restore(game: str, key: str, value: Any) -> None:
    env = env_class(game)(num_players=2)
    env.reset(seed=1)
    state = env.state_dict()
    state[key] = value
    fresh = env_class(game)(num_players=2)
    with pytest.raises(ValueError, match=rf"saved state field '{key}'(\[\d\])? must be a whole number "
                                         rf"-?\d+\.\.{TOTAL_HIGH}, got"):
        fresh.reset(options={"state": state})


def test_huge_scores_of_a_stacked_deal_are_refused() -> None:
    env = huit_v1.env(num_players=2)
    deal = {"hands": [["9S"], ["7C"]], "scores": [10**400, 0]}
    with pytest.raises(ValueError, match=r"deal\['scores'\] must be a list of 2 whole numbers from "
                                         r"-1,000,000,000 to 1,000,000,000, got \[<a number"):
        env.reset(seed=0, options={"deal": deal})


@pytest.mark.parametrize(("text", "words"), [
    ("[" * 100_000, f"nests arrays/objects more than {MAX_DEPTH} deep"),
    ("1" * 5_000, "a number of 5,000 characters (at most 100 accepted)"),
    ('{"a": 1e' + "9" * 200 + "}", "a number of"),
    ('{"a": NaN}', "NaN is not a JSON number"),
    (b"\xff\xfe", "is not UTF-8 text"),
    ("[1,", "is not valid JSON"),
], ids=["deep", "long-int", "long-float", "nan", "not-utf8", "truncated"])
def test_the_checked_reader_refuses_with_one_short_value_error(text: Any, words: str) -> None:
    with pytest.raises(ValueError, match="the thing") as info:
        read_json(text, "the thing")
    assert words in str(info.value) and len(str(info.value)) < 300


def test_the_checked_reader_refuses_large_text_before_parsing() -> None:
    with pytest.raises(ValueError, match="larger than 10 bytes"):
        read_json("[" + "1," * 100 + "1]", "x", max_bytes=10)


def test_excerpt_is_short_and_never_recurses() -> None:
    for value in (deep(5_000), "x" * 100_000, 10**5000, {"k" * 1000: deep(3000)}, list(range(100_000))):
        assert len(excerpt(value)) <= 80


def test_a_deeply_nested_saved_field_is_refused_without_recursion_error() -> None:
    env = huit_v1.env(num_players=2)
    env.reset(seed=1)
    state = env.state_dict()
    state["hands"] = [deep(1_000), []]
    with pytest.raises(ValueError) as info:
        huit_v1.env(num_players=2).reset(options={"state": state})
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("make", [huit_v1.env, switch_v1.env])
def test_errors_echo_a_short_excerpt_of_huge_input(make: Any) -> None:
    with pytest.raises(ValueError, match="unknown rule option") as info:
        make(**{"x" * 100_000: 1})
    assert len(str(info.value)) < 300
    env = make(num_players=2)
    cards = ["9S"] * 100_000
    for deal in ({"hands": [cards, ["7C"]]}, {"hands": cards}, {"hands": [["9S"], ["7C"]], "x" * 100_000: 1}):
        with pytest.raises(ValueError) as info:
            env.reset(seed=0, options={"deal": {"starter": "9H", **deal}})
        assert len(str(info.value)) < 300, str(info.value)[:400]
    with pytest.raises(ValueError) as info:
        env.reset(seed=0)
        env.step(env.str_to_action("play " + "Z" * 100_000))
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(("text", "where"), [
    ('{"meta": {"num_players": 1e400}}', "['meta']['num_players']"),
    ('{"w": [0.5, -1E999]}', "['w'][1]"),
    ("1e400", "the top"),
], ids=["nested-key", "list-item", "top"])
def test_the_checked_reader_refuses_numbers_that_overflow_to_infinity_naming_the_key(
        text: str, where: str) -> None:
    """Strict JSON has no Infinity; `1e400` would otherwise be read as `inf` without a word."""
    with pytest.raises(ValueError, match="the thing") as info:
        read_json(text, "the thing")
    assert f"at {where} is too large to be finite" in str(info.value)
    assert read_json('{"a": 1.7e308, "b": -2e-400}', "x") == {"a": 1.7e308, "b": -0.0}


def test_a_bot_file_with_an_infinite_player_count_is_refused(tmp_path: pathlib.Path) -> None:
    path = fake_bot(tmp_path, "bot", "huit", 2)
    text = path.read_text()
    assert '"num_players": 2' in text
    path.write_text(text.replace('"num_players": 2', '"num_players": 1e400', 1))
    with pytest.raises(ValueError, match=r"\['num_players'\] is too large to be finite"):
        load_bot(path)
