"""Switch's fast paths (`cardlab.envs.fast.FastPaths`), which its spec declares: the compiled heuristics'
play-out to the hand's end (`playout`, a search's rollouts). Switch has no fused play-out up to a seat's
turn, replay or vector step: those play move by move."""

from cardlab.envs.fast import FastPaths
from cardlab.envs.switch.fast.playout import fused_to_end

FAST_PATHS = FastPaths(to_end=fused_to_end)
"""what `GameSpec.fast` names (``cardlab.envs.switch.fast:FAST_PATHS``)"""
