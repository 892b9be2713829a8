"""`SwitchGreedy` and `SwitchExpert` (`cardlab.agents.heuristics.switch`): their one implementation, compiled.

`greedy_actions` and `expert_actions` play every row of a (B, obs_size)
float32 array with its (B, num_actions) bool mask, in numba, reading the
observation through the layout's field offsets (`layout_offsets`) and
breaking ties with `policy_kernels.best_index`, drawing from the agent's own
generator row after row. The agents' `act` is a batch of one, and the game's
play-outs call the same kernels on many rows.

Scores are rows of `WIDTH` floats compared entry by entry. Rows that need
fewer entries are padded with zeros: they differ from the others in their
first entry already (draw -2, pass -1 against plays 0 or 1; a declaration
is legal only among declarations).

The per-row work is counts: the hand's totals (cards, Jokers, Jacks, 2s,
plain cards per suit) and the unknown cards' (per suit, rank, wild, run
card) are taken once per row, and each legal action adjusts them by its one
card, so a decision costs about a microsecond.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cardlab.envs import cards as C
from cardlab.envs.layout import Layout
from cardlab.envs.policy_kernels import best_index, compiled_p_lacks
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.kernels import ACTION_TABLE, CARD_TABLE, T_POINTS, T_RANK, T_RUN, T_SUIT, T_WILD

Arr = np.ndarray

RUN_VALUE = np.array([5 if c == C.JOKER else 2 if R.RUN_CARD[c] else 0 for c in range(C.NUM_KINDS)])
"""Cards a 2 (2) or a Joker (5) adds to a draw run (A6), 0 for the other kinds."""
CARD_OF = np.array([[C.make_card(r, s) for s in range(C.NUM_SUITS)] for r in range(C.NUM_RANKS)],
                   dtype=np.int64)
"""CARD_OF[rank, suit]: the card kind (the kernels do no arithmetic on card ids)."""

FIELDS = ("hand", "top", "suit", "pending", "direction", "phase", "opponents", "played")
"""The observation fields the heuristics read, in the order of `layout_offsets`."""
F_HAND, F_TOP, F_SUIT, F_PENDING, F_DIRECTION, F_PHASE, F_OPPONENTS, F_PLAYED = range(len(FIELDS))

WEIGHT_NAMES = ("card", "jack", "more_jacks", "joker", "two", "more_twos", "skip", "block", "run", "tempo",
                "win")
"""The fields of `SwitchWeights`, in the order of the weights array `expert_actions` takes."""
W_CARD, W_JACK, W_MORE_JACKS, W_JOKER, W_TWO, W_MORE_TWOS, W_SKIP, W_BLOCK, W_RUN, W_TEMPO, W_WIN = range(
    len(WEIGHT_NAMES))

WIDTH = 3
"""Floats per score row: the longest score tuple (expert's, greedy's plain plays)."""

_K, _S = C.NUM_KINDS, C.NUM_SUITS
_JOKER, _TWO, _EIGHT, _JACK, _KING = C.JOKER, C.TWO, C.EIGHT, C.JACK, C.KING
_DRAW, _PASS, _DECLARE, _NUM_ACTIONS = R.DRAW, R.PASS, R.DECLARE, R.NUM_ACTIONS
_CARD, _SUIT_DECLARED = 0, 1  # rows of ACTION_TABLE


def layout_offsets(layout: Layout) -> np.ndarray:
    """Where each of `FIELDS` starts in an observation of this layout (it moves with num_players)."""
    return np.array([layout.slices[name].start for name in FIELDS], dtype=np.int64)


# ---------------------------------------------------------------- reading one row
@njit(cache=True)
def _decode(row: Arr, at: Arr, deck: Arr, n: int, hand: Arr, unknown: Arr, sizes: Arr
            ) -> tuple[int, int, int, int, bool]:
    """Read one row: fills hand (copies per kind), unknown (copies neither in my hand nor in the discard
    pile) and sizes (cards held, me first, then seat order); returns top, suit, pending, direction,
    declaring (suit -1: free)."""
    total = 0
    for c in range(_K):
        hand[c] = np.int64(np.rint(np.float64(row[at[F_HAND] + c]) * deck[c]))
        played = np.int64(np.rint(np.float64(row[at[F_PLAYED] + c]) * deck[c]))
        unknown[c] = max(deck[c] - hand[c] - played, 0)
        total += hand[c]
    sizes[0] = total
    for k in range(1, n):
        sizes[k] = np.int64(np.rint(row[at[F_OPPONENTS] + k - 1] * np.float32(10.0)))
    top = 0
    for c in range(1, _K):
        if row[at[F_TOP] + c] > row[at[F_TOP] + top]:
            top = c
    suit = -1
    for s in range(_S):
        if row[at[F_SUIT] + s] != 0.0:
            suit = 0
    if suit == 0:
        for s in range(1, _S):
            if row[at[F_SUIT] + s] > row[at[F_SUIT] + suit]:
                suit = s
    pending = np.int64(np.rint(np.float64(row[at[F_PENDING]]) * 10.0))
    direction = 1 if row[at[F_DIRECTION]] > 0.5 else -1
    declaring = row[at[F_PHASE] + 1] > 0.5
    return top, suit, pending, direction, declaring


@njit(cache=True)
def _plain_suits(hand: Arr, cards: Arr, out: Arr) -> None:
    """Non-wild cards held per suit (Jacks and Jokers follow any suit anyway)."""
    out[:] = 0
    for c in range(_K):
        if hand[c] and not cards[T_WILD, c]:
            out[cards[T_SUIT, c]] += hand[c]


@njit(cache=True)
def _suit_after(action: int, card: int, suit: int, actions: Arr, cards: Arr) -> int:
    """The current suit once `action` is played: a Jack names it, a Joker leaves it (A5); -1: free."""
    declared = actions[_SUIT_DECLARED, action]
    if declared >= 0:
        return declared
    return suit if card == _JOKER else cards[T_SUIT, card]


@njit(cache=True)
def _held_after(after: int, card: int, plain: Arr, cards: Arr) -> float:
    """Plain cards of suit `after` still held once `card` is played."""
    if after < 0:
        return 0.0
    held = plain[after]
    if not cards[T_WILD, card] and cards[T_SUIT, card] == after:
        held -= 1
    return float(held)


# ---------------------------------------------------------------- greedy
@njit(cache=True)
def greedy_batch(obs: Arr, masks: Arr, at: Arr, deck: Arr, n: int, cards: Arr, actions: Arr,
                  rng: np.random.Generator) -> Arr:
    """`SwitchGreedy.act` row after row. Scores: draw -2, pass -1; a declaration, the cards held of the
    suit; on a run, (not a Joker, held after); else (not wild, A11 points, held after)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    hand, unknown = np.empty(_K, np.int64), np.empty(_K, np.int64)
    sizes, plain = np.empty(n, np.int64), np.empty(_S, np.int64)
    scores, legal = np.zeros((_NUM_ACTIONS, WIDTH)), np.empty(_NUM_ACTIONS, np.int64)
    for b in range(obs.shape[0]):
        _, suit, pending, _, _ = _decode(obs[b], at, deck, n, hand, unknown, sizes)
        _plain_suits(hand, cards, plain)
        count = np.int64(0)
        for a in range(_NUM_ACTIONS):
            if not masks[b, a]:
                continue
            legal[count] = a
            row = scores[count]
            row[:] = 0.0
            count += 1
            if a == _DRAW:
                row[0] = -2.0
            elif a == _PASS:
                row[0] = -1.0
            elif a >= _DECLARE:
                row[0] = float(plain[actions[_SUIT_DECLARED, a]])
            else:
                card = actions[_CARD, a]
                held = _held_after(_suit_after(a, card, suit, actions, cards), card, plain, cards)
                if pending:
                    row[0], row[1] = 1.0 if card != _JOKER else 0.0, held
                else:
                    plain_card = 0.0 if cards[T_WILD, card] else 1.0
                    row[0], row[1], row[2] = plain_card, float(cards[T_POINTS, card]), held
        out[b] = legal[best_index(scores, count, rng)] if count else -1
    return out


