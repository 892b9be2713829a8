"""`HuitGreedy` and `HuitExpert` (`cardlab.agents.heuristics.huit`): their one implementation, compiled.

Each kernel plays a batch of observations, row after row: the agents' `act` is a batch of one, and the
game's batched paths (play-outs, the vector env, replay) call the same kernels on many rows. They read
the rule tables `arrays` builds from `tables` (`Tables`) and break ties with `policy_kernels.best_index`
and the agent's own generator, so a seed fixes a game and a batch plays each row as it would alone.

The expert memoises per row what it reckons more than once (threat terms per outcome, draws along the
look-ahead); its floats are added in a fixed order, which the pinned seeded games keep. That state and
the tables of the rules and weights live in two flat arrays (`INT_FIELDS`, `FLOAT_FIELDS`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from cardlab.envs import cards as C
from cardlab.envs.huit import rules as R
from cardlab.envs.policy_kernels import best_index, compiled_p_lacks, legal_ids


class Tables(NamedTuple):
    """The rule tables the kernels read (`arrays.TABLES_ARRAYS` builds them from `tables`).

    Passed in, not read as globals (numba freezes a global array into its cached code), as a plain tuple
    read at the `T_` indices below, whose type numba's cache records without naming this class.
    """

    bits: np.ndarray  # int64: the card sets `EIGHTS_AT`, `DECK_AT` and `RANKS_HELD_AT` below
    deck_bits: np.ndarray  # (32,) the bit of each card of the observation's 32-long slices
    top_table: np.ndarray  # (32, 4) the table index of a top card and the current suit
    table_can: np.ndarray  # (tables,) the cards that go on each table (`Follow.can`)
    lay_ranks: np.ndarray  # (tables,) how many ranks may go on each table
    lay_bits: np.ndarray  # (tables, ranks) the cards of each of them (`Follow.lays` order)
    lay_shift: np.ndarray  # (tables, ranks) where their 4 bits start
    lay_start: np.ndarray  # (tables, ranks, 17) lay_actions[lay_start[t, k, g]:lay_start[t, k, g + 1]]:
    lay_actions: np.ndarray  # ... the legal groups of the k-th rank when the cards held of it index g
    keep: np.ndarray  # (DRAW,) per play action, the mask that keeps all but the cards it lays
    reach: np.ndarray  # per hand shape, the cards sharing a rank or a suit with it (`tables.REACH`)
    shape_ranks: np.ndarray  # the cards behind each rank bit of a shape (`shape`)
    shape_suits: np.ndarray  # ... and behind each suit bit
    greedy_columns: np.ndarray  # (DRAW, 3) the greedy's score of each play but the last column
    greedy_suit: np.ndarray  # (DRAW,) the cards whose count is that last column


(T_BITS, T_DECK_BITS, T_TOP_TABLE, T_TABLE_CAN, T_LAY_RANKS, T_LAY_BITS, T_LAY_SHIFT, T_LAY_START,
 T_LAY_ACTIONS, T_KEEP, T_REACH, T_SHAPE_RANKS, T_SHAPE_SUITS, T_GREEDY_COLUMNS, T_GREEDY_SUIT) = range(
    len(Tables._fields))
"""Where each field of `Tables` is in the tuple, in the class's order."""
EIGHTS_AT, DECK_AT, RANKS_HELD_AT = range(3)
TableArrays = tuple[np.ndarray, ...]
"""`tuple(Tables(...))`, as the kernels take it."""
DRAW, PASS = R.DRAW, R.PASS
GREEDY_DRAW, GREEDY_PASS = -2.0, -1.0  # the greedy's score of draw and pass: below every play
AGAIN = 3
"""extra turns (Queens, 2 players) the expert looks ahead"""
OFFSET_FIELDS = ("hand", "top", "suit", "ace_penalty", "opponents", "played")
"""The observation fields the heuristics read: the kernels get where each starts (`offsets`), in this order,
since the layout depends on the rule options (`memory` adds a field)."""
AT_HAND, AT_TOP, AT_SUIT, AT_ACE_PENALTY, AT_OPPONENTS, AT_PLAYED = range(len(OFFSET_FIELDS))
NUM_CARDS = len(R.DECK_CARDS)
NUM_TABLES = 1 + len(R.RANKS) * C.NUM_SUITS  # the empty table, and a top rank with a suit
_SEATS = R.HuitRules.limits("num_players")[1]
if _SEATS is None:
    raise ValueError("HuitRules.num_players has no upper bound: the expert's outcome memo needs one")
