"""``reward: match``: each seat is paid the change of its match equity across every hand of a match.

Why: the match's win reward comes once, after tens of hands, so a hand's
play gets its credit only through a long chain of discounted values. The
table's equity model (`cardlab.agents.match_equity.MatchEquity`: the
shipped one, which ``search:value=match`` reads, or the fitted file a
config's ``equity`` names) says what each seat's chance of
winning the match is from the totals, the streaks (B12) and the dealer; the
reward at a hand's end is the seat's equity after the hand less its equity
before. Over a match the rewards telescope to (the match's result - the
equity at its start): the result is 1 for a winner, shared by tied winners
(A12/B13), 0 for the others, and a match C1 cuts is a draw of 1/n each, as
the win reward pays a cut match 0. That is the win reward (an affine image of
the engines' zero-sum one) plus potential-based shaping with the equity as
the potential (Ng, Harada and Russell 1999: F = Phi(s') - Phi(s), Phi 0 at the
end), so the best policy is the match's, while a hand's points are paid
at once.

`MatchReward` keeps the equity of every game of a batched engine's match
episodes and, after each step, computes the equities of the games whose
hand just ended (the engine's `match_state` hands count moved) in one
vectorised call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardlab.agents.match_equity import MatchEquity, equity_at, shipped_equity
from cardlab.envs.declared import check_that
from cardlab.envs.game_spec import Game

MATCH = "match"
"""the reward name: each hand's change of the seat's match equity (match episodes, trainer lean)"""


def check_reward_episode(reward: str, episode: str) -> None:
    """Refuse a reward that does not go with the episode, in one line: 'points' pays each hand's points, so
    not a match's (whose hands a won match outweighs), and 'match' pays equity changes across a match's
    hands, so only in matches. The one owner of this rule, for a training config and a self-play table."""
    check_that(episode == "hand" or reward != "points", "reward", reward, "not accepted with episode: match",
               "'win' (the match's win reward) or 'match' (its equity's change at each hand's end); 'points' "
               "pays each hand's points, as hand episodes do")
    check_that(episode == MATCH or reward != MATCH, "reward", reward, f"not accepted with episode: {episode}",
               "'win' or 'points', or episode: match ('match' pays the change of the match equity across the "
               "hands of a match)")


def check_reward_equity(reward: str, equity: str) -> None:
    """Refuse an equity file named beside a reward that pays no equity, in one line (it would do nothing); the
    one owner of this rule, for a training config and a self-play table."""
    check_that(reward == MATCH or not equity, "equity", equity, f"not accepted with reward: {reward}",
               "'' (none), or reward: match (whose equity changes it pays)")


def table_equity(game: Game, path: str = "") -> MatchEquity:
    """The equity at `path` (a training config's ``equity``: its loader's one-line refusal where it does not
    fit the table), else the shipped equity of `game`'s table, or a one-line `ValueError` naming the tables
    that have one."""
    if path:
        return equity_at(path, game)
    try:
        return shipped_equity(game)
    except ValueError as err:
        raise ValueError(f"reward: match needs the table's match equity: {err}") from None


class MatchReward:
    """The ``reward: match`` rewards of a batched engine's match episodes (module doc).

    Made after the engine's matches are dealt; `rewards` is called after each
    `step` (before the ended games are dealt again) and `restart` after they are.
    """

    def __init__(self, game: Game, engine: Any, equity: str = "") -> None:
        if engine.episode != "match":
            raise ValueError(f"reward='match' pays equity changes across a match's hands: the engine must "
                             f"play episode='match', got {engine.episode!r}")
        self.model = table_equity(game, equity)
        """the equity file `equity` names, else the table's shipped one"""
        self.engine = engine
        n = game.num_players
        self.start = self.model.equity(np.zeros((1, n), dtype=np.int64), np.array([n - 1]))[0]
        """(n,) the equity of a new match: totals 0, seat n-1 dealing (A3, B3)"""
        totals, dealer, streaks, self.hands = engine.match_state()
        self.before = self.model.equity(totals, dealer, streaks)
        """(B, n) each game's equity since its last hand ended"""

    def rewards(self) -> np.ndarray:
        """(B, n) float32: each seat's equity change in the games whose hand ended in the last step."""
        totals, dealer, streaks, hands = self.engine.match_state()
        out = np.zeros(totals.shape, dtype=np.float64)
        truncated = np.asarray(self.engine.truncated)
        rows = np.flatnonzero((hands != self.hands) | truncated)
        if rows.size:
            after = self.model.equity(totals[rows], dealer[rows], streaks[rows])
            cut = truncated[rows]
            after[cut] = 1.0 / totals.shape[1]  # C1 ended the match: a draw, as the win reward pays it
            out[rows] = after - self.before[rows]
            self.before[rows] = after
        self.hands = hands
        return out.astype(np.float32)

    def restart(self, games: np.ndarray) -> None:
        """These games were dealt new matches (after `rewards` saw their ends): their equity is the start."""
        self.before[games] = self.start
        self.hands[games] = 0
