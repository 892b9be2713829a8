"""Switch's numba kernels over the batch's arrays: legal masks, moves, deals, observations.

Each kernel replays a piece of `cardlab.envs.switch.rules` (named in its doc)
for every slot b of the arrays that `cardlab.envs.switch.batched.SwitchBatch`
holds (layout in that module's doc), which they take as one `SwitchArrays` (a `KernelArrays`)
(`cardlab.envs.switch.batch_state`), the slots' generators beside it. The card
and action tables are taken from `cards` and `rules` at import (in
`batch_state`) and reach the kernels in that bundle; the action-id constants
are compiled in, so a change of the action layout in
`rules.py` needs a touch of this file (the differential tests would catch a
stale cache). Arguments and dtypes follow `cardlab.envs.batched_engine`'s convention;
what both games share (end of a hand, rewards, memory) is `cardlab.envs.batched_kernels`.
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
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.batch_state import ACTION_TABLE as ACTION_TABLE  # read from here by the heuristics
from cardlab.envs.switch.batch_state import CARD_TABLE as CARD_TABLE  # read from here by the heuristics
from cardlab.envs.switch.batch_state import (
    CURRENT,
    DEALER,
    DIRECTION,
    DISCARD,
    DISCARD_LEN,
    DRAWN,
    DREW_ON,
    FIRST_OUT,
    HAND_POINTS,
    HANDS_PLAYED,
    MATCH_OVER,
    OVER,
    PARAM_SLOTS,
    PENDING,
    PHASE,
    S_ACTIONS_TABLE,
    S_CARDS,
    S_HANDS,
    S_INFO,
    S_KNOWN,
    S_OBS_FLOATS,
    S_OBS_INV_COPIES,
    S_OBS_OFFSETS,
    S_PACK,
    S_PARAMS,
    S_PILES,
    S_PLAY_TABLE,
    S_PLAYED,
    S_REWARD_TABLE,
    S_REWARDS,
    S_SEATS,
    SCORE_CHANGES,
    SCORES,
    SIZES,
    STOCK,
    STOCK_LEN,
    SUIT,
    T_POINTS,
    T_RANK,
    T_RUN,
    T_SUIT,
    T_WILD,
    TRUNCATED,
    TURN,
    WINNER,
    KernelArrays,
)

Arr = np.ndarray

P_N, P_MATCH_RANK = PARAM_SLOTS["num_players"], PARAM_SLOTS["match_rank"]
P_PLAY_AFTER_DRAW, P_VOLUNTARY = PARAM_SLOTS["play_after_draw"], PARAM_SLOTS["voluntary_draw"]
P_TARGET, P_MAX_TURNS = PARAM_SLOTS["target_score"], PARAM_SLOTS["max_turns"]
P_MATCH, P_HAND_SIZE = PARAM_SLOTS["episode_match"], PARAM_SLOTS["hand_size"]

_JOKER, _TWO, _EIGHT, _JACK, _KING = C.JOKER, C.TWO, C.EIGHT, C.JACK, C.KING
_PLAY, _AFTER_DRAW, _DECLARE_START = R.PLAY, R.AFTER_DRAW, R.DECLARE_START
_DRAW, _PASS, _DECLARE, _NUM_ACTIONS = R.DRAW, R.PASS, R.DECLARE, R.NUM_ACTIONS


# ---------------------------------------------------------------- kernels: queries
@njit(cache=True)
def _playable(b: int, card: int, info: Arr, piles: Arr, cards: Arr, match_rank: int) -> bool:
    """A5 with no pending draw (the engine's `SwitchState.playable`)."""
    if cards[T_WILD, card]:
        return True
    suit = info[b, SUIT]
    if suit < 0 or cards[T_SUIT, card] == suit:
        return True
    top = piles[b, DISCARD, info[b, DISCARD_LEN] - 1]
    return match_rank != 0 and top != _JOKER and cards[T_RANK, card] == cards[T_RANK, top]


@njit(cache=True)
def _set_plays(row: Arr, card: int, play_table: Arr) -> None:
    for k in range(play_table.shape[1]):
        a = play_table[card, k]
        if a >= 0:
            row[a] = True


@njit(cache=True)
def _legal_row(
    b: int, row: Arr, info: Arr, seats: Arr, hands: Arr, piles: Arr, params: Arr, cards: Arr, play_table: Arr
) -> None:
    """The legal actions of slot b as a mask row: the one definition the mask and step() share."""
    row[:] = False
    if info[b, OVER]:
        return
    phase = info[b, PHASE]
    if phase == _DECLARE_START:
        for s in range(4):
            row[_DECLARE + s] = True
        return
    if phase == _AFTER_DRAW:
        _set_plays(row, info[b, DRAWN], play_table)
        row[_PASS] = True
        return
    hand = hands[b, info[b, CURRENT]]
    pending = info[b, PENDING] != 0
    if pending and info[b, FIRST_OUT] >= 0:
        holders = 0
        for s in range(params[P_N]):
            if seats[b, SIZES, s]:
                holders += 1
        if holders == 1:  # A9, decision added later: the last holder draws the run
            row[_DRAW] = True
            return
    any_play = False
    for card in range(hand.shape[0]):  # A6 with a run pending (only run cards), else A5
        if hand[card] and (cards[T_RUN, card] if pending
                           else _playable(b, card, info, piles, cards, params[P_MATCH_RANK])):
            _set_plays(row, card, play_table)
            any_play = True
    if pending or not any_play or params[P_VOLUNTARY]:  # A6: draw the run; A8: draw
        row[_DRAW] = True


@njit(cache=True)
def legal_mask_kernel(rows: Arr, s: KernelArrays, out: Arr) -> None:
    """The legal actions of slot rows[i] as mask row i."""
    info, seats, hands, piles = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_PILES]
    params, cards, play_table = s[S_PARAMS], s[S_CARDS], s[S_PLAY_TABLE]
    for i in range(rows.shape[0]):
        _legal_row(rows[i], out[i], info, seats, hands, piles, params, cards, play_table)


