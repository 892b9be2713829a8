"""The rule tables of `tables`, and the expert's weights, as numpy arrays for the compiled heuristics.

`cardlab.envs.huit.heuristics.kernels` plays `HuitGreedy` and `HuitExpert`
in numba, which cannot read the Python objects `tables` builds (`Follow`,
`Outcome`, dicts keyed by bitmasks). So every table here is read off
those objects once, not written again: a table (`Follow`) becomes an index
(0 the empty table, then `FOLLOWS` in order), an `Outcome` three ints (table,
fresh Ace, seat to move next), and a group held of one rank a 4-bit index.
Card sets stay bitmasks over card ids, as in `tables`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from cardlab.envs import cards as C
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.heuristics import tables as T

# ---------------------------------------------------------------- tables (what may follow a table)
TABLES: tuple[T.Follow, ...] = (T.EMPTY_TABLE, *T.FOLLOWS.values())
"""Every table, in the order of its index (the empty table first)."""
TABLE_INDEX = {id(table): i for i, table in enumerate(TABLES)}
TABLE_CAN = np.array([table.can for table in TABLES], dtype=np.int64)
"""Per table: the cards that go on it (`Follow.can`)."""
# The table of a top card (its index in the observation's `DECK_CARDS` order) and the current suit.
TOP_TABLE = np.array([[TABLE_INDEX[id(T.follow_of(card, suit))] for suit in range(C.NUM_SUITS)]
                      for card in R.DECK_CARDS], dtype=np.int64)
DECK_BITS = T.DECK_BITS
"""The bit of each card of the observation's 32-long slices."""


def _rank_shift(bits: int) -> int:
    """Where the 4 card bits of one rank start: a held group of that rank is `(hand & bits) >> shift`."""
    shift = (bits & -bits).bit_length() - 1
    if bits >> shift != (1 << C.NUM_SUITS) - 1:
        raise ValueError("the cards of a rank are not 4 bits in a row: the group index needs another form")
    return shift


MOST_RANKS = max(len(table.lays) for table in TABLES)
# LAY_BITS[t, k], LAY_SHIFT[t, k]: the k-th of the LAY_RANKS[t] ranks that may go on table t (`Follow.lays`);
# LAY_ACTIONS[LAY_START[t, k, g]:LAY_START[t, k, g + 1]]: the legal groups when its held cards index g.
LAY_RANKS = np.array([len(table.lays) for table in TABLES], dtype=np.int64)
LAY_BITS = np.zeros((len(TABLES), MOST_RANKS), dtype=np.int64)
LAY_SHIFT = np.zeros((len(TABLES), MOST_RANKS), dtype=np.int64)
LAY_START = np.zeros((len(TABLES), MOST_RANKS, (1 << C.NUM_SUITS) + 1), dtype=np.int64)
_actions: list[int] = []
for _t, _table in enumerate(TABLES):
    for _k, (_bits, _lays) in enumerate(_table.lays):
        LAY_BITS[_t, _k], LAY_SHIFT[_t, _k] = _bits, _rank_shift(_bits)
        LAY_START[_t, _k, 0] = LAY_START[_t, _k, 1] = len(_actions)  # index 0: nothing held
        for _g in range(1, 1 << C.NUM_SUITS):
            _actions += _lays[_g << LAY_SHIFT[_t, _k]]
            LAY_START[_t, _k, _g + 1] = len(_actions)
LAY_ACTIONS = np.array(_actions, dtype=np.int64)

# ---------------------------------------------------------------- per play action, and hands
KEEP = np.array([~bits for bits in T.GROUP_BITS[:R.DRAW]], dtype=np.int64)
"""Per play action: the mask that keeps all but the cards it lays."""
REACH = np.array(T.REACH, dtype=np.int64)
"""Per hand shape: the cards sharing a rank or a suit with it (`tables.REACH`)."""
SHAPE_RANK_BITS = np.array([T.RANK_BITS[r] for r in R.RANKS], dtype=np.int64)
SHAPE_SUIT_BITS = np.array(T.SUIT_BITS, dtype=np.int64)
"""The cards behind each bit of a shape: ranks (`RANKS` order), then suits (`kernels.shape`)."""
EIGHTS, PLAIN = T.EIGHTS, T.PLAIN
# The greedy's score columns of each play action (`kernels.greedy_batch`): not an 8, cards laid, their points,
# and the cards (8s aside) of the suit it leaves, which the hand's own cards are counted in.
GREEDY_COLUMNS = np.array([[float(R.ACTION_RANK[a] != C.EIGHT), float(R.ACTION_SIZE[a]),
                            float(T.points(T.GROUP_BITS[a]))] for a in range(R.DRAW)], dtype=np.float64)