# ---------------------------------------------------------------- expert
@njit(cache=True)
def _next_seat(sizes: Arr, n: int, seat: int, steps: int, direction: int) -> int:
    """The seat `steps` turns after `seat`, passing over the seats that are out (A9)."""
    for _ in range(steps):
        seat = (seat + direction + n) % n
        while sizes[seat] == 0 and seat != 0:
            seat = (seat + direction + n) % n
    return seat


@njit(cache=True)
def _threat(cards_left: int) -> float:
    """How urgently an opponent with `cards_left` cards must be stopped (1 card: 1.0)."""
    return 1.0 / cards_left ** 2 if cards_left > 0 else 0.0


@njit(cache=True)
def _hand_value(total: int, jokers: int, jacks: int, twos: int, w: Arr) -> float:
    """What my cards are worth: minus one card each, plus the cards that keep me playing."""
    value = -w[W_CARD] * total + w[W_JOKER] * jokers
    value += w[W_JACK] * min(jacks, 1) + w[W_MORE_JACKS] * max(jacks - 1, 0)
    return value + w[W_TWO] * min(twos, 1) + w[W_MORE_TWOS] * max(twos - 1, 0)


# The unknown cards of one row, counted once (`_tally`): all of them, the run cards, the wild ones, then
# per suit (Jacks included), the Jack of each suit, and per rank (the Joker has neither suit nor rank).
U_POOL, U_RUN, U_WILD = range(3)
U_SUIT = 3
U_JACK = U_SUIT + _S
U_RANK = U_JACK + _S
TALLY = U_RANK + C.NUM_RANKS