@njit(cache=True)
def observe_kernel(rows: Arr, who: Arr, s: KernelArrays, out: Arr) -> None:
    """`SwitchObserver.observe` of seat who[i] in slot rows[i] as row i of `out`, with the same float64
    arithmetic before the float32 store.

    `offsets[10]` is the start of `drew_on`, -1 without the `memory` option.
    """
    info, seats, hands, piles, played = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_PILES], s[S_PLAYED]
    offsets, inv_copies, floats = s[S_OBS_OFFSETS], s[S_OBS_INV_COPIES], s[S_OBS_FLOATS]
    n = s[S_PARAMS][P_N]
    inv_deck, inv_target, low, high = floats[0], floats[1], floats[2], floats[3]
    (o_hand, o_top, o_suit, o_pending, o_direction, o_phase, o_opponents, o_scores, o_played,
     o_stock, o_drew_on) = (offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], offsets[5],
                            offsets[6], offsets[7], offsets[8], offsets[9], offsets[10])
    for i in range(rows.shape[0]):
        b = rows[i]
        row = out[i]
        row[:] = 0.0
        seat = who[i]
        for k in range(inv_copies.shape[0]):
            row[o_hand + k] = hands[b, seat, k] * inv_copies[k]
            row[o_played + k] = played[b, k] * inv_copies[k]
        row[o_top + piles[b, DISCARD, info[b, DISCARD_LEN] - 1]] = 1.0
        if info[b, SUIT] >= 0:
            row[o_suit + info[b, SUIT]] = 1.0
        row[o_pending] = info[b, PENDING] / 10
        row[o_direction] = 1.0 if info[b, DIRECTION] > 0 else 0.0
        row[o_phase] = 1.0 if info[b, PHASE] == _AFTER_DRAW else 0.0
        row[o_phase + 1] = 1.0 if info[b, PHASE] == _DECLARE_START else 0.0
        for k in range(1, n):
            row[o_opponents + k - 1] = seats[b, SIZES, (seat + k) % n] / 10
        for k in range(n):
            row[o_scores + k] = min(max(seats[b, SCORES, (seat + k) % n] * inv_target, low), high)
        row[o_stock] = info[b, STOCK_LEN] * inv_deck
        if o_drew_on >= 0:
            observe_drew_on(row, o_drew_on, seats[b, DREW_ON], seat)


