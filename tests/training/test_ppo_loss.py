"""The masked PPO loss of `cardlab.training.trainers.ppo` on fixed batches, term by term.

Why: the lean trainer and the exploit responder minimise `ppo_loss`; a wrong sign, a clip on the wrong
side, an entropy that counts illegal actions or a coefficient applied to the wrong term would still
train something, so each term is checked here against the PPO paper's formulas written out again
(the clipped surrogate as a min of the two objectives, where the code takes a max of their negatives).
"""

from __future__ import annotations

import math

import pytest
import torch

from cardlab.training.harness.config import PPOConfig
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT, ppo_loss

PPO = PPOConfig(clip_range=0.2, ent_coef=0.05, vf_coef=0.5)


def masked(logits: list[list[float]], legal: list[list[bool]]) -> torch.Tensor:
    mask = torch.tensor(legal)
    return torch.tensor(logits).masked_fill(~mask, ILLEGAL_LOGIT)


def batch(ratios: list[float], adv: list[float]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Uniform logits over 2 legal actions of 3 (action 0 taken), old log-probs giving `ratios`."""
    n = len(ratios)
    logits = masked([[0.0, 0.0, 5.0]] * n, [[True, True, False]] * n).requires_grad_()
    old_logp = torch.tensor([math.log(0.5 / r) for r in ratios])
    return logits, old_logp, torch.tensor(adv)


def surrogate(ratios: list[float], adv: list[float], clip: float) -> float:
    """-mean(min(r * A, clip(r) * A)) with A normalised as the loss does (mean 0, sample std 1)."""
    a = torch.tensor(adv)
    a = (a - a.mean()) / (a.std() + 1e-8)
    total = 0.0
    for r, x in zip(ratios, a.tolist(), strict=True):
        total += min(r * x, min(max(r, 1 - clip), 1 + clip) * x)
    return -total / len(ratios)


def test_the_clipped_surrogate_matches_the_papers_formula() -> None:
    ratios, adv = [1.5, 0.5, 1.1, 0.7], [1.0, 2.0, -1.0, -3.0]
    logits, old_logp, a = batch(ratios, adv)
    zeros = torch.zeros(4)
    terms = ppo_loss(logits, torch.zeros(4, dtype=torch.long), old_logp, a, zeros, zeros, PPO)
    assert terms.policy_loss.item() == pytest.approx(surrogate(ratios, adv, 0.2), abs=1e-6)
    # 1.5, 0.5 and 0.7 are outside [0.8, 1.2], 1.1 is inside.
    assert terms.clip_fraction.item() == pytest.approx(0.75)


def test_a_clipped_transition_gives_no_policy_gradient_and_an_unclipped_one_does() -> None:
    """A ratio past 1 + clip with a positive advantage (or below 1 - clip with a negative one) is
    clipped: its logits get no gradient from the policy term; inside the range they do."""
    for ratios, adv, clipped in (([1.5, 1.0], [1.0, -1.0], True), ([0.5, 1.0], [-1.0, 1.0], True),
                                 ([1.1, 1.0], [1.0, -1.0], False), ([0.5, 1.0], [1.0, -1.0], False)):
        logits, old_logp, a = batch(ratios, adv)
        zeros = torch.zeros(2)
        terms = ppo_loss(logits, torch.zeros(2, dtype=torch.long), old_logp, a, zeros, zeros, PPO)
        terms.policy_loss.backward()
        assert logits.grad is not None
        row = logits.grad[0]
        assert (row.abs().max().item() == 0.0) == clipped, (ratios, adv, row)


def test_the_policy_gradient_raises_an_action_with_a_positive_advantage() -> None:
    logits, old_logp, a = batch([1.0, 1.0], [1.0, -1.0])
    zeros = torch.zeros(2)
    ppo_loss(logits, torch.zeros(2, dtype=torch.long), old_logp, a, zeros, zeros, PPO).loss.backward()
    assert logits.grad is not None
    assert logits.grad[0, 0] < 0 < logits.grad[1, 0]  # descent raises action 0 in row 0, lowers it in 1


def test_masked_logits_give_illegal_actions_no_probability_entropy_or_gradient() -> None:
    """Entropy of a uniform choice among the k legal actions is log k whatever the illegal logits."""
    logits = masked([[0.0, 0.0, 9.0, 0.0], [1.0, 1.0, 1.0, -7.0]],
                    [[True, True, False, True], [True, False, True, False]]).requires_grad_()
    zeros = torch.zeros(2)
    terms = ppo_loss(logits, torch.tensor([0, 2]), torch.log(torch.tensor([1 / 3, 1 / 2])),
                     torch.tensor([1.0, -1.0]), zeros, zeros, PPO)
    assert terms.entropy.item() == pytest.approx((math.log(3) + math.log(2)) / 2)
    assert terms.approx_kl.item() == pytest.approx(0.0, abs=1e-7)  # new probabilities are the old ones
    assert terms.clip_fraction.item() == 0.0
    terms.loss.backward()
    assert logits.grad is not None
    assert logits.grad[0, 2] == 0 and logits.grad[1, 1] == 0 and logits.grad[1, 3] == 0


def test_the_value_loss_and_the_coefficients_make_the_total() -> None:
    logits, old_logp, a = batch([1.0, 1.2, 0.9], [0.5, -0.2, 1.0])
    values = torch.tensor([0.0, 1.0, -1.0], requires_grad=True)
    returns = torch.tensor([1.0, 1.0, 1.0])
    terms = ppo_loss(logits, torch.zeros(3, dtype=torch.long), old_logp, a, values, returns, PPO)
    assert terms.value_loss.item() == pytest.approx((1 + 0 + 4) / 3)
    assert terms.entropy.item() == pytest.approx(math.log(2))
    expected = terms.policy_loss - PPO.ent_coef * terms.entropy + PPO.vf_coef * terms.value_loss
    assert terms.loss.item() == pytest.approx(expected.item())
    terms.loss.backward()
    assert values.grad is not None  # d/dV of vf_coef * mean((V - R)^2) = vf_coef * 2 (V - R) / N
    assert values.grad.tolist() == pytest.approx([0.5 * 2 * (v - 1) / 3 for v in (0.0, 1.0, -1.0)])


def test_a_minibatch_of_one_is_refused() -> None:
    logits, old_logp, a = batch([1.0], [1.0])
    with pytest.raises(ValueError, match="at least 2 transitions"):
        ppo_loss(logits, torch.zeros(1, dtype=torch.long), old_logp, a, torch.zeros(1), torch.zeros(1), PPO)
