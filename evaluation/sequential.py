"""Sequential comparison of two agents on paired deals: the GSPRT of chess engines' test farms.

Fishtest and cutechess-cli stop a match between two engines as soon as a
sequential probability ratio test can tell "stronger by elo1" from "stronger
by elo0" at error rates alpha and beta, instead of playing a fixed number of
games. Their generalised SPRT (GSPRT) puts the observed score and its
variance into a normal likelihood (Van den Bergh's approximation):

    LLR = (s1 - s0) * (2 * score - s0 - s1) / (2 * var(score))

and stops when LLR leaves [log(beta / (1 - alpha)), log((1 - beta) / alpha)].
Like Fishtest's pentanomial statistics, the variance here is over paired
units: the deal (all its seat rotations), so the luck of the cards cancels
as it does in `paired.py`. Before a few deals exist the per-episode variance
is shrunk towards the binomial one at the hypotheses (`PRIOR_DEALS`
pseudo-deals), so a few lucky deals cannot end a test.

Everything is a pure function of per-deal totals (or their sums, for
vectorised simulation): the caller plays deals in batches and asks `compare`
after each batch whether to stop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Decision = Literal["A", "B", "equal", "undecided"]

PRIOR_DEALS = 10.0
"""Pseudo-deals at the hypotheses' binomial variance mixed into the estimated one. More than the
interval's 2 (`paired.PRIOR_DEALS`): a test looks at its data again and again, and with 2 a test
that decides within about 50 deals wrongly accepted H1 up to 1.8 alpha in simulation (10: 1.5 alpha),
while at 150+ deals both hold alpha; 10 costs up to 15% more deals, in the fastest tests only."""


def elo_to_score(elo: float) -> float:
    """Expected score of the logistic Elo model: 400 points is 10:1 odds."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    if not 0.0 < score < 1.0:
        return math.copysign(math.inf, score - 0.5)
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class Hypotheses:
    """H0: the score is s0, H1: it is s1 (s1 > s0 says A is stronger), `fair` the score of equals."""

    s0: float
    s1: float
    fair: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 < self.s0 < 1.0 or not 0.0 < self.s1 < 1.0 or self.s0 == self.s1:
            raise ValueError(f"the hypotheses need two different scores in (0, 1), got {self.s0}, {self.s1}")
        if not 0.0 < self.fair < 1.0:
            raise ValueError(f"the fair score must be in (0, 1), got {self.fair}")

    @classmethod
    def from_elo(cls, elo0: float = 0.0, elo1: float = 5.0) -> Hypotheses:
        """Chess-style bounds for two players (fair score 0.5), as `cutechess-cli -sprt elo0=.. elo1=..`."""
        return cls(elo_to_score(elo0), elo_to_score(elo1), 0.5)

    @classmethod
    def from_delta(cls, delta: float, fair: float = 0.5, delta0: float = 0.0) -> Hypotheses:
        """Bounds on the win rate itself: H0 fair + delta0, H1 fair + delta (any number of players)."""
        return cls(fair + delta0, fair + delta, fair)

    def mirrored(self) -> tuple[float, float]:
        """B's (s0, s1): A's reflected about the fair score (they may leave (0, 1) when fair != 0.5)."""
        return 2 * self.fair - self.s0, 2 * self.fair - self.s1

    @property
    def reference_variance(self) -> float:
        """Per-episode variance of a binomial between the hypotheses: what the first deals are shrunk to."""
        middle = 0.5 * (self.s0 + self.s1)
        return middle * (1 - middle)


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's stopping bounds on the LLR: below the first accept H0, above the second accept H1."""
    if not 0.0 < alpha < 1.0 or not 0.0 < beta < 1.0 or alpha + beta >= 1.0:
        raise ValueError(f"alpha and beta need 0 < alpha, beta and alpha + beta < 1, got {alpha}, {beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def llr_from_sums(
    deals: npt.ArrayLike,
    wins: npt.ArrayLike,
    episodes: npt.ArrayLike,
    wins_sq: npt.ArrayLike,
    wins_episodes: npt.ArrayLike,
    episodes_sq: npt.ArrayLike,
    s0: float,
    s1: float,
    reference: float | None = None,
    prior_deals: float = PRIOR_DEALS,
) -> npt.NDArray[np.float64]:
    """The GSPRT log-likelihood ratio from the sums over deals of y, n, y^2, y*n and n^2 (y: wins).

    Sums, not lists, so a simulation can take cumulative sums over many runs
    at once; every argument broadcasts. `reference`: the per-episode variance
    the first deals are shrunk to (default: a binomial's midway between s0 and
    s1). No episodes gives 0.
    """
    g = np.asarray(deals, dtype=np.float64)
    sy, sn = np.asarray(wins, dtype=np.float64), np.asarray(episodes, dtype=np.float64)
    syy, syn = np.asarray(wins_sq, dtype=np.float64), np.asarray(wins_episodes, dtype=np.float64)
    snn = np.asarray(episodes_sq, dtype=np.float64)
    safe_n = np.where(sn > 0, sn, 1.0)
    score = sy / safe_n
    # Per-episode variance of the ratio estimator, clustered by deal: sum (y - score * n)^2 / N.
    spread = np.maximum(syy - 2 * score * syn + score**2 * snn, 0.0) / safe_n
    if reference is None:
        middle = 0.5 * (s0 + s1)
        reference = middle * (1 - middle)
    var = (g * spread + prior_deals * reference) / (g + prior_deals)
    llr = sn * (s1 - s0) * (2 * score - s0 - s1) / (2 * var)
    return np.where(sn > 0, llr, 0.0)


