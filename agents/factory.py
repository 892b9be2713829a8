"""Agents a user writes: the spec ``MODULE:FACTORY`` imports MODULE and calls ``FACTORY(game, seed=None)``.

Why: anyone's agent can enter `cardlab bench`, `eval`, `compare` and
`tournament` without registering anything in cardlab: a module on the Python
path (``PYTHONPATH=.``, or an installed package) with a callable that takes
the `Game` and a seed and returns an `Agent`. It imports and runs code, so
only the command line and Python take it; the web app seats only the agents
of its catalogue.

```python
# my_agent.py, then: PYTHONPATH=. cardlab bench my_agent:make
from cardlab.agents.base import Agent, RandomAgent

def make(game, seed=None) -> Agent:
    return RandomAgent(game, seed)
```
"""

from __future__ import annotations

import importlib
import re

from cardlab.agents.base import Agent
from cardlab.envs.checked_json import excerpt
from cardlab.envs.spec import Game

FACTORY_SPEC = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<factory>[A-Za-z_]\w*)")
"""``package.module:factory``: dotted Python names on both sides of one colon"""
RESERVED = ("bot", "search")
"""spec prefixes cardlab reads itself, never taken for a module name"""


def is_factory_spec(spec: str) -> bool:
    """Whether `spec` names a user's agent factory (``MODULE:FACTORY``), not a ``bot:`` or ``search:`` one."""
    match = FACTORY_SPEC.fullmatch(spec.strip()) if isinstance(spec, str) else None
    return match is not None and match["module"] not in RESERVED


def factory_agent(spec: str, game: Game, seed: int | None = None) -> Agent:
    """Import MODULE of ``MODULE:FACTORY``, call FACTORY(game, seed=seed), check that it made an Agent."""
    match = FACTORY_SPEC.fullmatch(spec.strip())
    if match is None or match["module"] in RESERVED:
        raise ValueError(f"agent spec {excerpt(spec)} is not MODULE:FACTORY (e.g. my_agent:make)")
    module_name, name = match["module"], match["factory"]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ValueError(f"agent spec {spec.strip()}: cannot import {module_name} ({err}); the module must "
                         "be on the Python path, e.g. PYTHONPATH=. for my_agent.py in this folder") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        found = "not callable" if factory is not None else "not defined there"
        raise ValueError(f"agent spec {spec.strip()}: {module_name}.{name} is {found}; give a callable "
                         "factory(game, seed=None) that returns an Agent")
    agent = factory(game, seed=seed)
    if not isinstance(agent, Agent):
        raise ValueError(f"agent spec {spec.strip()}: {module_name}.{name}(game, seed=...) returned "
                         f"{type(agent).__name__}, not a cardlab Agent (cardlab.agents.base.Agent)")
    return agent
