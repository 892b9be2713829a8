"""Win-rate intervals clustered by deal: a deal's seat rotations are one unit, not independent hands.

Evaluation plays every deal once in each seat rotation, on the same cards, so
a slot's results within a deal are correlated (in a 2-player game usually
negatively: the good hand it held in one rotation it faces in the other).
Wilson's interval counts every hand as independent and is then too wide (or,
with positive correlation, too narrow). Here each deal is a cluster:

- the rate is the ratio estimator p = sum(wins) / sum(episodes);
- its variance is the cluster-robust (CR1) one,
  G/(G-1) * sum_i (wins_i - p * episodes_i)^2 / episodes^2 over G deals;
- that gives a design effect (deff, the variance over the binomial one), which
  is shrunk towards 1 by `PRIOR_DEALS` pseudo-deals so that a few deals, or an
  all-equal sample, never give a zero-width interval;
- the interval is Wilson's at the effective sample size episodes / deff,
  scaled by (z / t)^2 with t Student's quantile at G - 1 + PRIOR_DEALS degrees
  of freedom (Korn and Graubard's small-sample correction, 1998).

So the interval stays inside [0, 1], is Wilson's when the rotations are
independent (deff about 1), narrows with the true design effect, and at a rate
of 0 or 1 (where the correlation cannot be seen) is Wilson's with the t
correction: never degenerate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

PRIOR_DEALS = 2.0
"""Pseudo-deals at deff = 1 mixed into the estimated design effect: 1% of the weight at 200 deals,
but enough that 3 deals which happen to agree do not claim certainty."""


class DealOutcome(Protocol):
    """What the clustering needs of an episode record (`EpisodeRecord` has it)."""

    @property
    def deal(self) -> int: ...

    @property
    def winners(self) -> tuple[int, ...]: ...


def normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _t_cdf_upper_half(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer `df` (Abramowitz and Stegun 26.7.3-4), t >= 0."""
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    if df == 1:
        return 2.0 * theta / math.pi
    term = total = math.sqrt(c2)
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + s * total)


def t_quantile(z: float, df: float) -> float:
    """Student's t quantile with the two-sided coverage of the normal's ±z (z=1.96: 95%).

    Exact (bisection on the closed-form CDF) up to 200 degrees of freedom, a
    Cornish-Fisher expansion past that (within 1e-6 there); fractional `df`
    is rounded down, which errs on the wide side.
    """
    if z <= 0 or df < 1:
        raise ValueError(f"t_quantile needs z > 0 and df >= 1, got z={z}, df={df}")
    if df > 200:
        g1 = (z**3 + z) / 4
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
        return z + g1 / df + g2 / df**2 + g3 / df**3
    whole = int(df)
    target = 2.0 * normal_cdf(z) - 1.0
    low, high = z, z
    while _t_cdf_upper_half(high, whole) < target:
        high *= 2.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if _t_cdf_upper_half(mid, whole) < target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def wilson_rate_interval(rate: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """Wilson's interval for a rate observed on a (possibly effective, fractional) sample of size n."""
    if n <= 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(rate * (1 - rate), 0.0) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _as_deals(wins: npt.ArrayLike, episodes: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], ...]:
    y = np.asarray(wins, dtype=np.float64).ravel()
    n = np.asarray(episodes, dtype=np.float64).ravel()
    if y.shape != n.shape:
        raise ValueError(f"wins and episodes need one value per deal each, got {y.size} and {n.size}")
    if np.any(n < 0) or np.any(y < 0) or np.any(y > n):
        raise ValueError("each deal needs 0 <= wins <= episodes")
    return y, n


def design_effect(wins: npt.ArrayLike, episodes: npt.ArrayLike, prior_deals: float = PRIOR_DEALS) -> float:
    """The cluster-robust variance of the rate over the binomial one, shrunk towards 1.

    Below 1: the deal's rotations cancel luck (what duplicate deals are for);
    above 1: they share it. It is 1 where it cannot be estimated (fewer than
    two deals, or a rate of 0 or 1).
    """
    y, n = _as_deals(wins, episodes)
    deals, total = y.size, float(n.sum())
    if deals < 2 or total == 0:
        return 1.0
    p = float(y.sum()) / total
    if p <= 0.0 or p >= 1.0:
        return 1.0
    raw = deals / (deals - 1) * float(np.sum((y - p * n) ** 2)) / (total * p * (1 - p))
    return (deals * raw + prior_deals) / (deals + prior_deals)


def paired_interval(wins: npt.ArrayLike, episodes: npt.ArrayLike, z: float = 1.96,
                    prior_deals: float = PRIOR_DEALS) -> tuple[float, float]:
    """Interval of a win rate from per-deal wins and episodes (deal i: wins[i] of episodes[i]).

    Wins may be fractional (tied match winners share a win). With no
    episodes it is (0, 1). See the module doc for the method.
    """
    if z <= 0:
        raise ValueError(f"paired_interval needs z > 0, got {z}")
    y, n = _as_deals(wins, episodes)
    total = float(n.sum())
    if total == 0:
        return 0.0, 1.0
    deals = int(np.count_nonzero(n))
    y, n = y[n > 0], n[n > 0]
    deff = design_effect(y, n, prior_deals)
    t = t_quantile(z, deals - 1 + prior_deals) if deals - 1 + prior_deals >= 1 else math.inf
    effective = total / deff * (z / t) ** 2
    return wilson_rate_interval(float(y.sum()) / total, effective, z)


def deal_totals(records: Iterable[DealOutcome], slot: int) -> tuple[list[float], list[int]]:
    """Per deal (in order of first appearance): the slot's wins and the episodes played.

    A win is 1 / (number of winners) when the slot is among them, so tied
    match winners share a win and a truncated episode (no winners) is a
    non-win, as `slot_stats` counts them.
    """
    index: dict[int, int] = {}
    wins: list[float] = []
    episodes: list[int] = []
    for record in records:
        k = index.setdefault(record.deal, len(index))
        if k == len(wins):
            wins.append(0.0)
            episodes.append(0)
        episodes[k] += 1
        if slot in record.winners:
            wins[k] += 1.0 / len(record.winners)
    return wins, episodes


def slot_paired_interval(records: Sequence[DealOutcome], slot: int, z: float = 1.96) -> tuple[float, float]:
    """The paired interval of one slot's win rate over hand (or match) records, clustered by `deal`.

    Give hand records and match records separately: their deal numbers are
    separate streams (the same number is a different deal in each).
    """
    wins, episodes = deal_totals(records, slot)
    return paired_interval(wins, episodes, z)
