"""One wording of a refused option value for the three kinds of option (rule options, search options,
training config keys): ``[KIND ]KEY=VALUE is PROBLEM; accepted: WHAT``, from
`cardlab.envs.declared.refusal`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from cardlab.agents.search_options import SearchOptions
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import CHOICE, KIND, RANGE
from cardlab.training.harness.config import config_from_dict
from tests.training.test_config import small


def rules(**values: Any) -> Callable[[], Any]:
    return lambda: make_game("huit", values)


def search(**values: Any) -> Callable[[], Any]:
    return lambda: SearchOptions(**values)


def config(**changes: Any) -> Callable[[], Any]:
    return lambda: config_from_dict(small(**changes))


CASES = [
    ("rule option ", "target_score", 0, RANGE, rules(target_score=0)),
    ("rule option ", "memory", 1, KIND, rules(memory=1)),
    ("rule option ", "hand_size", "lots", KIND, rules(hand_size="lots")),
    ("search option ", "worlds", 99_999, RANGE, search(worlds=99_999)),
    ("search option ", "level", "fast", CHOICE, search(level="fast")),
    ("search option ", "worlds", True, KIND, search(worlds=True)),
    ("", "ppo.gamma", 2.0, RANGE, config(ppo={"gamma": 2.0})),
    ("", "vec_env", "ray", CHOICE, config(vec_env="ray")),
    ("", "ppo.n_steps", "many", KIND, config(ppo={"n_steps": "many"})),
    ("", "game", "chess", CHOICE, config(game="chess")),
]


@pytest.mark.parametrize(("kind", "key", "value", "problem", "make"), CASES,
                         ids=[f"{kind}{key}-{problem}" for kind, key, _, problem, _ in CASES])
def test_every_kind_of_option_refuses_a_bad_value_in_the_one_shape(
        kind: str, key: str, value: Any, problem: str, make: Callable[[], Any]) -> None:
    with pytest.raises(ValueError) as info:
        make()
    shape = rf"^{re.escape(kind + key)}={re.escape(excerpt(value))} is {problem}; accepted: \S[^\n]*$"
    assert re.match(shape, str(info.value)), str(info.value)
