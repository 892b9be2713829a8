"""Switch, batched: many games stepped in one call by numba kernels over array state.

The rules engine (`cardlab.envs.switch.rules`) stays the definition of the
rules; this module replays them for a batch of B games at once, and the
differential tests (`tests/envs/test_switch_batched.py`) check it against the
engine step by step: legal sets, `state_dict`, observations, rewards, ends.

Array layout (B games, n = num_players, D = deck size of the rules, 53 kinds):

| array | shape | dtype | content |
|---|---|---|---|
| `hands` | (B, n, 53) | int32 | copies of each card kind held by each seat |
| `piles` | (B, 2, D) | int32 | `piles[:, STOCK]` stock, `piles[:, DISCARD]` discard pile; bottom first |
| `played` | (B, 53) | int32 | copies of each kind in the discard pile (the observation's `played`) |
| `seats` | (B, 4, n) | int32 | rows `SIZES` (cards held), `SCORES` (totals), `HAND_POINTS`, `SCORE_CHANGES` |
| `info` | (B, NUM_INFO) | int32 | one column per scalar field, named below |

`info` columns: `CURRENT` seat to move, `DIRECTION` +1/-1, `SUIT` current suit
(-1: free, A4), `PENDING` draw run (A6), `PHASE` (`PLAY`, `AFTER_DRAW`,
`DECLARE_START`), `DRAWN` card kept after a draw (-1: none, A8), `FIRST_OUT`
(-1: none, A9), `TURN` (C1), `OVER` (hand over), `TRUNCATED`, `WINNER` (-1:
none), `MATCH_OVER`, `DEALER`, `HANDS_PLAYED`, `STOCK_LEN`, `DISCARD_LEN`.
Each slot also has its own `np.random.Generator` (`generators[i]`), used
exactly where the engine uses its own: the deal shuffle (A3) and the refill
shuffle (A10), so a slot and a `SwitchState` with the same generator state
deal and refill the same cards.

API (shared with the Huit batch, so a learner can drive either):

- `SwitchBatch(rules, batch_size, seed=None, episode="hand")`: slot i's
  generator is `np.random.default_rng(np.random.SeedSequence(seed).spawn(B)[i])`
  and every slot is dealt on construction, as `SwitchState(rules, generator)` is.
- `reset(slots=None)`: a new match (scores 0, dealer n-1) dealt in the given
  slots (indices or a (B,) bool mask; all when None), each from its own
  generator, which runs on (it is not re-seeded). Resets are explicit: a finished slot stays finished (its
  `done` stays true, its actions are ignored) until `reset` deals it again.
- `load(slot, state)`: copy a `SwitchState` (a stacked deal, a restored saved
  state) into a slot, a copy of its generator included; `to_state(slot)` and
  `state_dict(slot)` give it back in the engine's form. A saved state goes in
  through the engine, which checks it: `load(i, SwitchState.from_state_dict(data,
  rules))`; a stacked deal likewise after `state.deal_stacked(deal)`.
- `current_player() -> (B,)`, `done` and `truncated` (B,) bool, `legal_mask() -> (B,
  NUM_ACTIONS) bool` (all false in finished slots), `observe(seats) -> (B,
  obs_size) float32` (the `SwitchObserver` vector of `seats[i]` in slot i),
  `score_changes() -> (B, n) int64` (each seat's points of the last finished
  hand: what the AEC env's `reward="points"` pays, divided by -100).
- `step(actions) -> (rewards (B, n) float32, done (B,) bool, truncated (B,) bool)`:
  one action per live slot; an illegal one raises `ValueError` naming the slot
  before any slot moves; `step(actions, active)` moves only the slots where
  the (B,) bool `active` is true, the others wait as finished slots do.
  As Gymnasium's terminated and truncated, and as the Huit batch's: `done`
  is true while a slot's episode is over by a win, `truncated` while C1 ended
  it (never both); a slot with either waits for `reset`.
  Rewards are those of the AEC env with `reward="win"`: in `episode="hand"` the
  win rewards at the end of each hand; in `episode="match"` a won hand that
  does not end the match deals the next one at once (the dealer moves on) and
  the win rewards of the lowest totals come at the match end (A12). A
  truncated hand (C1) ends the episode with zero rewards in both modes.
- `cardlab.envs.batched.sample_legal(mask, rng)`: one uniformly random legal action per row.

Numba compiles the kernels on first use (about 7 s of CPU, 11 s on a busy
machine) and caches them on disk (`cache=True`, next to this file or under
`NUMBA_CACHE_DIR`): later processes import and load them in about a second.

Speed (`benchmarks/batched_throughput.py`, 4 players, one core, mask +
observation + random legal action + step): about 1.2-1.6 million steps/s at
B = 256 to 4096, 17-29 times the engine loop on a shared two-core machine.
`step` reads legality from the last `legal_mask()` when nothing moved since,
else works it out again. The deals (A3) and refills (A10) shuffle with each
slot's generator in Python, a few microseconds per deal; everything else runs
in the kernels.

The card and action tables are taken from `cards` and `rules` at import and passed
to the kernels as arrays; the action-id constants are compiled in, so a
change of the action layout in `rules.py` needs a touch of this file (the
differential tests would catch a stale cache).
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numba import njit

from cardlab.envs import cards as C
from cardlab.envs.batched import BatchedEngine, seat_indices
from cardlab.envs.match import Match
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.observer import SwitchObserver
from cardlab.envs.switch.rules import SwitchRules, SwitchState

Arr = np.ndarray
EPISODES = ("hand", "match")

# ---------------------------------------------------------------- array layout
STOCK, DISCARD = 0, 1
SIZES, SCORES, HAND_POINTS, SCORE_CHANGES = range(4)
(CURRENT, DIRECTION, SUIT, PENDING, PHASE, DRAWN, FIRST_OUT, TURN, OVER, TRUNCATED, WINNER,
 MATCH_OVER, DEALER, HANDS_PLAYED, STOCK_LEN, DISCARD_LEN) = range(16)
NUM_INFO = 16

# Rule options as one int array, by index.
P_N, P_MATCH_RANK, P_PLAY_AFTER_DRAW, P_VOLUNTARY, P_TARGET, P_MAX_TURNS, P_MATCH, P_HAND_SIZE = range(8)

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
], dtype=np.int32)
# Rows of ACTION_TABLE: the card an action plays (-1: none), the suit it declares (-1: none).
ACTION_TABLE = np.array([R.ACTION_CARD, R.ACTION_DECLARE], dtype=np.int32)
# PLAY_TABLE[card]: the action ids that play `card` (one, or four for a Jack), -1 padded.
PLAY_TABLE = np.full((_K, C.NUM_SUITS), -1, dtype=np.int32)
for _card, _ids in enumerate(R.PLAY_IDS):
    PLAY_TABLE[_card, : len(_ids)] = _ids

_JOKER, _TWO, _EIGHT, _JACK, _KING = C.JOKER, C.TWO, C.EIGHT, C.JACK, C.KING
_PLAY, _AFTER_DRAW, _DECLARE_START = R.PLAY, R.AFTER_DRAW, R.DECLARE_START
_DRAW, _PASS, _DECLARE, _NUM_ACTIONS = R.DRAW, R.PASS, R.DECLARE, R.NUM_ACTIONS

# step() status codes
_OK, _NEEDS_REFILL = -1, -2


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
    if info[b, PENDING]:
        if info[b, FIRST_OUT] >= 0:
            holders = 0
            for s in range(params[P_N]):
                if seats[b, SIZES, s]:
                    holders += 1
            if holders == 1:  # A9, decision added later: the last holder draws the run
                row[_DRAW] = True
                return
        for card in range(hand.shape[0]):
            if hand[card] and cards[T_RUN, card]:
                _set_plays(row, card, play_table)
        row[_DRAW] = True
        return
    any_play = False
    for card in range(hand.shape[0]):
        if hand[card] and _playable(b, card, info, piles, cards, params[P_MATCH_RANK]):
            _set_plays(row, card, play_table)
            any_play = True
    if not any_play or params[P_VOLUNTARY]:
        row[_DRAW] = True


@njit(cache=True)
def _legal_mask(
    out: Arr, info: Arr, seats: Arr, hands: Arr, piles: Arr, params: Arr, cards: Arr, play_table: Arr
) -> None:
    for b in range(out.shape[0]):
        _legal_row(b, out[b], info, seats, hands, piles, params, cards, play_table)


@njit(cache=True)
def _observe(
    out: Arr, who: Arr, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, params: Arr,
    offsets: Arr, inv_copies: Arr, floats: Arr,
) -> None:
    """`SwitchObserver.observe` for every slot, with the same float64 arithmetic before the float32 store."""
    n = params[P_N]
    inv_deck, inv_target, low, high = floats[0], floats[1], floats[2], floats[3]
    (o_hand, o_top, o_suit, o_pending, o_direction, o_phase, o_opponents, o_scores, o_played,
     o_stock) = (offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], offsets[5], offsets[6],
                 offsets[7], offsets[8], offsets[9])
    for b in range(out.shape[0]):
        row = out[b]
        row[:] = 0.0
        seat = who[b]
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
    info[b, CURRENT] = _next_seat(b, seat, 1, info, seats, n)


@njit(cache=True)
def _finish(b: int, winner: int, info: Arr, seats: Arr, hands: Arr, params: Arr, cards: Arr) -> None:
    """End the hand (A11 scoring, A12 match end), as `HandState._finish` with `Match.record`."""
    n = params[P_N]
    info[b, OVER] = 1
    info[b, WINNER] = winner
    top = 0
    for s in range(n):
        points = 0
        if s != winner:
            for card in range(hands.shape[2]):
                points += hands[b, s, card] * cards[T_POINTS, card]
        seats[b, HAND_POINTS, s] = points
        seats[b, SCORE_CHANGES, s] = points
        seats[b, SCORES, s] += points
        top = max(top, seats[b, SCORES, s])
    info[b, HANDS_PLAYED] += 1
    info[b, MATCH_OVER] = 1 if top >= params[P_TARGET] else 0


@njit(cache=True)
def _draw_cards(b: int, seat: int, count: int, info: Arr, seats: Arr, hands: Arr, piles: Arr) -> int:
    """Up to `count` cards from the stock; the A10 refill was done before the kernel (see step)."""
    last = -1
    for _ in range(count):
        if info[b, STOCK_LEN] == 0:
            break
        info[b, STOCK_LEN] -= 1
        last = piles[b, STOCK, info[b, STOCK_LEN]]
        hands[b, seat, last] += 1
        seats[b, SIZES, seat] += 1
    return last


@njit(cache=True)
def _apply_one(
    b: int, action: int, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, params: Arr, cards: Arr,
    actions_table: Arr,
) -> None:
    """`SwitchState.apply` for slot b (its `_play`, `_draw`, `_end_turn` and `_count_turn`)."""
    n = params[P_N]
    seat = info[b, CURRENT]
    if action == _DRAW:
        if info[b, PENDING]:
            _draw_cards(b, seat, info[b, PENDING], info, seats, hands, piles)
            info[b, PENDING] = 0
            if info[b, FIRST_OUT] >= 0:
                _finish(b, info[b, FIRST_OUT], info, seats, hands, params, cards)
            else:
                _end_turn(b, seat, info, seats, n)
        else:
            card = _draw_cards(b, seat, 1, info, seats, hands, piles)
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
def _win_rewards(row: Arr, n: int, winners_mask: Arr, count: int) -> None:
    """`cardlab.envs.match.win_rewards`: winners share +1, the others share -1 (all zero when everyone wins)."""
    if count == 0 or count == n:
        return
    up, down = 1.0 / count, -1.0 / (n - count)
    for s in range(n):
        row[s] = up if winners_mask[s] else down


@njit(cache=True)
def _step(
    actions: Arr, known: Arr, use_known: bool, rewards: Arr, next_deal: Arr, refill: Arr, info: Arr,
    seats: Arr, hands: Arr, piles: Arr, played: Arr, params: Arr, cards: Arr, actions_table: Arr,
    play_table: Arr,
) -> int:
    """Check every live slot's action, then apply them all.

    With `use_known`, `known` is the legal mask of this very state (the last
    `legal_mask()`, nothing moved since): a look-up instead of a new `_legal_row`.

    Returns the first slot with an illegal action, `_NEEDS_REFILL` (nothing
    applied, `refill` marks the slots whose draw empties the stock: the caller
    shuffles them, A10, and calls again), or `_OK`.
    """
    n = params[P_N]
    row = np.zeros(_NUM_ACTIONS, dtype=np.bool_)
    refills = False
    for b in range(actions.shape[0]):
        refill[b] = False
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
        if a == _DRAW:
            need = max(info[b, PENDING], 1)
            if need > info[b, STOCK_LEN] and info[b, DISCARD_LEN] > 1:
                refill[b] = True
                refills = True
    if refills:
        return _NEEDS_REFILL
    winners = np.zeros(n, dtype=np.bool_)
    for b in range(actions.shape[0]):
        rewards[b, :] = 0.0
        next_deal[b] = False
        if info[b, OVER]:
            continue
        _apply_one(b, actions[b], info, seats, hands, piles, played, params, cards, actions_table)
        if not info[b, OVER] or info[b, TRUNCATED]:
            continue
        if not params[P_MATCH]:
            winners[:] = False
            winners[info[b, WINNER]] = True
            _win_rewards(rewards[b], n, winners, 1)
        elif info[b, MATCH_OVER]:
            low = seats[b, SCORES, 0]
            for s in range(n):
                low = min(low, seats[b, SCORES, s])
            count = 0
            for s in range(n):
                winners[s] = seats[b, SCORES, s] == low
                if winners[s]:
                    count += 1
            _win_rewards(rewards[b], n, winners, count)
        else:
            next_deal[b] = True
    return _OK


@njit(cache=True)
def _deal(
    slots: Arr, packs: Arr, info: Arr, seats: Arr, hands: Arr, piles: Arr, played: Arr, params: Arr,
    cards: Arr,
) -> None:
    """`SwitchState.deal_shuffled` after its shuffle: deal from the dealer's next seat, starter (A3, A4)."""
    n = params[P_N]
    for i in range(slots.shape[0]):
        b = slots[i]
        pack = packs[i]
        hands[b, :, :] = 0
        played[b, :] = 0
        for s in range(n):
            seats[b, SIZES, s] = 0
            seats[b, HAND_POINTS, s] = 0
            seats[b, SCORE_CHANGES, s] = 0
        dealer = info[b, DEALER]
        p = pack.shape[0]
        for k in range(params[P_HAND_SIZE] * n):
            seat = (dealer + 1 + k) % n
            p -= 1
            hands[b, seat, pack[p]] += 1
            seats[b, SIZES, seat] += 1
        p -= 1
        starter = pack[p]
        piles[b, STOCK, :p] = pack[:p]
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
            continue
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


