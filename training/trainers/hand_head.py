"""An auxiliary loss that asks a lean PPO actor to read the other hands (``policy.read_hands``).

Why: at four seats and more, what the others hold is most of a search's
edge (the cheating search gains 20 to 27 points), and a search reading the
hands with the learned reader wins 1 to 3 points over the expert. A bot
plays in one forward pass and cannot search; this head asks the actor's
last hidden layer to predict where the cards are, so that the features the
policy reads are the ones that place the hidden cards (as DouZero+'s
opponent-hand prediction does). The labels cost nothing: the batched
engine shows every seat's observation, whose ``hand`` field is that seat's
hand. Only the actor is exported, so the bot file, its inputs and every
place that loads it are unchanged; the head lives in the checkpoints.

The head is one linear layer from the actor's last hidden layer to
``(n - 1) * K`` logits, K the ``hand`` field's width: for each other seat in
turn order from the mover, each card kind's share of its copies in that
seat's hand (1 or 0 in Huit's one-copy deck), fitted by binary
cross-entropy.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from cardlab.envs.layout import Layout

HEAD_WEIGHT = "hands.weight"
"""the state-dict key of the head's layer, whose presence tells a reading actor's checkpoint"""


def hand_width(layout: Layout) -> int:
    """K: the numbers of one seat's ``hand`` field, which the head predicts for each other seat."""
    return layout.slices["hand"].stop - layout.slices["hand"].start


def new_head(hidden: int, layout: Layout, num_players: int) -> nn.Linear:
    """The head's layer, from the actor's last hidden layer to the other seats' hands."""
    return nn.Linear(hidden, (num_players - 1) * hand_width(layout))


def hand_targets(table: np.ndarray, layout: Layout, num_players: int) -> np.ndarray:
    """(..., (n - 1) * K) float32: the other seats' ``hand`` fields from a table view (the mover's first).

    `table` is `SelfPlayBatch.observe_table`'s (..., n * obs_size): seat k
    after the mover is the k-th block.
    """
    size, hand = layout.size, layout.slices["hand"]
    parts = [table[..., k * size + hand.start: k * size + hand.stop] for k in range(1, num_players)]
    return np.concatenate(parts, axis=-1).astype(np.float32)


def read_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the head's logits against the hands' shares, per number."""
    return nn.functional.binary_cross_entropy_with_logits(logits, targets)


def right_seat_share(logits: torch.Tensor, targets: torch.Tensor, num_players: int) -> float:
    """Of the copies in the other hands, the mean share of the head's mass across those seats on the
    right one: 1 / (n - 1) is a blind guess, 1 reads every card (each card kind's probabilities over the
    other seats, normalised, weighed by the copies each holds)."""
    seats = num_players - 1
    p = torch.sigmoid(logits).reshape(*logits.shape[:-1], seats, -1)
    t = targets.reshape(p.shape)
    q = p / p.sum(-2, keepdim=True).clamp_min(1e-9)
    total = float(t.sum())
    return float((q * t).sum()) / total if total > 0 else float("nan")
