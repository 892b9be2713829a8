"""Heuristic Switch players (RULES.md part A): `SwitchGreedy` and `SwitchExpert`.

Both read only the observation of the seat to move (decoded by `decode`): own
hand, top card, current suit, pending run, direction, hand sizes and the
discard pile. Seats are counted from the observer: 0 is me, 1 the seat after
me in seat order, and so on.

Both also play a whole batch of observations in one compiled call
(`act_batch`, kernels in `cardlab.envs.switch.heuristics.kernels`), move for move what `act` plays
with the same generator; the differential test keeps the two one.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from cardlab.agents.base import checked_batch
from cardlab.agents.heuristics.common import HeuristicAgent, Score, counts, threat
from cardlab.envs import cards as C
from cardlab.envs.fast import EXPERT, GREEDY, CompiledPolicy
from cardlab.envs.policy_kernels import p_lacks
from cardlab.envs.spec import Game
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.heuristics import kernels as K

IS_WILD = np.array(R.WILD)  # Jacks and Jokers go on anything (A5)
IS_RUN_CARD = np.array(R.RUN_CARD)  # 2s and Jokers start or answer a draw run (A6)
SUIT_OF = np.array([C.suit_of(c) for c in range(C.NUM_KINDS)])
RANK_OF = np.array([C.rank_of(c) for c in range(C.NUM_KINDS)])
TWOS = [C.make_card(C.TWO, s) for s in range(C.NUM_SUITS)]
JACKS = [C.make_card(C.JACK, s) for s in range(C.NUM_SUITS)]
RUN_VALUE = K.RUN_VALUE  # cards a 2 or a Joker adds to a draw run (A6)
# PLAIN_SUITS[card, suit] = 1 for the cards of `suit` that are not wild.
PLAIN_SUITS = np.array([[int(SUIT_OF[c] == s and not IS_WILD[c]) for s in range(C.NUM_SUITS)]
                        for c in range(C.NUM_KINDS)])


@dataclasses.dataclass
class SwitchView:
    """The observation of the seat to move, decoded. Seats are offsets from me (0)."""

    hand: np.ndarray  # copies held per card kind
    top: int
    suit: int | None  # None while the suit is free (a Joker starter, A4)
    pending: int  # cards the pending draw run makes the next drawer take (A6)
    direction: int  # +1: play goes to seat + 1; -1: reversed (A7)
    after_draw: bool  # I drew a playable card: play it or pass (A8)
    declaring: bool  # I name the suit after a Jack starter (A4)
    sizes: list[int]  # cards held, me first, then seat order
    unknown: np.ndarray  # copies per kind neither in my hand nor in the discard pile
    match_rank: bool

    @property
    def n(self) -> int:
        return len(self.sizes)

    def next_seat(self, seat: int, steps: int = 1, direction: int | None = None) -> int:
        """The seat `steps` turns after `seat`, passing over seats that are out (A9)."""
        d = self.direction if direction is None else direction
        for _ in range(steps):
            seat = (seat + d) % self.n
            while self.sizes[seat] == 0 and seat != 0:
                seat = (seat + d) % self.n
        return seat


def decode(agent: HeuristicAgent, observation: dict[str, np.ndarray]) -> SwitchView:
    """Read the observation vector through the env's layout."""
    parts = agent.layout.split(observation["observation"])
    deck = np.asarray(agent.rules.deck(), dtype=np.int64)
    hand = counts(parts["hand"], deck)
    played = counts(parts["played"], deck)
    return SwitchView(
        hand=hand,
        top=int(np.argmax(parts["top"])),
        suit=int(np.argmax(parts["suit"])) if parts["suit"].any() else None,
        pending=round(float(parts["pending"][0]) * 10),
        direction=1 if parts["direction"][0] > 0.5 else -1,
        after_draw=bool(parts["phase"][0] > 0.5),
        declaring=bool(parts["phase"][1] > 0.5),
        sizes=[int(hand.sum()), *np.rint(parts["opponents"] * 10).astype(int).tolist()],
        unknown=np.maximum(deck - hand - played, 0),
        match_rank=agent.rules.match_rank,
    )


def suit_counts(hand: np.ndarray) -> list[int]:
    """Non-wild cards held per suit (Jacks and Jokers follow any suit anyway)."""
    return (hand @ PLAIN_SUITS).tolist()


def suit_after(view: SwitchView, action: int) -> int | None:
    """The current suit once `action` is played (a Jack names it; a Joker leaves it, A5)."""
    card = R.ACTION_CARD[action]
    if R.ACTION_DECLARE[action] != C.NO_SUIT:
        return R.ACTION_DECLARE[action]
    return view.suit if card == C.JOKER else C.suit_of(card)


def without(hand: np.ndarray, card: int) -> np.ndarray:
    rest = hand.copy()
    rest[card] -= 1
    return rest


