"""DouZero's deep Monte Carlo in the lean trainer (``algorithm: dmc``), the learner's side.

The lean trainer (`cardlab.training.trainers.lean`) plays and schedules as for PPO:
rollouts from its own table or from its actors, evaluations, the league's
snapshots, checkpoints and the bot file. With ``algorithm: dmc`` three of
its steps are this module's (`DMCLearner`): a played rollout is finished by
`dmc_model.MonteCarlo` (in the actor that played it, or here for
``actors: 0``), scored into a batch of (observation, move, return) triples,
and the Q network (`dmc_model.QLearner`) is fitted to the returns by mean
squared error, ``dmc.n_epochs`` passes of minibatches of ``dmc.batch_size``,
then folded into its actor for play.

Why Monte Carlo returns with actors: the target of a move is what followed
it in the game that was played, whatever policy chose it, so a rollout
played by an older copy of the network is still a sample of a return from
that position under that copy's play (epsilon-greedy, close to greedy); no
ratio corrects it, and ``max_policy_lag`` bounds how old that play may be.
"""

from __future__ import annotations

import torch
from torch import nn

from cardlab.training.arena.selfplay import credit
from cardlab.training.harness.config import TrainConfig
from cardlab.training.trainers.dmc_model import MonteCarlo, QLearner
from cardlab.training.trainers.rollouts import Rollout, play_stats

ALGORITHM = "lean deep Monte Carlo"
"""the bot file summary's name of the learner"""


class DMCLearner:
    """The DMC steps of a lean run: finish this process's rollouts, score, update (module doc)."""

    def __init__(self, cfg: TrainConfig, model: QLearner, optimizer: torch.optim.Optimizer,
                 device: torch.device) -> None:
        self.cfg, self.model, self.optimizer, self.device = cfg, model, optimizer, device
        self.monte_carlo = MonteCarlo()
        """the moves of this process's table waiting for their episodes (``actors: 0``)"""

    def score(self, rollout: Rollout) -> tuple[dict[str, torch.Tensor], dict[str, float], int]:
        """(the batch of finished moves on the device, the rollout's charts, the learner moves it played)."""
        if rollout.returns is None:
            raise ValueError("a DMC batch is made of a finished rollout (MonteCarlo.finish)")
        reward, terminal, _ = credit(rollout.rewards, rollout.ended, rollout.seats, rollout.learner)
        stats = play_stats(rollout, self.cfg, reward[terminal])
        batch = {"obs": rollout.obs, "actions": rollout.actions, "returns": rollout.returns}
        if len(rollout.returns):
            stats["charts/mean_return"] = float(rollout.returns.mean())
        return {k: v.to(self.device) for k, v in batch.items()}, stats, int(rollout.learner.sum())

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """Fit Q to the returns (MSE), ``dmc.n_epochs`` passes of ``dmc.batch_size`` minibatches; fold."""
        dmc = self.cfg.dmc
        size = len(batch["returns"])
        total, count = 0.0, 0
        for _ in range(dmc.n_epochs):
            order = torch.randperm(size)
            for begin in range(0, size, dmc.batch_size):
                idx = order[begin:begin + dmc.batch_size].to(self.device)
                q = self.model.q(batch["obs"][idx], batch["actions"][idx])
                loss = ((q - batch["returns"][idx]) ** 2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), dmc.max_grad_norm)
                self.optimizer.step()
                total += loss.item()
                count += 1
        self.model.fold()
        return {"losses/q_loss": total / max(count, 1), "charts/finished_moves": float(size),
                "charts/learning_rate": dmc.learning_rate, "charts/epsilon": dmc.epsilon}
