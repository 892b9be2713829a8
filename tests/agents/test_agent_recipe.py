"""CONTRIBUTING's "Add an agent", followed as written: a class that implements only `act`, registered by
name, is then an agent spec everywhere the recipe says (eval, the search's base, advice, batched play)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent, spec_names
from cardlab.agents.base import Agent, register
from cardlab.cli import main
from cardlab.envs import make_env, make_game


class HighestLegal(Agent):
    """Plays its highest legal action id: the recipe's whole agent."""

    name = "recipe_highest_legal"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[-1])


register(HighestLegal.name, HighestLegal)


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_the_registered_name_is_a_spec_of_every_game_and_its_defaults_agree_with_act(game_id: str) -> None:
    game = make_game(game_id, {"num_players": 3})
    assert HighestLegal.name in spec_names(game)
    agent = make_agent(HighestLegal.name, game)
    env = make_env(game_id, num_players=3)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    move = agent.act(observation)
    assert move == int(np.flatnonzero(observation["action_mask"])[-1])
    probabilities = agent.action_probabilities(observation)  # the default: all on `act`'s move
    assert probabilities[move] == 1.0 and probabilities.sum() == 1.0
    both = [np.stack([observation[key]] * 2) for key in ("observation", "action_mask")]
    assert list(agent.act_batch(*both)) == [move, move]  # the default batched play is `act` per row


def test_cardlab_eval_plays_it_by_name_and_the_search_takes_it_as_its_base(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "eval.json"
    assert main(["eval", "--game", "huit", "--agents", HighestLegal.name, "expert", "--rule", "num_players=2",
                 "--hands", "4", "--json", str(out)]) == 0
    played = json.loads(out.read_text())["agents"]
    assert [(a["agent"], a["hands"]) for a in played] == [(HighestLegal.name, 4), ("expert", 4)]
    search = make_agent(f"search:worlds=2:ms=0:{HighestLegal.name}", make_game("huit", {"num_players": 2}),
                        seed=0)
    env = make_env("huit", num_players=2)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][search.act(observation)]
