"""`HuitGreedy` and `HuitExpert` compiled: one numba call plays a whole batch of observations.

Each kernel takes the rows in order and does for each what the Python agent's
`act` does (`cardlab.agents.heuristics.huit`), reading the rule tables of
`huit_arrays` (built from `huit_tables`, so both read the same tables) and
breaking ties with `common.best_index` and the agent's own generator. So a
batch picks, row by row, the move the Python agent picks from the same
observation and generator state, and leaves the generator where it would: the
differential tests hold the two to that.

The expert's floats are added in the order of the Python code (see
`HuitExpert.static`), so that ties come out the same; what the Python agent
memoises per turn is memoised here per row (threat terms per outcome, the
value of a draw along the look-ahead) or recomputed where that is cheaper
(a hand's own terms). That state, and the rules' tables, live in two flat
arrays (`huit_arrays.INT_FIELDS`, `FLOAT_FIELDS`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cardlab.agents.batch_kernels import legal_ids
from cardlab.agents.heuristics.common import best_index
from cardlab.agents.heuristics.huit_arrays import (
    ALL_SEATS,
    DECK_BITS,
    DRAW_MEMO,
    EIGHTS,
    FLOAT_AT,
    FLOAT_FIELDS,
    GREEDY_COLUMNS,
    GREEDY_DRAW,
    GREEDY_PASS,
    GREEDY_SUIT,
    INT_AT,
    INT_FIELDS,
    KEEP,
    KNOWN_COLUMNS,
    LAY_ACTIONS,
    LAY_BITS,
    LAY_RANKS,
    LAY_SHIFT,
    LAY_START,
    PLAIN,
    REACH,
    SHAPE_RANK_BITS,
    SHAPE_SUIT_BITS,
    TABLE_CAN,
    TOP_TABLE,
    WEIGHT_NAMES,
)
from cardlab.agents.heuristics.huit_tables import RANKS_HELD
from cardlab.envs.huit import rules as R

DRAW, PASS = R.DRAW, R.PASS
# Offsets of the observation fields, in `huit_arrays.OFFSET_FIELDS` order.
AT_HAND, AT_TOP, AT_SUIT, AT_ACE_PENALTY, AT_OPPONENTS, AT_PLAYED = range(6)
NUM_CARDS = DECK_BITS.size
DECK = PLAIN | EIGHTS  # every card of the 32
NUM_SUITS = TOP_TABLE.shape[1]
helper = njit(cache=True, _nrt=False)
"""The kernels' helpers: compiled without reference counting (they allocate nothing), since counting
the arrays they are passed costs more than the rest of a call, and they are called millions of times."""
inlined = njit(cache=True, _nrt=False, inline="always")
"""The smallest helpers, inlined into their callers (numba does not inline across its functions)."""


# ---------------------------------------------------------------- bitmasks
@inlined
def popcount(x: int) -> int:
    """Cards in a bitmask of card ids (they fit 63 bits, so the signed arithmetic is exact)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@inlined
def shape(hand: int) -> int:
    """`huit_tables.shape`: bit i per rank `RANKS[i]` held, then one bit per suit held."""
    out = 0
    ranks = SHAPE_RANK_BITS.size
    for i in range(ranks):
        if hand & SHAPE_RANK_BITS[i]:
            out |= 1 << i
    for s in range(SHAPE_SUIT_BITS.size):
        if hand & SHAPE_SUIT_BITS[s]:
            out |= 1 << (ranks + s)
    return out


@helper
def read_cards(obs: np.ndarray, b: int, start: int) -> int:
    """`huit_tables.to_mask` of the 32-long slice of row `b` at `start`."""
    mask = 0
    for i in range(NUM_CARDS):
        if obs[b, start + i] > 0.5:
            mask |= DECK_BITS[i]
    return mask


@helper
def first_max(obs: np.ndarray, b: int, start: int, size: int) -> int:
    """`argmax` of a one-hot slice of row `b`, -1 when its largest value is 0 (nothing marked)."""
    best = 0
    for i in range(1, size):
        if obs[b, start + i] > obs[b, start + best]:
            best = i
    return best if obs[b, start + best] != 0 else -1


