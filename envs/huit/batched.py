"""Huit américain, batched: many games stepped in one call, state in arrays, numba kernels.

```python
from cardlab.envs.batched import sample_legal
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.rules import HuitRules

batch = HuitBatch(HuitRules(num_players=4), batch_size=4096, seed=0)
rng = np.random.default_rng(0)
while True:
    mask = batch.legal_mask()                             # (B, 354) bool, the player to move
    obs = batch.observe(batch.current_player())           # (B, obs_size) float32, as HuitObserver
    rewards, done, truncated = batch.step(sample_legal(mask, rng))
    batch.reset(np.flatnonzero(done | truncated))         # finished slots wait for reset
```

The rules engine `cardlab.envs.huit.rules` stays the definition of the rules:
this module plays the same games (same legal sets, next states, observations,
rewards and ends of hands, checked step by step by
`tests/envs/test_huit_batched.py`) at a speed the one-game engine cannot reach
in Python.

Why numba kernels over array state rather than vectorised numpy: a game's
step branches (B4-B8 filters, B5's order of a group, B10 refills, B8 skips,
the end of a hand), and vectorised numpy pays a full pass over the batch for
every branch. Measured on one core at B = 4096: one numpy pass over the
(B, 354) mask costs about 28 ns per game; the whole numba mask kernel costs
about 145 ns per game and the whole step about 135 ns, so a numpy mask built
from its ten or so filters would alone cost about what the numba mask,
observation and step cost together (about 550 ns per game with the random
action choice; see `benchmarks/batched_throughput.py`). The kernels are
compiled on first use (about 10 s here) and cached (`cache=True`): later
processes load them in about 1 s.

## Array layout (B = batch_size, n = num_players, cards by their index 0..31 in `DECK_CARDS`)

- `slot` (B, 14) int64, a row per game, by column: `CUR` seat to move, `SUIT`
  current suit (-1: none), `ANNOUNCED`, `ACE_PENALTY`, `PHASE` (0 play,
  1 after_draw), `TURN`, `BANK_LEN`, `TABLE_LEN`, `HAND_OVER`, `TRUNCATED`,
  `WINNER` (-1: none), `MATCH_OVER`, `DEALER`, `HANDS_PLAYED`;
- `seat` (B, 5, n) int64, per game and seat, by row: `SIZES` cards held,
  `SCORES` match totals, `STREAKS` (B12), `HAND_POINTS` and `SCORE_CHANGES`
  of the last hand;
- `hands` (B, n, 32) int8: 1 for each card a seat holds;
- `bank` (B, 32) int8: the face-down bank in `bank[:BANK_LEN]`, next card
  last (as the engine's list);
- `table` (B, 32) int8: the played cards in `table[:TABLE_LEN]`, bottom
  first, top last;
- `gens`: B `np.random.Generator`s (a numba typed list), one per game (C2):
  deals and B10 shuffles use it exactly as the engine does.

Cards a stacked deal left out are in none of these; `state_dict` lists them as
`left_out`.

## API

- `HuitBatch(rules, batch_size, seed=None, episode="hand")` deals B games;
  slot i's generator is `np.random.default_rng(np.random.SeedSequence(seed).spawn(B)[i])`,
  and a slot deals exactly as `HuitState` does with the same generator state.
- `reset(slots=None)`: a new episode (a new match: totals 0, dealer n-1) in
  the given slots (all by default), each dealt from its own generator.
  Finished slots are not reset by `step`: they keep their final state (so it
  can be read and compared) and ignore actions until `reset` is called.
- `load(slot, state)`: put a `HuitState` (a stacked deal, a restored saved
  state) into a slot, its generator copied; `to_state(slot)` gives a slot
  back as a `HuitState` (generator copied) and `state_dict(slot)` its
  `state_dict()`, which `HuitState.from_state_dict` and the AEC env restore.
- `current_player()` (B,) int64; `legal_mask()` (B, 354) bool for the seat
  to move (all False in finished slots); `observe(seats)` (B, obs_size)
  float32, `HuitObserver(rules).observe(state, seat)` of each slot;
  `score_changes()` (B, n) int64, each seat's points of the last finished
  hand (what the AEC env's `reward="points"` pays, divided by -100).
- `step(actions)` applies one action id per live slot and returns
  `(rewards (B, n) float32, done (B,) bool, truncated (B,) bool)`. Rewards are
  the AEC env's `reward="win"` rewards: zero-sum win rewards at the end of the
  episode (a hand, or with `episode="match"` the match: hands follow each
  other, dealer moving on, B12 and B13 as in the engine), 0 otherwise and
  when a hand is truncated (C1, `max_turns`), which ends the episode in both
  modes. `done` and `truncated` stay set until the slot is reset. An illegal
  action in a live slot raises a `ValueError` naming the slot, before any slot
  moves. `step(actions, active)` moves only the slots where the (B,) bool
  `active` is true; the others wait, as finished slots do (self-play holds
  the games where the learner is to move while the others catch up).
- `cardlab.envs.batched.sample_legal(mask, rng)`: a uniformly random legal
  action per row of a mask (any game's), for random players and benchmarks.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numba import njit
from numba.typed import List as TypedList

from cardlab.envs import cards as C
from cardlab.envs.batched import BatchedEngine, seat_indices
from cardlab.envs.hand import HandState
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.observer import DECK_IDS, LOCAL_INDEX, NUM_CARDS, HuitObserver
from cardlab.envs.huit.rules import HuitRules, HuitState
from cardlab.envs.match import Match, win_rewards
from cardlab.envs.rng import rng_from_state, rng_state

NUM_ACTIONS = R.NUM_ACTIONS
EPISODES = ("hand", "match")

# ---------------------------------------------------------------- the array layout (see the module doc)
(CUR, SUIT, ANNOUNCED, ACE_PENALTY, PHASE, TURN, BANK_LEN, TABLE_LEN, HAND_OVER, TRUNCATED, WINNER,
 MATCH_OVER, DEALER, HANDS_PLAYED) = range(14)
SLOT_COLUMNS = 14
SIZES, SCORES, STREAKS, HAND_POINTS, SCORE_CHANGES = range(5)
SEAT_ROWS = 5
# Rule options as one int64 array for the kernels.
P_N, P_EACH, P_QUEEN_EACH, P_SHUFFLE, P_TARGET, P_STREAK_LEN, P_STREAK_BONUS, P_MAX_TURNS, P_MATCH = range(9)

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
def _top_rank(slot: np.ndarray, table: np.ndarray, b: int) -> int:
    n_table = slot[b, TABLE_LEN]
    return _NO_RANK if n_table == 0 else CARD_RANK[table[b, n_table - 1]]


@njit(cache=True)
def _mask_kernel(slot: np.ndarray, hands: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    for b in range(out.shape[0]):
        out[b, :] = False
        if slot[b, HAND_OVER]:
            continue
        seat, suit = slot[b, CUR], slot[b, SUIT]
        top_rank = _top_rank(slot, table, b)
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
                    out[b, a] = True
        out[b, _PASS if slot[b, PHASE] == _AFTER_DRAW else _DRAW] = True


@njit(cache=True)
def _is_legal(slot: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, a: int) -> bool:
    """One action id against the legal set of slot b (what `_mask_kernel` would set)."""
    if a == _DRAW:
        return slot[b, PHASE] != _AFTER_DRAW
    if a == _PASS:
        return slot[b, PHASE] == _AFTER_DRAW
    if a < 0 or a > _PASS:
        return False
    rank = A_RANK[a]
    i = 0
    while RANK_IDS[i] != rank:
        i += 1
    mask = A_MASK[a]
    if _held(hands, b, slot[b, CUR], i) & mask != mask:
        return False
    return _play_allowed(rank, A_SIZE[a], mask, A_TOP[a], _top_rank(slot, table, b), slot[b, SUIT])


@njit(cache=True)
def _end_turn(slot: np.ndarray, b: int, seat: int, skips: int, n: int) -> None:
    slot[b, PHASE] = _PLAY
    slot[b, ACE_PENALTY] = 0
    slot[b, CUR] = (seat + 1 + skips) % n


@njit(cache=True)
def _record(slot: np.ndarray, seats: np.ndarray, hands: np.ndarray, b: int, winner: int,
            params: np.ndarray) -> None:
    """`HandState._finish` / `_count_turn` and `Match.record` (B11, B12, B13, C1); winner -1: truncated."""
    n = params[P_N]
    slot[b, HANDS_PLAYED] += 1
    if winner < 0:
        seats[b, STREAKS, :] = 0
        return
    slot[b, WINNER] = winner
    for s in range(n):
        points = 0
        if s != winner:
            for c in range(hands.shape[2]):
                points += hands[b, s, c] * CARD_POINTS[c]
        seats[b, HAND_POINTS, s] = points
        seats[b, SCORE_CHANGES, s] = points
        seats[b, STREAKS, s] = seats[b, STREAKS, s] + 1 if s == winner else 0
    if seats[b, STREAKS, winner] >= params[P_STREAK_LEN]:
        seats[b, SCORE_CHANGES, winner] -= params[P_STREAK_BONUS]
        seats[b, STREAKS, winner] = 0
    top = seats[b, SCORES, 0] + seats[b, SCORE_CHANGES, 0]
    for s in range(n):
        seats[b, SCORES, s] += seats[b, SCORE_CHANGES, s]
        top = max(top, seats[b, SCORES, s])
    slot[b, MATCH_OVER] = top >= params[P_TARGET]


@njit(cache=True)
def _play(slot: np.ndarray, seats: np.ndarray, hands: np.ndarray, table: np.ndarray, b: int, a: int,
          params: np.ndarray) -> None:
    """`HuitState._play`: lay the group (B5 order), then B11, B6, B8, B7."""
    seat, size, n_table = slot[b, CUR], A_SIZE[a], slot[b, TABLE_LEN]
    first = 0  # position in A_CARDS of the card laid first (`_first_matching`)
    if n_table > 0 and size > 1:
        top_rank = CARD_RANK[table[b, n_table - 1]]
        rank0 = CARD_RANK[A_CARDS[a, 0]]
        if rank0 != top_rank and rank0 != _EIGHT:
            while CARD_SUIT[A_CARDS[a, first]] != slot[b, SUIT]:
                first += 1
    order = 0
    for k in range(-1, size):
        if k == first:
            continue
        card = A_CARDS[a, first if k < 0 else k]
        hands[b, seat, card] = 0
        table[b, n_table + order] = card
        order += 1
    slot[b, TABLE_LEN] = n_table + size
    seats[b, SIZES, seat] -= size
    if seats[b, SIZES, seat] == 0:  # B11
        slot[b, HAND_OVER] = 1
        _record(slot, seats, hands, b, seat, params)
        return
    rank = A_RANK[a]
    if rank == _EIGHT:
        slot[b, SUIT] = A_DECLARE[a]
        slot[b, ANNOUNCED] = 1
    else:
        slot[b, SUIT] = A_TOP[a]
        slot[b, ANNOUNCED] = 0
    skips = 0
    n = params[P_N]
    if rank == _QUEEN:  # B8
        skips = min(size if params[P_QUEEN_EACH] else 1, n - 1)
    _end_turn(slot, b, seat, skips, n)
    slot[b, ACE_PENALTY] = rank == _ACE


@njit(cache=True)
def _draw(slot: np.ndarray, seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray,
          b: int, gen: Any, params: np.ndarray) -> None:
    """`HuitState._draw` and `HandState._draw_cards`: B9, B7's two cards, B10's refill."""
    seat = slot[b, CUR]
    penalty = slot[b, ACE_PENALTY]
    for _ in range(2 if penalty else 1):
        if slot[b, BANK_LEN] == 0:
            n_table = slot[b, TABLE_LEN]
            if n_table <= 1:
                break
            for k in range(n_table - 1):  # B10: turned over, the bottom card on top
                bank[b, k] = table[b, n_table - 2 - k]
            if params[P_SHUFFLE]:
                bank[b, : n_table - 1] = table[b, : n_table - 1]
                gen.shuffle(bank[b, : n_table - 1])
            table[b, 0] = table[b, n_table - 1]
            slot[b, TABLE_LEN] = 1
            slot[b, BANK_LEN] = n_table - 1
        slot[b, BANK_LEN] -= 1
        hands[b, seat, bank[b, slot[b, BANK_LEN]]] = 1
        seats[b, SIZES, seat] += 1
    if penalty:
        _end_turn(slot, b, seat, 0, params[P_N])
    else:
        slot[b, PHASE] = _AFTER_DRAW


@njit(cache=True)
def _deal(slot: np.ndarray, seats: np.ndarray, hands: np.ndarray, bank: np.ndarray, table: np.ndarray,
          b: int, gen: Any, params: np.ndarray) -> None:
    """`HuitState.deal_shuffled` (B2, B3): a new hand of the slot's match."""
    n, each = params[P_N], params[P_EACH]
    for col in (SUIT, WINNER):
        slot[b, col] = -1
    for col in (ANNOUNCED, ACE_PENALTY, PHASE, TURN, TABLE_LEN, HAND_OVER, TRUNCATED, MATCH_OVER):
        slot[b, col] = 0
    seats[b, HAND_POINTS, :] = 0
    seats[b, SCORE_CHANGES, :] = 0
    hands[b, :, :] = 0
    pack = np.arange(NUM_CARDS).astype(np.int8)
    gen.shuffle(pack)
    dealer = slot[b, DEALER]
    for i in range(each * n):
        hands[b, (dealer + 1 + i) % n, pack[NUM_CARDS - 1 - i]] = 1
    seats[b, SIZES, :] = each
    rest = NUM_CARDS - each * n
    bank[b, :rest] = pack[:rest]
    slot[b, BANK_LEN] = rest
    slot[b, CUR] = (dealer + 1) % n