ALL_SEATS: int = _SEATS
"""The most seats at a table: the outcome memo holds this many next seats per table."""

# The expert keeps what it knows of a row, its memos and the tables of the table's rules in two flat
# arrays, one of int64 and one of float64 (`arrays.expert_arrays`), at these offsets (field -> size):
# a kernel's helpers get two arrays, not a dozen (numba passes every field of every array argument).
OUTCOMES = NUM_TABLES * 2 * ALL_SEATS
"""The outcomes of a turn (table, fresh Ace, next seat): the slots of the threat memo."""
DRAW_MEMO = 64
"""Draws valued along one row's look-ahead that are memoised (more are reckoned again)."""
KNOWN_COLUMNS = NUM_CARDS + 1
"""`known_terms` per rank set, by number of cards (0 to 32)."""
WEIGHT_NAMES = ("cards", "groups", "eight", "ace", "can_play", "can_now", "next_threat", "other_threat",
                "skipped", "stuck", "stuck_threat", "stuck_ace", "win")
"""The `HuitWeights` in the order of the weight field."""
INT_FIELDS = {
    # the unknown cards, how many, the row (memo entries of other rows are stale), the draws memoised
    "unknown": 1, "pool_size": 1, "stamp": 1, "draws": 1,
    "sizes": ALL_SEATS,  # cards held, me first
    "pool": NUM_CARDS,  # the bit of each unknown card, ascending ids
    "seat_stamp": ALL_SEATS, "threat_stamp": OUTCOMES,  # the row whose seat terms, threat terms are memoised
    "draw_keys": 3 * DRAW_MEMO,  # hand, table, fresh Ace of each draw memoised
    # per seat, the cards it is known not to hold (0: nothing known) and how many it drew since (`VOIDS`)
    "voids": ALL_SEATS, "void_fresh": ALL_SEATS,
    "out_table": DRAW, "out_fresh": DRAW, "out_next": DRAW,  # how each play ends the turn (B7, B8)
    "ace_draw": 1,  # the cards a fresh Ace makes me draw (B7)
}
FLOAT_FIELDS = {
    "weights": len(WEIGHT_NAMES),
    "known": (1 << len(R.RANKS)) * KNOWN_COLUMNS,  # `known_terms`, by rows
    "seats": 2 * ALL_SEATS,  # `seat_terms` per seat
    "threats": 2 * OUTCOMES,  # `threat_slot`'s terms per outcome
    "draw_values": DRAW_MEMO,
}


def _starts(fields: dict[str, int]) -> dict[str, int]:
    starts, at = {}, 0
    for name, size in fields.items():
        starts[name], at = at, at + size
    return {**starts, "size": at}


INT_AT, FLOAT_AT = _starts(INT_FIELDS), _starts(FLOAT_FIELDS)
"""Where each field of the two arrays starts (and "size": their lengths)."""
NO_REFCOUNT: dict[str, Any] = {"_nrt": False}  # no runtime of reference counts (numba's stubs omit it)
helper = njit(cache=True, **NO_REFCOUNT)
"""The kernels' helpers: compiled without reference counting (they allocate nothing), since counting
the arrays they are passed costs more than the rest of a call, and they are called millions of times."""
inlined = njit(cache=True, inline="always", **NO_REFCOUNT)
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
def shape(hand: int, tables: TableArrays) -> int:
    """A card set's shape: bit i per rank `RANKS[i]` held, then one bit per suit (`tables.SHAPE_BITS`)."""
    out = 0
    ranks = tables[T_SHAPE_RANKS].size
    for i in range(ranks):
        if hand & tables[T_SHAPE_RANKS][i]:
            out |= 1 << i
    for s in range(tables[T_SHAPE_SUITS].size):
        if hand & tables[T_SHAPE_SUITS][s]:
            out |= 1 << (ranks + s)
    return out


