"""Small statistics for win rates."""

from __future__ import annotations

import math


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
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


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
    # Past the table, the first correction term of the t quantile to the normal one is within 0.003.
    t = _T975[df - 1] if df <= len(_T975) else 1.96 + (1.96**3 + 1.96) / (4 * df)
    half = t * math.sqrt(sum((v - mean) ** 2 for v in values) / df / n)
    return mean, mean - half, mean + half
