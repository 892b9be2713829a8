"""A `SwitchBatch`'s state as one object: the array layout, the tables its kernels read, the
`SwitchArrays` bundle they take, and its constructor.

Why one bundle: the engine's step and the compiled play-out read the same
state arrays, batch constants and tables; passed loose, they made calls of 16
and 32 positional arguments spelt out in the same order by each caller. As
for Huit (`cardlab.envs.huit.batch_state`, which says why), the kernels take
the bundle as a plain tuple (`KernelArrays`, the fields at the `S_` indices),
the slots' generators stay their own argument, and a kernel reads the fields
it uses once, before its loops.

The layout of the arrays is in `cardlab.envs.switch.batched`'s module doc.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.batched_kernels import win_table
from cardlab.envs.layout import memory_start
from cardlab.envs.options import kernel_params, param_slots
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.rules import SwitchRules

# ---------------------------------------------------------------- array layout
STOCK, DISCARD = 0, 1
SIZES, SCORES, HAND_POINTS, SCORE_CHANGES, DREW_ON = range(5)
SEAT_ROWS = 5
(CURRENT, DIRECTION, SUIT, PENDING, PHASE, DRAWN, FIRST_OUT, TURN, OVER, TRUNCATED, WINNER,
 MATCH_OVER, DEALER, HANDS_PLAYED, STOCK_LEN, DISCARD_LEN) = range(16)
NUM_INFO = 16

# The kernels' parameters, one int64 array built by name (`cardlab.envs.options.kernel_params`): a slot
# per rule option the kernels read, and `episode_match` (the batch's episode, not an option). Options the
# kernels do not read are in `SwitchBatch.OPTIONS_ELSEWHERE`; tests/envs/test_switch_batched.py checks
# that every option is one or the other.
PARAM_SLOTS = param_slots("num_players", "match_rank", "play_after_draw", "voluntary_draw", "target_score",
                          "max_turns", "episode_match", "hand_size")

# ---------------------------------------------------------------- tables from the engine's definitions
_K = C.NUM_KINDS
# Rows of CARD_TABLE: rank, suit, wild (A5), run card (A6), points (A11); one column per card kind.
T_RANK, T_SUIT, T_WILD, T_RUN, T_POINTS = range(5)
CARD_TABLE = np.array([
    [C.rank_of(c) for c in range(_K)],
    [C.suit_of(c) for c in range(_K)],
    [int(w) for w in R.WILD],
    [int(r) for r in R.RUN_CARD],
    R.POINTS.tolist(),
], dtype=np.int64)
# Rows of ACTION_TABLE: the card an action plays (-1: none), the suit it declares (-1: none).
ACTION_TABLE = np.array([R.ACTION_CARD, R.ACTION_DECLARE], dtype=np.int64)
# PLAY_TABLE[card]: the action ids that play `card` (one, or four for a Jack), -1 padded.
PLAY_TABLE = np.full((_K, C.NUM_SUITS), -1, dtype=np.int64)
for _card, _ids in enumerate(R.PLAY_IDS):
    PLAY_TABLE[_card, : len(_ids)] = _ids


class SwitchArrays(NamedTuple):
    """What Switch's kernels take besides the slots' generators: the state (one row per slot), the batch's
    constants and the tables."""

    info: np.ndarray  # (B, NUM_INFO) int64
    seats: np.ndarray  # (B, SEAT_ROWS, n) int64
    hands: np.ndarray  # (B, n, 53) int8
    piles: np.ndarray  # (B, 2, D) int8
    played: np.ndarray  # (B, 53) int8
    rewards: np.ndarray  # (B, n) float32: each seat's rewards of the last step
    known: np.ndarray  # (B, num_actions) bool: a legal mask the step may read back instead of working it out
    params: np.ndarray  # (PARAM_SLOTS,) int64
    reward_table: np.ndarray  # `cardlab.envs.batched_kernels.win_table`
    pack: np.ndarray  # the rules' deck as a sorted pack: what each deal shuffles
    obs_offsets: np.ndarray  # where the observation fields start, -1 last without `drew_on` (memory off)
    obs_inv_copies: np.ndarray  # the observer's float32 factors, widened as numpy widens them
    obs_floats: np.ndarray  # (inverse deck size, inverse target, score bounds)
    cards: np.ndarray  # CARD_TABLE
    actions_table: np.ndarray  # ACTION_TABLE
    play_table: np.ndarray  # PLAY_TABLE

    def head(self, count: int) -> KernelArrays:
        """The first `count` slots (views) as the kernels take them: a compiled path over them costs what
        they hold."""
        return tuple(self._replace(info=self.info[:count], seats=self.seats[:count], hands=self.hands[:count],
                                   piles=self.piles[:count], played=self.played[:count],
                                   rewards=self.rewards[:count], known=self.known[:count]))


KernelArrays = tuple[np.ndarray, ...]
"""`tuple(SwitchArrays(...))`: the bundle as the kernels take it (`cardlab.envs.huit.batch_state` says why)"""
(S_INFO, S_SEATS, S_HANDS, S_PILES, S_PLAYED, S_REWARDS, S_KNOWN, S_PARAMS, S_REWARD_TABLE, S_PACK,
 S_OBS_OFFSETS, S_OBS_INV_COPIES, S_OBS_FLOATS, S_CARDS, S_ACTIONS_TABLE, S_PLAY_TABLE) = range(16)
"""where each field of `SwitchArrays` is in a `KernelArrays` (tests/test_kernel_arguments.py holds them to its
order)"""


def new_arrays(rules: SwitchRules, batch_size: int, episode: str, observer: Any) -> SwitchArrays:
    """The zeroed state of `batch_size` games of `rules` and the constants its kernels read; `observer` is
    the batch's `SwitchObserver`, whose factors the observation kernel applies."""
    n, B = rules.num_players, batch_size
    slices = observer.layout.slices
    names = ("hand", "top", "suit", "pending", "direction", "phase", "opponents", "scores", "played", "stock")
    offsets = np.array([*(slices[name].start for name in names), memory_start(observer.layout)],
                       dtype=np.int64)
    # The observer's float32 factors, widened exactly as numpy widens them (int64 * float32 -> float64).
    floats = np.array([observer._inv_deck, observer._inv_target, observer._scores_low, observer._scores_high],
                      dtype=np.float64)
    return SwitchArrays(
        info=np.zeros((B, NUM_INFO), dtype=np.int64), seats=np.zeros((B, SEAT_ROWS, n), dtype=np.int64),
        hands=np.zeros((B, n, C.NUM_KINDS), dtype=np.int8),
        piles=np.zeros((B, 2, rules.deck_size()), dtype=np.int8),
        played=np.zeros((B, C.NUM_KINDS), dtype=np.int8),
        rewards=np.zeros((B, n), dtype=np.float32), known=np.zeros((B, R.NUM_ACTIONS), dtype=np.bool_),
        params=kernel_params(rules, PARAM_SLOTS, episode_match=episode == "match"), reward_table=win_table(n),
        pack=np.repeat(np.arange(C.NUM_KINDS, dtype=np.int8), rules.deck()), obs_offsets=offsets,
        obs_inv_copies=observer._inv_copies.astype(np.float64), obs_floats=floats, cards=CARD_TABLE,
        actions_table=ACTION_TABLE, play_table=PLAY_TABLE)