@helper
def table_of(obs: np.ndarray, b: int, offsets: np.ndarray) -> int:
    """The table index (`huit_arrays.TABLES`) of row `b`: `follow_of(top, suit)` of `decode`."""
    top = first_max(obs, b, offsets[AT_TOP], NUM_CARDS)
    if top < 0:
        return 0
    suit = first_max(obs, b, offsets[AT_SUIT], NUM_SUITS)
    if suit < 0:
        raise ValueError("an observation has a top card but no current suit")
    return TOP_TABLE[top, suit]


# ---------------------------------------------------------------- greedy
@njit(cache=True)
def greedy_batch(obs: np.ndarray, masks: np.ndarray, hand_at: int, rng: np.random.Generator) -> np.ndarray:
    """`HuitGreedy.act` for every row in order (`HuitGreedy.score`'s columns; draw and pass lose)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], GREEDY_COLUMNS.shape[1] + 1))
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        if count == 1:
            out[b] = legal[0]
            continue
        hand = read_cards(obs, b, hand_at)
        for i in range(count):
            a = legal[i]
            if a >= DRAW:
                scores[i, :] = 0.0
                scores[i, 0] = GREEDY_DRAW if a == DRAW else GREEDY_PASS
            else:
                scores[i, :-1] = GREEDY_COLUMNS[a]
                scores[i, -1] = float(popcount(hand & GREEDY_SUIT[a]))
        out[b] = legal[best_index(scores, count, rng)]
    return out


# ---------------------------------------------------------------- expert
# What the expert knows on one row, its memos and the rules' tables (`huit_arrays.INT_FIELDS`,
# `FLOAT_FIELDS`): `ints` and `floats` below, at these offsets.
UNKNOWN, POOL_SIZE, STAMP, DRAWS, SIZES, POOL, SEAT_STAMP, THREAT_STAMP, DRAW_KEYS, OUT_TABLE, OUT_FRESH, \
    OUT_NEXT = (INT_AT[name] for name in INT_FIELDS)
WEIGHTS, KNOWN, SEATS, THREATS, DRAW_VALUES = (FLOAT_AT[name] for name in FLOAT_FIELDS)
CAN_PLAY, CAN_NOW, NEXT_THREAT, OTHER_THREAT, SKIPPED, STUCK, STUCK_THREAT, STUCK_ACE, WIN = (
    WEIGHTS + WEIGHT_NAMES.index(name) for name in (
        "can_play", "can_now", "next_threat", "other_threat", "skipped", "stuck", "stuck_threat", "stuck_ace",
        "win"))


@inlined
def p_lacks(pool: int, wanted: int, k: int) -> float:
    """`common.p_lacks`, the same products in the same order."""
    if k <= 0 or wanted <= 0:
        return 1.0
    if k > pool - wanted:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (pool - wanted - i) / (pool - i)
    return p


@inlined
def seat_terms(seat: int, num_players: int, ints: np.ndarray, floats: np.ndarray) -> None:
    """`HuitExpert.seat_terms_of(seat)` into the seat's two floats, once per row."""
    if ints[SEAT_STAMP + seat] == ints[STAMP]:
        return
    others = 0.0
    for s in range(1, num_players):
        if s != seat and ints[SIZES + s]:
            others += 1.0 / ints[SIZES + s]
    skipped = 1.0 if seat != 1 else 0.0
    size = ints[SIZES + seat]
    floats[SEATS + 2 * seat] = (floats[NEXT_THREAT] / size + floats[OTHER_THREAT] * others
                                + floats[SKIPPED] * skipped)
    floats[SEATS + 2 * seat + 1] = floats[STUCK] + floats[STUCK_THREAT] / size
    ints[SEAT_STAMP + seat] = ints[STAMP]


@inlined
def threat_slot(table: int, fresh: int, nxt: int, num_players: int, ints: np.ndarray,
                floats: np.ndarray) -> int:
    """Where `HuitExpert.threat_terms` of an outcome are (`floats[slot]`, `floats[slot + 1]`), reckoned
    once per row."""
    slot = (table * 2 + fresh) * ALL_SEATS + nxt
    if ints[THREAT_STAMP + slot] != ints[STAMP]:
        seat = nxt if nxt else 1
        seat_terms(seat, num_players, ints, floats)
        ahead, per_stuck = floats[SEATS + 2 * seat], floats[SEATS + 2 * seat + 1]
        wanted = popcount(ints[UNKNOWN] & TABLE_CAN[table])
        lacks = p_lacks(ints[POOL_SIZE], wanted, ints[SIZES + seat])
        ace = floats[STUCK_ACE]
        fresh_ace = 1.0 if fresh else 0.0
        floats[THREATS + 2 * slot] = ahead + per_stuck * lacks + ace * lacks * fresh_ace
        floats[THREATS + 2 * slot + 1] = ahead + per_stuck * 1.0 + ace * 1.0 * fresh_ace
        ints[THREAT_STAMP + slot] = ints[STAMP]
    return THREATS + 2 * slot


