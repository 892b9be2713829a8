"""Small statistics for win rates; the formulas themselves live once, in `paired`."""

from __future__ import annotations

import math

from cardlab.evaluation.paired import t_quantile, wilson_rate_interval


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