def held_after(view: SwitchView, action: int) -> float:
    """Cards of the suit `action` leaves current that I still hold afterwards."""
    suit = suit_after(view, action)
    return 0.0 if suit is None else float(suit_counts(without(view.hand, R.ACTION_CARD[action]))[suit])


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

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = decode(self, observation)
        return self.best(self.legal(observation), lambda a: self.score(view, a))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for every row in one compiled call (`heuristics.kernels.greedy_actions`), same draws."""
        obs, mask = checked_batch(self.game, observations, masks)
        return K.greedy_actions(obs, mask, self.offsets, self.deck, self.game.num_players, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The greedy kernel the game's fast paths call (`cardlab.envs.switch.fast`): (offsets, deck)."""
        return CompiledPolicy(GREEDY, self.game.rules, self, lambda: (self.offsets, self.deck)) \
            if type(self) is SwitchGreedy else None

    def score(self, view: SwitchView, action: int) -> Score:
        if action == R.DRAW:
            return (-2.0,)
        if action == R.PASS:
            return (-1.0,)
        if action >= R.DECLARE:
            return (float(suit_counts(view.hand)[R.ACTION_DECLARE[action]]),)
        card = R.ACTION_CARD[action]
        if view.pending:
            return (float(card != C.JOKER), held_after(view, action))
        return (float(not IS_WILD[card]), float(R.POINTS[card]), held_after(view, action))


@dataclasses.dataclass(frozen=True)
class SwitchWeights:
    """The expert's weights, in log-odds of winning the hand.

    The hand values come from a logistic fit of hand outcomes on self-play
    positions (rounded). An attack is worth the threat (`common.threat`) it
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

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = decode(self, observation)
        legal = self.legal(observation)
        if view.declaring:
            return self.best(legal, lambda a: self.declare_score(view, R.ACTION_DECLARE[a]))
        could_play = any(a < R.DRAW for a in legal)
        return self.best(legal, lambda a: self.score(view, a, could_play))

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

    def hand_value(self, hand: np.ndarray) -> float:
        """What my cards are worth: minus one card each, plus the cards that keep me playing."""
        w = self.weights
        jacks = int(hand[JACKS].sum())
        twos = int(hand[TWOS].sum())
        value = -w.card * int(hand.sum()) + w.joker * int(hand[C.JOKER])
        value += w.jack * min(jacks, 1) + w.more_jacks * max(jacks - 1, 0)
        return value + w.two * min(twos, 1) + w.more_twos * max(twos - 1, 0)

    def declare_score(self, view: SwitchView, suit: int) -> Score:
        """The suit I hold most; then the one the next player is least likely to hold."""
        stuck = self.p_stuck(view, view.next_seat(0), suit, C.make_card(C.JACK, suit))
        return (float(suit_counts(view.hand)[suit]), stuck)

    def p_stuck(self, view: SwitchView, seat: int, suit: int | None, top: int) -> float:
        """Chance that `seat` cannot play on `top` with `suit` current (no run pending)."""
        if suit is None:
            return 0.0
        can = (suit == SUIT_OF) | IS_WILD
        if view.match_rank and top != C.JOKER:
            can |= C.rank_of(top) == RANK_OF
        return p_lacks(int(view.unknown.sum()), int(view.unknown[can].sum()), view.sizes[seat])

    def score(self, view: SwitchView, action: int, could_play: bool) -> Score:
        """(log-odds after `action`, cards held of the suit it leaves, points it sheds)."""
        w = self.weights
        if action == R.DRAW:
            lost_turn = w.tempo if could_play and not view.pending else 0.0
            return (self.hand_value(view.hand) - w.card * (view.pending or 1) - lost_turn, 0.0, 0.0)
        if action == R.PASS:
            return (self.hand_value(view.hand), 0.0, 0.0)
        card = R.ACTION_CARD[action]
        hand = without(view.hand, card)
        if not hand.any():
            return (w.win, 0.0, 0.0)
        value = self.hand_value(hand) + self.attack(view, card, suit_after(view, action))
        return (value, held_after(view, action), float(R.POINTS[card]))

    def attack(self, view: SwitchView, card: int, suit: int | None) -> float:
        """What playing `card` does to the player who moves next, weighted by their threat."""
        w = self.weights
        sizes = list(view.sizes)
        sizes[0] -= 1
        rank = C.rank_of(card)
        direction = -view.direction if rank == C.KING and view.n > 2 else view.direction
        after = dataclasses.replace(view, sizes=sizes, direction=direction)
        nxt = after.next_seat(0)
        if RUN_VALUE[card]:
            pool = int(view.unknown.sum())
            p_draws = p_lacks(pool, int(view.unknown[IS_RUN_CARD].sum()), sizes[nxt])
            run = view.pending + int(RUN_VALUE[card])
            return w.run * p_draws * (threat(sizes[nxt]) - threat(sizes[nxt] + run))
        value = 0.0
        if rank == C.EIGHT:
            value += w.skip * threat(sizes[nxt])
            nxt = after.next_seat(nxt)
            if nxt == 0:  # two players: my turn again
                return value
        elif direction != view.direction:
            value += w.skip * (threat(sizes[view.next_seat(0)]) - threat(sizes[nxt]))
        stuck = self.p_stuck(view, nxt, suit, card)
        return value + w.block * stuck * (threat(sizes[nxt]) - threat(sizes[nxt] + 1))