# ---------------------------------------------------------------- kernels: moves
@njit(cache=True)
def _next_seat(b: int, seat: int, steps: int, info: Arr, seats: Arr, n: int) -> int:
    """The seat `steps` turns on, passing over seats with no cards (A9)."""
    direction = info[b, DIRECTION]
    for _ in range(steps):
        seat = (seat + direction + n) % n
        while seats[b, SIZES, seat] == 0:
            seat = (seat + direction + n) % n
    return seat


@njit(cache=True)
def _end_turn(b: int, seat: int, info: Arr, seats: Arr, n: int) -> None:
    info[b, PHASE] = _PLAY
    info[b, DRAWN] = -1
    info[b, CURRENT] = _next_seat(b, seat, np.int64(1), info, seats, n)


@njit(cache=True)
def _finish(b: int, winner: int, info: Arr, seats: Arr, hands: Arr, params: Arr, cards: Arr) -> None:
    """End the hand (A11 scoring, A12 match end), as `HandState._finish` with `Match.record`."""
    info[b, OVER] = 1
    info[b, WINNER] = winner
    score_hand(hands[b], cards[T_POINTS], winner, seats[b, HAND_POINTS], seats[b, SCORE_CHANGES])
    info[b, HANDS_PLAYED] += 1
    info[b, MATCH_OVER] = add_totals(seats[b, SCORES], seats[b, SCORE_CHANGES], params[P_TARGET])


@njit(cache=True)
def _refill(b: int, info: Arr, piles: Arr, played: Arr, gen: Any) -> None:
    """A10 (`SwitchState._refill`): the discard pile but its top card, shuffled by the slot's generator,
    is the new stock; the top card stays, the only card played."""
    fresh = info[b, DISCARD_LEN] - 1
    top = piles[b, DISCARD, fresh]
    piles[b, STOCK, :fresh] = piles[b, DISCARD, :fresh]
    gen.shuffle(piles[b, STOCK, :fresh])
    piles[b, DISCARD, 0] = top
    info[b, STOCK_LEN] = fresh
    info[b, DISCARD_LEN] = 1
    played[b, :] = 0
    played[b, top] = 1


@njit(cache=True)
def _draw_cards(
    b: int, seat: int, count: int, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, gen: Any
) -> int:
    """`HandState._draw_cards`: up to `count` cards from the stock, refilled (A10) when it runs out."""
    last = -1
    for _ in range(count):
        if info[b, STOCK_LEN] == 0:
            if info[b, DISCARD_LEN] <= 1:
                break
            _refill(b, info, piles, played, gen)
        info[b, STOCK_LEN] -= 1
        last = piles[b, STOCK, info[b, STOCK_LEN]]
        hands[b, seat, last] += 1
        seats[b, SIZES, seat] += 1
    return last


