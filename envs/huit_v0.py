"""Huit américain, v0: the old name of `huit_v1`, kept so old code runs; it warns.

`from cardlab.envs import huit_v0` gives the v1 env (`raw_env`, `env`) with a
`DeprecationWarning`: use `huit_v1` (its doc page lists what changed).
"""

from __future__ import annotations

import warnings

from cardlab.envs.huit_v1 import env, raw_env

warnings.warn(
    "cardlab.envs.huit_v0 is deprecated: use cardlab.envs.huit_v1", DeprecationWarning, stacklevel=2
)

__all__ = ["env", "raw_env"]
