"""Huit américain's numba kernels over the batch's arrays: legal masks, moves, deals, observations.

Each kernel replays a piece of `cardlab.envs.huit.rules` (named in its doc) for
every slot b of the arrays that `cardlab.envs.huit.batched.HuitBatch` holds
(layout in that module's doc). The tables are built from the engine's own
definitions at import, so both read the same action layout. Arguments and
dtypes follow `cardlab.envs.batched_engine`'s convention; what both games share (end
of a hand, rewards, memory) is `cardlab.envs.batched_kernels`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from cardlab.envs import cards as C
from cardlab.envs.batched_kernels import (
    add_totals,
    clear_drew_on,
    end_of_hand,
    note_drew_on,
    observe_drew_on,
    score_hand,
)
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.batch_state import (
    ACE_PENALTY,
    ANNOUNCED,
    BANK_LEN,
    CUR,
    DEALER,
    DREW_ON,
    HAND_OVER,
    HAND_POINTS,
    HANDS_PLAYED,
    MATCH_OVER,
    PARAM_SLOTS,
    PHASE,
    S_BANK,
    S_HANDS,
    S_INFO,
    S_OBS_OFFSETS,
    S_OBS_SCALES,
    S_PARAMS,
    S_REWARD_TABLE,
    S_REWARDS,
    S_SEATS,
    S_TABLE,
    SCORE_CHANGES,
    SCORES,
    SIZES,
    STREAKS,
    SUIT,
    TABLE_LEN,
    TRUNCATED,
    TURN,
    WINNER,
    KernelArrays,
)
from cardlab.envs.huit.observer import DECK_IDS, LOCAL_INDEX, NUM_CARDS

NUM_ACTIONS = R.NUM_ACTIONS

P_N, P_EACH = PARAM_SLOTS["num_players"], PARAM_SLOTS["hand_size"]
P_QUEEN_EACH, P_SHUFFLE = PARAM_SLOTS["queen_skips_each"], PARAM_SLOTS["shuffle_on_refill"]
P_TARGET, P_STREAK_LEN, P_STREAK_BONUS = (PARAM_SLOTS["target_score"], PARAM_SLOTS["streak_length"],
                                          PARAM_SLOTS["streak_bonus"])
P_MAX_TURNS, P_MATCH = PARAM_SLOTS["max_turns"], PARAM_SLOTS["episode_match"]

# ---------------------------------------------------------------- tables built from the engine's
# Rank and suit of each card index, through the helpers of cards.py.
CARD_RANK = np.array([C.rank_of(int(c)) for c in DECK_IDS], dtype=np.int64)
CARD_SUIT = np.array([C.suit_of(int(c)) for c in DECK_IDS], dtype=np.int64)
CARD_POINTS = R.POINTS[DECK_IDS].astype(np.int64)
RANK_IDS = np.array(R.RANKS, dtype=np.int64)
# RANK_SUIT_CARD[i, s]: the card index of rank R.RANKS[i] and suit s.
RANK_SUIT_CARD = np.array(
    [[LOCAL_INDEX[C.make_card(r, s)] for s in range(C.NUM_SUITS)] for r in R.RANKS], dtype=np.int64
)
# Per action id: rank, size, suit mask, top suit, announced suit, and the cards in group_cards order.
A_RANK = np.array(R.ACTION_RANK, dtype=np.int64)
A_SIZE = np.array(R.ACTION_SIZE, dtype=np.int64)
A_MASK = np.array(R.ACTION_MASK, dtype=np.int64)
A_TOP = np.array(R.ACTION_TOP, dtype=np.int64)
A_DECLARE = np.array(R.ACTION_DECLARE, dtype=np.int64)
A_CARDS = np.full((NUM_ACTIONS, C.NUM_SUITS), -1, dtype=np.int64)
for _a in range(R.DRAW):
    _cards = [int(LOCAL_INDEX[c]) for c in R.group_cards(_a)]
    A_CARDS[_a, : len(_cards)] = _cards
# CANDIDATES as padded arrays: CAND[i, held, :NCAND[i, held]] are the groups of rank R.RANKS[i] in held suits.
_MOST = max(len(c) for per_rank in R.CANDIDATES.values() for c in per_rank)
CAND = np.zeros((len(R.RANKS), 1 << C.NUM_SUITS, _MOST), dtype=np.int64)
NCAND = np.zeros((len(R.RANKS), 1 << C.NUM_SUITS), dtype=np.int64)
for _r, _rank_id in enumerate(R.RANKS):
    for _suits, _cands in enumerate(R.CANDIDATES[_rank_id]):
        NCAND[_r, _suits] = len(_cands)
        CAND[_r, _suits, : len(_cands)] = [a for a, _s, _m, _t in _cands]

_EIGHT, _ACE, _QUEEN, _NO_RANK = C.EIGHT, C.ACE, C.QUEEN, C.NO_RANK
_DRAW, _PASS, _PLAY, _AFTER_DRAW = R.DRAW, R.PASS, R.PLAY, R.AFTER_DRAW


# ---------------------------------------------------------------- kernels: rules
@njit(cache=True)
def _play_allowed(rank: int, size: int, mask: int, top: int, top_rank: int, suit: int) -> bool:
    """`HuitState.legal_actions` for one candidate group (B4-B7); top_rank is NO_RANK on an empty table."""
    if top_rank == _NO_RANK:  # B4
        return size == 1 or rank == _EIGHT
    if rank in (_EIGHT, top_rank):  # B6, B5 by rank
        return True
    if top_rank == _ACE:  # B7
        return False
    if not (mask >> suit) & 1:  # B5 by suit: the first card laid has the current suit
        return False
    return top == suit if size == 1 else top != suit


@njit(cache=True)
def _held(hands: np.ndarray, b: int, seat: int, i: int) -> int:
    """Suit mask of the cards of rank R.RANKS[i] a seat holds."""
    held = 0
    for s in range(4):
        if hands[b, seat, RANK_SUIT_CARD[i, s]]:
            held |= 1 << s
    return held


@njit(cache=True)
def _top_rank(info: np.ndarray, table: np.ndarray, b: int) -> int:
    n_table = info[b, TABLE_LEN]
    return _NO_RANK if n_table == 0 else CARD_RANK[table[b, n_table - 1]]


@njit(cache=True, inline="always")
def _legal_into(info: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, as_mask: bool,
                out: np.ndarray) -> int:
    """`HuitState.legal_actions` of live slot b: the one definition of the mask and of the legal ids.

    With `as_mask`, sets `out[a]` for each legal id a (a mask row, cleared by
    the caller), else writes the ids into `out` in the order the rules produce
    them; returns how many. Inlined, so each caller compiles only its branch.
    """
    seat, suit = info[b, CUR], info[b, SUIT]
    top_rank = _top_rank(info, table, b)
    count = 0
    for i in range(RANK_IDS.shape[0]):
        held = _held(hands, b, seat, i)
        if held == 0:
            continue
        rank = RANK_IDS[i]
        if top_rank == _ACE and rank != _ACE and rank != _EIGHT:
            continue
        for k in range(NCAND[i, held]):
            a = CAND[i, held, k]
            if _play_allowed(rank, A_SIZE[a], A_MASK[a], A_TOP[a], top_rank, suit):
                if as_mask:
                    out[a] = True
                else:
                    out[count] = a
                count += 1
    last = _PASS if info[b, PHASE] == _AFTER_DRAW else _DRAW
    if as_mask:
        out[last] = True
    else:
        out[count] = last
    return count + 1


@njit(cache=True)
def _mask_row(info: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, row: np.ndarray) -> None:
    """`HuitState.legal_actions` of slot b as a mask row."""
    row[:] = False
    if not info[b, HAND_OVER]:
        _legal_into(info, hands, table, b, True, row)


@njit(cache=True)
def mask_kernel(s: KernelArrays, out: np.ndarray) -> None:
    """The legal mask of every slot."""
    info, hands, table = s[S_INFO], s[S_HANDS], s[S_TABLE]
    for b in range(out.shape[0]):
        _mask_row(info, hands, table, b, out[b])


@njit(cache=True)
def mask_rows_kernel(rows: np.ndarray, s: KernelArrays, out: np.ndarray) -> None:
    """The legal mask of slot rows[r] as row r of `out`."""
    info, hands, table = s[S_INFO], s[S_HANDS], s[S_TABLE]
    for r in range(rows.shape[0]):
        _mask_row(info, hands, table, rows[r], out[r])


@njit(cache=True)
def legal_ids(info: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, out: np.ndarray) -> int:
    """The legal action ids of live info b (`HuitState.legal_actions`) into `out`; returns how many.

    In the order the rules produce them (by rank, then group), not sorted: a
    caller that picks the k-th legal action sorts them (`sorted_legal_ids`).
    """
    return _legal_into(info, hands, table, b, False, out)


@njit(cache=True)
def sorted_legal_ids(info: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, out: np.ndarray) -> int:
    """`legal_ids`, ascending (the order of a mask row's legal ids); returns how many."""
    count = legal_ids(info, hands, table, b, out)
    for i in range(1, count):  # insertion sort: a turn has few legal actions
        a = out[i]
        j = i - 1
        while j >= 0 and out[j] > a:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = a
    return count


@njit(cache=True)
def _is_legal(info: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, a: int) -> bool:
    """One action id against the legal set of info b (what `mask_kernel` would set)."""
    if a == _DRAW:
        return info[b, PHASE] != _AFTER_DRAW
    if a == _PASS:
        return info[b, PHASE] == _AFTER_DRAW
    if a < 0 or a > _PASS:
        return False
    rank = A_RANK[a]
    i = 0
    while RANK_IDS[i] != rank:
        i += 1
    mask = A_MASK[a]
    if _held(hands, b, info[b, CUR], i) & mask != mask:
        return False
    return _play_allowed(rank, A_SIZE[a], mask, A_TOP[a], _top_rank(info, table, b), info[b, SUIT])


@njit(cache=True)
def _end_turn(info: np.ndarray, b: int, seat: int, skips: int, n: int) -> None:
    info[b, PHASE] = _PLAY
    info[b, ACE_PENALTY] = 0
    info[b, CUR] = (seat + 1 + skips) % n


@njit(cache=True)
def _record(info: np.ndarray, seats: np.ndarray, hands: np.ndarray, b: int, winner: int,
            params: np.ndarray) -> None:
    """`HandState._finish` / `_count_turn` and `Match.record` (B11, B12, B13, C1); winner -1: truncated."""
    info[b, HANDS_PLAYED] += 1
    if winner < 0:
        seats[b, STREAKS, :] = 0
        return
    info[b, WINNER] = winner
    score_hand(hands[b], CARD_POINTS, winner, seats[b, HAND_POINTS], seats[b, SCORE_CHANGES])
    for s in range(params[P_N]):
        seats[b, STREAKS, s] = seats[b, STREAKS, s] + 1 if s == winner else 0
    if seats[b, STREAKS, winner] >= params[P_STREAK_LEN]:
        seats[b, SCORE_CHANGES, winner] -= params[P_STREAK_BONUS]
        seats[b, STREAKS, winner] = 0
    info[b, MATCH_OVER] = add_totals(seats[b, SCORES], seats[b, SCORE_CHANGES], params[P_TARGET])


@njit(cache=True)
def _play(info: np.ndarray, seats: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, a: int,
          params: np.ndarray) -> None:
    """`HuitState._play`: lay the group (B5 order), then B11, B6, B8, B7."""
    seat, size, n_table = info[b, CUR], A_SIZE[a], info[b, TABLE_LEN]
    first = 0  # position in A_CARDS of the card laid first (`_first_matching`)
    if n_table > 0 and size > 1:
        top_rank = CARD_RANK[table[b, n_table - 1]]
        rank0 = CARD_RANK[A_CARDS[a, 0]]
        if rank0 != top_rank and rank0 != _EIGHT:
            while CARD_SUIT[A_CARDS[a, first]] != info[b, SUIT]:
                first += 1
    order = 0
    for k in range(-1, size):
        if k == first:
            continue
        card = A_CARDS[a, first if k < 0 else k]
        hands[b, seat, card] = 0
        table[b, n_table + order] = card
        order += 1
    info[b, TABLE_LEN] = n_table + size
    seats[b, SIZES, seat] -= size
    clear_drew_on(seats[b, DREW_ON], seat, A_MASK[a])
    if seats[b, SIZES, seat] == 0:  # B11
        info[b, HAND_OVER] = 1
        _record(info, seats, hands, b, seat, params)
        return
    rank = A_RANK[a]
    if rank == _EIGHT:
        info[b, SUIT] = A_DECLARE[a]
        info[b, ANNOUNCED] = 1
    else:
        info[b, SUIT] = A_TOP[a]
        info[b, ANNOUNCED] = 0
    skips = 0
    n = params[P_N]
    if rank == _QUEEN:  # B8
        skips = min(size if params[P_QUEEN_EACH] else 1, n - 1)
    _end_turn(info, b, seat, skips, n)
    info[b, ACE_PENALTY] = rank == _ACE


@njit(cache=True)
def _draw(info: np.ndarray, seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray,
          b: int, gen: Any, params: np.ndarray) -> None:
    """`HuitState._draw` and `HandState._draw_cards`: B9, B7's two cards, B10's refill."""
    seat = info[b, CUR]
    penalty = info[b, ACE_PENALTY]
    if not penalty:  # a draw of its own accord
        note_drew_on(seats[b, DREW_ON], seat, info[b, SUIT])
    for _ in range(2 if penalty else 1):
        if info[b, BANK_LEN] == 0:
            n_table = info[b, TABLE_LEN]
            if n_table <= 1:
                break
            for k in range(n_table - 1):  # B10: turned over, the bottom card on top
                bank[b, k] = table[b, n_table - 2 - k]
            if params[P_SHUFFLE]:
                bank[b, : n_table - 1] = table[b, : n_table - 1]
                gen.shuffle(bank[b, : n_table - 1])
            table[b, 0] = table[b, n_table - 1]
            info[b, TABLE_LEN] = 1
            info[b, BANK_LEN] = n_table - 1
        info[b, BANK_LEN] -= 1
        hands[b, seat, bank[b, info[b, BANK_LEN]]] = 1
        seats[b, SIZES, seat] += 1
    if penalty:
        _end_turn(info, b, seat, np.int64(0), params[P_N])
    else:
        info[b, PHASE] = _AFTER_DRAW


@njit(cache=True)
def _deal(info: np.ndarray, seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray,
          b: int, gen: Any, params: np.ndarray) -> None:
    """`HuitState.deal_shuffled` (B2, B3): a new hand of the info's match."""
    n, each = params[P_N], params[P_EACH]
    for col in (SUIT, WINNER):
        info[b, col] = -1
    for col in (ANNOUNCED, ACE_PENALTY, PHASE, TURN, TABLE_LEN, HAND_OVER, TRUNCATED, MATCH_OVER):
        info[b, col] = 0
    seats[b, HAND_POINTS, :] = 0
    seats[b, SCORE_CHANGES, :] = 0
    seats[b, DREW_ON, :] = 0
    hands[b, :, :] = 0
    pack = np.arange(NUM_CARDS).astype(np.int8)
    gen.shuffle(pack)
    dealer = info[b, DEALER]
    for i in range(each * n):
        hands[b, (dealer + 1 + i) % n, pack[NUM_CARDS - 1 - i]] = 1
    seats[b, SIZES, :] = each
    rest = NUM_CARDS - each * n
    bank[b, :rest] = pack[:rest]
    info[b, BANK_LEN] = rest
    info[b, CUR] = (dealer + 1) % n


@njit(cache=True)
def reset_kernel(slots: np.ndarray, s: KernelArrays, gens: Any) -> None:
    """A new match in each slot (`Match.new`: dealer n-1), then its first deal."""
    info, seats, hands, bank, table = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_BANK], s[S_TABLE]
    params = s[S_PARAMS]
    for b in slots:
        seats[b, SCORES, :] = 0
        seats[b, STREAKS, :] = 0
        info[b, DEALER] = params[P_N] - 1
        info[b, HANDS_PLAYED] = 0
        _deal(info, seats, hands, bank, table, b, gens[b], params)