def llr(wins: npt.ArrayLike, episodes: npt.ArrayLike, s0: float, s1: float,
        reference: float | None = None) -> float:
    """The GSPRT LLR of H1 (score s1) against H0 (score s0) from per-deal wins and episodes."""
    y = np.asarray(wins, dtype=np.float64).ravel()
    n = np.asarray(episodes, dtype=np.float64).ravel()
    if y.shape != n.shape:
        raise ValueError(f"wins and episodes need one value per deal each, got {y.size} and {n.size}")
    if np.any(y < 0) or np.any(y > n):
        raise ValueError("each deal needs 0 <= wins <= episodes")
    sums = (y.size, y.sum(), n.sum(), (y * y).sum(), (y * n).sum(), (n * n).sum())
    return float(llr_from_sums(*sums, s0=s0, s1=s1, reference=reference))


@dataclass(frozen=True)
class Comparison:
    """Where a comparison stands: the decision, both tests' LLRs and the bounds they are held to."""

    decision: Decision
    llr_a: float
    """LLR of "A scores s1" against "A scores s0"; "A" when it reaches `upper`"""
    llr_b: float
    """the mirrored test for B; "B" when it reaches `upper`, "equal" when both are at `lower` or below"""
    lower: float
    upper: float
    deals: int
    episodes: int
    score: float
    """A's share of the wins so far (NaN before any episode)"""

    def meaning(self) -> str:
        """The decision in words: what the LLRs and their bounds say, and what to do when undecided."""
        where = (f"A's LLR is {self.llr_a:+.2f} and B's {self.llr_b:+.2f} (each the log-likelihood ratio of "
                 f"'that side is stronger by delta' to 'the two are even'; bounds [{self.lower:.2f}, "
                 f"{self.upper:.2f}])")
        if self.decision in ("A", "B"):
            return f"{where}: {self.decision}'s reached the upper bound, so {self.decision} is stronger"
        if self.decision == "equal":
            return f"{where}: both are at or below the lower bound, so neither is stronger by delta"
        return (f"{where}: a side is stronger once its LLR reaches the upper bound, and the two are even "
                "once both are at the lower bound or below; neither has happened yet: to decide, raise "
                "--max-hands and play on")

    def answer(self, llr: float) -> str:
        """What one side's test says so far: yes (at the upper bound), no (at the lower one), or open."""
        return "yes" if llr >= self.upper else "no" if llr <= self.lower else "open"

    def tests(self) -> str:
        """Both tests in words, e.g. "A stronger? no (LLR -3.02 <= -2.94), B stronger? open (LLR -1.10)"."""
        def one(side: str, llr: float) -> str:
            said = self.answer(llr)
            bound = {"yes": f" >= {self.upper:.2f}", "no": f" <= {self.lower:.2f}"}.get(said, "")
            return f"{side} stronger? {said} (LLR {llr:+.2f}{bound})"

        wait = ("; play goes on until B's test closes too" if self.decision == "undecided"
                and self.answer(self.llr_a) == "no" and self.answer(self.llr_b) == "open" else
                "; play goes on until A's test closes too" if self.decision == "undecided"
                and self.answer(self.llr_b) == "no" and self.answer(self.llr_a) == "open" else "")
        return f"{one('A', self.llr_a)}, {one('B', self.llr_b)}{wait}"

    def progress(self) -> str:
        """One line for a progress print."""
        return (f"{self.episodes} episodes ({self.deals} deals): A scores {self.score:.3f}; {self.tests()}: "
                f"{self.decision}")


def compare(
    wins: npt.ArrayLike,
    episodes: npt.ArrayLike,
    hypotheses: Hypotheses,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> Comparison:
    """Two GSPRTs on A's per-deal wins: "A" stronger, "B" stronger, "equal" (neither), or "undecided".

    A's test holds H0 (s0) against H1 (s1); B's is its mirror about the fair
    score. So with elo0=0: "A" means A is better (wrongly said of equals with
    probability about alpha), "equal" that neither is better by elo1 (missing
    a real gain of elo1 with probability about beta). A stopping rule: play
    until the decision is not "undecided" or the budget is spent.
    """
    low, high = bounds(alpha, beta)
    y = np.asarray(wins, dtype=np.float64).ravel()
    n = np.asarray(episodes, dtype=np.float64).ravel()
    b0, b1 = hypotheses.mirrored()
    reference = hypotheses.reference_variance
    llr_a = llr(y, n, hypotheses.s0, hypotheses.s1, reference)
    llr_b = llr(y, n, b0, b1, reference)
    decision: Decision = "undecided"
    if llr_a >= high:
        decision = "A"
    elif llr_b >= high:
        decision = "B"
    elif llr_a <= low and llr_b <= low:
        decision = "equal"
    total = float(n.sum())
    return Comparison(decision, llr_a, llr_b, low, high, int(np.count_nonzero(n)), int(total),
                      float(y.sum()) / total if total else math.nan)
