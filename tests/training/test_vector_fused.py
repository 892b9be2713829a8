"""The vector env's compiled opponent passes play the games its round-by-round Python passes play (C2)."""

from __future__ import annotations

import numpy as np
import pytest

from cardlab.agents.heuristics.huit_playout import fused_play_out
from cardlab.envs import make_game
from cardlab.envs.batched import sample_legal
from cardlab.training.vector import CardVectorEnv


def run(opponent: str, players: int, fused: bool, steps: int = 60) -> list[np.ndarray]:
    """Everything the learner sees over `steps` random steps: observations, masks, rewards, ends, seats,
    the final observations, and last how many episodes ended."""
    env = CardVectorEnv("huit", 24, opponents=[opponent], num_players=players)
    env.fused = fused
    rng = np.random.default_rng(5)
    obs, infos = env.reset(seed=11)
    seen = [obs["observation"], obs["action_mask"], infos["seat"]]
    ends = 0
    for _ in range(steps):
        actions = sample_legal(obs["action_mask"].view(bool), rng)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        seen += [obs["observation"], obs["action_mask"], rewards, terminated, truncated, infos["seat"]]
        if "final_obs" in infos:
            seen += [np.stack([f["observation"] for f in infos["final_obs"][infos["_final_obs"]]])]
        ends += int((terminated | truncated).sum())
    return [*seen, np.array(ends)]


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("opponent", ["random", "greedy", "expert"])
def test_the_compiled_pass_plays_the_games_of_the_round_by_round_pass(opponent: str, players: int) -> None:
    fused, rounds = run(opponent, players, True), run(opponent, players, False)
    assert len(fused) == len(rounds)
    for a, b in zip(fused, rounds, strict=True):
        np.testing.assert_array_equal(a, b)
    assert fused[-1] > 0  # some episodes ended on the way, so dealing again is compared too


def test_the_compiled_pass_is_used_for_one_compiled_heuristic_only() -> None:
    assert CardVectorEnv("huit", 2, opponents=["expert"])._fused_play is not None
    assert CardVectorEnv("huit", 2, opponents=["expert", "greedy"])._fused_play is None
    assert CardVectorEnv("switch", 2, opponents=["expert"])._fused_play is None


def test_an_agent_of_other_rules_gets_no_compiled_pass() -> None:
    from cardlab.agents.base import make_agent
    from cardlab.training.selfplay import batched_engine

    engine = batched_engine(make_game("huit", {"num_players": 2}), 4)
    assert fused_play_out(engine, make_agent("expert", make_game("huit", {"num_players": 3}))) is None
    assert fused_play_out(engine, make_agent("expert", make_game("huit", {"num_players": 2}))) is not None