@njit(cache=True)
def _tally(unk: Arr, cards: Arr, tally: Arr) -> None:
    tally[:] = 0
    for c in range(_K):
        tally[U_POOL] += unk[c]
        if cards[T_RUN, c]:
            tally[U_RUN] += unk[c]
        if cards[T_WILD, c]:
            tally[U_WILD] += unk[c]
        if c != _JOKER:
            tally[U_SUIT + cards[T_SUIT, c]] += unk[c]
            tally[U_RANK + cards[T_RANK, c]] += unk[c]
    for s in range(_S):
        tally[U_JACK + s] = unk[CARD_OF[_JACK, s]]


@njit(cache=True)
def _p_stuck(k: int, suit: int, top: int, match_rank: bool, unk: Arr, tally: Arr, cards: Arr) -> float:
    """Chance that a seat holding `k` cards cannot play on `top` with `suit` current (no run pending),
    its cards spread at random over the unknown ones: the unknown cards it could play are the
    suit's, the wild ones of other suits and (`match_rank`) the top's rank in other suits."""
    if suit < 0:
        return 0.0
    wanted = tally[U_SUIT + suit] + tally[U_WILD] - tally[U_JACK + suit]
    rank = cards[T_RANK, top]
    if match_rank and top != _JOKER and rank != _JACK:
        wanted += tally[U_RANK + rank] - unk[CARD_OF[rank, suit]]
    return compiled_p_lacks(tally[U_POOL], wanted, k)


@njit(cache=True)
def _attack(card: int, suit: int, sizes: Arr, after: Arr, n: int, direction: int, pending: int,
            match_rank: bool, unk: Arr, tally: Arr, w: Arr, cards: Arr) -> float:
    """What `card` (leaving `suit` current) does to the player who moves next, weighted by their threat.

    `sizes` are the hands before the play, `after` the same with mine one card short.
    """
    rank = cards[T_RANK, card]
    turned = -direction if rank == _KING and n > 2 else direction
    nxt = _next_seat(after, n, np.int64(0), np.int64(1), turned)
    if RUN_VALUE[card]:
        p_draws = compiled_p_lacks(tally[U_POOL], tally[U_RUN], after[nxt])
        run = pending + RUN_VALUE[card]
        return w[W_RUN] * p_draws * (_threat(after[nxt]) - _threat(after[nxt] + run))
    value = 0.0
    if rank == _EIGHT:
        value += w[W_SKIP] * _threat(after[nxt])
        nxt = _next_seat(after, n, nxt, np.int64(1), turned)
        if nxt == 0:  # two players: my turn again
            return value
    elif turned != direction:
        first = _next_seat(sizes, n, np.int64(0), np.int64(1), direction)
        value += w[W_SKIP] * (_threat(after[first]) - _threat(after[nxt]))
    stuck = _p_stuck(sizes[nxt], suit, card, match_rank, unk, tally, cards)
    return value + w[W_BLOCK] * stuck * (_threat(after[nxt]) - _threat(after[nxt] + 1))


