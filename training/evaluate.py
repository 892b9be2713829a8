"""Evaluation: seeded hands (and matches) between agents, with seats rotated.

`evaluate(game, specs, hands)` fills the table's seats with *slots*: slot i
plays ``specs[i]``; with fewer specs than seats (``num_players`` in the rule
options) the specs repeat in order to fill them; without ``num_players`` each
spec gets a seat (`players_for` checks the count against the game's range).
Each deal is played once in every rotation: in rotation r slot i sits in seat
(i + r) mod n, so every slot holds every seat equally often, on the same cards
(duplicate style, which also cancels much of the luck of the deal). `hands`
(and `matches`) are rounded up to a multiple of n for that, and the report
says so.

Reported: only what was played (no hand columns for ``hands=0``, no match
columns without matches). Each episode reseeds every agent from (seed, deal,
rotation, slot), so results depend on the seed only, not on the order of play.

Per slot: hands, hand wins and win rate with a 95% Wilson interval,
mean points per non-truncated hand (fewer is better), truncated hands (C1,
counted as non-wins); with ``matches`` > 0 also matches played to the target
score (episode="match") and the match win rate, tied winners sharing a win.
"""

from __future__ import annotations

import csv
import io
import json
import math
import pathlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from cardlab.agents.base import Agent, make_agent
from cardlab.envs import env_class, get_spec, make_game
from cardlab.training.stats import wilson_interval

ENV_OPTIONS = ("render_mode", "episode", "reward", "illegal_action")
HAND, MATCH, AGENT = 0, 1, 2  # first key of derived seeds, so the streams never overlap


def make_env(game: str, rule_options: dict[str, Any] | None = None, **env_options: Any) -> Any:
    """The raw AEC env of a game; env options (episode, ...) are refused among rule options."""
    rule_options = dict(rule_options or {})
    clash = sorted(set(rule_options) & set(ENV_OPTIONS))
    if clash:
        raise ValueError(f"{', '.join(clash)}: env option(s), not rule options; rule options are the game's "
                         f"{', '.join(get_spec(game).rules.names())}")
    make_game(game, rule_options)  # refuses bad rule options with the game's own message
    return env_class(game)(**env_options, **rule_options)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}{'es' if noun.endswith('ch') else 's'}"


def players_for(game: str, rule_options: dict[str, Any] | None, specs: Sequence[str], *,
                noun: str = "agent", other_seats: int = 0) -> int:
    """The number of players of a table for these agent specs; a ValueError says what fits.

    With ``num_players`` among the rule options, the specs repeat in order to
    fill its seats (less `other_seats`, taken by someone else: the person in
    `play`), so there may be fewer but not more. Without it every spec gets a
    seat, and their count (plus `other_seats`) must be one the game seats.
    """
    given = f"{_plural(len(specs), noun)} given ({', '.join(specs)})" if specs else f"no {noun}s given"
    options = dict(rule_options or {})
    if "num_players" in options:
        n = make_game(game, options).num_players
        seats = n - other_seats
        if not 1 <= len(specs) <= seats:
            yours = ", one of them yours" if other_seats else ""
            raise ValueError(f"{given} for {_plural(seats, 'seat')} (num_players={n}{yours}): give 1 to "
                             f"{seats} (they repeat in order to fill the seats)")
        return n
    spec = get_spec(game)
    low, high = spec.rules.limits("num_players")
    n = len(specs) + other_seats
    if (low is not None and n < low) or (high is not None and n > high):
        low_count = max(1, (low or 1) - other_seats)
        fits = f"{low_count} to {high - other_seats}" if high is not None else f"at least {low_count}"
        seated = f"{low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{given}, but {spec.title} seats {seated} players"
                         f"{', you included' if other_seats else ''}: give {fits} {noun}s, or set the rule "
                         f"option num_players=N and they repeat in order to fill the seats")
    return n


def derive_seed(*keys: int) -> int:
    """An independent 63-bit seed for a tuple of non-negative keys."""
    return int(np.random.SeedSequence(list(keys)).generate_state(1, np.uint64)[0] >> 1)


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(seed)