@inlined
def read_cards(obs: np.ndarray, b: int, start: int, tables: TableArrays) -> int:
    """The bitmask of the cards marked in the 32-long slice (`DECK_CARDS` order) of row `b` at `start`."""
    mask = np.int64(0)  # not a literal 0, which would compile its callers' callees again for its type
    for i in range(NUM_CARDS):
        if obs[b, start + i] > 0.5:
            mask |= tables[T_DECK_BITS][i]
    return mask


@inlined
def first_max(obs: np.ndarray, b: int, start: int, size: int) -> int:
    """`argmax` of a one-hot slice of row `b`, -1 when its largest value is 0 (nothing marked)."""
    best = 0
    for i in range(1, size):
        if obs[b, start + i] > obs[b, start + best]:
            best = i
    return best if obs[b, start + best] != 0 else -1


@inlined
def table_of(obs: np.ndarray, b: int, offsets: np.ndarray, tables: TableArrays) -> int:
    """The table index (`arrays.TABLES`) of row `b`: `tables.follow_of` its top card and current suit."""
    top = first_max(obs, b, offsets[AT_TOP], NUM_CARDS)
    if top < 0:
        return 0
    suit = first_max(obs, b, offsets[AT_SUIT], C.NUM_SUITS)
    if suit < 0:
        raise ValueError("an observation has a top card but no current suit")
    return tables[T_TOP_TABLE][top, suit]


