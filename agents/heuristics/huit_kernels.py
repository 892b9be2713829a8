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
(a hand's own terms). Per-row state lives in small arrays (`Turn`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cardlab.agents.batch_kernels import legal_ids
from cardlab.agents.heuristics.common import best_index
from cardlab.agents.heuristics.huit_arrays import (
    ALL_SEATS,
    DECK_BITS,
    EIGHTS,
    GREEDY_COLUMNS,
    GREEDY_DRAW,
    GREEDY_PASS,
    GREEDY_SUIT,
    KEEP,
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
    TABLES,
    TOP_TABLE,
    WEIGHT_NAMES,
    ExpertArrays,
)
from cardlab.agents.heuristics.huit_tables import RANKS_HELD
from cardlab.envs.huit import rules as R

DRAW, PASS = R.DRAW, R.PASS
W_CARDS, W_GROUPS, W_EIGHT, W_ACE, W_CAN_PLAY, W_CAN_NOW, W_NEXT_THREAT, W_OTHER_THREAT, W_SKIPPED, \
    W_STUCK, W_STUCK_THREAT, W_STUCK_ACE, W_WIN = range(len(WEIGHT_NAMES))
# Offsets of the observation fields, in `huit_arrays.OFFSET_FIELDS` order.
AT_HAND, AT_TOP, AT_SUIT, AT_ACE_PENALTY, AT_OPPONENTS, AT_PLAYED = range(6)
NUM_CARDS = DECK_BITS.size
DECK = PLAIN | EIGHTS  # every card of the 32
NUM_SUITS = TOP_TABLE.shape[1]
OUTCOMES = len(TABLES) * 2 * ALL_SEATS  # (table, fresh Ace, next seat): the threat memo's slots
DRAW_MEMO = 64  # draws valued along one row's look-ahead (more are reckoned again, as without a memo)
# Turn.info columns: the unknown cards, how many, the row's stamp (memo entries of other rows are stale),
# and the draws memoised.
UNKNOWN, POOL_SIZE, STAMP, DRAWS = range(4)
helper = njit(cache=True, _nrt=False)
"""The kernels' helpers: compiled without reference counting (they allocate nothing), since counting
the arrays they are passed costs more than the rest of a call, and they are called millions of times."""


# ---------------------------------------------------------------- bitmasks
@helper
def popcount(x: int) -> int:
    """Cards in a bitmask of card ids (they fit 63 bits, so the signed arithmetic is exact)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@helper
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
class Turn(NamedTuple):
    """What the expert knows on one row, and its memos (`HuitExpert.start_turn`), in arrays."""

    info: np.ndarray  # int64 (4,): UNKNOWN, POOL_SIZE, STAMP, DRAWS
    sizes: np.ndarray  # int64 (n,): cards held, me first
    pool: np.ndarray  # int64 (32,): the bit of each unknown card, ascending ids (`cards_of`)
    seats: np.ndarray  # float64 (n, 2): `seat_terms_of` per seat
    seat_stamp: np.ndarray  # int64 (n,): the row whose seat terms are in `seats`
    threats: np.ndarray  # float64 (OUTCOMES, 2): `threat_terms` per outcome
    threat_stamp: np.ndarray  # int64 (OUTCOMES,)
    draw_keys: np.ndarray  # int64 (DRAW_MEMO, 3): hand, table, fresh Ace of a draw valued
    draw_values: np.ndarray  # float64 (DRAW_MEMO,)


@helper
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


@helper
def seat_terms(seat: int, rules: ExpertArrays, turn: Turn) -> None:
    """`HuitExpert.seat_terms_of(seat)` into `turn.seats[seat]`, once per row."""
    stamp = turn.info[STAMP]
    if turn.seat_stamp[seat] == stamp:
        return
    w, sizes = rules.weights, turn.sizes
    others = 0.0
    for s in range(1, sizes.size):
        if s != seat and sizes[s]:
            others += 1.0 / sizes[s]
    skipped = 1.0 if seat != 1 else 0.0
    turn.seats[seat, 0] = w[W_NEXT_THREAT] / sizes[seat] + w[W_OTHER_THREAT] * others + w[W_SKIPPED] * skipped
    turn.seats[seat, 1] = w[W_STUCK] + w[W_STUCK_THREAT] / sizes[seat]
    turn.seat_stamp[seat] = stamp


@helper
def threat_slot(table: int, fresh: int, nxt: int, rules: ExpertArrays, turn: Turn) -> int:
    """The memo slot of `HuitExpert.threat_terms` of an outcome, filled once per row."""
    slot = (table * 2 + fresh) * ALL_SEATS + nxt
    if turn.threat_stamp[slot] != turn.info[STAMP]:
        fill_threat(slot, table, fresh, nxt, rules, turn)
    return slot


@helper
def fill_threat(slot: int, table: int, fresh: int, nxt: int, rules: ExpertArrays, turn: Turn) -> None:
    """`HuitExpert.threat_terms` of an outcome into `turn.threats[slot]`."""
    seat = nxt if nxt else 1
    seat_terms(seat, rules, turn)
    ahead, per_stuck = turn.seats[seat, 0], turn.seats[seat, 1]
    wanted = popcount(turn.info[UNKNOWN] & TABLE_CAN[table])
    lacks = p_lacks(turn.info[POOL_SIZE], wanted, turn.sizes[seat])
    ace = rules.weights[W_STUCK_ACE]
    fresh_ace = 1.0 if fresh else 0.0
    turn.threats[slot, 0] = ahead + per_stuck * lacks + ace * lacks * fresh_ace
    turn.threats[slot, 1] = ahead + per_stuck * 1.0 + ace * 1.0 * fresh_ace
    turn.threat_stamp[slot] = turn.info[STAMP]


@helper
def hand_value(hand: int, rules: ExpertArrays, turn: Turn) -> float:
    """`HuitExpert.hand_value`: the known terms of the hand's shape, then the chance to follow."""
    form = shape(hand)
    pool = turn.info[POOL_SIZE]
    if hand & EIGHTS or not pool:
        follow = 1.0
    else:
        follow = popcount(turn.info[UNKNOWN] & REACH[form]) / pool
    return rules.known[form & RANKS_HELD, popcount(hand)] + rules.weights[W_CAN_PLAY] * follow


@helper
def static(hand: int, table: int, fresh: int, nxt: int, rules: ExpertArrays, turn: Turn) -> float:
    """`HuitExpert.static`: log-odds that I win once my turn ends with `hand` on this outcome."""
    value = hand_value(hand, rules, turn)
    slot = threat_slot(table, fresh, nxt, rules, turn)
    can = hand & TABLE_CAN[table]
    now = rules.weights[W_CAN_NOW] * (1.0 if can else 0.0)
    return value + now + turn.threats[slot, 1 if nxt == 0 and can else 0]


@helper
def draw_value(hand: int, table: int, fresh: int, rules: ExpertArrays, turn: Turn) -> float:
    """`HuitExpert.draw_value` (memoised per row, as `HuitExpert.value` does)."""
    keys = turn.draw_keys
    for i in range(turn.info[DRAWS]):
        if keys[i, 0] == hand and keys[i, 1] == table and keys[i, 2] == fresh:
            return turn.draw_values[i]
    value = reckon_draw(hand, table, fresh, rules, turn)
    i = turn.info[DRAWS]
    if i < DRAW_MEMO:
        keys[i, 0], keys[i, 1], keys[i, 2] = hand, table, fresh
        turn.draw_values[i] = value
        turn.info[DRAWS] = i + 1
    return value


@helper
def reckon_draw(hand: int, table: int, fresh: int, rules: ExpertArrays, turn: Turn) -> float:
    """The expectation, over the unknown cards, of the best of laying or passing after a draw."""
    stay = static(hand, table, 0, 1, rules, turn)
    count = turn.info[POOL_SIZE]
    if count == 0:
        return stay
    pool = turn.pool
    if fresh:  # B7: two cards, and the turn ends; the next player faces the lock
        total = 0.0
        for i in range(count):
            total += static(hand | pool[i], table, 0, 1, rules, turn)
        return stay + 2 * (total / count - stay)
    win = rules.weights[W_WIN]
    total = 0.0
    for i in range(count):
        more = hand | pool[i]
        best = static(more, table, 0, 1, rules, turn)
        for k in range(LAY_RANKS[table]):
            held = more & LAY_BITS[table, k]
            if not held:
                continue
            group = held >> LAY_SHIFT[table, k]
            for j in range(LAY_START[table, k, group], LAY_START[table, k, group + 1]):
                a = LAY_ACTIONS[j]
                rest = more & KEEP[a]
                if not rest:
                    value = win
                else:
                    value = static(rest, rules.out_table[a], rules.out_fresh[a], rules.out_next[a], rules, turn)
                if value > best:
                    best = value
        total += best
    return total / count


@helper
def play_value(hand: int, action: int, again: int, rules: ExpertArrays, turn: Turn) -> float:
    """`HuitExpert.value` of a play action: with my turn again (Queens), the best follow-up counts."""
    rest = hand & KEEP[action]
    if not rest:
        return rules.weights[W_WIN]
    table, nxt = rules.out_table[action], rules.out_next[action]
    if nxt != 0 or again == 0:
        return static(rest, table, rules.out_fresh[action], nxt, rules, turn)
    best = 0.0
    first = True
    for k in range(LAY_RANKS[table]):  # `legal_lays(rest, table, False)`: the lays, then draw
        held = rest & LAY_BITS[table, k]
        if not held:
            continue
        group = held >> LAY_SHIFT[table, k]
        for j in range(LAY_START[table, k, group], LAY_START[table, k, group + 1]):
            value = play_value(rest, LAY_ACTIONS[j], again - 1, rules, turn)
            if first or value > best:
                best, first = value, False
    value = draw_value(rest, table, 0, rules, turn)
    return value if first or value > best else best


@helper
def start_turn(obs: np.ndarray, b: int, offsets: np.ndarray, hand: int, turn: Turn) -> None:
    """`decode` and `HuitExpert.start_turn` of row `b`: hand sizes, the unknown cards, fresh memos."""
    sizes = turn.sizes
    sizes[0] = popcount(hand)
    for k in range(1, sizes.size):
        sizes[k] = int(np.rint(np.float64(obs[b, offsets[AT_OPPONENTS] + k - 1]) * 8.0))
    played = read_cards(obs, b, offsets[AT_PLAYED])
    unknown = DECK & ~hand & ~played
    turn.info[UNKNOWN] = unknown
    count = 0
    rest = unknown
    while rest:
        low = rest & -rest
        turn.pool[count] = low
        count += 1
        rest ^= low
    turn.info[POOL_SIZE] = count
    turn.info[STAMP] += 1
    turn.info[DRAWS] = 0


@njit(cache=True)
def expert_batch(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                 rules: ExpertArrays, rng: np.random.Generator) -> np.ndarray:
    """`HuitExpert.act` for every row in order (looking `again` Queen turns ahead)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], 1))
    turn = Turn(np.zeros(4, dtype=np.int64), np.zeros(num_players, dtype=np.int64),
                np.zeros(NUM_CARDS, dtype=np.int64), np.zeros((num_players, 2)),
                np.zeros(num_players, dtype=np.int64), np.zeros((OUTCOMES, 2)),
                np.zeros(OUTCOMES, dtype=np.int64), np.zeros((DRAW_MEMO, 3), dtype=np.int64),
                np.zeros(DRAW_MEMO))
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        if count == 1:  # `best` draws nothing for one action, and the values have no other effect
            out[b] = legal[0]
            continue
        hand = read_cards(obs, b, offsets[AT_HAND])
        table = table_of(obs, b, offsets)
        fresh = 1 if obs[b, offsets[AT_ACE_PENALTY]] > 0.5 else 0
        start_turn(obs, b, offsets, hand, turn)
        for i in range(count):
            a = legal[i]
            if a == PASS:
                scores[i, 0] = static(hand, table, 0, 1, rules, turn)
            elif a == DRAW:
                scores[i, 0] = draw_value(hand, table, fresh, rules, turn)
            else:
                scores[i, 0] = play_value(hand, a, again, rules, turn)
        out[b] = legal[best_index(scores, count, rng)]
    return out