@njit(cache=True)
def step_kernel(actions: np.ndarray, s: KernelArrays, gens: Any) -> int:
    """Apply actions[b] in each live slot b of `s` (`HuitState.apply`, then the AEC env's end of hand); the
    rewards are in `s[S_REWARDS]`. `actions` may be longer than the slots (a play-out's scratch).

    Returns -1, or the first slot whose action is illegal (then nothing was applied).
    """
    info, seats, hands, bank, table = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_BANK], s[S_TABLE]
    params = s[S_PARAMS]
    reward_table, rewards = s[S_REWARD_TABLE], s[S_REWARDS]
    batch = info.shape[0]
    for b in range(batch):
        if not info[b, HAND_OVER] and not _is_legal(info, hands, table, b, actions[b]):
            return b
    rewards[:, :] = 0.0
    n = params[P_N]
    for b in range(batch):
        if info[b, HAND_OVER]:
            continue
        a = actions[b]
        if a == _DRAW:
            _draw(info, seats, hands, bank, table, b, gens[b], params)
        elif a == _PASS:
            _end_turn(info, b, info[b, CUR], np.int64(0), n)
        else:
            _play(info, seats, hands, table, b, a, params)
        info[b, TURN] += 1  # C1
        if not info[b, HAND_OVER]:
            if info[b, TURN] >= params[P_MAX_TURNS]:
                info[b, HAND_OVER] = 1
                info[b, TRUNCATED] = 1
                _record(info, seats, hands, b, np.int64(-1), params)
            continue
        if end_of_hand(params[P_MATCH], info[b, MATCH_OVER], info[b, WINNER], seats[b, SCORES], reward_table,
                       rewards[b]):  # B3: the dealer moves on and deals the next hand of the match
            info[b, DEALER] = (info[b, DEALER] + 1) % n
            _deal(info, seats, hands, bank, table, b, gens[b], params)
    return -1