@njit(cache=True)
def expert_batch(obs: Arr, masks: Arr, at: Arr, deck: Arr, n: int, match_rank: bool, w: Arr, cards: Arr,
                  actions: Arr, rng: np.random.Generator) -> Arr:
    """`SwitchExpert.act` row after row. Scores: a declaration, (cards held of the suit, chance the next
    player is stuck on it); else (log-odds after the action, cards held of the suit it leaves, points it
    sheds)."""
    out = np.empty(obs.shape[0], dtype=np.int64)
    hand, unk = np.empty(_K, np.int64), np.empty(_K, np.int64)
    sizes, after = np.empty(n, np.int64), np.empty(n, np.int64)
    plain, tally = np.empty(_S, np.int64), np.empty(TALLY, np.int64)
    scores, legal = np.zeros((_NUM_ACTIONS, WIDTH)), np.empty(_NUM_ACTIONS, np.int64)
    for b in range(obs.shape[0]):
        _, suit, pending, direction, declaring = _decode(obs[b], at, deck, n, hand, unk, sizes)
        _plain_suits(hand, cards, plain)
        _tally(unk, cards, tally)
        total, jokers, jacks, twos = sizes[0], hand[_JOKER], np.int64(0), np.int64(0)
        for s in range(_S):
            jacks += hand[CARD_OF[_JACK, s]]
            twos += hand[CARD_OF[_TWO, s]]
        kept = _hand_value(total, jokers, jacks, twos, w)
        after[:] = sizes
        after[0] -= 1
        could_play = False
        count = np.int64(0)
        for a in range(_NUM_ACTIONS):
            if masks[b, a]:
                legal[count] = a
                count += 1
                could_play = could_play or a < _DRAW
        for i in range(count):
            a = legal[i]
            row = scores[i]
            row[:] = 0.0
            if declaring:
                s = actions[_SUIT_DECLARED, a]
                row[0] = float(plain[s])
                nxt = _next_seat(sizes, n, np.int64(0), np.int64(1), direction)
                row[1] = _p_stuck(sizes[nxt], s, CARD_OF[_JACK, s], match_rank, unk, tally, cards)
            elif a == _DRAW:
                lost_turn = w[W_TEMPO] if could_play and not pending else 0.0
                row[0] = kept - w[W_CARD] * (pending if pending else 1) - lost_turn
            elif a == _PASS:
                row[0] = kept
            elif total == 1:
                row[0] = w[W_WIN]
            else:
                card = actions[_CARD, a]
                rank = cards[T_RANK, card]
                to = _suit_after(a, card, suit, actions, cards)
                value = _hand_value(total - 1, jokers - (card == _JOKER), jacks - (rank == _JACK),
                                    twos - (rank == _TWO), w)
                hit = _attack(card, to, sizes, after, n, direction, pending, match_rank, unk, tally, w, cards)
                row[0] = value + hit
                row[1] = _held_after(to, card, plain, cards)
                row[2] = float(cards[T_POINTS, card])
        out[b] = legal[best_index(scores, count, rng)] if count else -1
    return out


# ---------------------------------------------------------------- entry points
_CARDS = CARD_TABLE.astype(np.int64)
_ACTIONS = ACTION_TABLE.astype(np.int64)


def greedy_actions(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, deck: np.ndarray, n: int,
                   rng: np.random.Generator) -> np.ndarray:
    """(B,) int64: what `SwitchGreedy` with generator `rng` plays in each row, in row order.

    `obs` (B, obs_size) float32 and `masks` (B, num_actions) bool, checked by
    the caller (`cardlab.agents.base.checked_batch`: a row with no legal action
    would get -1 and draw nothing); `offsets` from `layout_offsets`, `deck`
    the copies per kind (`SwitchRules.deck`, int64).
    """
    return greedy_batch(obs, masks, offsets, deck, n, _CARDS, _ACTIONS, rng)


def expert_actions(obs: np.ndarray, masks: np.ndarray, offsets: np.ndarray, deck: np.ndarray, n: int,
                   match_rank: bool, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(B,) int64: what `SwitchExpert` with generator `rng` plays in each row (`weights` in `WEIGHT_NAMES`
    order); the arguments as `greedy_actions`'."""
    return expert_batch(obs, masks, offsets, deck, n, match_rank, weights,
                         _CARDS, _ACTIONS, rng)
