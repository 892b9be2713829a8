"""A match across hands (totals, dealer, streaks) and the rewards paid from it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

EPISODES = ("hand", "match")
"""what an episode of an env or a batched engine is: one hand, or a whole match"""


@dataclasses.dataclass
class Match:
    """Cumulative totals, dealer rotation and win streaks over the hands of a match."""

    num_players: int
    scores: list[int]
    dealer: int
    streaks: list[int]
    hands_played: int = 0

    @classmethod
    def new(cls, num_players: int, dealer: int | None = None) -> Match:
        return cls(
            num_players,
            [0] * num_players,
            num_players - 1 if dealer is None else dealer,
            [0] * num_players,
        )

    def record(self, winner: int | None, points: Sequence[int], streak: tuple[int, int] | None) -> list[int]:
        """Add a hand's points (and, with `streak=(length, bonus)`, B12's bonus); returns score changes."""
        delta = list(points)
        self.hands_played += 1
        if streak is not None and winner is not None:
            length, bonus = streak
            for seat in range(self.num_players):
                self.streaks[seat] = self.streaks[seat] + 1 if seat == winner else 0
            if self.streaks[winner] >= length:
                delta[winner] -= bonus
                self.streaks[winner] = 0
        elif streak is not None:
            self.streaks = [0] * self.num_players
        for seat in range(self.num_players):
            self.scores[seat] += delta[seat]
        return delta

    def is_over(self, target: int) -> bool:
        return max(self.scores) >= target

    def winners(self) -> list[int]:
        """Seats with the lowest total (ties share the win)."""
        low = min(self.scores)
        return [seat for seat, s in enumerate(self.scores) if s == low]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def win_rewards(num_players: int, winners: Sequence[int]) -> list[float]:
    """Zero-sum win rewards: winners share +1, the others share -1."""
    if not winners or len(winners) == num_players:
        return [0.0] * num_players
    up, down = 1.0 / len(winners), -1.0 / (num_players - len(winners))
    return [up if seat in winners else down for seat in range(num_players)]


POINTS_PER_REWARD = 100.0
"""``reward="points"``: a seat's reward at the end of a hand is minus its score change over this"""


def points_reward(score_change: Any) -> Any:
    """The ``reward="points"`` reward of a score change (a number, or an array of them)."""
    return -score_change / POINTS_PER_REWARD
