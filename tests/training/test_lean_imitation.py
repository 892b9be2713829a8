"""Imitation in the lean trainer: the demonstrations are the teacher's moves with their outcomes, and a run
with imitation starts PPO from a copy of the teacher."""

from __future__ import annotations

import csv
import dataclasses
import pathlib

import numpy as np
import pytest
import torch

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.failure import AgentFailure
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers import lean_imitation
from cardlab.training.trainers.lean_imitation import demonstrations
from cardlab.training.trainers.train import train
from tests.training.test_ppo import tiny


@pytest.mark.parametrize(("game_id", "players"), [("huit", 2), ("huit", 4), ("switch", 4)])
def test_demonstrations_are_the_teachers_moves_with_outcomes_in_the_reward_range(game_id: str,
                                                                                  players: int) -> None:
    game = make_game(game_id, num_players=players)
    data = demonstrations(game, "greedy", hands=20, num_games=8, gamma=1.0, seed=3,
                          progress=Progress(enabled=False))
    assert len(data["actions"]) > 20
    assert data["mask"][torch.arange(len(data["actions"])), data["actions"]].all()  # legal moves only
    greedy = [make_agent("greedy", game, seed=seed) for seed in range(24)]  # greedy draws among its ties
    for i in range(0, len(data["actions"]), 17):  # each move is one greedy plays there
        obs = {"observation": data["obs"][i].numpy(), "action_mask": data["mask"][i].numpy().astype(np.int8)}
        assert int(data["actions"][i]) in {agent.act(obs) for agent in greedy}
    returns = data["returns"].numpy()  # gamma 1: each move's return is its seat's win reward of the hand
    assert set(np.round(returns.astype(np.float64), 6).tolist()) <= {1.0, round(-1 / (players - 1), 6), 0.0}
    assert (returns == 1.0).any() and (returns < 0).any()


class _Failing(Agent):
    """A teacher whose moves break in one way: it raises, or answers a move its mask refuses."""

    def __init__(self, game: Game, how: str) -> None:
        super().__init__(game)
        self.how = how

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if self.how == "raise":
            raise RuntimeError("boom")
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])


@pytest.mark.parametrize(("how", "said"), [
    ("raise", "teacher failing failed: it raised RuntimeError ('boom')"),
    ("illegal", "teacher failing (game 0) failed: it chose an illegal move")])
def test_a_failing_teacher_is_named_in_one_error(monkeypatch: pytest.MonkeyPatch, how: str,
                                                 said: str) -> None:
    """`exploit --warm SPEC` or an imitation config whose teacher breaks: one `AgentFailure`, no traceback."""
    game = make_game("huit", num_players=2)
    monkeypatch.setattr(lean_imitation, "make_agent", lambda spec, table, seed=None: _Failing(table, how))
    with pytest.raises(AgentFailure) as caught:
        lean_imitation.demonstrations(game, "failing", hands=4, num_games=3, gamma=1.0, seed=0,
                                      progress=Progress(enabled=False))
    assert str(caught.value) == said


def test_a_lean_run_with_imitation_starts_from_the_teacher(tmp_path: pathlib.Path) -> None:
    cfg = tiny(total_timesteps=600)
    imitation = dataclasses.replace(cfg.imitation, enabled=True, teacher="greedy", hands=300, epochs=6,
                                    learning_rate=3e-3)
    cfg = dataclasses.replace(cfg, imitation=imitation,
                              eval=dataclasses.replace(cfg.eval, hands=200, opponents=["random"]))
    run_dir = train(cfg, runs_dir=tmp_path)
    with (run_dir / "eval.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    first = rows[0]
    assert int(first["steps"]) == 0  # evaluated right after imitation, before any PPO step
    assert float(first["win_rate"]) > 0.75  # greedy's level against random (an untrained actor: about 0.5)
    assert (run_dir / "bot.json").exists()


def test_privileged_demonstrations_give_the_critic_every_seat_from_the_movers_on() -> None:
    game = make_game("huit", num_players=3)
    data, plain = (demonstrations(game, "greedy", hands=5, num_games=4, gamma=1.0, seed=1,
                                  progress=Progress(enabled=False), privileged=privileged)
                   for privileged in (True, False))
    size = game.layout.size
    assert data["critic"].shape == (len(data["actions"]), 3 * size)
    assert torch.equal(data["obs"], plain["obs"]) and torch.equal(data["actions"], plain["actions"])
    assert torch.equal(data["critic"][:, :size], plain["obs"])  # the mover's own observation comes first
