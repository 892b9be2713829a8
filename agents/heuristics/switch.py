"""Heuristic Switch players (RULES.md part A): `SwitchGreedy` and `SwitchExpert`.

Each is written once, as a compiled kernel (`cardlab.envs.switch.heuristics.kernels`)
that plays a batch of observations: `act` is that kernel on a batch of one,
and the game's play-outs call the same kernel on many rows. Both read only
the observation of the seat to move: own hand, top card, current suit,
pending run, direction, hand sizes and the discard pile.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from cardlab.agents.base import checked_batch
from cardlab.agents.heuristics.common import HeuristicAgent
from cardlab.envs.fast import EXPERT, GREEDY, CompiledPolicy
from cardlab.envs.game_spec import Game
from cardlab.envs.switch.heuristics import kernels as K


class SwitchHeuristic(HeuristicAgent):
    """What both Switch heuristics hold for their compiled batch (`K`): field offsets, deck."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.offsets = K.layout_offsets(self.layout)
        self.deck = np.asarray(self.rules.deck(), dtype=np.int64)


class SwitchGreedy(SwitchHeuristic):
    """A sensible rule-based Switch player.

    - Facing a draw run (A6) it answers with a 2 if it can (keeping Jokers),
      then with a Joker, and draws only when it holds neither.
    - Otherwise it plays a plain card if it has one, highest A11 value first
      (so 2s and Aces go early), preferring the card whose suit it holds most of
      afterwards; Jacks and Jokers are kept until nothing else can be played.
    - A Jack (or a Jack starter) names the suit it holds most; a drawn playable
      card is always played.
    """

    name = "greedy"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in one compiled call (`heuristics.kernels.greedy_actions`), same draws."""
        obs, mask = checked_batch(self.game, observations, masks)
        return K.greedy_actions(obs, mask, self.offsets, self.deck, self.game.num_players, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The greedy kernel the game's fast paths call (`cardlab.envs.switch.fast`): (offsets, deck)."""
        return CompiledPolicy(GREEDY, self.game.rules, self, lambda: (self.offsets, self.deck)) \
            if type(self) is SwitchGreedy else None


@dataclasses.dataclass(frozen=True)
class SwitchWeights:
    """The expert's weights, in log-odds of winning the hand.

    The hand values come from a logistic fit of hand outcomes on self-play
    positions (rounded). An attack is worth the threat (`kernels._threat`) it
    takes off the player who moves next; those weights were set by reasoning
    and scenario checks, as benchmarks cannot tell them apart.
    """

    card: float = 0.36  # each card in my hand
    jack: float = 0.87  # the first Jack kept: I can always play (except on a run)
    more_jacks: float = 0.47  # each further Jack
    joker: float = 0.82  # each Joker kept: it plays on anything, runs included
    two: float = 0.48  # the first 2 kept: I can answer a run
    more_twos: float = 0.47  # each further 2
    skip: float = 1.0  # the next player loses a turn (times their threat)
    block: float = 1.0  # the next player cannot play and draws (times the threat this takes off them)
    run: float = 2.0  # the next player draws the run (times the threat this takes off them)
    tempo: float = 0.36  # a turn passed without playing, by drawing while I could play (voluntary_draw)
    win: float = 100.0  # I play my last card


@functools.lru_cache(maxsize=16)
def weight_array(weights: SwitchWeights) -> np.ndarray:
    """The weights as the compiled expert takes them (`K.WEIGHT_NAMES` order), made once each."""
    return np.array([getattr(weights, name) for name in K.WEIGHT_NAMES], dtype=np.float64)


class SwitchExpert(SwitchHeuristic):
    """The strongest rule-based Switch player here.

    Switch leaves little choice (a player who can play must, A8), so the
    expert plays well where the choices are, and weighs every legal action by
    the log-odds of winning that its result gives (`SwitchWeights`):

    - *Cards that keep me playing are assets.* Jacks (always playable), Jokers
      (playable even on a run) and 2s (answer a run) are worth about 1.3 to 2.4
      ordinary cards, so plain cards go first, then 2s, then Jokers and Jacks;
      a drawn Jack, Joker or 2 is kept rather than played at once (A8 pass).
      Unlike `greedy`, it does not start draw runs with its 2s for their points:
      they are its defence when a run comes round.
    - *Runs* (A6): a run is always answered when possible (drawing costs far
      more than the card spent), with a 2 before a Joker.
    - *Suits*: it leaves (or names with a Jack) the suit it holds most, so that
      it can follow if the suit comes back.
    - *Attacks*: against the player who moves next, weighted by how close they
      are to going out (1 / cards^2): an 8 to skip them, a King to turn play
      away from them, a run they probably cannot answer, or a suit they
      probably lack. "Probably" is reckoned from the unknown cards: the decks
      less my hand less the discard pile (`policy_kernels.p_lacks`). Who moves next is
      worked out after reversals, skips and seats already out (A7, A9).
    - Ties go to the card worth most points (A11), for match play.
    """

    name = "expert"
    weights = SwitchWeights()

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in one compiled call (`heuristics.kernels.expert_actions`), same draws."""
        obs, mask = checked_batch(self.game, observations, masks)
        return K.expert_actions(obs, mask, self.offsets, self.deck, self.game.num_players,
                                bool(self.rules.match_rank), weight_array(self.weights), self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The expert kernel the game's fast paths call (`cardlab.envs.switch.fast`): (offsets, deck,
        weights), the weights read at each call as `act_batch` reads them."""
        return CompiledPolicy(EXPERT, self.game.rules, self,
                              lambda: (self.offsets, self.deck, weight_array(self.weights))) \
            if type(self) is SwitchExpert else None