@njit(cache=True)
def _reset_kernel(slots: np.ndarray, slot: np.ndarray, seats: np.ndarray, hands: np.ndarray,
                  bank: np.ndarray, table: np.ndarray, gens: Any, params: np.ndarray) -> None:
    """A new match in each slot (`Match.new`: dealer n-1), then its first deal."""
    for b in slots:
        seats[b, SCORES, :] = 0
        seats[b, STREAKS, :] = 0
        slot[b, DEALER] = params[P_N] - 1
        slot[b, HANDS_PLAYED] = 0
        _deal(slot, seats, hands, bank, table, b, gens[b], params)


@njit(cache=True)
def _step_kernel(actions: np.ndarray, slot: np.ndarray, seats: np.ndarray, hands: np.ndarray,
                 bank: np.ndarray, table: np.ndarray, gens: Any, params: np.ndarray,
                 reward_table: np.ndarray, rewards: np.ndarray) -> int:
    """Apply one action per live slot (`HuitState.apply`, then the AEC env's end of hand).

    Returns -1, or the first slot whose action is illegal (then nothing was applied).
    """
    batch = actions.shape[0]
    for b in range(batch):
        if not slot[b, HAND_OVER] and not _is_legal(slot, hands, table, b, actions[b]):
            return b
    rewards[:, :] = 0.0
    n = params[P_N]
    for b in range(batch):
        if slot[b, HAND_OVER]:
            continue
        a = actions[b]
        if a == _DRAW:
            _draw(slot, seats, hands, bank, table, b, gens[b], params)
        elif a == _PASS:
            _end_turn(slot, b, slot[b, CUR], 0, n)
        else:
            _play(slot, seats, hands, table, b, a, params)
        slot[b, TURN] += 1  # C1
        if not slot[b, HAND_OVER]:
            if slot[b, TURN] >= params[P_MAX_TURNS]:
                slot[b, HAND_OVER] = 1
                slot[b, TRUNCATED] = 1
                _record(slot, seats, hands, b, -1, params)
            continue
        if not params[P_MATCH]:
            winner = slot[b, WINNER]
            for s in range(n):
                rewards[b, s] = reward_table[1, 0 if s == winner else 1]
        elif slot[b, MATCH_OVER]:
            low = seats[b, SCORES, 0]
            for s in range(n):
                low = min(low, seats[b, SCORES, s])
            count = 0
            for s in range(n):
                count += seats[b, SCORES, s] == low
            for s in range(n):
                rewards[b, s] = reward_table[count, 0 if seats[b, SCORES, s] == low else 1]
        else:  # A3/B3: the dealer moves on and deals the next hand of the match
            slot[b, DEALER] = (slot[b, DEALER] + 1) % n
            _deal(slot, seats, hands, bank, table, b, gens[b], params)
    return -1