# ---------------------------------------------------------------- the batch
class SwitchBatch(BatchedEngine):
    """B games of Switch with the state in arrays (layout in the module doc)."""

    RULES: ClassVar[ModuleType] = R

    def __init__(self, rules: SwitchRules, batch_size: int, seed: int | None = None,
                 episode: str = "hand") -> None:
        if not isinstance(rules, SwitchRules):
            raise ValueError(f"rules must be SwitchRules, got {type(rules).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r} is not accepted: use 'hand' or 'match'")
        self.rules, self.episode, self.batch_size = rules, episode, batch_size
        self.n = n = rules.num_players
        self.deck = rules.deck()
        self.deck_size = size = rules.deck_size()
        self.observer = SwitchObserver(rules)
        self.obs_size = self.observer.layout.size
        self.num_actions = R.NUM_ACTIONS
        B = batch_size
        self.hands = np.zeros((B, n, _K), dtype=np.int32)
        self.piles = np.zeros((B, 2, size), dtype=np.int32)
        self.played = np.zeros((B, _K), dtype=np.int32)
        self.seats = np.zeros((B, 4, n), dtype=np.int32)
        self.info = np.zeros((B, NUM_INFO), dtype=np.int32)
        self._params = np.array([
            n, rules.match_rank, rules.play_after_draw, rules.voluntary_draw, rules.target_score,
            rules.max_turns, episode == "match", rules.hand_size,
        ], dtype=np.int64)
        slices = self.observer.layout.slices
        names = ("hand", "top", "suit", "pending", "direction", "phase", "opponents", "scores", "played",
                 "stock")
        self._offsets = np.array([slices[name].start for name in names], dtype=np.int64)
        # The observer's float32 factors, widened exactly as numpy widens them (int64 * float32 -> float64).
        self._inv_copies = self.observer._inv_copies.astype(np.float64)
        self._floats = np.array([self.observer._inv_deck, self.observer._inv_target,
                                 self.observer._scores_low, self.observer._scores_high], dtype=np.float64)
        self._pack = np.repeat(np.arange(_K, dtype=np.int32), self.deck)
        self._rewards = np.zeros((B, n), dtype=np.float32)
        self._next_deal = np.zeros(B, dtype=np.bool_)
        self._refill = np.zeros(B, dtype=np.bool_)
        # The last legal mask, and whether it is still the mask of the state (nothing moved since).
        self._known = np.zeros((B, R.NUM_ACTIONS), dtype=np.bool_)
        self._known_fresh = False
        self.generators = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(B)]
        self.reset()

    # ------------------------------------------------------------ dealing and loading
    def reset(self, slots: np.ndarray | None = None) -> None:
        """Start a new match in `slots` (all when None): totals 0, dealer n-1, a shuffled deal."""
        idx = self._slots(slots)
        self.seats[idx, SCORES] = 0
        self.info[idx, DEALER] = self.n - 1
        self.info[idx, HANDS_PLAYED] = 0
        self._deal_shuffled(idx)

    def _slots(self, slots: np.ndarray | None) -> np.ndarray:
        if slots is None:
            return np.arange(self.batch_size)
        idx = np.asarray(slots)
        if idx.dtype == np.bool_ and idx.shape == (self.batch_size,):
            return np.flatnonzero(idx)
        accepted = f"slot indices 0..{self.batch_size - 1} or a ({self.batch_size},) bool mask"
        if idx.dtype == np.bool_ or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise ValueError(f"slots must be {accepted}, got {slots!r:.80}")
        idx = idx.astype(np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= self.batch_size):
            raise ValueError(f"slots must be {accepted}, got {slots!r:.80}")
        return np.unique(idx)  # a slot named twice is dealt once

    def _deal_shuffled(self, idx: np.ndarray) -> None:
        """A3 for each slot: its own generator shuffles the pack, as `SwitchState.deal_shuffled` does."""
        if not idx.size:
            return
        self._known_fresh = False
        packs = np.empty((idx.size, self.deck_size), dtype=np.int32)
        for k, b in enumerate(idx):
            pack = self._pack.copy()
            self.generators[b].shuffle(pack)  # same permutation as the engine's shuffle of a list
            packs[k] = pack
        _deal(idx, packs, self.info, self.seats, self.hands, self.piles, self.played, self._params,
              CARD_TABLE)

    def load(self, slot: int, state: SwitchState) -> None:
        """Copy an engine state (a stacked deal, a restored saved state) and its generator into `slot`."""
        self._check_slot(slot)
        if not isinstance(state, SwitchState):
            raise ValueError(f"load takes a SwitchState, got {type(state).__name__}")
        if state.rules != self.rules:
            raise ValueError(f"the state's rules {state.rules} differ from the batch's {self.rules}")
        b = slot
        self.hands[b] = np.asarray(state.hands)
        self.played[b] = state.played_counts
        self.piles[b] = 0
        self.piles[b, STOCK, : len(state.stock)] = state.stock
        self.piles[b, DISCARD, : len(state.discard)] = state.discard
        self.seats[b, SIZES] = state.sizes
        self.seats[b, SCORES] = state.match.scores
        self.seats[b, HAND_POINTS] = state.hand_points
        self.seats[b, SCORE_CHANGES] = state.score_changes
        none = -1
        values = {
            CURRENT: state.current, DIRECTION: state.direction,
            SUIT: none if state.current_suit is None else state.current_suit, PENDING: state.pending,
            PHASE: state.phase, DRAWN: state.drawn,
            FIRST_OUT: none if state.first_out is None else state.first_out,
            TURN: state.turn, OVER: state.hand_over, TRUNCATED: state.truncated,
            WINNER: none if state.winner is None else state.winner, MATCH_OVER: state.match_over,
            DEALER: state.match.dealer, HANDS_PLAYED: state.match.hands_played,
            STOCK_LEN: len(state.stock), DISCARD_LEN: len(state.discard),
        }
        for column, value in values.items():
            self.info[b, column] = int(value)
        self.generators[b] = copy.deepcopy(state.rng)
        self._known_fresh = False

    def to_state(self, slot: int) -> SwitchState:
        """Slot `slot` as an engine state (with a copy of its generator): for the AEC env, advice, saving."""
        self._check_slot(slot)
        return self._engine_view(slot, copy.deepcopy(self.generators[slot]))

    def state_dict(self, slot: int) -> dict[str, Any]:
        """Slot `slot` in the engine's `state_dict()` format (written by the engine itself)."""
        return self._engine_view(slot, self.generators[slot]).state_dict()

    def _engine_view(self, slot: int, rng: np.random.Generator) -> SwitchState:
        self._check_slot(slot)
        b, n, info = slot, self.n, self.info[slot]
        state = SwitchState.__new__(SwitchState)
        state.rules, state.n, state.deck, state.rng = self.rules, n, self.deck, rng
        state._reset_hand()
        hands = [C.counts_to_cards(self.hands[b, s].tolist()) for s in range(n)]
        stock = self.piles[b, STOCK, : info[STOCK_LEN]].tolist()
        state._set_cards(hands, stock[::-1], self.piles[b, DISCARD, : info[DISCARD_LEN]].tolist())
        state.current, state.direction = int(info[CURRENT]), int(info[DIRECTION])
        state.pending = int(info[PENDING])
        state.current_suit = None if info[SUIT] < 0 else int(info[SUIT])
        state.phase, state.drawn = int(info[PHASE]), int(info[DRAWN])
        state.first_out = None if info[FIRST_OUT] < 0 else int(info[FIRST_OUT])
        state.turn, state.hand_over = int(info[TURN]), bool(info[OVER])
        state.truncated = bool(info[TRUNCATED])
        state.winner = None if info[WINNER] < 0 else int(info[WINNER])
        state.hand_points = self.seats[b, HAND_POINTS].tolist()
        state.score_changes = self.seats[b, SCORE_CHANGES].tolist()
        state.match_over = bool(info[MATCH_OVER])
        # Switch keeps no win streaks (B12 is Huit's): they stay 0.
        state.match = Match(n, self.seats[b, SCORES].tolist(), int(info[DEALER]), [0] * n,
                            int(info[HANDS_PLAYED]))
        return state

    def _check_slot(self, slot: int) -> None:
        whole = isinstance(slot, (int, np.integer)) and not isinstance(slot, bool)
        if not whole or not 0 <= slot < self.batch_size:
            raise ValueError(f"slot must be an index 0..{self.batch_size - 1}, got {slot!r}")

    # ------------------------------------------------------------ queries
    def current_player(self) -> np.ndarray:
        return self.info[:, CURRENT].copy()

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.info[:, OVER], self.info[:, TRUNCATED]

    def score_changes(self) -> np.ndarray:
        """(B, n) int64: each seat's score change in the slot's last finished hand (as the engine's)."""
        return self.seats[:, SCORE_CHANGES].astype(np.int64)

    def legal_mask(self) -> np.ndarray:
        out = self._known
        _legal_mask(out, self.info, self.seats, self.hands, self.piles, self._params, CARD_TABLE, PLAY_TABLE)
        self._known_fresh = True
        return out.copy()  # a copy: step() checks actions against `_known`, which the caller cannot change

    def observe(self, seats: np.ndarray) -> np.ndarray:
        who = seat_indices(seats, self.batch_size, self.n)
        out = np.empty((self.batch_size, self.obs_size), dtype=np.float32)
        _observe(out, who, self.info, self.seats, self.hands, self.piles, self.played,
                 self._params, self._offsets, self._inv_copies, self._floats)
        return out

    # ------------------------------------------------------------ moves
    def _apply(self, acts: np.ndarray) -> np.ndarray:
        args: tuple[Any, ...] = (
            acts, self._known, self._known_fresh, self._rewards, self._next_deal, self._refill,
            self.info, self.seats, self.hands, self.piles, self.played, self._params,
            CARD_TABLE, ACTION_TABLE, PLAY_TABLE,
        )
        status = _step(*args)
        if status == _NEEDS_REFILL:
            for b in np.flatnonzero(self._refill):
                self._refill_stock(int(b))
            status = _step(*args)
        self._known_fresh = status >= 0  # refused: nothing moved, the mask still holds
        if status >= 0:
            self._refuse(int(status), int(acts[status]))
        deal = np.flatnonzero(self._next_deal)
        if deal.size:  # A3: the next hand of the match, the dealer one seat on
            self.info[deal, DEALER] = (self.info[deal, DEALER] + 1) % self.n
            self._deal_shuffled(deal)
        return self._rewards.copy()

    def _refill_stock(self, b: int) -> None:
        """A10 before the draw that needs it: the discard pile but its top card, shuffled, under the stock.

        The engine shuffles when the stock runs dry in the middle of the draw; the
        stock's own cards come first either way and nothing else uses the
        generator in between, so the cards drawn are the same.
        """
        info, piles = self.info[b], self.piles[b]
        stock_len, discard_len = int(info[STOCK_LEN]), int(info[DISCARD_LEN])
        fresh = piles[DISCARD, : discard_len - 1].copy()
        self.generators[b].shuffle(fresh)
        piles[STOCK, fresh.size : fresh.size + stock_len] = piles[STOCK, :stock_len].copy()
        piles[STOCK, : fresh.size] = fresh
        top = piles[DISCARD, discard_len - 1]
        piles[DISCARD, 0] = top
        info[STOCK_LEN] = stock_len + fresh.size
        info[DISCARD_LEN] = 1
        self.played[b] = 0
        self.played[b, top] = 1


__all__ = ["SwitchBatch"]
