"""Rule-based agents of both games, named ``greedy`` and ``expert`` in each game's `GameSpec.heuristics`.

The strategies are documented on the classes: `switch.SwitchGreedy`,
`switch.SwitchExpert`, `huit.HuitGreedy`, `huit.HuitExpert`.
"""

from cardlab.agents.heuristics.huit import HuitExpert, HuitGreedy
from cardlab.agents.heuristics.switch import SwitchExpert, SwitchGreedy

__all__ = ["HuitExpert", "HuitGreedy", "SwitchExpert", "SwitchGreedy"]
