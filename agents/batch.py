"""The players of a batch of games: one agent per player, acting for all the slots it holds at once.

Why: whatever plays many games at once (the lean trainer's league and
imitation, `cardlab exploit`'s frozen target, the Gymnasium vector env's
opponents) asks each of its players for the moves of all the games where that
player is to move, in one `Agent.act_batch` call per step, so a bot moves
them in one forward pass and a compiled heuristic in one kernel call, with no
Python per slot.

One agent per player, not per slot: its one generator draws the tie-breaks
(and random moves) of all its slots, row by row in the order given, so the
same seed and the same games give the same moves (C2). A player's seed
depends on the pool's seed and the player's key only, not on the order in
which players are first asked. An agent in a batch keeps no per-hand state
(`Agent.reset` is never called: no agent of a batch has any).

```python
players = BatchPlayers(game, seed=0)
actions[rows] = players.act(key, "expert", observations[rows], masks[rows])
```
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs.fast import PlayOut
from cardlab.envs.game_spec import Game


def fused_play_out(engine: Any, agent: Agent) -> PlayOut | None:
    """`agent` playing every seat but one of each game of `engine` up to that seat's turn in one compiled
    call (its game's `FastPaths.play_out` with `Agent.compiled`), or None where its game's paths do not
    compile it."""
    paths, policy = agent.game.spec.fast_paths(), agent.compiled()
    if paths is None or paths.play_out is None or policy is None:
        return None
    return paths.play_out(engine, policy)


class BatchPlayers:
    """Agents built on first use, one per key (a player's index), each seeded from (pool seed, key)."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        self.game = game
        self.agents: dict[int, Agent] = {}
        """key -> the agent of that player (built by `agent` or `act`)"""
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Seed every agent (built now or later) from `seed` and its key: the same seed, the same play."""
        self._seeds = np.random.SeedSequence(seed)
        for key, agent in self.agents.items():
            agent.seed(self.seed_of(key))

    def seed_of(self, key: int) -> int:
        """The seed of player `key`'s agent: a child of the pool's seed sequence, named by the key."""
        child = np.random.SeedSequence(self._seeds.entropy, spawn_key=(*self._seeds.spawn_key, key))
        return int(child.generate_state(1, np.uint64)[0] >> 1)

    def agent(self, key: int, spec: str) -> Agent:
        """Player `key`'s agent, built from `spec` on first use (a key keeps the spec it was built with)."""
        found = self.agents.get(key)
        if found is None:
            found = self.agents[key] = make_agent(spec, self.game, seed=self.seed_of(key))
        return found

    def act(self, key: int, spec: str, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(k,) int64: player `key`'s moves in the k games of these rows, in one `act_batch` call."""
        return np.asarray(self.agent(key, spec).act_batch(observations, masks), dtype=np.int64)

    def play_out(self, key: int, spec: str, engine: Any) -> PlayOut | None:
        """Player `key` playing all but one seat of each game of `engine` up to that seat's turn, in one
        compiled call (`fused_play_out`); None where no compiled play-out exists."""
        return fused_play_out(engine, self.agent(key, spec))