@njit(cache=True)
def _observe_kernel(slot: np.ndarray, seats: np.ndarray, hands: np.ndarray, bank: np.ndarray,
                    table: np.ndarray, who: np.ndarray, offsets: np.ndarray, scales: np.ndarray,
                    out: np.ndarray) -> None:
    """`HuitObserver.observe` of seat who[b] in each slot b (offsets: the layout's field starts)."""
    hand0, top0, suit0, flags0, opp0 = offsets[0], offsets[1], offsets[2], offsets[3], offsets[4]
    score0, streak0, played0, bank0 = offsets[5], offsets[6], offsets[7], offsets[8]
    inv_target, inv_streak, low, high = scales[0], scales[1], scales[2], scales[3]
    n = seats.shape[2]
    for b in range(out.shape[0]):
        out[b, :] = 0.0
        seat = who[b]
        for c in range(NUM_CARDS):
            out[b, hand0 + c] = hands[b, seat, c]
        n_table = slot[b, TABLE_LEN]
        for k in range(n_table):
            out[b, played0 + table[b, k]] = 1.0
        if n_table:
            out[b, top0 + table[b, n_table - 1]] = 1.0
        if slot[b, SUIT] >= 0:
            out[b, suit0 + slot[b, SUIT]] = 1.0
        out[b, flags0] = slot[b, ANNOUNCED]
        out[b, flags0 + 1] = slot[b, ACE_PENALTY]
        out[b, flags0 + 2] = slot[b, PHASE] == _AFTER_DRAW
        for k in range(n):
            other = (seat + k) % n
            if k:
                out[b, opp0 + k - 1] = seats[b, SIZES, other] / 8
            out[b, score0 + k] = min(max(seats[b, SCORES, other] * inv_target, low), high)
            out[b, streak0 + k] = seats[b, STREAKS, other] * inv_streak
        out[b, bank0] = slot[b, BANK_LEN] / NUM_CARDS