# ---------------------------------------------------------------- greedy
@njit(cache=True)
def greedy_batch(obs: np.ndarray, masks: np.ndarray, hand_at: int, tables: TableArrays,
                 rng: np.random.Generator) -> np.ndarray:
    """`HuitGreedy.act` for every row in order: the play scoring highest on (not 8s, cards laid, their
    points, cards then held of the suit it leaves), as `Tables.greedy_columns` and `greedy_suit` give
    them; draw and pass lose to every play."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], tables[T_GREEDY_COLUMNS].shape[1] + 1))
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        if count == 1:
            out[b] = legal[0]
            continue
        hand = read_cards(obs, b, hand_at, tables)
        for i in range(count):
            a = legal[i]
            if a >= DRAW:
                scores[i, :] = 0.0
                scores[i, 0] = GREEDY_DRAW if a == DRAW else GREEDY_PASS
            else:
                scores[i, :-1] = tables[T_GREEDY_COLUMNS][a]
                scores[i, -1] = float(popcount(hand & tables[T_GREEDY_SUIT][a]))
        out[b] = legal[best_index(scores, count, rng)]
    return out


# ---------------------------------------------------------------- expert
# Where the fields of `ints` and `floats` (INT_FIELDS, FLOAT_FIELDS) start.
UNKNOWN, POOL_SIZE, STAMP, DRAWS = INT_AT["unknown"], INT_AT["pool_size"], INT_AT["stamp"], INT_AT["draws"]
SIZES, POOL, SEAT_STAMP = INT_AT["sizes"], INT_AT["pool"], INT_AT["seat_stamp"]
THREAT_STAMP, DRAW_KEYS = INT_AT["threat_stamp"], INT_AT["draw_keys"]
VOIDS, VOID_FRESH = INT_AT["voids"], INT_AT["void_fresh"]
OUT_TABLE, OUT_FRESH, OUT_NEXT = INT_AT["out_table"], INT_AT["out_fresh"], INT_AT["out_next"]
ACE_DRAW_AT = INT_AT["ace_draw"]
KNOWN, SEATS = FLOAT_AT["known"], FLOAT_AT["seats"]
THREATS, DRAW_VALUES = FLOAT_AT["threats"], FLOAT_AT["draw_values"]
CAN_PLAY, CAN_NOW, NEXT_THREAT, OTHER_THREAT, SKIPPED, STUCK, STUCK_THREAT, STUCK_ACE, WIN = (
    FLOAT_AT["weights"] + WEIGHT_NAMES.index(name) for name in (
        "can_play", "can_now", "next_threat", "other_threat", "skipped", "stuck", "stuck_threat", "stuck_ace",
        "win"))


@inlined
def seat_terms(seat: int, num_players: int, ints: np.ndarray, floats: np.ndarray) -> None:
    """The threat terms of `seat` moving next, into its two floats, once per row: those before its chance
    to be stuck (its threat, the other opponents', whether the seat after me was skipped), and that
    chance's weight."""
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
def stuck_chance(seat: int, can: int, ints: np.ndarray) -> float:
    """Chance that `seat` holds none of the cards `can`, its cards spread at random over the unknown ones;
    where its voids are known (`VOIDS`, then `VOID_FRESH` cards drawn since), the cards held since then are
    spread over the unknown cards less those, and only the ones drawn since over all of them."""
    size = ints[SIZES + seat]
    wanted = popcount(ints[UNKNOWN] & can)
    void = ints[VOIDS + seat]
    if not void:
        return compiled_p_lacks(ints[POOL_SIZE], wanted, size)
    old = max(size - ints[VOID_FRESH + seat], 0)
    free = ints[UNKNOWN] & ~void
    return (compiled_p_lacks(popcount(free), popcount(free & can), old)
            * compiled_p_lacks(ints[POOL_SIZE], wanted, size - old))


@inlined
def threat_slot(table: int, fresh: int, nxt: int, num_players: int, ints: np.ndarray,
                floats: np.ndarray, tables: TableArrays) -> int:
    """Where the threat terms of an outcome are (`floats[slot]`, `floats[slot + 1]`), reckoned once per row.

    The terms of `static` that depend on how my turn ends, not on my hand: the first for when the next
    player is stuck as likely as `stuck_chance` says; the second for my own turn again (Queens) beyond the
    look-ahead while I can lay on my own card, as if the player after me could not.
    """
    slot = (table * 2 + fresh) * ALL_SEATS + nxt
    if ints[THREAT_STAMP + slot] != ints[STAMP]:
        seat = nxt if nxt else 1
        seat_terms(seat, num_players, ints, floats)
        ahead, per_stuck = floats[SEATS + 2 * seat], floats[SEATS + 2 * seat + 1]
        lacks = stuck_chance(seat, tables[T_TABLE_CAN][table], ints)
        ace = floats[STUCK_ACE]
        fresh_ace = 1.0 if fresh else 0.0
        floats[THREATS + 2 * slot] = ahead + per_stuck * lacks + ace * lacks * fresh_ace
        floats[THREATS + 2 * slot + 1] = ahead + per_stuck * 1.0 + ace * 1.0 * fresh_ace
        ints[THREAT_STAMP + slot] = ints[STAMP]
    return THREATS + 2 * slot


@inlined
def static(hand: int, table: int, fresh: int, nxt: int, num_players: int, ints: np.ndarray,
           floats: np.ndarray, tables: TableArrays) -> float:
    """Log-odds that I win once my turn ends with `hand` on this outcome (`HuitWeights`).

    The terms of the hand alone (its known terms, `known_terms`, then
    the chance that it follows an unknown card), whether it follows the table it
    leaves, and the outcome's threat terms, added in that order.
    """
    form = shape(hand, tables)
    pool = ints[POOL_SIZE]
    if hand & tables[T_BITS][EIGHTS_AT] or not pool:
        follow = 1.0
    else:
        follow = popcount(ints[UNKNOWN] & tables[T_REACH][form]) / pool
    known = floats[KNOWN + (form & tables[T_BITS][RANKS_HELD_AT]) * KNOWN_COLUMNS + popcount(hand)]
    value = known + floats[CAN_PLAY] * follow
    slot = threat_slot(table, fresh, nxt, num_players, ints, floats, tables)
    can = hand & tables[T_TABLE_CAN][table]
    now = floats[CAN_NOW] * (1.0 if can else 0.0)
    return value + now + floats[slot + (1 if nxt == 0 and can else 0)]


@inlined
def end_value(rest: int, action: int, num_players: int, ints: np.ndarray, floats: np.ndarray,
              tables: TableArrays) -> float:
    """`static` of what a play leaves (`win` when it leaves nothing, B11): the end of a turn."""
    if not rest:
        return floats[WIN]
    return static(rest, ints[OUT_TABLE + action], ints[OUT_FRESH + action], ints[OUT_NEXT + action],
                  num_players, ints, floats, tables)


@helper
def draw_value(hand: int, table: int, fresh: int, num_players: int, ints: np.ndarray,
               floats: np.ndarray, tables: TableArrays) -> float:
    """The value of drawing with `hand` on `table` (`reckon_draw`), memoised per row."""
    for i in range(ints[DRAWS]):
        key = DRAW_KEYS + 3 * i
        if ints[key] == hand and ints[key + 1] == table and ints[key + 2] == fresh:
            return floats[DRAW_VALUES + i]
    value = reckon_draw(hand, table, fresh, num_players, ints, floats, tables)
    i = ints[DRAWS]
    if i < DRAW_MEMO:
        key = DRAW_KEYS + 3 * i
        ints[key], ints[key + 1], ints[key + 2] = hand, table, fresh
        floats[DRAW_VALUES + i] = value
        ints[DRAWS] = i + 1
    return value


@helper
def reckon_draw(hand: int, table: int, fresh: int, num_players: int, ints: np.ndarray,
                floats: np.ndarray, tables: TableArrays) -> float:
    """The expectation, over the unknown cards, of the best of laying or passing after a draw."""
    stay = static(hand, table, 0, 1, num_players, ints, floats, tables)
    count = ints[POOL_SIZE]
    if count == 0:
        return stay
    if fresh:  # B7: `ace_draw` cards, each worth what one drawn card is on average, and the turn ends
        total = 0.0
        for i in range(count):
            total += static(hand | ints[POOL + i], table, 0, 1, num_players, ints, floats, tables)
        return stay + ints[ACE_DRAW_AT] * (total / count - stay)
    total = 0.0
    for i in range(count):
        more = hand | ints[POOL + i]
        best = static(more, table, 0, 1, num_players, ints, floats, tables)
        for k in range(tables[T_LAY_RANKS][table]):  # the lays of `more` on `table` after a draw
            held = more & tables[T_LAY_BITS][table, k]
            if not held:
                continue
            group = held >> tables[T_LAY_SHIFT][table, k]
            for j in range(tables[T_LAY_START][table, k, group], tables[T_LAY_START][table, k, group + 1]):
                a = tables[T_LAY_ACTIONS][j]
                value = end_value(more & tables[T_KEEP][a], a, num_players, ints, floats, tables)
                if value > best:
                    best = value
        total += best
    return total / count


@helper
def play_value(hand: int, action: int, again: int, num_players: int, ints: np.ndarray,
               floats: np.ndarray, tables: TableArrays) -> float:
    """The value of a play action: with my turn again (Queens), the best follow-up counts, for up to
    `again` more turns."""
    rest = hand & tables[T_KEEP][action]
    if not rest or ints[OUT_NEXT + action] != 0 or again == 0:
        return end_value(rest, action, num_players, ints, floats, tables)
    table = ints[OUT_TABLE + action]
    best = 0.0
    first = True
    for k in range(tables[T_LAY_RANKS][table]):  # the legal moves of `rest` on `table`: the lays, then draw
        held = rest & tables[T_LAY_BITS][table, k]
        if not held:
            continue
        group = held >> tables[T_LAY_SHIFT][table, k]
        for j in range(tables[T_LAY_START][table, k, group], tables[T_LAY_START][table, k, group + 1]):
            value = play_value(rest, tables[T_LAY_ACTIONS][j], again - 1, num_players, ints, floats, tables)
            if first or value > best:
                best, first = value, False
    value = draw_value(rest, table, np.int64(0), num_players, ints, floats, tables)
    return value if first or value > best else best


@helper
def start_turn(obs: np.ndarray, b: int, offsets: np.ndarray, hand: int, num_players: int,
               ints: np.ndarray, tables: TableArrays) -> None:
    """What row `b` tells of the turn: hand sizes, the unknown cards (neither mine nor on the table); and
    fresh memos."""
    ints[SIZES] = popcount(hand)
    for k in range(1, num_players):
        ints[SIZES + k] = int(np.rint(np.float64(obs[b, offsets[AT_OPPONENTS] + k - 1]) * 8.0))
    unknown = tables[T_BITS][DECK_AT] & ~hand & ~read_cards(obs, b, offsets[AT_PLAYED], tables)
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
               again: int, ints: np.ndarray, floats: np.ndarray, scores: np.ndarray,
               tables: TableArrays) -> None:
    """The value of each of row `b`'s `count` legal actions into `scores[:count, 0]`: a pass, what my
    hand is worth as the turn ends; a draw, `draw_value`; a play, `play_value`."""
    hand = read_cards(obs, b, offsets[AT_HAND], tables)
    table = table_of(obs, b, offsets, tables)
    fresh = 1 if obs[b, offsets[AT_ACE_PENALTY]] > 0.5 else 0
    start_turn(obs, b, offsets, hand, num_players, ints, tables)
    for i in range(count):
        a = legal[i]
        if a == PASS:
            scores[i, 0] = static(hand, table, 0, 1, num_players, ints, floats, tables)
        elif a == DRAW:
            scores[i, 0] = draw_value(hand, table, fresh, num_players, ints, floats, tables)
        else:
            scores[i, 0] = play_value(hand, a, again, num_players, ints, floats, tables)


