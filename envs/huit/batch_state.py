"""A `HuitBatch`'s state as one object: the array layout, the `HuitArrays` bundle its kernels take, and
its constructor.

Why one bundle: every compiled path (the engine's step, the play-outs, the
replay, the vector env's fused step) reads the same state arrays and the same
batch constants; passed loose, they made calls of 30 to 45 positional
arguments that each caller had to spell out in the same order. `HuitArrays`
names the fields; the kernels take it as a plain tuple (`KernelArrays`, its
fields at the `S_` indices), which numba types in C at about the cost of
loose arrays, where a named tuple costs about a microsecond more a call
(measured: 7-10% of a batch of 64 games' round of mask, observation and
step). The slots' generators stay their own argument, since a numba typed
list inside a tuple costs tens of microseconds a call to type. A kernel reads
the fields it uses once, before its loops, and hands its helpers the arrays:
each read of a field counts a reference, which in a per-slot loop cost the
mask kernels 15 to 30% of their time.

The layout of the arrays is in `cardlab.envs.huit.batched`'s module doc.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from cardlab.envs.batched_kernels import win_table
from cardlab.envs.huit.observer import NUM_CARDS
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.layout import memory_start
from cardlab.envs.options import kernel_params, param_slots

# ---------------------------------------------------------------- the array layout
(CUR, SUIT, ANNOUNCED, ACE_PENALTY, PHASE, TURN, BANK_LEN, TABLE_LEN, HAND_OVER, TRUNCATED, WINNER,
 MATCH_OVER, DEALER, HANDS_PLAYED) = range(14)
INFO_COLUMNS = 14
SIZES, SCORES, STREAKS, HAND_POINTS, SCORE_CHANGES, DREW_ON = range(6)
SEAT_ROWS = 6
# The kernels' parameters, one int64 array built by name (`cardlab.envs.options.kernel_params`): a slot
# per rule option the kernels read, `hand_size` as the count `cards_each()` resolves, and
# `episode_match` (the batch's episode, not an option). Options the kernels do not read are in
# `HuitBatch.OPTIONS_ELSEWHERE`; tests/envs/test_huit_batched.py checks that every option is one or the other.
PARAM_SLOTS = param_slots("num_players", "hand_size", "queen_skips_each", "shuffle_on_refill", "target_score",
                          "streak_length", "streak_bonus", "max_turns", "episode_match")


class HuitArrays(NamedTuple):
    """What Huit's kernels take besides the slots' generators: the state (one row per slot) and the batch's
    constants."""

    info: np.ndarray  # (B, INFO_COLUMNS) int64
    seats: np.ndarray  # (B, SEAT_ROWS, n) int64
    hands: np.ndarray  # (B, n, 32) int8
    bank: np.ndarray  # (B, 32) int8
    table: np.ndarray  # (B, 32) int8
    rewards: np.ndarray  # (B, n) float32: each seat's rewards of the last step
    params: np.ndarray  # (PARAM_SLOTS,) int64
    reward_table: np.ndarray  # `cardlab.envs.batched_kernels.win_table`
    obs_offsets: np.ndarray  # where the observation fields start, -1 last without `drew_on` (memory off)
    obs_scales: np.ndarray  # the observer's scale factors and score bounds

    def head(self, count: int) -> KernelArrays:
        """The first `count` slots (views) as the kernels take them: a compiled path over them costs what
        they hold."""
        return tuple(self._replace(info=self.info[:count], seats=self.seats[:count], hands=self.hands[:count],
                                   bank=self.bank[:count], table=self.table[:count],
                                   rewards=self.rewards[:count]))


KernelArrays = tuple[np.ndarray, ...]
"""`tuple(HuitArrays(...))`: the bundle as the kernels take it (the module doc says why)"""
(S_INFO, S_SEATS, S_HANDS, S_BANK, S_TABLE, S_REWARDS, S_PARAMS, S_REWARD_TABLE, S_OBS_OFFSETS,
 S_OBS_SCALES) = range(10)
"""where each field of `HuitArrays` is in a `KernelArrays` (tests/test_kernel_arguments.py holds them to its
order)"""


def new_arrays(rules: HuitRules, batch_size: int, episode: str, layout: Any) -> HuitArrays:
    """The zeroed state of `batch_size` games of `rules` and the constants its kernels read; `layout` is
    the observer's (`HuitObserver.layout`)."""
    n, B = rules.num_players, batch_size
    s = layout.slices
    fields = ("hand", "top", "suit", "announced", "opponents", "scores", "streaks", "played", "bank")
    offsets = np.array([*(s[name].start for name in fields), memory_start(layout)], dtype=np.int64)
    # The observer's scale factors and score bounds, computed as it computes them.
    scores = s["scores"].start
    scales = np.array([1.0 / rules.target_score, 1.0 / rules.streak_length, float(layout.low[scores]),
                       float(layout.high[scores])], dtype=np.float64)
    return HuitArrays(
        info=np.zeros((B, INFO_COLUMNS), dtype=np.int64), seats=np.zeros((B, SEAT_ROWS, n), dtype=np.int64),
        hands=np.zeros((B, n, NUM_CARDS), dtype=np.int8), bank=np.zeros((B, NUM_CARDS), dtype=np.int8),
        table=np.zeros((B, NUM_CARDS), dtype=np.int8), rewards=np.zeros((B, n), dtype=np.float32),
        params=kernel_params(rules, PARAM_SLOTS, hand_size=rules.cards_each(),
                             episode_match=episode == "match"),
        reward_table=win_table(n), obs_offsets=offsets, obs_scales=scales)
