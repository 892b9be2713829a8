"""cardlab: RL environments and agents for Switch and Huit américain.

The code lives in the top-level folders `envs/`, `agents/`, `training/`, `evaluation/`,
`serve/` and `cluster/` of the repository and is installed as `cardlab.envs`, `cardlab.agents`, ...
What sits above all of them lives here: the command line (`cardlab.cli`) and terminal
play (`cardlab.terminal`).
Importing cardlab registers its Gymnasium ids (`cardlab.registration`) and keeps the old import paths
of moved modules working for one version (`cardlab.moved`).
"""

from cardlab import moved
from cardlab.registration import register_envs

__version__ = "0.3.0"

moved.install()
register_envs()
