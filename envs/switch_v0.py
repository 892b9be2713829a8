"""Switch, v0: the old name of `switch_v1`, kept so old code runs; it warns.

`from cardlab.envs import switch_v0` gives the v1 env (`raw_env`, `env`) with a
`DeprecationWarning`: use `switch_v1` (its doc page lists what changed).
"""

from __future__ import annotations

import warnings

from cardlab.envs.switch_v1 import env, raw_env

warnings.warn(
    "cardlab.envs.switch_v0 is deprecated: use cardlab.envs.switch_v1", DeprecationWarning, stacklevel=2
)

__all__ = ["env", "raw_env"]
