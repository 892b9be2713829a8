"""What every game's batched kernels share: the end of a hand and of a match, win rewards, memory, generators.

Both games' engines (`cardlab.envs.huit.batched`, `cardlab.envs.switch.batched`)
follow the convention `cardlab.envs.batched_engine` documents; these are the parts of
it that are the same rule in both games, written once and compiled into each
game's kernels (numba inlines the calls):

- a hand's end: the losers' points (`score_hand`), the totals and A12/B13's
  "a total reached the target" (`add_totals`);
- the episode's end: the zero-sum win rewards of the hand's winner, or at the
  end of a match of the seats with the lowest total (`end_of_hand`), read from
  `win_table`, which `cardlab.envs.match.win_rewards` fills (one definition of
  the rewards for the rules engines, the AEC env and the batched engines);
- the memory of the hand (`drew_on`, the suits each seat drew on of its own
  accord since it last played one): `note_drew_on`, `clear_drew_on`,
  `observe_drew_on`;
- the slots' generators as the kernels take them (`slot_generators`, a numba
  typed list) and a state's generator put into a slot (`load_generator`).

The functions take rows of the engines' arrays (`seats[b, SCORES]`, say), not
the arrays, so they hold for any game's column and row layout. Numba's disk
cache checks only the file of the function it loads: after an edit here,
touch `envs/huit/kernels.py` and `envs/switch/kernels.py` (or clear their
`__pycache__`) so their kernels compile again with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numba.typed import List as TypedList

from cardlab.envs.match import win_rewards
from cardlab.envs.rng import copied_into

WINNER_SHARE, LOSER_SHARE = range(2)


def win_table(num_players: int) -> np.ndarray:
    """(n + 1, 2) float64: row k is (a winner's, a loser's) win reward when k of the n seats share the win.

    Row 0 and row n are zeros, as `win_rewards` gives when nobody, or everybody, wins.
    """
    table = np.zeros((num_players + 1, 2), dtype=np.float64)
    for k in range(1, num_players + 1):
        shares = win_rewards(num_players, list(range(k)))
        table[k] = (shares[0], shares[-1])
    return table


@njit(cache=True)
def score_hand(hands: np.ndarray, card_points: np.ndarray, winner: int, hand_points: np.ndarray,
               score_changes: np.ndarray) -> None:
    """A11/B11: each seat but the winner scores the points of the cards it holds; `hands` (n, cards) holds
    copies of each card, `card_points` (cards,) their points; both point rows of the hand are set."""
    for s in range(hands.shape[0]):
        points = 0
        if s != winner:
            for c in range(hands.shape[1]):
                points += hands[s, c] * card_points[c]
        hand_points[s] = points
        score_changes[s] = points


@njit(cache=True)
def add_totals(scores: np.ndarray, score_changes: np.ndarray, target: int) -> bool:
    """`Match.record`: the score changes added to the totals; whether a total reached `target` (A12, B13)."""
    top = scores[0] + score_changes[0]
    for s in range(scores.shape[0]):
        scores[s] += score_changes[s]
        top = max(top, scores[s])
    return top >= target


@njit(cache=True)
def end_of_hand(match_episode: int, match_over: int, winner: int, scores: np.ndarray, table: np.ndarray,
                rewards: np.ndarray) -> bool:
    """The AEC env's end of a won hand, into the slot's (n,) `rewards` row; True when the match goes on.

    With `match_episode` 0 the hand is the episode: its winner's win rewards.
    Else, when the match is over, the lowest totals share the win (A12, B13);
    when it is not, no reward, and the caller deals the next hand (A3, B3).
    `table` is `win_table(n)`.
    """
    n = rewards.shape[0]
    if not match_episode:
        for s in range(n):
            rewards[s] = table[1, WINNER_SHARE if s == winner else LOSER_SHARE]
        return False
    if not match_over:
        return True
    low = scores[0]
    for s in range(n):
        low = min(low, scores[s])
    count = 0
    for s in range(n):
        count += scores[s] == low
    for s in range(n):
        rewards[s] = table[count, WINNER_SHARE if scores[s] == low else LOSER_SHARE]
    return False


@njit(cache=True)
def note_drew_on(drew_on: np.ndarray, seat: int, suit: int) -> None:
    """A draw of the seat's own accord while `suit` is to be followed (-1: none): it lacks that suit."""
    if suit >= 0:
        drew_on[seat] |= 1 << suit


@njit(cache=True)
def clear_drew_on(drew_on: np.ndarray, seat: int, suits: int) -> None:
    """The seat played cards of the suits in the mask `suits`: it is no longer known to lack them."""
    drew_on[seat] &= ~suits


@njit(cache=True)
def observe_drew_on(row: np.ndarray, start: int, drew_on: np.ndarray, seat: int) -> None:
    """The observation's `drew_on` field, from `row[start]`: 4 flags per opponent, the next seat first."""
    n = drew_on.shape[0]
    for k in range(1, n):
        mask = drew_on[(seat + k) % n]
        for suit in range(4):
            row[start + 4 * (k - 1) + suit] = (mask >> suit) & 1


def slot_generators(generators: list[np.random.Generator]) -> Any:
    """The slots' generators as a numba typed list: the kernels deal and shuffle with them (C2)."""
    return TypedList(generators)


def load_generator(generators: Any, slot: int, rng: np.random.Generator) -> None:
    """Slot `slot`'s generator given `rng`'s state (`copied_into`: the held one reused when it can be)."""
    held = generators[slot]
    copied = copied_into(held, rng)
    if copied is not held:
        generators[slot] = copied