def run_episode(
    env: Any,
    seat_agents: Sequence[Agent],
    seed: int | None,
    on_step: Callable[[int, int], bool | None] | None = None,
    before_step: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Play one episode of `env` (seat s played by ``seat_agents[s]``); returns the final info.

    `before_step(seat, action)` runs once a move is chosen, before the env
    applies it; `on_step(seat, action)` runs after every move, and returning
    True stops the episode there (the returned info is then the last one seen).
    """
    env.reset(seed=seed)
    for agent in seat_agents:
        agent.reset()
    final: dict[str, Any] = {}
    for name in env.agent_iter():
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            final = final or dict(info)
            env.step(None)
            continue
        seat = env.agent_seat[name]
        action = seat_agents[seat].act(obs)
        if before_step is not None:
            before_step(seat, action)
        env.step(action)
        if on_step is not None and on_step(seat, action):
            return dict(env.infos[name])
    return final


def seat_slots(specs: Sequence[str], num_players: int) -> list[str]:
    """The spec of each of the n slots: `specs` repeated in order."""
    if not specs:
        raise ValueError("give at least one agent spec")
    if len(specs) > num_players:
        raise ValueError(f"{_plural(len(specs), 'agent')} given for {_plural(num_players, 'seat')}: "
                         f"give at most {num_players}")
    return [specs[i % len(specs)] for i in range(num_players)]


# ---------------------------------------------------------------- results
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
    """A win count out of n, with its 95% Wilson interval."""

    wins: float
    n: int

    @property
    def rate(self) -> float:
        return self.wins / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.n)

    def cells(self) -> list[str]:
        low, high = self.interval
        return [f"{self.rate:.3f}", f"[{low:.3f}, {high:.3f}]"]


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
            low, high = self.hands.interval
            out |= {"hands": self.hands.n, "hand_wins": self.hands.wins, "hand_win_rate": self.hands.rate,
                    "hand_ci_low": low, "hand_ci_high": high,
                    "mean_points": self.mean_points, "truncated_hands": self.truncated_hands}
        if self.matches.n:
            low, high = self.matches.interval
            out |= {"matches": self.matches.n, "match_wins": self.matches.wins,
                    "match_win_rate": self.matches.rate, "match_ci_low": low, "match_ci_high": high,
                    "truncated_matches": self.truncated_matches}
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
            hands=Rate(sum(i in r.winners for r in hands), len(hands)),
            mean_points=float(np.mean(scored)) if scored else math.nan,
            truncated_hands=sum(r.truncated for r in hands),
            matches=Rate(float(sum(1 / len(r.winners) for r in matches if i in r.winners)), len(matches)),
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
        text = f"{_plural(len(records), what)} = {_plural(deals, 'deal')} x {n} seat rotations"
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
            headers += ["hands", "wins", "win rate", "95% CI", "pts/hand", "truncated"]
        if self.match_records:
            headers += ["matches", "match wins", "match rate", "95% CI"]
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
        """Bar plot of win rates with their 95% intervals and the chance level."""
        kinds = ([("hands", "hand")] if self.hand_records else []) + (
            [("matches", "match")] if self.match_records else [])
        fig = new_figure(1.5 + 1.2 * len(self.slots) * len(kinds), 4)
        ax = fig.subplots()
        x = np.arange(len(self.slots))
        width = 0.8 / len(kinds)
        for k, (attr, label) in enumerate(kinds):
            rates = [getattr(s, attr) for s in self.stats]
            values = np.array([r.rate for r in rates])
            bounds = np.array([r.interval for r in rates])
            errors = np.abs(bounds.T - values)
            ax.bar(x + (k - (len(kinds) - 1) / 2) * width, values, width, yerr=errors, capsize=4,
                   label=f"{label} win rate")
        ax.axhline(1 / self.num_players, color="grey", linestyle="--", label="chance")
        ax.set_xticks(x, [f"{i}: {s}" for i, s in enumerate(self.slots)], rotation=15)
        ax.set_ylim(0, 1)
        ax.set_ylabel("win rate (95% Wilson interval)")
        kinds_played = ((self.hand_records, "hand"), (self.match_records, "match"))
        played = [_plural(len(records), what) for records, what in kinds_played if records]
        ax.set_title(f"{self.game}, {self.num_players} players, {', '.join(played)}")
        ax.legend()
        path = pathlib.Path(path)
        fig.savefig(path, bbox_inches="tight")
        return path


# ---------------------------------------------------------------- evaluate
def play_deals(
    game: str,
    rules: dict[str, Any],
    slots: Sequence[Any],
    kind: int,
    deals: range,
    seed: int,
    agent_factory: Callable[[Any, Any, int], Agent] = make_agent,
    on_deal: Callable[[int], object] | None = None,
) -> list[EpisodeRecord]:
    """Every seat rotation of each deal in `deals` (hands or matches, per `kind`): the unit of work.

    `evaluate` plays all deals here; Ray workers (`cardlab.cluster`) play blocks
    of them and the records are merged in deal order. A record depends only on
    (seed, kind, deal, rotation, slot), so both give the same records.
    `agent_factory(slot_spec, game, seed)` builds each slot's agent (Ray
    workers build bots from received bytes); `on_deal(episodes)` follows each deal.
    """
    env = make_env(game, rules, episode="match" if kind == MATCH else "hand")
    agents = [
        agent_factory(spec, env.game, derive_seed(seed, AGENT, slot)) for slot, spec in enumerate(slots)
    ]
    n = len(agents)
    records = []
    for deal in deals:
        deal_seed = derive_seed(seed, kind, deal)
        for rotation in range(n):
            seats = tuple((slot + rotation) % n for slot in range(n))
            seat_agents = [agents[(seat - rotation) % n] for seat in range(n)]
            for slot, agent in enumerate(agents):
                agent.seed(derive_seed(seed, AGENT, kind, deal, rotation, slot))
            info = run_episode(env, seat_agents, deal_seed)
            truncated = bool(info.get("truncated"))
            if kind == MATCH:
                winner_seats, seat_points = ([] if truncated else info["match_winners"]), info["scores"]
            else:
                winner_seats, seat_points = ([] if truncated else [info["winner"]]), info["hand_points"]
            records.append(EpisodeRecord(
                deal=deal, rotation=rotation, seats=seats,
                winners=tuple(slot for slot in range(n) if seats[slot] in winner_seats),
                points=tuple(int(seat_points[seats[slot]]) for slot in range(n)),
                truncated=truncated,
            ))
        if on_deal is not None:
            on_deal(n)
    return records


def _play_rotations(
    game: str, rules: dict[str, Any], slots: list[str], kind: int, count: int, seed: int, bar: tqdm
) -> list[EpisodeRecord]:
    """`count` episodes (rounded up to whole rotations) of one kind, hands or matches."""
    deals = range(math.ceil(count / len(slots)))
    return play_deals(game, rules, slots, kind, deals, seed, on_deal=bar.update)


def evaluate(
    game: str,
    agent_specs: list[str],
    hands: int,
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    matches: int = 0,
    progress: bool = False,
    desc: str | None = None,
) -> EvalResult:
    """Play `hands` seeded hands (and `matches` matches) with seats rotated; see the module doc.

    `progress` draws a bar on stderr (`desc`: its label).
    """
    seed = check_seed(seed)
    for name, value in (("hands", hands), ("matches", matches)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if hands == 0 and matches == 0:
        raise ValueError("nothing to play: give hands > 0 or matches > 0")
    rules = dict(rule_options or {})
    rules["num_players"] = players_for(game, rules, agent_specs)
    full_rules = make_env(game, rules).rules.to_dict()
    n = full_rules["num_players"]
    slots = seat_slots(agent_specs, n)
    total = n * (math.ceil(hands / n) + math.ceil(matches / n))
    with tqdm(total=total, disable=not progress, desc=desc or f"{game} eval", unit="episode",
              file=sys.stderr) as bar:
        hand_records = _play_rotations(game, rules, slots, HAND, hands, seed, bar)
        match_records = _play_rotations(game, rules, slots, MATCH, matches, seed, bar)
    return EvalResult(
        game=game, rules=full_rules, num_players=n, seed=seed, slots=slots,
        hand_records=hand_records, match_records=match_records, hands_asked=hands, matches_asked=matches,
    )
