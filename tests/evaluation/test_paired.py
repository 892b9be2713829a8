"""The paired (deal-clustered) interval: its coverage on simulated deals, its width, its edge cases.

The simulated outcomes are described in simulated.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from cardlab.evaluation.paired import (
    deal_totals,
    design_effect,
    paired_interval,
    slot_paired_interval,
    t_quantile,
    wilson_rate_interval,
)

from .simulated import RUNS, simulate, true_deff

CASES = [  # deals, rotations, rate, correlation
    (200, 2, 0.5, "neg"),
    (200, 2, 0.48, "ind"),
    (200, 2, 0.3, "pos"),
    (20, 2, 0.4, "neg"),
    (20, 2, 0.4, "pos"),
    (50, 4, 0.25, "neg"),
    (10, 4, 0.25, "pos"),
    (100, 2, 0.03, "ind"),
]


@pytest.mark.parametrize(("deals", "m", "p", "kind"), CASES)
def test_coverage_is_about_95_percent(deals: int, m: int, p: float, kind: str) -> None:
    """Over 1000 simulated runs the interval holds the true rate 93-97.5% of the time (sd 0.7%).

    Wilson's, on the same runs, misses that band whenever the correlation is
    strong (too wide with negative, too narrow with positive): checked on the
    200-deal cases so the test shows the clustering matters.
    """
    wins = simulate(1, deals, m, p, kind)
    episodes = np.full(deals, m)
    covered = wilson_covered = 0
    for run in wins:
        low, high = paired_interval(run, episodes)
        covered += low <= p <= high
        w_low, w_high = wilson_rate_interval(run.sum() / (deals * m), deals * m)
        wilson_covered += w_low <= p <= w_high
    assert 0.93 <= covered / RUNS <= 0.975
    if deals == 200 and kind != "ind":
        assert not 0.935 <= wilson_covered / RUNS <= 0.965


def test_few_deals_cover_at_least_95_percent() -> None:
    """With 5 deals the small-sample correction errs wide: coverage at least 95%, even with shared luck."""
    for kind in ("ind", "pos"):
        wins = simulate(2, 5, 2, 0.5, kind)
        covered = sum(lo <= 0.5 <= hi for lo, hi in (paired_interval(run, [2] * 5) for run in wins))
        assert covered / RUNS >= 0.95


def test_no_wider_than_wilson_when_rotations_are_independent() -> None:
    """Independent rotations, 500 deals: the mean width is within 2% of Wilson's, and rarely 10% over.

    The estimated design effect has relative sd about 1/sqrt(500) here, so the
    width ratio has sd about 0.022: 1.10 is over 4 sd away. The 2% allows the
    t factor (0.4%) and that noise's mean.
    """
    deals = 500
    wins = simulate(3, deals, 2, 0.5, "ind")
    ratios = []
    for run in wins:
        low, high = paired_interval(run, [2] * deals)
        w_low, w_high = wilson_rate_interval(run.sum() / (2 * deals), 2 * deals)
        ratios.append((high - low) / (w_high - w_low))
    assert abs(np.mean(ratios) - 1) < 0.02
    assert np.mean(np.array(ratios) > 1.10) < 0.01


@pytest.mark.parametrize(("m", "p", "kind"), [(2, 0.5, "neg"), (2, 0.3, "pos"), (4, 0.25, "neg")])
def test_width_follows_the_true_design_effect(m: int, p: float, kind: str) -> None:
    """500 deals: the mean width is within 3% of the oracle's (Wilson at episodes / true deff)."""
    deals = 500
    wins = simulate(4, deals, m, p, kind)
    deff = true_deff(m, p, kind)
    ratios = []
    for run in wins:
        rate = run.sum() / (m * deals)
        low, high = paired_interval(run, [m] * deals)
        o_low, o_high = wilson_rate_interval(rate, m * deals / deff)
        ratios.append((high - low) / (o_high - o_low))
    assert abs(np.mean(ratios) - 1) < 0.03
    if kind == "neg":  # duplicate deals pay: narrower than Wilson by about sqrt(deff)
        assert deff < 0.9


def test_never_degenerate() -> None:
    """Rates of 0 or 1, one deal, or deals that all agree still give an interval of positive width."""
    low, high = paired_interval([0] * 50, [2] * 50)
    assert low == 0 and 0.01 < high < 0.1  # Wilson's upper bound on 100 hands is 0.037
    low, high = paired_interval([2] * 50, [2] * 50)
    assert 0.9 < low < 0.99 and high == 1
    low, high = paired_interval([1] * 50, [2] * 50)  # every deal split: raw deff 0, shrunk to 2/52
    assert low < 0.5 < high and high - low > 0.02
    low, high = paired_interval([1], [2])
    assert low < 0.2 and high > 0.8
    assert paired_interval([], []) == (0.0, 1.0)
    assert design_effect([1] * 50, [2] * 50) == pytest.approx(2 / 52)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="wins <= episodes"):
        paired_interval([3], [2])
    with pytest.raises(ValueError, match="one value per deal"):
        paired_interval([1, 2], [2])
    with pytest.raises(ValueError, match="z > 0"):
        paired_interval([1], [2], z=0)


def test_t_quantile_matches_the_table() -> None:
    for df, t in ((1, 12.706), (2, 4.303), (3, 3.182), (10, 2.228), (30, 2.042), (120, 1.980), (1000, 1.962)):
        assert t_quantile(1.96, df) == pytest.approx(t, abs=2e-3)


@dataclass(frozen=True)
class Record:
    deal: int
    winners: tuple[int, ...]


def test_deal_totals_group_rotations_and_share_tied_wins() -> None:
    """Records group by deal in order of first appearance; tied winners share; truncated is a non-win."""
    records = [Record(0, (0,)), Record(0, (1,)), Record(1, (0, 1)), Record(1, ()), Record(2, (1,)),
               Record(2, (1,))]
    assert deal_totals(records, 0) == ([1.0, 0.5, 0.0], [2, 2, 2])
    assert deal_totals(records, 1) == ([1.0, 0.5, 2.0], [2, 2, 2])
    assert slot_paired_interval(records, 1) == paired_interval([1.0, 0.5, 2.0], [2, 2, 2])