@inlined
def static(hand: int, table: int, fresh: int, nxt: int, num_players: int, ints: np.ndarray,
           floats: np.ndarray) -> float:
    """`HuitExpert.static`: log-odds that I win once my turn ends with `hand` on this outcome.

    The terms of the hand alone (`HuitExpert.hand_value`: its known terms, then
    the chance that it follows an unknown card), whether it follows the table it
    leaves, and the outcome's threat terms, added in that order.
    """
    form = shape(hand)
    pool = ints[POOL_SIZE]
    follow = 1.0 if hand & EIGHTS or not pool else popcount(ints[UNKNOWN] & REACH[form]) / pool
    value = floats[KNOWN + (form & RANKS_HELD) * KNOWN_COLUMNS + popcount(hand)] + floats[CAN_PLAY] * follow
    slot = threat_slot(table, fresh, nxt, num_players, ints, floats)
    can = hand & TABLE_CAN[table]
    now = floats[CAN_NOW] * (1.0 if can else 0.0)
    return value + now + floats[slot + (1 if nxt == 0 and can else 0)]


@inlined
def end_value(rest: int, action: int, num_players: int, ints: np.ndarray, floats: np.ndarray) -> float:
    """`static` of what a play leaves (`win` when it leaves nothing, B11): the end of a turn."""
    if not rest:
        return floats[WIN]
    return static(rest, ints[OUT_TABLE + action], ints[OUT_FRESH + action], ints[OUT_NEXT + action],
                  num_players, ints, floats)


@helper
def draw_value(hand: int, table: int, fresh: int, num_players: int, ints: np.ndarray,
               floats: np.ndarray) -> float:
    """`HuitExpert.draw_value` (memoised per row, as `HuitExpert.value` does)."""
    for i in range(ints[DRAWS]):
        key = DRAW_KEYS + 3 * i
        if ints[key] == hand and ints[key + 1] == table and ints[key + 2] == fresh:
            return floats[DRAW_VALUES + i]
    value = reckon_draw(hand, table, fresh, num_players, ints, floats)
    i = ints[DRAWS]
    if i < DRAW_MEMO:
        key = DRAW_KEYS + 3 * i
        ints[key], ints[key + 1], ints[key + 2] = hand, table, fresh
        floats[DRAW_VALUES + i] = value
        ints[DRAWS] = i + 1
    return value


@helper
def reckon_draw(hand: int, table: int, fresh: int, num_players: int, ints: np.ndarray,
                floats: np.ndarray) -> float:
    """The expectation, over the unknown cards, of the best of laying or passing after a draw."""
    stay = static(hand, table, 0, 1, num_players, ints, floats)
    count = ints[POOL_SIZE]
    if count == 0:
        return stay
    if fresh:  # B7: two cards, and the turn ends; the next player faces the lock
        total = 0.0
        for i in range(count):
            total += static(hand | ints[POOL + i], table, 0, 1, num_players, ints, floats)
        return stay + 2 * (total / count - stay)
    total = 0.0
    for i in range(count):
        more = hand | ints[POOL + i]
        best = static(more, table, 0, 1, num_players, ints, floats)
        for k in range(LAY_RANKS[table]):  # the lays of `legal_lays(more, table, True)`
            held = more & LAY_BITS[table, k]
            if not held:
                continue
            group = held >> LAY_SHIFT[table, k]
            for j in range(LAY_START[table, k, group], LAY_START[table, k, group + 1]):
                a = LAY_ACTIONS[j]
                value = end_value(more & KEEP[a], a, num_players, ints, floats)
                if value > best:
                    best = value
        total += best
    return total / count