GREEDY_SUIT = np.array([T.PLAIN & T.SUIT_BITS[T.suit_after(a)] & ~T.GROUP_BITS[a] for a in range(R.DRAW)],
                       dtype=np.int64)
"""Per play action: the cards that the greedy counts in the hand once the group is laid."""

if len(TABLES) != K.NUM_TABLES:
    raise ValueError(f"the heuristics' tables have {len(TABLES)} tables, the compiled expert's memo holds "
                     f"{K.NUM_TABLES}")
TABLES_ARRAYS: K.TableArrays = tuple(K.Tables(
    bits=np.array([EIGHTS, PLAIN | EIGHTS, T.RANKS_HELD], dtype=np.int64), deck_bits=DECK_BITS,
    top_table=TOP_TABLE, table_can=TABLE_CAN, lay_ranks=LAY_RANKS, lay_bits=LAY_BITS, lay_shift=LAY_SHIFT,
    lay_start=LAY_START, lay_actions=LAY_ACTIONS, keep=KEEP, reach=REACH, shape_ranks=SHAPE_RANK_BITS,
    shape_suits=SHAPE_SUIT_BITS, greedy_columns=GREEDY_COLUMNS, greedy_suit=GREEDY_SUIT,
))
"""The tables as the kernels take them."""


@functools.cache
def expert_arrays(weights: Any, known: tuple[tuple[float, ...], ...], num_players: int,
                  queen_skips_each: bool, ace_draw: int) -> tuple[np.ndarray, np.ndarray]:
    """The two arrays of the compiled expert with the tables of these rules and weights filled in.

    `plays_for(num_players, queen_skips_each)` gives how each play ends, and
    `ace_draw` the cards a fresh Ace makes one draw (B7); the weights are in
    `WEIGHT_NAMES` order, `known_terms` flattened by rows.
    The kernel works on a copy: the cached arrays are shared by every agent.
    """
    ints = np.zeros(K.INT_AT["size"], dtype=np.int64)
    floats = np.zeros(K.FLOAT_AT["size"], dtype=np.float64)
    ends = [end for _keep, end in T.plays_for(num_players, queen_skips_each)]
    for field, values in (("out_table", [TABLE_INDEX[id(end.table)] for end in ends]),
                          ("out_fresh", [int(end.fresh_ace) for end in ends]),
                          ("out_next", [end.nxt for end in ends])):
        ints[K.INT_AT[field]:K.INT_AT[field] + len(values)] = values
    ints[K.ACE_DRAW_AT] = ace_draw
    floats[K.FLOAT_AT["weights"]:K.FLOAT_AT["weights"] + len(K.WEIGHT_NAMES)] = [
        float(getattr(weights, name)) for name in K.WEIGHT_NAMES]
    table = np.array(known, dtype=np.float64)
    if table.size != K.FLOAT_FIELDS["known"] or table.shape[1] != K.KNOWN_COLUMNS:
        raise ValueError(f"known_terms has shape {table.shape}, the expert's arrays hold "
                         f"{K.FLOAT_FIELDS['known']} terms, {K.KNOWN_COLUMNS} a row")
    floats[K.FLOAT_AT["known"]:K.FLOAT_AT["known"] + table.size] = table.ravel()
    return ints, floats


def observation_offsets(layout: Any) -> np.ndarray:
    """Where the fields the heuristics read start in an observation (`kernels.OFFSET_FIELDS` order)."""
    return np.array([layout.slices[name].start for name in K.OFFSET_FIELDS], dtype=np.int64)
