"""Heuristic Huit américain players (RULES.md part B): `HuitGreedy` and `HuitExpert`.

Each is written once, as a compiled kernel (`cardlab.envs.huit.heuristics.kernels`)
that plays a batch of observations: `act` is that kernel on a batch of one,
and the game's batched paths (play-outs, the vector env, replay) call the same
kernel on many rows. This module holds what the kernels are given: the
expert's weights and the rule tables of the table's rules.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from cardlab.agents.base import checked_batch
from cardlab.agents.heuristics.common import HeuristicAgent
from cardlab.envs import cards as C
from cardlab.envs.fast import EXPERT, GREEDY, CompiledPolicy
from cardlab.envs.game_spec import Game
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.heuristics.arrays import TABLES_ARRAYS, expert_arrays, observation_offsets
from cardlab.envs.huit.heuristics.tables import RANKS_HELD

AGAIN = K.AGAIN  # extra turns (Queens, 2 players) the expert looks ahead
Voids = np.ndarray
"""(2, `K.ALL_SEATS`) int64, seats as offsets from the mover: the cards each seat is known not to hold (a
bitmask of card ids, 0: nothing known), then how many cards it drew since it showed that."""


class HuitGreedy(HeuristicAgent):
    """A sensible rule-based Huit américain player.

    - It lays a group whenever it can, as many cards as possible, then the
      highest B11 value; 8s only when nothing else goes (they are the wild cards).
    - Facing a fresh Ace (B7) it answers with Aces if it can, else with 8s.
    - The card left on top (or the suit 8s announce) is the suit it holds most
      of afterwards.
    - It draws only when it cannot lay anything, then lays if it can, else passes.
    """

    name = "greedy"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in order, in one compiled call (`heuristics.kernels.greedy_batch`)."""
        obs, legal = checked_batch(self.game, observations, masks)
        return K.greedy_batch(obs, legal, self.layout.slices["hand"].start, TABLES_ARRAYS, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The greedy kernel the game's fast paths call (`cardlab.envs.huit.fast`)."""
        return CompiledPolicy(GREEDY, self.game.rules, self) if type(self) is HuitGreedy else None


@dataclasses.dataclass(frozen=True)
class HuitWeights:
    """The expert's evaluation of the table when my turn ends: log-odds that I win the hand.

    A linear score of what I can see. The weights come from logistic fits of
    hand outcomes on greedy self-play positions (2 and 3-6 players), rounded,
    with `cards` and `eight` lowered where benchmarks showed the fit mistook
    correlation for cause.
    """

    cards: float  # each card I keep (more cards of the ranks I hold = more suits covered)
    groups: float  # each rank I keep: one more turn to go out
    eight: float  # I hold an 8: I can never be stuck
    ace: float  # I hold an Ace: I can answer a lock
    can_play: float  # chance that I can lay on a random unknown card
    can_now: float  # I can lay on the card I leave (if it is still on top at my turn)
    next_threat: float  # 1 / cards of the player who moves next
    other_threat: float  # the same summed over the other opponents
    skipped: float  # the player after me is skipped (Queens)
    stuck: float  # chance that the player who moves next cannot lay
    stuck_threat: float  # the same, divided by their cards: blocking matters most near the end
    stuck_ace: float  # ... when that means drawing the penalty (a fresh Ace, B7)
    win: float = 12.0  # I go out


TWO_PLAYERS = HuitWeights(
    cards=0.0, groups=-1.0, eight=0.4, ace=0.0, can_play=0.25, can_now=0.2,
    next_threat=-4.0, other_threat=0.0, skipped=0.0, stuck=0.5, stuck_threat=3.0, stuck_ace=1.0,
)
MORE_PLAYERS = HuitWeights(
    cards=0.0, groups=-1.0, eight=0.4, ace=0.3, can_play=1.0, can_now=0.0,
    next_threat=-3.2, other_threat=-1.0, skipped=0.3, stuck=0.2, stuck_threat=2.4, stuck_ace=0.1,
)


@functools.cache
def known_terms(weights: HuitWeights) -> tuple[tuple[float, ...], ...]:
    """The terms of the value of a hand that hold whatever the unknown cards, tabulated.

    Indexed by the ranks of the hand's shape (`tables.shape(hand) & RANKS_HELD`),
    then by its number of cards: per card, per rank (turns to go), holding an
    8, holding an Ace, added in that order. The kernel adds the terms that
    depend on the unknown cards and on how the turn ends (`kernels.static`).
    """
    w = weights
    eight, ace = 1 << R.RANKS.index(C.EIGHT), 1 << R.RANKS.index(C.ACE)
    return tuple(
        tuple(
            w.cards * cards
            + w.groups * ranks.bit_count()
            + w.eight * bool(ranks & eight)
            + w.ace * bool(ranks & ace)
            for cards in range(len(R.DECK_CARDS) + 1)
        )
        for ranks in range(RANKS_HELD + 1)
    )


class HuitExpert(HeuristicAgent):
    """The strongest rule-based Huit américain player here.

    It weighs every legal action by the log-odds of winning the hand once its
    turn ends (`HuitWeights`: a linear score of what it can see, fitted on
    self-play positions, then corrected where the fit confused cause and
    correlation, e.g. for holding many cards or hoarding 8s). What it tracks,
    as an attentive player would:

    - *Turns, not cards.* A hand takes one turn per rank held (all 8s go
      together), so it lays whole ranks and counts extra cards of a rank as
      free; it prefers lays that keep cards of many suits and ranks, so that it
      can follow whatever comes, and the card on top that it can follow itself.
    - *Unknown cards*: the 32 less its hand less the table. From them and an
      opponent's hand size it reckons the chance that the next player cannot
      lay on what it leaves (`policy_kernels.p_lacks`): no card of the suit or rank and
      no 8, or on a fresh Ace no Ace and no 8 (B7). It picks the top card of a
      group, or the suit its 8s announce, with that in view.
    - *Who moves next* after Queens (B8): in 4-player play a Queen skips the
      next player (worth more the closer they are to going out); with 2
      players each Queen is another turn, and it looks up to 3 such turns ahead
      for the best follow-up (a Queen, then the rest of its hand).
    - *Aces* lock the table (B7): it plays them when the next player probably
      cannot answer, and values keeping one to answer locks.
    - *8s* are kept while something else can be laid (an 8 is a sure play,
      and the last card that always goes), but not hoarded: benchmarks show
      that drawing rather than laying a needed 8 loses.
    - *Drawing on purpose* (B9): the value of drawing is the expectation, over
      the unknown cards, of the best of laying or passing afterwards; it draws
      when that beats every lay it has.
    - *Going out* wins at once (B11), and is always taken.
    """

    name = "expert"

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.weights = TWO_PLAYERS if self.rules.num_players == 2 else MORE_PLAYERS
        self.arrays = self.rule_arrays()
        self.offsets = observation_offsets(self.layout)
        ints, floats = self.arrays
        self.work = ints.copy(), floats.copy()  # `act`'s own working copy

    def rule_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's arrays (`arrays.expert_arrays`) for these weights and what it reads of the rules:
        who moves after Queens (B8), the cards a fresh Ace makes one draw (B7)."""
        return expert_arrays(self.weights, known_terms(self.weights), self.rules.num_players,
                             self.rules.queen_skips_each, R.ACE_DRAW)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self.act_reading(observation, None)

    def act_reading(self, observation: dict[str, np.ndarray], voids: Voids | None) -> int:
        """`act`, told what each seat is known not to hold (`Voids`; None: nothing), as a player who
        reads the table more closely than the observation tells would be."""
        obs, legal = checked_batch(self.game, observation["observation"][None],
                                   observation["action_mask"][None])
        known = K.no_voids() if voids is None else np.ascontiguousarray(voids, dtype=np.int64)[None]
        return int(K.expert_reading(obs, legal, self.offsets, self.rules.num_players, AGAIN, *self.work,
                                    known, TABLES_ARRAYS, self.rng)[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in order, in one compiled call (`heuristics.kernels.expert_batch`)."""
        obs, legal = checked_batch(self.game, observations, masks)
        return K.expert_batch(obs, legal, self.offsets, self.rules.num_players, AGAIN, *self.arrays,
                              TABLES_ARRAYS, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The expert kernel the game's fast paths call (`cardlab.envs.huit.fast`), its parameters
        (`kernel_params`) those `act_batch` passes."""
        return CompiledPolicy(EXPERT, self.game.rules, self, self.kernel_params) if type(self) is HuitExpert \
            else None

    def kernel_params(self) -> tuple[np.ndarray, ...]:
        """(observation offsets, int table, float table): what the expert kernel reads of this agent."""
        return (self.offsets, *self.arrays)

    def values_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, num_actions) float64: the value of each legal action of each row, NaN elsewhere.

        What `act_batch` ranks (before `best_index` rounds it), for analysis.
        """
        obs, legal = checked_batch(self.game, observations, masks)
        return K.expert_values(obs, legal, self.offsets, self.rules.num_players, AGAIN, *self.arrays,
                               TABLES_ARRAYS)

    def values(self, observation: dict[str, np.ndarray]) -> dict[int, float]:
        """Legal action -> its value, as `act` reckons it (unrounded)."""
        row = self.values_batch(observation["observation"][None], observation["action_mask"][None])[0]
        return {int(a): float(row[a]) for a in np.flatnonzero(~np.isnan(row))}