# ---------------------------------------------------------------- the batch
class HuitBatch(BatchedEngine):
    """B games of Huit américain in arrays (see the module doc for the layout and the API)."""

    RULES: ClassVar[ModuleType] = R

    def __init__(self, rules: HuitRules, batch_size: int, seed: int | None = None,
                 episode: str = "hand") -> None:
        if not isinstance(rules, HuitRules):
            raise ValueError(f"rules must be HuitRules, got {type(rules).__name__}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r} is not accepted: use 'hand' or 'match'")
        self.rules, self.batch_size, self.episode = rules, int(batch_size), episode
        self.n = n = rules.num_players
        self.num_actions = NUM_ACTIONS
        self.observer = HuitObserver(rules)
        self.layout = self.observer.layout
        self.obs_size = self.layout.size
        B = self.batch_size
        self.slot = np.zeros((B, SLOT_COLUMNS), dtype=np.int64)
        self.seat = np.zeros((B, SEAT_ROWS, n), dtype=np.int64)
        self.hands = np.zeros((B, n, NUM_CARDS), dtype=np.int8)
        self.bank = np.zeros((B, NUM_CARDS), dtype=np.int8)
        self.table = np.zeros((B, NUM_CARDS), dtype=np.int8)
        self.params = np.zeros(9, dtype=np.int64)
        self.params[[P_N, P_EACH, P_QUEEN_EACH, P_SHUFFLE, P_TARGET, P_STREAK_LEN, P_STREAK_BONUS,
                     P_MAX_TURNS, P_MATCH]] = (
            n, rules.cards_each(), rules.queen_skips_each, rules.shuffle_on_refill, rules.target_score,
            rules.streak_length, rules.streak_bonus, rules.max_turns, episode == "match",
        )
        # reward_table[k] = (a winner's, a loser's) win reward when k seats share the win.
        self.reward_table = np.zeros((n + 1, 2), dtype=np.float64)
        for k in range(1, n + 1):
            shares = win_rewards(n, list(range(k)))
            self.reward_table[k] = (shares[0], shares[-1])
        s = self.layout.slices
        self._offsets = np.array(
            [s[name].start for name in ("hand", "top", "suit", "announced", "opponents", "scores",
                                        "streaks", "played", "bank")], dtype=np.int64)
        # The observer's scale factors and score bounds, computed as it computes them.
        scores = s["scores"].start
        self._scales = np.array([1.0 / rules.target_score, 1.0 / rules.streak_length,
                                 float(self.layout.low[scores]), float(self.layout.high[scores])],
                                dtype=np.float64)
        self.gens = TypedList(
            np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(B)
        )
        self._rewards = np.zeros((B, n), dtype=np.float32)
        self.reset()

    # ------------------------------------------------------------ episodes
    def _slots(self, slots: Any) -> np.ndarray:
        if slots is None:
            return np.arange(self.batch_size, dtype=np.int64)
        arr = np.asarray(slots)
        if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError(f"slots must be slot indices (ints), got {arr.dtype} values")
        arr = arr.astype(np.int64).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= self.batch_size):
            raise ValueError(f"slot indices must be 0..{self.batch_size - 1}, got {arr.tolist()!r:.80}")
        return np.unique(arr)  # a slot named twice is reset once

    def reset(self, slots: np.ndarray | None = None) -> None:
        """A new episode in `slots` (all by default), each dealt from the slot's own generator."""
        _reset_kernel(self._slots(slots), self.slot, self.seat, self.hands, self.bank, self.table,
                      self.gens, self.params)

    def load(self, slot: int, state: HuitState) -> None:
        """Put an engine state (stacked deal, restored saved state) into `slot`, its generator copied."""
        (b,) = self._slots([slot])
        if not isinstance(state, HuitState) or state.rules != self.rules:
            raise ValueError("load() takes a HuitState with the batch's rules")
        row, seat = self.slot[b], self.seat[b]
        row[CUR] = state.current
        row[SUIT] = -1 if state.current_suit is None else state.current_suit
        row[ANNOUNCED], row[ACE_PENALTY], row[PHASE] = state.announced, state.ace_penalty, state.phase
        row[TURN], row[BANK_LEN], row[TABLE_LEN] = state.turn, len(state.bank), len(state.table)
        row[HAND_OVER], row[TRUNCATED], row[MATCH_OVER] = state.hand_over, state.truncated, state.match_over
        row[WINNER] = -1 if state.winner is None else state.winner
        row[DEALER], row[HANDS_PLAYED] = state.match.dealer, state.match.hands_played
        seat[SIZES], seat[SCORES], seat[STREAKS] = state.sizes, state.match.scores, state.match.streaks
        seat[HAND_POINTS], seat[SCORE_CHANGES] = state.hand_points, state.score_changes
        self.hands[b] = np.stack([h[DECK_IDS] for h in state.hands])
        self.bank[b, : len(state.bank)] = LOCAL_INDEX[state.bank]
        self.table[b, : len(state.table)] = LOCAL_INDEX[state.table]
        self.gens[b] = rng_from_state(rng_state(state.rng))

    def state_dict(self, slot: int) -> dict[str, Any]:
        """The engine's `HuitState.state_dict()` of a slot."""
        return self.to_state(slot).state_dict()

    def to_state(self, slot: int) -> HuitState:
        """The engine state of a slot (its generator copied): what `load` takes."""
        (b,) = self._slots([slot])
        row, seat = self.slot[b], self.seat[b]
        state = HuitState.__new__(HuitState)
        state.rules, state.n, state.deck = self.rules, self.n, self.rules.deck()
        state.rng = rng_from_state(rng_state(self.gens[b]))
        hands = [DECK_IDS[np.flatnonzero(h)].tolist() for h in self.hands[b]]
        bank = DECK_IDS[self.bank[b, : row[BANK_LEN]]].tolist()
        HandState._set_cards(state, hands, bank[::-1], DECK_IDS[self.table[b, : row[TABLE_LEN]]].tolist())
        state.current = int(row[CUR])
        state.current_suit = None if row[SUIT] < 0 else int(row[SUIT])
        state.announced, state.ace_penalty = bool(row[ANNOUNCED]), bool(row[ACE_PENALTY])
        state.phase = int(row[PHASE])
        state.match = Match(self.n, seat[SCORES].tolist(), int(row[DEALER]), seat[STREAKS].tolist(),
                            int(row[HANDS_PLAYED]))
        state.turn, state.hand_over = int(row[TURN]), bool(row[HAND_OVER])
        state.truncated = bool(row[TRUNCATED])
        state.winner = None if row[WINNER] < 0 else int(row[WINNER])
        state.hand_points, state.score_changes = seat[HAND_POINTS].tolist(), seat[SCORE_CHANGES].tolist()
        state.match_over = bool(row[MATCH_OVER])
        return state

    # ------------------------------------------------------------ queries
    def current_player(self) -> np.ndarray:
        """(B,) int64: the seat to move in each slot."""
        return self.slot[:, CUR].copy()

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        return self.slot[:, HAND_OVER], self.slot[:, TRUNCATED]

    def score_changes(self) -> np.ndarray:
        """(B, n) int64: each seat's score change in the slot's last finished hand (as the engine's)."""
        return self.seat[:, SCORE_CHANGES].copy()

    def legal_mask(self) -> np.ndarray:
        """(B, NUM_ACTIONS) bool: the legal actions of the seat to move (none in finished slots)."""
        out = np.empty((self.batch_size, NUM_ACTIONS), dtype=np.bool_)
        _mask_kernel(self.slot, self.hands, self.table, out)
        return out

    def observe(self, seats: np.ndarray) -> np.ndarray:
        """(B, obs_size) float32: `HuitObserver.observe` of seats[b] in each slot b."""
        who = seat_indices(seats, self.batch_size, self.n)
        out = np.empty((self.batch_size, self.obs_size), dtype=np.float32)
        _observe_kernel(self.slot, self.seat, self.hands, self.bank, self.table, who,
                        self._offsets, self._scales, out)
        return out

    # ------------------------------------------------------------ moves
    def _apply(self, actions: np.ndarray) -> np.ndarray:
        bad = _step_kernel(actions, self.slot, self.seat, self.hands, self.bank, self.table, self.gens,
                           self.params, self.reward_table, self._rewards)
        if bad >= 0:
            self._refuse(int(bad), int(actions[bad]))
        return self._rewards.copy()
