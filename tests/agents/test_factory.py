"""MODULE:FACTORY agent specs: a user's module on the Python path, its factory called with (game, seed)."""

from __future__ import annotations

import numpy as np
import pytest

from cardlab.agents.agent_spec import is_factory_spec, make_agent, spec_names
from cardlab.agents.base import RandomAgent
from cardlab.envs import make_game

MODULE = "tests.agents.factory_module"


def test_factory_specs_are_dotted_names_around_one_colon_never_bot_or_search() -> None:
    assert is_factory_spec(f"{MODULE}:make") and is_factory_spec("my_agent:make")
    for spec in ("bot:huit-2p", "search:bot:huit-2p", "search:expert", "expert", "a:b:c", "my agent:make",
                 "mod:", ":make", "1mod:make"):
        assert not is_factory_spec(spec), spec
    assert "MODULE:FACTORY" in spec_names(make_game("huit"))


def test_the_factory_gets_the_game_and_the_seed() -> None:
    game = make_game("huit", {"num_players": 2})
    agent = make_agent(f"{MODULE}:make", game, seed=5)
    assert isinstance(agent, RandomAgent) and agent.game == game
    assert agent.rng.integers(10**9) == np.random.default_rng(5).integers(10**9)


@pytest.mark.parametrize(("spec", "words"), [
    ("no_such_module_here:make", "unknown agent spec 'no_such_module_here:make' for huit: no module "
                                 "no_such_module_here to import as MODULE:FACTORY .*; use random, .*greedy"),
    ("serch:expert", "unknown agent spec 'serch:expert' for huit: .*; use random, .*greedy, .*search:BASE"),
    ("tests.agents.no_such_module:make", "no module tests.agents.no_such_module to import"),
    (f"{MODULE}_needs_missing:make", "cannot import tests.agents.factory_module_needs_missing "
                                     r"\(No module named 'no_such_dependency_here'\)"),
    (f"{MODULE}:absent", "tests.agents.factory_module.absent is not defined there"),
    (f"{MODULE}:NOT_CALLABLE", "NOT_CALLABLE is not callable"),
    (f"{MODULE}:not_an_agent", "returned str, not a cardlab Agent"),
])
def test_a_wrong_factory_is_a_clear_error(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        make_agent(spec, make_game("huit"))