@njit(cache=True)
def no_voids() -> np.ndarray:
    """The `voids` of a batch in which no seat's voids are known: no rows."""
    return np.zeros((0, 2, ALL_SEATS), dtype=np.int64)


@njit(cache=True)
def expert_batch(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                 int_table: np.ndarray, float_table: np.ndarray, tables: TableArrays,
                 rng: np.random.Generator) -> np.ndarray:
    """`HuitExpert.act` for every row in order, looking `again` Queen turns ahead, on a copy of the rules'
    arrays (`int_table`, `float_table`: `arrays.expert_arrays`), so that agents sharing them play at once."""
    return expert_rows(obs, masks, offsets, num_players, again, int_table.copy(), float_table.copy(), tables,
                       rng)


@njit(cache=True)
def expert_rows(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                ints: np.ndarray, floats: np.ndarray, tables: TableArrays,
                rng: np.random.Generator) -> np.ndarray:
    """`expert_batch` on a working copy of the rules' arrays that its caller owns and keeps across calls
    (the memos are stamped per row, so what one call leaves in them changes no later value): a caller
    making many small calls (a play-out's rounds) copies the arrays once, not once a call."""
    return expert_reading(obs, masks, offsets, num_players, again, ints, floats, no_voids(), tables, rng)


@njit(cache=True)
def expert_reading(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                   ints: np.ndarray, floats: np.ndarray, voids: np.ndarray, tables: TableArrays,
                   rng: np.random.Generator) -> np.ndarray:
    """`expert_rows` told, per row, what each seat is known not to hold.

    `voids` (B, 2, ALL_SEATS) int64, seats as offsets from the mover: per seat the card bitmask it is
    known not to hold (0: nothing known), then how many cards it drew since; (0, 2, ALL_SEATS) when
    nothing is known (`no_voids`). The expert's one guess at a hidden hand, whether the next player can
    follow (`stuck_chance`), reads them.
    """
    out = np.empty(obs.shape[0], dtype=np.int64)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], 1))
    if not voids.shape[0]:  # none known: clear any a caller's working copy holds from an earlier call
        ints[VOIDS:VOID_FRESH + ALL_SEATS] = 0
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        if count == 1:  # `best` draws nothing for one action, and the values have no other effect
            out[b] = legal[0]
            continue
        if voids.shape[0]:
            ints[VOIDS:VOIDS + ALL_SEATS] = voids[b, 0]
            ints[VOID_FRESH:VOID_FRESH + ALL_SEATS] = voids[b, 1]
        row_values(obs, b, offsets, legal, count, num_players, again, ints, floats, scores, tables)
        out[b] = legal[best_index(scores, count, rng)]
    return out


@njit(cache=True)
def expert_values(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, num_players: int, again: int,
                  int_table: np.ndarray, float_table: np.ndarray, tables: TableArrays) -> np.ndarray:
    """(B, num_actions) the value of every legal action of every row (NaN off the legal ones).

    What `expert_batch` ranks, before `best_index` rounds it: for analysis, and
    for tests that a change too small to move a choice would still fail.
    """
    out = np.full(masks.shape, np.nan)
    legal = np.empty(masks.shape[1], dtype=np.int64)
    scores = np.zeros((masks.shape[1], 1))
    ints, floats = int_table.copy(), float_table.copy()
    for b in range(obs.shape[0]):
        count = legal_ids(masks, b, legal)
        row_values(obs, b, offsets, legal, count, num_players, again, ints, floats, scores, tables)
        for i in range(count):
            out[b, legal[i]] = scores[i, 0]
    return out
