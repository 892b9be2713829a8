"""Rule-based agents for both games, registered as the specs ``greedy`` and ``expert``.

`make_agent("greedy", env, seed)` builds the game's own class: the env's
``GAME`` ("switch" or "huit") picks it. The strategies are documented on the
classes: `switch.SwitchGreedy`, `switch.SwitchExpert`, `huit.HuitGreedy`,
`huit.HuitExpert`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cardlab.agents.base import Agent, register
from cardlab.agents.heuristics.huit import HuitExpert, HuitGreedy
from cardlab.agents.heuristics.switch import SwitchExpert, SwitchGreedy

CLASSES: dict[str, dict[str, type[Agent]]] = {
    "greedy": {"switch": SwitchGreedy, "huit": HuitGreedy},
    "expert": {"switch": SwitchExpert, "huit": HuitExpert},
}


def _factory(spec: str) -> Callable[[Any, int | None], Agent]:
    def make(env: Any, seed: int | None = None) -> Agent:
        game = getattr(getattr(env, "unwrapped", env), "GAME", None)
        by_game = CLASSES[spec]
        if game not in by_game:
            raise ValueError(
                f"the {spec!r} agent needs a Switch or Huit env (GAME 'switch' or 'huit'), got GAME={game!r}"
            )
        return by_game[game](env, seed)

    make.__doc__ = f"The {spec!r} heuristic agent of the env's game."
    return make


for _spec in CLASSES:
    register(_spec, _factory(_spec))

__all__ = ["HuitExpert", "HuitGreedy", "SwitchExpert", "SwitchGreedy"]