@helper
def play_value(hand: int, action: int, again: int, num_players: int, ints: np.ndarray,
               floats: np.ndarray) -> float:
    """`HuitExpert.value` of a play action: with my turn again (Queens), the best follow-up counts."""
    rest = hand & KEEP[action]
    if not rest or ints[OUT_NEXT + action] != 0 or again == 0:
        return end_value(rest, action, num_players, ints, floats)
    table = ints[OUT_TABLE + action]
    best = 0.0
    first = True
    for k in range(LAY_RANKS[table]):  # `legal_lays(rest, table, False)`: the lays, then draw
        held = rest & LAY_BITS[table, k]
        if not held:
            continue
        group = held >> LAY_SHIFT[table, k]
        for j in range(LAY_START[table, k, group], LAY_START[table, k, group + 1]):
            value = play_value(rest, LAY_ACTIONS[j], again - 1, num_players, ints, floats)
            if first or value > best:
                best, first = value, False
    value = draw_value(rest, table, 0, num_players, ints, floats)
    return value if first or value > best else best


@helper
def start_turn(obs: np.ndarray, b: int, offsets: np.ndarray, hand: int, num_players: int,
               ints: np.ndarray) -> None:
    """`decode` and `HuitExpert.start_turn` of row `b`: hand sizes, the unknown cards, fresh memos."""
    ints[SIZES] = popcount(hand)
    for k in range(1, num_players):
        ints[SIZES + k] = int(np.rint(np.float64(obs[b, offsets[AT_OPPONENTS] + k - 1]) * 8.0))
    unknown = DECK & ~hand & ~read_cards(obs, b, offsets[AT_PLAYED])
    ints[UNKNOWN] = unknown
    count = 0
    while unknown:
        low = unknown & -unknown
        ints[POOL + count] = low
        count += 1
        unknown ^= low
    ints[POOL_SIZE] = count
    ints[STAMP] += 1
    ints[DRAWS] = 0


@helper
def row_values(obs: np.ndarray, b: int, offsets: np.ndarray, legal: np.ndarray, count: int, num_players: int,
               again: int, ints: np.ndarray, floats: np.ndarray, scores: np.ndarray) -> None:
    """`HuitExpert.value` of each of row `b`'s `count` legal actions into `scores[:count, 0]`."""
    hand = read_cards(obs, b, offsets[AT_HAND])
    table = table_of(obs, b, offsets)
    fresh = 1 if obs[b, offsets[AT_ACE_PENALTY]] > 0.5 else 0
    start_turn(obs, b, offsets, hand, num_players, ints)
    for i in range(count):
        a = legal[i]
        if a == PASS:
            scores[i, 0] = static(hand, table, 0, 1, num_players, ints, floats)
        elif a == DRAW:
            scores[i, 0] = draw_value(hand, table, fresh, num_players, ints, floats)
        else:
            scores[i, 0] = play_value(hand, a, again, num_players, ints, floats)


@njit(cache=True)
def expert_batch(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                 int_table: np.ndarray, float_table: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`HuitExpert.act` for every row in order, looking `again` Queen turns ahead.

    `int_table`, `float_table`: the rules' arrays (`huit_arrays.expert_arrays`),
    copied, so that agents sharing them can play at once.
    """
    out = np.empty(obs.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], 1))
    ints, floats = int_table.copy(), float_table.copy()
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        if count == 1:  # `best` draws nothing for one action, and the values have no other effect
            out[b] = legal[0]
            continue
        row_values(obs, b, offsets, legal, count, num_players, again, ints, floats, scores)
        out[b] = legal[best_index(scores, count, rng)]
    return out


@njit(cache=True)
def expert_values(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                  int_table: np.ndarray, float_table: np.ndarray) -> np.ndarray:
    """(B, num_actions) `HuitExpert.value` of every legal action of every row (NaN off the legal ones).

    What `expert_batch` ranks, before rounding: the differential tests compare
    it with the Python values bit for bit, which a change too small to move a
    choice would still fail.
    """
    out = np.full(masks.shape, np.nan)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], 1))
    ints, floats = int_table.copy(), float_table.copy()
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        row_values(obs, b, offsets, legal, count, num_players, again, ints, floats, scores)
        for i in range(count):
            out[b, legal[i]] = scores[i, 0]
    return out
