"""Small statistics for win rates; the formulas themselves live once, in `paired`."""

from __future__ import annotations

import math
from collections.abc import Sequence

from cardlab.evaluation.paired import DealOutcome, deal_totals, t_quantile, wilson_rate_interval


def wilson_interval(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a win rate (95% with z=1.96).

    Unlike the normal approximation it stays inside [0, 1] and is sound for
    rates near 0 or 1 and for small `n`; with no hands it is (0, 1). `wins`
    may be fractional (tied match winners share a win).
    """
    if n < 0 or not 0 <= wins <= n:
        raise ValueError(f"wilson_interval needs 0 <= wins <= n, got wins={wins}, n={n}")
    if z <= 0:
        raise ValueError(f"wilson_interval needs z > 0, got {z}")
    return wilson_rate_interval(wins / n if n else 0.0, n, z)


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% Student t interval of a few values (say, one win rate per training seed).

    The interval is about the spread between the values, which is what
    differs from seed to seed; it needs two values at least (one gives the
    value and (nan, nan)).
    """
    n = len(values)
    if n == 0:
        raise ValueError("mean_interval needs at least one value")
    mean = sum(values) / n
    if n == 1:
        return mean, math.nan, math.nan
    df = n - 1
    t = t_quantile(1.96, df)
    half = t * math.sqrt(sum((v - mean) ** 2 for v in values) / df / n)
    return mean, mean - half, mean + half


def paired_difference(a: Sequence[DealOutcome], b: Sequence[DealOutcome], slot: int = 0
                      ) -> tuple[float, float, float]:
    """A's win rate less B's in `slot`, on the same deals, and its 95% Student t interval over deals.

    Why paired: two agents played on the same cards share the luck of each
    deal, so the per-deal differences of their win rates (each deal's wins over
    its episodes, all its seat rotations) vary far less than either rate; their
    mean is the difference of the rates. The records must cover the same deals
    with the same episodes each (else a `ValueError`); one deal gives (d, nan, nan).
    """
    wins_a, episodes_a = deal_totals(a, slot)
    wins_b, episodes_b = deal_totals(b, slot)
    deals_a, deals_b = [r.deal for r in a], [r.deal for r in b]
    if sorted(deals_a) != sorted(deals_b):
        raise ValueError(f"a paired difference needs both agents' records on the same deals with the same "
                         f"episodes each, got {len(set(deals_a))} and {len(set(deals_b))} deals "
                         f"({len(deals_a)} and {len(deals_b)} episodes)")
    order_b = {deal: k for k, deal in enumerate(dict.fromkeys(deals_b))}
    firsts = list(dict.fromkeys(deals_a))
    return mean_interval([wins_a[k] / episodes_a[k] - wins_b[order_b[deal]] / episodes_b[order_b[deal]]
                          for k, deal in enumerate(firsts)])