@njit(cache=True)
def _observe_row(info: np.ndarray, seats: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, seat: int,
                 offsets: np.ndarray, scales: np.ndarray, out: np.ndarray, r: int) -> None:
    """`HuitObserver.observe` of `seat` in slot b, into out[r]."""
    hand0, top0, suit0, flags0, opp0 = offsets[0], offsets[1], offsets[2], offsets[3], offsets[4]
    score0, streak0, played0, bank0, drew0 = offsets[5], offsets[6], offsets[7], offsets[8], offsets[9]
    inv_target, inv_streak, low, high = scales[0], scales[1], scales[2], scales[3]
    n = seats.shape[2]
    out[r, :] = 0.0
    for c in range(NUM_CARDS):
        out[r, hand0 + c] = hands[b, seat, c]
    n_table = info[b, TABLE_LEN]
    for k in range(n_table):
        out[r, played0 + table[b, k]] = 1.0
    if n_table:
        out[r, top0 + table[b, n_table - 1]] = 1.0
    if info[b, SUIT] >= 0:
        out[r, suit0 + info[b, SUIT]] = 1.0
    out[r, flags0] = info[b, ANNOUNCED]
    out[r, flags0 + 1] = info[b, ACE_PENALTY]
    out[r, flags0 + 2] = info[b, PHASE] == _AFTER_DRAW
    for k in range(n):
        other = (seat + k) % n
        if k:
            out[r, opp0 + k - 1] = seats[b, SIZES, other] / 8
        out[r, score0 + k] = min(max(seats[b, SCORES, other] * inv_target, low), high)
        out[r, streak0 + k] = seats[b, STREAKS, other] * inv_streak
    out[r, bank0] = info[b, BANK_LEN] / NUM_CARDS
    if drew0 >= 0:
        observe_drew_on(out[r], drew0, seats[b, DREW_ON], seat)


@njit(cache=True)
def observe_kernel(rows: np.ndarray, who: np.ndarray, s: KernelArrays, out: np.ndarray) -> None:
    """`HuitObserver.observe` of seat who[i] in slot rows[i], as row i of `out`."""
    info, seats, hands, table = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_TABLE]
    offsets, scales = s[S_OBS_OFFSETS], s[S_OBS_SCALES]
    for i in range(rows.shape[0]):
        _observe_row(info, seats, hands, table, rows[i], who[i], offsets, scales, out, i)


@njit(cache=True)
def observe_rows(rows: np.ndarray, s: KernelArrays, out: np.ndarray) -> None:
    """out[i]: `observe_kernel` of the seat to move in slot rows[i] (only those rows, packed)."""
    info, seats, hands, table = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_TABLE]
    offsets, scales = s[S_OBS_OFFSETS], s[S_OBS_SCALES]
    for i in range(rows.shape[0]):
        _observe_row(info, seats, hands, table, rows[i], info[rows[i], CUR], offsets, scales, out, i)
