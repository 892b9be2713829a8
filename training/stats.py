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
