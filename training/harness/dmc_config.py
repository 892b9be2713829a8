"""The ``dmc:`` section of a training config and what ``algorithm: dmc`` refuses, apart from config.py.

``algorithm: dmc`` (trainer lean) trains DouZero's deep Monte Carlo learner
(`cardlab.training.trainers.dmc`) instead of PPO; these are its hyper-parameters,
declared and bounded like the rest of the config (`cardlab.training.harness.config_bounds.bounded`).
What the learner has no use for (a critic, the hand head, imitation of a
teacher into an actor-critic, a population's shared bot files) is refused
by name rather than silently ignored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from cardlab.envs.declared import check_that
from cardlab.training.harness.config_bounds import ROLLOUT_HIGH, bounded, probability, rate

ALGORITHMS = ("ppo", "dmc")
"""what `TrainConfig.algorithm` accepts: the lean trainer's learners"""


@dataclasses.dataclass
class DMCConfig:
    """Deep Monte Carlo (``algorithm: dmc``): a Q network over (observation, move) pairs, MSE on returns.

    The rollouts' length is ``ppo.n_steps`` and the network ``policy.net_arch``
    and ``policy.activation``, as for PPO; the rest of ``ppo.*`` is PPO's alone.
    """

    epsilon: float = probability(0.01)
    """probability that a learner move in training is a legal move drawn uniformly instead of the argmax of Q
    (DouZero: 0.01); evaluation, snapshots and the bot file play the argmax"""
    learning_rate: float = rate(1e-3)
    """Adam step size of the Q network"""
    batch_size: int = bounded(4096, 1, ROLLOUT_HIGH)
    """transitions (observation, move, return) per gradient step"""
    n_epochs: int = bounded(1, 1, 10_000)
    """passes over each rollout's finished transitions"""
    max_grad_norm: float = bounded(10.0, 0, 1_000_000, above=True)
    """gradient clipping norm"""


def check_dmc(cfg: Any) -> None:
    """Refuse, in the one wording of a refused value (`check_that`), what ``algorithm: dmc`` does not do."""
    if cfg.algorithm != "dmc":
        return
    for key, value, default, why in (
            ("policy.privileged_critic", cfg.policy.privileged_critic, False, "the Q network has no critic"),
            ("policy.read_hands", cfg.policy.read_hands, 0.0, "the hand head reads PPO's actor"),
            ("imitation.enabled", cfg.imitation.enabled, False, "imitation warms PPO's actor and critic"),
            ("population.dir", cfg.population.dir, "", "a population shares bot files of PPO's actor")):
        check_that(value == default, key, value, "not accepted with algorithm: dmc", f"{default!r} ({why})")
