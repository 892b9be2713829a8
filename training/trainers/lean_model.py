"""The lean trainer's network: separate actor and critic MLPs, the masked logits, and sampling from them.

Apart from the trainer (`cardlab.training.trainers.lean`) because the actors
(`cardlab.training.trainers.actors`) build the same network in their own processes,
and the responder of `cardlab exploit`, the teacher and RLlib's module reuse it.
The actor is an `nn.Sequential` exported as a bot file (`export_bot`).
"""

from __future__ import annotations

import itertools
from typing import Protocol

import numpy as np
import torch
from torch import nn

from cardlab.agents.bot import ACTIVATIONS
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.config_tables import header_game
from cardlab.training.trainers.hand_head import new_head
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT


def mlp(sizes: list[int], activation: str, out_gain: float) -> nn.Sequential:
    """Linear -> activation per hidden layer, then a Linear; orthogonal init (as CleanRL's PPO)."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        layer = nn.Linear(n_in, n_out)
        last = i == len(sizes) - 2
        nn.init.orthogonal_(layer.weight, out_gain if last else float(np.sqrt(2)))
        nn.init.zeros_(layer.bias)
        layers.append(layer)
        if not last:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """Separate actor (exported as the bot) and critic MLPs.

    The actor reads the flat observation; the critic the same, or with
    `critic_size` another input (a privileged critic's: every seat's observation).
    `hands`, when given, reads the actor's last hidden layer (`cardlab.training.trainers.hand_head`).
    """

    def __init__(self, obs_size: int, num_actions: int, net_arch: list[int], activation: str,
                 critic_size: int | None = None, hands: nn.Linear | None = None) -> None:
        super().__init__()
        self.actor = mlp([obs_size, *net_arch, num_actions], activation, 0.01)
        self.critic = mlp([critic_size or obs_size, *net_arch, 1], activation, 1.0)
        self.hands = hands

    def read(self, obs: torch.Tensor) -> torch.Tensor:
        """The hand head's logits (the head must be there): the other seats' hands as the actor sees them."""
        assert self.hands is not None
        return self.hands(self.actor[:-1](obs))

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(obs).masked_fill(~mask, ILLEGAL_LOGIT)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def choose(self, logits: torch.Tensor, mask: torch.Tensor,
               generator: torch.Generator | None = None) -> torch.Tensor:
        """A sample of the masked logits (`sample`; `mask` is in them already): PPO's play."""
        return sample(logits, generator)


class Player(Protocol):
    """What plays the learner's moves in a rollout (`rollouts.play`): PPO's `ActorCritic`, or DMC's Q network
    (`cardlab.training.trainers.dmc_model.QLearner`), whose `actor` is what actors load and bot files hold."""

    actor: nn.Sequential
    hands: nn.Linear | None

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor: ...

    def choose(self, logits: torch.Tensor, mask: torch.Tensor,
               generator: torch.Generator | None = None) -> torch.Tensor: ...


def sample(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row of (masked) logits, by the Gumbel-max trick (no Categorical object per step).

    `generator`: the actor process's own (None: torch's, which the single-process trainer seeds)."""
    u = torch.rand(logits.shape, generator=generator, dtype=logits.dtype, device=logits.device)
    u.clamp_(min=1e-20)
    return (logits - torch.log(-torch.log(u))).argmax(dim=-1)


def new_model(cfg: TrainConfig) -> ActorCritic:
    """The actor-critic a config describes (its game's observation and action sizes, its kind of critic)."""
    game = header_game(cfg)
    size, arch = game.layout.size, list(cfg.policy.net_arch)
    hands = new_head(arch[-1], game.layout, cfg.num_players) if cfg.policy.read_hands > 0 else None
    return ActorCritic(size, game.num_actions, arch, cfg.policy.activation,
                       size * cfg.num_players if cfg.policy.privileged_critic else size, hands)


def inputs(network: nn.Sequential) -> int:
    """How many numbers an MLP of `mlp` reads (its first layer's inputs)."""
    first = network[0]
    if not isinstance(first, nn.Linear):
        raise TypeError(f"expected an MLP starting with a Linear layer, got {type(first).__name__}")
    return first.in_features