@njit(cache=True)
def _apply_one(
    b: int, action: int, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, gen: Any, params: Arr,
    cards: Arr, actions_table: Arr,
) -> None:
    """`SwitchState.apply` for slot b (its `_play`, `_draw`, `_end_turn` and `_count_turn`)."""
    n = params[P_N]
    seat = info[b, CURRENT]
    if action == _DRAW:
        if info[b, PENDING]:
            _draw_cards(b, seat, info[b, PENDING], info, seats, hands, piles, played, gen)
            info[b, PENDING] = 0
            if info[b, FIRST_OUT] >= 0:
                _finish(b, info[b, FIRST_OUT], info, seats, hands, params, cards)
            else:
                _end_turn(b, seat, info, seats, n)
        else:
            note_drew_on(seats[b, DREW_ON], seat, info[b, SUIT])  # a draw of its own accord
            card = _draw_cards(b, seat, np.int64(1), info, seats, hands, piles, played, gen)
            if card >= 0 and params[P_PLAY_AFTER_DRAW] and _playable(
                b, card, info, piles, cards, params[P_MATCH_RANK]
            ):
                info[b, PHASE] = _AFTER_DRAW
                info[b, DRAWN] = card
            else:
                _end_turn(b, seat, info, seats, n)
    elif action == _PASS:
        _end_turn(b, seat, info, seats, n)
    elif action >= _DECLARE:
        info[b, SUIT] = actions_table[1, action]
        info[b, PHASE] = _PLAY
    else:
        card = actions_table[0, action]
        hands[b, seat, card] -= 1
        seats[b, SIZES, seat] -= 1
        piles[b, DISCARD, info[b, DISCARD_LEN]] = card
        info[b, DISCARD_LEN] += 1
        played[b, card] += 1
        if card != _JOKER:
            clear_drew_on(seats[b, DREW_ON], seat, 1 << cards[T_SUIT, card])
        info[b, PHASE] = _PLAY
        info[b, DRAWN] = -1
        rank = cards[T_RANK, card]
        skip = 0
        if card == _JOKER:
            info[b, PENDING] += 5
        elif rank == _TWO:
            info[b, PENDING] += 2
            info[b, SUIT] = cards[T_SUIT, card]
        elif rank == _JACK:
            info[b, SUIT] = actions_table[1, action]
        else:
            info[b, SUIT] = cards[T_SUIT, card]
            if rank == _KING and n > 2:
                info[b, DIRECTION] = -info[b, DIRECTION]
            elif rank == _EIGHT:
                skip = 1
        out = False
        if seats[b, SIZES, seat] == 0:
            if not info[b, PENDING]:
                _finish(b, seat, info, seats, hands, params, cards)
                out = True
            elif info[b, FIRST_OUT] < 0:
                info[b, FIRST_OUT] = seat
        if not out:
            info[b, CURRENT] = _next_seat(b, seat, 1 + skip, info, seats, n)
    # C1: after max_turns actions the hand is truncated: no winner, no points.
    info[b, TURN] += 1
    if not info[b, OVER] and info[b, TURN] >= params[P_MAX_TURNS]:
        info[b, OVER] = 1
        info[b, TRUNCATED] = 1
        info[b, HANDS_PLAYED] += 1


@njit(cache=True)
def _deal(b: int, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, gen: Any, params: Arr,
          cards: Arr, pack: Arr) -> None:
    """`SwitchState.deal_shuffled`: the pack shuffled by the slot's generator, dealt one card at a time
    from the dealer's next seat, the starter turned up (A3, A4). The stock is the rest of the pack."""
    n = params[P_N]
    p = pack.shape[0]
    stock = piles[b, STOCK, :p]
    stock[:] = pack
    gen.shuffle(stock)  # the engine's shuffle of the same pack as a list: the same permutation
    hands[b, :, :] = 0
    played[b, :] = 0
    for s in range(n):
        seats[b, SIZES, s] = 0
        seats[b, HAND_POINTS, s] = 0
        seats[b, SCORE_CHANGES, s] = 0
        seats[b, DREW_ON, s] = 0
    dealer = info[b, DEALER]
    for k in range(params[P_HAND_SIZE] * n):
        seat = (dealer + 1 + k) % n
        p -= 1
        hands[b, seat, stock[p]] += 1
        seats[b, SIZES, seat] += 1
    p -= 1
    starter = stock[p]
    info[b, STOCK_LEN] = p
    piles[b, DISCARD, 0] = starter
    info[b, DISCARD_LEN] = 1
    played[b, starter] = 1
    info[b, DIRECTION] = 1
    info[b, SUIT] = -1
    info[b, PENDING] = 0
    info[b, PHASE] = _PLAY
    info[b, DRAWN] = -1
    info[b, FIRST_OUT] = -1
    info[b, TURN] = 0
    info[b, OVER] = 0
    info[b, TRUNCATED] = 0
    info[b, WINNER] = -1
    info[b, MATCH_OVER] = 0
    # A4: the starter counts as the first card played.
    info[b, CURRENT] = (dealer + 1) % n
    if starter == _JOKER:
        info[b, PENDING] = 5
        return
    info[b, SUIT] = cards[T_SUIT, starter]
    rank = cards[T_RANK, starter]
    if rank == _KING and n > 2:
        info[b, DIRECTION] = -1
        info[b, CURRENT] = (dealer - 1 + n) % n
    elif rank == _EIGHT:
        info[b, CURRENT] = (dealer + 2) % n
    elif rank == _JACK:
        info[b, PHASE] = _DECLARE_START
    elif rank == _TWO:
        info[b, PENDING] = 2


