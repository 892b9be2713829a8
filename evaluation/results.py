"""Results of an evaluation: episode records, win rates with intervals, and their tables and plots.

Kept apart from the playing so that Ray workers' records, merged in deal
order, make the same `EvalResult` as a serial run.
"""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cardlab.evaluation.episodes import plural
from cardlab.evaluation.paired import deal_totals, paired_interval
from cardlab.evaluation.stats import wilson_interval


@dataclass(frozen=True)
class EpisodeRecord:
    """One hand or match, seen by slot: who sat where, who won, the points."""

    deal: int
    rotation: int
    seats: tuple[int, ...]  # seats[slot]
    winners: tuple[int, ...]  # winning slots (several: tied match winners); () when truncated
    points: tuple[int, ...]  # per slot: hand points (hand), final totals (match)
    truncated: bool


@dataclass(frozen=True)
class Rate:
    """A win count out of n, with its 95% Wilson interval and its 95% interval clustered by deal.

    `deal_wins` and `deal_episodes` are the per-deal totals (deal d at index d,
    as `evaluate` numbers them) that the paired interval needs; without them a
    Rate has only its Wilson interval.
    """

    wins: float
    n: int
    deal_wins: tuple[float, ...] = ()
    deal_episodes: tuple[int, ...] = ()

    @classmethod
    def of_slot(cls, records: Sequence[EpisodeRecord], slot: int) -> Rate:
        """A slot's wins over records (tied winners share a win), with the per-deal totals."""
        wins, episodes = deal_totals(records, slot)
        total = math.fsum(wins)
        return cls(int(total) if total.is_integer() else total, len(records), tuple(wins), tuple(episodes))

    @property
    def rate(self) -> float:
        return self.wins / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson's: every hand counted as independent."""
        return wilson_interval(self.wins, self.n)

    @property
    def paired_interval(self) -> tuple[float, float]:
        """Clustered by deal (`cardlab.evaluation.paired`): the interval to trust for seat-rotated deals."""
        if sum(self.deal_episodes) != self.n:
            raise ValueError(f"this rate of {self.n} episodes has no per-deal totals for a paired interval "
                             f"(they cover {sum(self.deal_episodes)}): build it with Rate.of_slot")
        return paired_interval(self.deal_wins, self.deal_episodes)

    def cells(self) -> list[str]:
        """The rate, the paired interval and Wilson's, for tables."""
        return [f"{self.rate:.3f}", *(f"[{low:.3f}, {high:.3f}]" for low, high in
                                      (self.paired_interval, self.interval))]

    def fields(self, prefix: str) -> dict[str, float]:
        """``PREFIXci_low/high`` (Wilson) and ``PREFIXpaired_ci_low/high``, for CSV and JSON rows."""
        (low, high), (paired_low, paired_high) = self.interval, self.paired_interval
        return {f"{prefix}ci_low": low, f"{prefix}ci_high": high,
                f"{prefix}paired_ci_low": paired_low, f"{prefix}paired_ci_high": paired_high}


def combined(rates: Sequence[Rate]) -> Rate:
    """Several rates as one, per-deal totals added deal by deal.

    For tables played on the same deals (one seed, as a tournament's): an
    agent's results on one deal's cards stay one cluster across its tables.
    """
    deals = max((len(r.deal_episodes) for r in rates), default=0)
    wins, episodes = [0.0] * deals, [0] * deals
    for r in rates:
        for d, (w, e) in enumerate(zip(r.deal_wins, r.deal_episodes, strict=True)):
            wins[d] += w
            episodes[d] += e
    return Rate(sum(r.wins for r in rates), sum(r.n for r in rates), tuple(wins), tuple(episodes))


@dataclass(frozen=True)
class SlotStats:
    slot: int
    spec: str
    hands: Rate
    mean_points: float
    truncated_hands: int
    matches: Rate
    truncated_matches: int

    def row(self) -> dict[str, Any]:
        """Flat fields, for CSV and JSON: hand fields if hands were played, match fields if matches were.

        NaN (mean points when every hand was truncated) becomes None.
        """
        out: dict[str, Any] = {"slot": self.slot, "agent": self.spec}
        if self.hands.n:
            out |= {"hands": self.hands.n, "hand_wins": self.hands.wins, "hand_win_rate": self.hands.rate,
                    **self.hands.fields("hand_"),
                    "mean_points": self.mean_points, "truncated_hands": self.truncated_hands}
        if self.matches.n:
            out |= {"matches": self.matches.n, "match_wins": self.matches.wins,
                    "match_win_rate": self.matches.rate, **self.matches.fields("match_"),
                    "truncated_matches": self.truncated_matches}
        return json_numbers(out)


