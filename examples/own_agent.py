"""Your own agent in cardlab's benchmark: a module with a factory(game, seed=None) that returns an Agent.

    PYTHONPATH=examples cardlab bench own_agent:make --suite huit-2p
    PYTHONPATH=examples cardlab eval --game huit --agents own_agent:make expert --hands 200

The agent sees only its seat's observation (with the action mask) and keeps
its own seeded generator, as every cardlab agent (`cardlab.agents.base.Agent`).
This one plays the expert's move, except that it never draws a card when any
other move is legal.
"""

from __future__ import annotations

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs.game_spec import Game


class NeverDraws(Agent):
    """The expert, but a legal non-draw move (the lowest id) whenever the expert would draw."""

    name = "never-draws"

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.expert = make_agent("expert", game, seed)
        self.draws = {a for a in range(game.num_actions) if game.action_to_str(a).startswith("draw")}

    def act(self, observation: dict[str, np.ndarray]) -> int:
        choice = self.expert.act(observation)
        others = [int(a) for a in np.flatnonzero(observation["action_mask"]) if int(a) not in self.draws]
        return others[0] if choice in self.draws and others else choice

    def reset(self) -> None:
        self.expert.reset()

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self.expert.seed(seed)


def make(game: Game, seed: int | None = None) -> Agent:
    """The factory `cardlab` calls for the spec ``own_agent:make``."""
    return NeverDraws(game, seed)