@njit(cache=True)
def reset_kernel(slots: Arr, s: KernelArrays, gens: Any) -> None:
    """A new match in each slot (`Match.new`: totals 0, dealer n-1), then its first deal."""
    info, seats, hands, piles, played = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_PILES], s[S_PLAYED]
    params, cards, pack = s[S_PARAMS], s[S_CARDS], s[S_PACK]
    for b in slots:
        seats[b, SCORES, :] = 0
        info[b, DEALER] = params[P_N] - 1
        info[b, HANDS_PLAYED] = 0
        _deal(b, info, seats, hands, piles, played, gens[b], params, cards, pack)


@njit(cache=True)
def step_kernel(actions: Arr, s: KernelArrays, gens: Any, use_known: bool | np.bool_) -> int:
    """Check every live slot's action, then apply them all (`SwitchState.apply`, then the AEC env's end of
    a hand: win rewards, or the next hand of the match); the rewards are in `s[S_REWARDS]`. `actions` may be
    longer than the slots (a play-out's scratch).

    With `use_known`, `s[S_KNOWN]` is the legal mask of this very state (the last
    `legal_mask()`, nothing moved since): a look-up instead of a new `_legal_row`.
    Returns -1, or the first slot whose action is illegal (then nothing was applied).
    """
    info, seats, hands, piles, played = s[S_INFO], s[S_SEATS], s[S_HANDS], s[S_PILES], s[S_PLAYED]
    params, cards, actions_table, play_table = s[S_PARAMS], s[S_CARDS], s[S_ACTIONS_TABLE], s[S_PLAY_TABLE]
    known, pack = s[S_KNOWN], s[S_PACK]
    reward_table, rewards = s[S_REWARD_TABLE], s[S_REWARDS]
    row = np.zeros(_NUM_ACTIONS, dtype=np.bool_)
    batch = info.shape[0]
    for b in range(batch):
        if info[b, OVER]:
            continue
        a = actions[b]
        if a < 0 or a >= _NUM_ACTIONS:
            return b
        if use_known:
            if not known[b, a]:
                return b
        else:
            _legal_row(b, row, info, seats, hands, piles, params, cards, play_table)
            if not row[a]:
                return b
    n = params[P_N]
    for b in range(batch):
        rewards[b, :] = 0.0
        if info[b, OVER]:
            continue
        _apply_one(b, actions[b], info, seats, hands, piles, played, gens[b], params, cards, actions_table)
        if not info[b, OVER] or info[b, TRUNCATED]:
            continue
        if end_of_hand(params[P_MATCH], info[b, MATCH_OVER], info[b, WINNER], seats[b, SCORES], reward_table,
                       rewards[b]):  # A3: the dealer moves on and deals the next hand of the match
            info[b, DEALER] = (info[b, DEALER] + 1) % n
            _deal(b, info, seats, hands, piles, played, gens[b], params, cards, pack)
    return -1