def json_numbers(out: dict[str, Any]) -> dict[str, Any]:
    """`out` with each NaN (a figure with nothing to measure it on) as None: JSON has no NaN, and the
    project's JSON reader refuses one."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in out.items()}


def slot_stats(
    slots: Sequence[str], hands: Sequence[EpisodeRecord], matches: Sequence[EpisodeRecord]
) -> list[SlotStats]:
    out = []
    for i, spec in enumerate(slots):
        scored = [r.points[i] for r in hands if not r.truncated]
        out.append(SlotStats(
            slot=i,
            spec=spec,
            hands=Rate.of_slot(hands, i),
            mean_points=float(np.mean(scored)) if scored else math.nan,
            truncated_hands=sum(r.truncated for r in hands),
            matches=Rate.of_slot(matches, i),
            truncated_matches=sum(r.truncated for r in matches),
        ))
    return out


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned columns, for terminal output."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def csv_text(rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure on the Agg canvas, without pyplot's global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


@dataclass
class EvalResult:
    """Outcome of `evaluate`: per-slot statistics and every episode's record."""

    game: str
    rules: dict[str, Any]
    num_players: int
    seed: int
    slots: list[str]
    hand_records: list[EpisodeRecord]
    match_records: list[EpisodeRecord] = field(default_factory=list)
    hands_asked: int | None = None
    """the hands asked for (None: as played); more are played to fill whole seat rotations"""
    matches_asked: int | None = None
    """the matches asked for (None: as played)"""

    @property
    def stats(self) -> list[SlotStats]:
        return slot_stats(self.slots, self.hand_records, self.match_records)

    def _played(self, records: Sequence[EpisodeRecord], asked: int | None, what: str) -> str:
        n = self.num_players
        deals = len(records) // n
        text = f"{plural(len(records), what)} = {plural(deals, 'deal')} x {n} seat rotations"
        if asked is not None and asked != len(records):
            text += f" ({asked} asked for, rounded up to whole seat rotations)"
        return text

    def header(self) -> str:
        n = self.num_players
        played = []
        if self.hand_records:
            played.append(self._played(self.hand_records, self.hands_asked, "hand"))
        if self.match_records:
            matches = self._played(self.match_records, self.matches_asked, "match")
            played.append(matches.replace(" = ", f" to {self.rules['target_score']} = ", 1))
        options = " ".join(f"{k}={v}" for k, v in self.rules.items())
        return (f"{self.game}, {n} players, seed {self.seed}: {', '.join(played)}\nrules: {options}\n"
                f"chance win rate: {1 / n:.3f}")

    def format_table(self) -> str:
        headers = ["slot", "agent"]
        if self.hand_records:
            headers += ["hands", "wins", "win rate", "95% CI (paired)", "Wilson", "pts/hand", "truncated"]
        if self.match_records:
            headers += ["matches", "match wins", "match rate", "95% CI (paired)", "Wilson"]
        rows = []
        for s in self.stats:
            row: list[Any] = [s.slot, s.spec]
            if self.hand_records:
                row += [s.hands.n, s.hands.wins, *s.hands.cells(), f"{s.mean_points:.2f}", s.truncated_hands]
            if self.match_records:
                row += [s.matches.n, f"{s.matches.wins:g}", *s.matches.cells()]
            rows.append(row)
        return f"{self.header()}\n{text_table(headers, rows)}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.game, "rules": self.rules, "num_players": self.num_players, "seed": self.seed,
            "hands": len(self.hand_records), "matches": len(self.match_records),
            "hands_asked": len(self.hand_records) if self.hands_asked is None else self.hands_asked,
            "matches_asked": len(self.match_records) if self.matches_asked is None else self.matches_asked,
            "agents": [s.row() for s in self.stats],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)

    def to_csv(self) -> str:
        return csv_text([s.row() for s in self.stats])

    def plot(self, path: str | pathlib.Path) -> pathlib.Path:
        """Bar plot of win rates with their paired 95% intervals and the chance level."""
        kinds = ([("hands", "hand")] if self.hand_records else []) + (
            [("matches", "match")] if self.match_records else [])
        fig = new_figure(1.5 + 1.2 * len(self.slots) * len(kinds), 4)
        ax = fig.subplots()
        x = np.arange(len(self.slots))
        width = 0.8 / len(kinds)
        for k, (attr, label) in enumerate(kinds):
            rates = [getattr(s, attr) for s in self.stats]
            values = np.array([r.rate for r in rates])
            bounds = np.array([r.paired_interval for r in rates])
            errors = np.abs(bounds.T - values)
            ax.bar(x + (k - (len(kinds) - 1) / 2) * width, values, width, yerr=errors, capsize=4,
                   label=f"{label} win rate")
        ax.axhline(1 / self.num_players, color="grey", linestyle="--", label="chance")
        ax.set_xticks(x, [f"{i}: {s}" for i, s in enumerate(self.slots)], rotation=15)
        ax.set_ylim(0, 1)
        ax.set_ylabel("win rate (95% interval clustered by deal)")
        kinds_played = ((self.hand_records, "hand"), (self.match_records, "match"))
        played = [plural(len(records), what) for records, what in kinds_played if records]
        ax.set_title(f"{self.game}, {self.num_players} players, {', '.join(played)}")
        ax.legend()
        path = pathlib.Path(path)
        fig.savefig(path, bbox_inches="tight")
        return path
