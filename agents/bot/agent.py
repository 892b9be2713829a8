"""`BotAgent`: a loaded bot's actor network playing as an agent (built by `load_bot`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from cardlab.agents.base import Agent
from cardlab.agents.bot.format import FORMAT
from cardlab.agents.bot.threads import inference_threads, torch_threads
from cardlab.agents.failure import finite_logits
from cardlab.envs.game_spec import Game


def network_actions(network: nn.Module, observations: np.ndarray, masks: np.ndarray,
                    rng: np.random.Generator | None = None, checked: bool = False) -> np.ndarray:
    """(B,) int64: an actor network's moves for a batch in one forward pass.

    The masked argmax of the logits, or with `rng` a sample of the masked
    softmax (Gumbel-max). Self-play (`cardlab.training.arena.selfplay`) and search
    rollouts (`cardlab.agents.search`) both play bots this way. `checked`:
    an `AgentFailure` when a legal move's logit is not finite (a loaded bot
    that overflows), instead of an argmax that means nothing.
    """
    with torch.inference_mode():
        logits = network(torch.as_tensor(np.asarray(observations, dtype=np.float32))).numpy()
    # The mask in numpy: on a small batch, torch's masked_fill and argmax cost more than the numbers.
    masked = np.where(np.asarray(masks, dtype=np.bool_), logits, -np.inf)
    if checked:
        finite_logits(logits, masks, "the bot")
    if rng is None:
        return masked.argmax(axis=1).astype(np.int64)
    gumbel = -np.log(-np.log(rng.random(masked.shape)))
    return (masked.astype(np.float64) + gumbel).argmax(axis=1).astype(np.int64)


class BotAgent(Agent):
    """A trained actor network: masked argmax of its logits, or a masked sample."""

    name = "bot"

    def __init__(
        self, game: Game, network: nn.Module, metadata: dict[str, Any], seed: int | None = None,
        sample: bool = False, threads: int | None = None,
    ) -> None:
        super().__init__(game, seed)
        self.network = network.eval()
        self.metadata = metadata
        self.sample = sample
        self.threads = inference_threads(threads)
        """torch threads of the forward pass (see `cardlab.agents.bot.threads`)"""

    @property
    def has_weights(self) -> bool:
        """Whether its network is a bot file's Linear layers, whose weights a trainer can start from (an
        ONNX bot's graph runs in onnxruntime: a trainer can imitate it, not copy it)."""
        return self.metadata.get("format") == FORMAT

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Raw logits for one observation vector (or a batch of them)."""
        with torch_threads(self.threads), torch.inference_mode():
            x = torch.as_tensor(np.asarray(observation, dtype=np.float32))
            return self.network(x).numpy()

    def _masked_logits(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        if not mask.any():
            raise ValueError("the observation's action_mask has no legal action")
        logits = self.logits(observation["observation"]).astype(np.float64)
        finite_logits(logits, mask, "the bot")  # else the masked argmax of -inf everywhere is action 0
        return np.where(mask, logits, -np.inf)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if not self.sample:
            return int(np.argmax(self._masked_logits(observation)))
        probs = self.action_probabilities(observation)
        return int(self.rng.choice(probs.size, p=probs))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for a batch, in one forward pass (`network_actions`)."""
        with torch_threads(self.threads):
            return network_actions(self.network, observations, masks, self.rng if self.sample else None,
                                   checked=True)

    def action_probabilities(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The softmax of the logits over the legal actions (what `sample=True` draws from)."""
        logits = self._masked_logits(observation)
        probs = np.exp(logits - logits.max())
        return probs / probs.sum()
