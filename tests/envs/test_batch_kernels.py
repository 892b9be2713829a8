"""The design both batched engines share (`cardlab.envs.batched_kernels`, the convention of `batched_engine`).

Why: the end of a match and the win rewards are compiled once for both
games' kernels, so they are checked here against the rules' own definitions
(`Match.winners`, `win_rewards`), whatever game calls them; and Switch's
deals and refills, shuffled inside the kernels, must still replay from a seed
(C2) and fit the int8 card arrays for the largest deck the options allow.
"""

from __future__ import annotations

import numpy as np
import pytest

from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.batched_kernels import end_of_hand, win_table
from cardlab.envs.match import Match, win_rewards
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.kernels import DISCARD_LEN, HANDS_PLAYED
from cardlab.envs.switch.rules import SwitchRules
from tests.envs.test_switch_batched import run_differential


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_A12_B13_a_finished_match_pays_the_lowest_totals_as_the_aec_env(n: int) -> None:
    """A12/B13: at a match's end the seats of `Match.winners()` (the lowest totals, ties sharing) get
    `win_rewards`; a hand episode pays its winner; a match that goes on pays nothing and asks for a deal."""
    rng = np.random.default_rng(n)
    table = win_table(n)
    ties = 0
    for _ in range(300):
        scores = rng.integers(0, 4, n).astype(np.int64)  # few values: ties, and all-tied matches
        winners = Match(n, scores.tolist(), 0, [0] * n, 1).winners()
        ties += len(winners) > 1
        rewards = np.zeros(n, dtype=np.float32)
        assert not end_of_hand(1, 1, -1, scores, table, rewards)
        assert rewards.tolist() == np.array(win_rewards(n, winners), dtype=np.float32).tolist(), scores
        rewards[:] = 0.0
        assert end_of_hand(1, 0, -1, scores, table, rewards)  # the match goes on
        assert not rewards.any()
    assert ties > 0
    for winner in range(n):
        rewards = np.zeros(n, dtype=np.float32)
        assert not end_of_hand(0, 1, winner, np.zeros(n, dtype=np.int64), table, rewards)
        assert rewards.tolist() == np.array(win_rewards(n, [winner]), dtype=np.float32).tolist()


def test_C2_A10_switch_deals_and_refills_in_the_kernels_replay_from_the_seed() -> None:
    """C2: two batches with one seed and the same actions deal and refill (A10) the same cards, hand after
    hand of a match; the run goes through refills (the discard pile shrinks inside a hand)."""
    rules = SwitchRules(num_decks=1, num_players=4, target_score=150)
    one, two = SwitchBatch(rules, 6, seed=9, episode="match"), SwitchBatch(rules, 6, seed=9, episode="match")
    rng_one, rng_two = np.random.default_rng(4), np.random.default_rng(4)
    refills = 0
    for _ in range(400):
        before_hands, before_discard = one.info[:, HANDS_PLAYED].copy(), one.info[:, DISCARD_LEN].copy()
        _, done, truncated = one.step(sample_legal(one.legal_mask(), rng_one))
        two.step(sample_legal(two.legal_mask(), rng_two))
        same_hand = one.info[:, HANDS_PLAYED] == before_hands
        refills += int((same_hand & (one.info[:, DISCARD_LEN] < before_discard)).sum())  # A10 took the pile
        one.reset(done | truncated)
        two.reset(done | truncated)
    assert refills > 3
    assert [one.state_dict(i) for i in range(6)] == [two.state_dict(i) for i in range(6)]
    assert one.info[:, HANDS_PLAYED].max() > 1  # the next hands were dealt in the step too


def test_A2_the_largest_switch_deck_fits_the_int8_card_arrays_and_plays_as_the_engine() -> None:
    """A2: at the options' largest deck no card kind has more copies than int8 holds, and a batch with
    it plays step for step as the rules engine (the differential run of test_switch_batched)."""
    decks, jokers, twos = (SwitchRules.limits(name)[1]
                           for name in ("num_decks", "extra_jokers", "extra_twos"))
    assert decks is not None and jokers is not None and twos is not None, "an unbounded deck option"
    most = {"num_decks": decks, "extra_jokers": jokers, "extra_twos": twos}
    rules = SwitchRules(num_decks=decks, extra_jokers=jokers, extra_twos=twos)
    assert max(rules.deck()) <= np.iinfo(np.int8).max
    batch = SwitchBatch(rules, 2, seed=0)
    assert batch.hands.dtype == batch.piles.dtype == batch.played.dtype == np.int8
    cov = run_differential({**most, "num_players": 3}, batch_size=2, steps=150, seed=5)
    assert cov.steps == 300
