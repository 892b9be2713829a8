"""What the heuristic agents of both games share: each is one compiled kernel, `act` a batch of one.

The kernels' tie-break and card odds (`best_index`, `p_lacks`) are `cardlab.envs.policy_kernels`'.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardlab.agents.base import Agent
from cardlab.envs.game_spec import Game


class HeuristicAgent(Agent):
    """An agent that scores each legal action and plays a best one, in a compiled kernel (`act_batch`).

    `act` is `act_batch` on a batch of one, so that the single-move agent and
    the batched paths play the same implementation. Ties are broken with the
    agent's own seeded generator, so a seed fixes its play and the global RNG
    is never touched.
    """

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.layout = self.game.layout
        self.rules: Any = self.game.rules

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(observation["observation"][None], observation["action_mask"][None])[0])
