"""The GSPRT on paired deals: it decides for the stronger agent, not between equals, at its error rates.

Outcomes are simulated as in test_paired (a known rate, within-deal correlation).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from cardlab.evaluation.sequential import (
    Comparison,
    Hypotheses,
    bounds,
    compare,
    elo_to_score,
    llr,
    llr_from_sums,
    score_to_elo,
)

from .simulated import simulate


def first_decisions(wins: npt.NDArray[np.int64], m: int, s0: float, s1: float, alpha: float,
                    beta: float) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """One-sided SPRT over each run, looking after every deal: (+1 H1, -1 H0, 0 none; deals used)."""
    runs, deals = wins.shape
    y = wins.astype(np.float64)
    n = np.full_like(y, m)
    g = np.arange(1, deals + 1)
    cum = lambda a: np.cumsum(a, axis=1)  # noqa: E731
    values = llr_from_sums(g, cum(y), cum(n), cum(y * y), cum(y * n), cum(n * n), s0, s1)
    low, high = bounds(alpha, beta)
    state = np.where(values >= high, 1, np.where(values <= low, -1, 0))
    first = np.argmax(state != 0, axis=1)
    return state[np.arange(runs), first], first + 1


def run_compare(wins: npt.NDArray[np.int64], m: int, hypotheses: Hypotheses, batch: int = 10) -> Comparison:
    """The stopping rule `cardlab compare` runs: a batch of deals, then ask; stop when decided."""
    result = compare([], [], hypotheses)
    for stop in range(batch, wins.size + 1, batch):
        result = compare(wins[:stop], [m] * stop, hypotheses)
        if result.decision != "undecided":
            break
    return result


@pytest.mark.parametrize("kind", ["neg", "ind"])
def test_error_rates_are_near_alpha_and_beta(kind: str) -> None:
    """H0 0.50 vs H1 0.55, alpha = beta = 0.05, 1000 runs at each: each error rate in [0.025, 0.075].

    (Binomial sd of a rate of 0.05 over 1000 runs: 0.007.) Measured: neg 0.046 / 0.044,
    ind 0.055 / 0.046; all but 1% of runs decide within 1500 deals.
    """
    for truth, wrong in ((0.5, 1), (0.55, -1)):
        decisions, _ = first_decisions(simulate(7, 1500, 2, truth, kind), 2, 0.5, 0.55, 0.05, 0.05)
        assert np.mean(decisions == 0) <= 0.01
        assert 0.025 <= np.mean(decisions == wrong) <= 0.075


def test_error_rates_follow_the_settings() -> None:
    """alpha = 0.1, beta = 0.2: the errors move to about 0.1 and 0.2 (not merely "small")."""
    wins_h0, wins_h1 = simulate(8, 1500, 2, 0.5, "ind"), simulate(9, 1500, 2, 0.55, "ind")
    assert 0.06 <= np.mean(first_decisions(wins_h0, 2, 0.5, 0.55, 0.1, 0.2)[0] == 1) <= 0.13
    assert 0.15 <= np.mean(first_decisions(wins_h1, 2, 0.5, 0.55, 0.1, 0.2)[0] == -1) <= 0.25


def test_pairing_makes_the_test_faster() -> None:
    """With duplicate-style (negative) correlation the same test needs fewer deals than without."""
    neg = first_decisions(simulate(10, 1500, 2, 0.55, "neg"), 2, 0.5, 0.55, 0.05, 0.05)[1]
    ind = first_decisions(simulate(10, 1500, 2, 0.55, "ind"), 2, 0.5, 0.55, 0.05, 0.05)[1]
    assert np.mean(neg) < 0.85 * np.mean(ind)


def test_stronger_a_decides_a_and_stronger_b_decides_b() -> None:
    """A at 0.60 (B at 0.40) against elo bounds 0 / 20: "A" (resp. "B") in 99% of 200 runs, early."""
    hyp = Hypotheses.from_elo(0, 20)
    for truth, side in ((0.6, "A"), (0.4, "B")):
        results = [run_compare(run, 2, hyp) for run in simulate(11, 500, 2, truth, "neg")[:200]]
        assert np.mean([r.decision == side for r in results]) >= 0.99
        assert np.median([r.episodes for r in results]) < 300


def test_expert_vs_random_like_decides_within_few_hands() -> None:
    """A who wins 95% decides "A" within 200 hands even at elo1 = 5 (measured: 104), not on 1 deal."""
    result = run_compare(simulate(12, 500, 2, 0.95, "ind")[0], 2, Hypotheses.from_elo(0, 5), batch=1)
    assert result.decision == "A"
    assert 10 < result.episodes < 200


def test_equal_players_decide_no_side_at_a_small_budget() -> None:
    """Equals, elo 0 / 5, 400 hands: none of 300 runs says "A" or "B" (nor yet "equal")."""
    hyp = Hypotheses.from_elo(0, 5)
    results = [run_compare(run, 2, hyp) for run in simulate(13, 200, 2, 0.5, "neg")[:300]]
    assert {r.decision for r in results} == {"undecided"}
    assert all(r.episodes == 400 for r in results)


def test_equal_players_end_equal_with_a_large_budget() -> None:
    """Equals against bounds 0 / 0.05 on the win rate: "equal" in 85%+ of 200 runs (measured 182).

    Each side's test errs with about alpha, so a side is (wrongly) named in
    about 2 alpha = 0.10 of runs: at most 0.13 (sd 0.02). Measured: 6 "A", 11 "B".
    """
    hyp = Hypotheses.from_delta(0.05)
    results = [run_compare(run, 2, hyp) for run in simulate(14, 1500, 2, 0.5, "ind")[:200]]
    assert np.mean([r.decision == "equal" for r in results]) >= 0.85
    assert np.mean([r.decision in ("A", "B") for r in results]) <= 0.13


def test_four_player_tables_use_the_fair_share() -> None:
    """One A against three Bs (fair 0.25): A at 0.35 decides "A"; the mirror scores may leave (0, 1)."""
    hyp = Hypotheses.from_delta(0.3, fair=0.25)
    assert hyp.mirrored() == pytest.approx((0.25, -0.05))
    result = run_compare(simulate(15, 500, 4, 0.35, "neg")[0], 4, Hypotheses.from_delta(0.05, fair=0.25))
    assert result.decision == "A"


def test_llr_sign_bounds_and_elo() -> None:
    assert bounds(0.05, 0.05) == pytest.approx((math.log(0.05 / 0.95), math.log(0.95 / 0.05)))
    assert elo_to_score(0) == 0.5 and score_to_elo(elo_to_score(35.0)) == pytest.approx(35.0)
    assert score_to_elo(1.0) == math.inf
    assert llr([2] * 30, [2] * 30, 0.5, 0.55) > 0 > llr([0] * 30, [2] * 30, 0.5, 0.55)
    assert llr([], [], 0.5, 0.55) == 0.0
    assert llr([2], [2], 0.5, 0.52) < 0.2  # one deal won twice says little
    with pytest.raises(ValueError, match="two different scores"):
        Hypotheses(0.5, 0.5)
    with pytest.raises(ValueError, match="alpha"):
        bounds(0.6, 0.5)
    with pytest.raises(ValueError, match="wins <= episodes"):
        llr([3], [2], 0.5, 0.55)
    assert "A stronger? open (LLR" in compare([1, 2], [2, 2], Hypotheses.from_elo()).progress()
