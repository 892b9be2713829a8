"""The masked PPO loss and its advantages (GAE), in one place: what the lean trainer optimises.

`cardlab.training.trainers.lean` (``trainer: lean``), its imitation warm start and the
best responder of `cardlab exploit` import them from here, so a change of the
loss is one edit, checked by `tests/training/test_ppo_loss.py` (each term on a
fixed batch) and `tests/toygame/test_learning.py` (a responder on the toy game
must learn). The coefficients are `PPOConfig`'s (`ppo.*` in a config).

The loss of a minibatch, with advantages normalised per minibatch (as SB3 and
CleanRL do) and the probability ratio r = exp(logp - logp_old):

    policy = mean(max(-A * r, -A * clip(r, 1 - clip_range, 1 + clip_range)))
    value  = mean((V - returns) ** 2)
    loss   = policy - ent_coef * entropy + vf_coef * value

Illegal actions carry a logit of `ILLEGAL_LOGIT` (probability exactly 0), so
they add nothing to the entropy and are never the action taken.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from cardlab.training.harness.config import PPOConfig

ILLEGAL_LOGIT = -1e9
"""the logit of an illegal action: probability 0, entropy finite (-inf would give 0 * inf = nan)"""


class LossTerms(NamedTuple):
    """The loss to minimise and the terms it is made of (each a scalar tensor), for the logs."""

    loss: torch.Tensor
    policy_loss: torch.Tensor
    value_loss: torch.Tensor
    entropy: torch.Tensor
    approx_kl: torch.Tensor
    """mean((r - 1) - log r), the low-variance estimate of KL(old || new) (no gradient)"""
    clip_fraction: torch.Tensor
    """share of the transitions whose ratio left [1 - clip_range, 1 + clip_range] (no gradient)"""


def ppo_loss(logits: torch.Tensor, actions: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
             values: torch.Tensor, returns: torch.Tensor, ppo: PPOConfig) -> LossTerms:
    """The clipped PPO loss of a minibatch (module doc).

    `logits` (N, A) are the masked logits of the current actor (illegal actions at
    `ILLEGAL_LOGIT`), `actions`, `old_logp`, `advantages` and `returns` (N,) the
    rollout's, `values` (N,) the current critic's.
    """
    if len(actions) < 2:
        raise ValueError(f"a PPO minibatch needs at least 2 transitions to normalise its advantages, "
                         f"got {len(actions)}")
    log_probs = torch.log_softmax(logits, dim=-1)
    logp = log_probs.gather(1, actions[:, None]).squeeze(1)
    entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    clipped = ratio.clamp(1 - ppo.clip_range, 1 + ppo.clip_range)
    policy_loss = torch.max(-adv * ratio, -adv * clipped).mean()
    value_loss = ((values - returns) ** 2).mean()
    loss = policy_loss - ppo.ent_coef * entropy + ppo.vf_coef * value_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        clip_fraction = ((ratio - 1).abs() > ppo.clip_range).float().mean()
    return LossTerms(loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction)


def advantages(reward: torch.Tensor, terminal: torch.Tensor, next_index: torch.Tensor, values: torch.Tensor,
               last_values: torch.Tensor, seats: torch.Tensor, gamma: float,
               lam: float) -> torch.Tensor:
    """GAE along each seat's chain of transitions (`selfplay.credit`); (T, B), zero where there is none.

    `next_index[t, b]` is the row of the same seat's next transition in game b
    (-1: none in this rollout), `values` (T, B) the critic's at each transition,
    `last_values` (B, n) each seat's at the rollout's end (the bootstrap of a
    chain the rollout cut).
    """
    T, B = reward.shape
    adv = torch.zeros(T + 1, B, dtype=torch.float32)
    cols = torch.arange(B)
    for t in range(T - 1, -1, -1):
        nxt = next_index[t]
        has_next = nxt >= 0
        idx = torch.where(has_next, nxt, torch.full_like(nxt, T))
        boot = last_values[cols, seats[t]]
        next_value = torch.where(has_next, values[idx.clamp(max=T - 1), cols], boot)
        live = (~terminal[t]).float()
        delta = reward[t] + gamma * next_value * live - values[t]
        adv[t] = delta + gamma * lam * live * adv[idx, cols]
    return adv[:T]
