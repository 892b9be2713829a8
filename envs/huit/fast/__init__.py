"""Huit's fast paths (`cardlab.envs.fast.FastPaths`), which its spec declares: the compiled heuristics'
play-outs (`playout`), the belief's replay (`replay`) and the vector env's fused step (`vector_step`)."""

from cardlab.envs.fast import FastPaths
from cardlab.envs.huit.fast.playout import fused_play_out, fused_to_end
from cardlab.envs.huit.fast.replay import fused_replay
from cardlab.envs.huit.fast.vector_step import fused_step

FAST_PATHS = FastPaths(play_out=fused_play_out, to_end=fused_to_end, replay=fused_replay,
                       vector_step=fused_step)
"""what `GameSpec.fast` names (``cardlab.envs.huit.fast:FAST_PATHS``)"""
