"""Simulated evaluations with a known win rate and within-deal correlation.

Each has a known rate p and a within-deal correlation: deal i
moves the win probability of its rotations by a_i * s_r (a_i uniform on
±c * min(p, 1 - p)), with s = (+1, -1, +1, ...) for duplicate-style negative
correlation, s = 1 for shared luck (positive), s = 0 for independent
rotations. The mean stays exactly p, and the true design effect is
1 + (sum(s)^2 - sum(s^2)) * E[a^2] / (m * p * (1 - p)).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

RUNS = 1000


def signs(m: int, kind: str) -> npt.NDArray[np.float64]:
    return {"neg": np.array([(-1.0) ** r for r in range(m)]), "pos": np.ones(m), "ind": np.zeros(m)}[kind]


def simulate(seed: int, deals: int, m: int, p: float, kind: str, c: float = 1.0) -> npt.NDArray[np.int64]:
    """RUNS simulated evaluations: wins of one slot, shape (RUNS, deals), each deal m rotations."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (RUNS, deals, 1)) * c * min(p, 1 - p)
    q = p + a * signs(m, kind)
    return (rng.random((RUNS, deals, m)) < q).sum(axis=2)


def true_deff(m: int, p: float, kind: str, c: float = 1.0) -> float:
    ea2 = (c * min(p, 1 - p)) ** 2 / 3
    s = signs(m, kind)
    return 1 + (s.sum() ** 2 - (s**2).sum()) * ea2 / (m * p * (1 - p))
