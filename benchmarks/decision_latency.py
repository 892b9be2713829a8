"""How long does an agent take to decide? Per-move latency of the shipped bots and of search over them.

Each agent plays every seat of real hands of its own table (a shipped bot's
game and players, from its metadata) through the AEC env, and every call of
`act` is timed (moves with one legal move included: that is what a player
waits for); the first `--warmup` calls are left out (numba kernels load, a
search builds its batched engine). One core: torch at one thread and
`NUMBA_NUM_THREADS=1`. A search agent's "worlds" is the median number of worlds
its searches (decisions with a choice) finished (below its budget when the
time cap cut them), "worlds per CPU s" all they finished over the CPU time
they took (what a core of its own would play, whatever else runs); "one
legal move" the share of decisions with nothing to choose, which a search
plays at once (so its median is near 0 when that share passes one half).

    python benchmarks/decision_latency.py                       # every bot, and search over three
    python benchmarks/decision_latency.py --decisions 100 --agents search:bot:huit-2p
    python benchmarks/decision_latency.py --agents search:expert@huit-4p   # any agent, at a named table

"choice" columns time only the decisions with more than one legal move (the
searches themselves). ``--levels`` measures the search's levels instead
(`cardlab.agents.search.LEVELS`: ``level=quick`` and ``level=strong`` of the
web app's search, over the expert with the expert's rollouts, at each table
of `LEVEL_TABLES`, or of those ``--tables`` names), the median and 99th
percentile of their decisions with a choice against each level's bound:

    python benchmarks/decision_latency.py --levels --decisions 200
    python benchmarks/decision_latency.py --levels --tables switch-4p

``--belief`` adds the rows of the belief at each level (`BELIEF_SPECS`:
``belief=expert`` with ``weigh=resample`` and ``weigh=weights``, whose
replay of the record counts in the cap, and ``belief=learned``, whose
reading and deal count in it), ``--level quick`` measures one
level only; an agent that sees the hand's record is shown it before each
move, outside the time measured (`show_table`, as the play loops do):

    python benchmarks/decision_latency.py --levels --belief --level quick --decisions 200
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import itertools
import statistics
import time
from typing import NamedTuple

import numpy as np
import torch

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import show_table
from cardlab.agents.bot_catalogue import shipped_bots
from cardlab.agents.search import LEVEL_BOUNDS_MS, LEVELS, SearchAgent
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.envs.checked_json import read_json_file

SEARCHED = ("search:bot:huit-2p", "search:bot:huit-4p", "search:bot:switch-4p", "search:expert@huit-2p",
            "search:expert@huit-4p", "search:rollout=expert:bot:huit-2p", "search:rollout=expert:bot:huit-4p")
"""the search agents measured by default (their default budget)"""
LEVEL_TABLES = ("huit-2p", "huit-4p", "switch-4p")
"""the tables ``--levels`` measures each level at"""
LEVEL_SPEC = "search:level={level}:expert"
"""the search each level is measured with (the web app's)"""
BELIEF_SPECS = ("search:level={level}:belief=expert:expert",
                "search:level={level}:belief=expert:weigh=weights:expert",
                "search:level={level}:belief=learned:expert")
"""with ``--belief``: the belief's searches measured beside it at each level"""
LIMIT_MS = 100.0


class Latency(NamedTuple):
    """One agent's timed decisions at its table."""

    spec: str
    game: str
    players: int
    times_ms: list[float]
    choice_ms: list[float]
    """the times of the decisions with more than one legal move"""
    forced: float
    """share of the decisions with one legal move (a search plays it at once)"""
    worlds: float | None
    """median worlds per search (search agents only)"""
    worlds_per_cpu_second: float | None = None
    """the worlds the searches finished over the CPU time they took (what a free core would play; search
    agents only)"""

    def row(self) -> str:
        times = np.asarray(self.times_ms)
        p99 = float(np.percentile(times, 99))
        worlds = "-" if self.worlds is None else f"{self.worlds:.0f}"
        pace = "-" if self.worlds_per_cpu_second is None else f"{self.worlds_per_cpu_second:,.0f}"
        chosen = np.asarray(self.choice_ms) if self.choice_ms else np.zeros(1)
        return (f"| `{self.spec}` | {self.game} {self.players}p | {times.size} | {self.forced:.2f} | "
                f"{statistics.median(times):.2f} | {p99:.2f} | {times.max():.2f} | "
                f"{float(np.median(chosen)):.2f} | {float(np.percentile(chosen, 99)):.2f} | {worlds} | "
                f"{pace} | {'yes' if p99 <= LIMIT_MS else 'no'} |")


def table_of(spec: str) -> tuple[str, int]:
    """(game, players) of ``SPEC@GAME-Np``, else of a bot spec or of the bot a search spec searches over
    (its last ``bot:`` part)."""
    if "@" in spec:
        game, _, players = spec.rpartition("@")[2].rstrip("p").rpartition("-")
        return game, int(players)
    name = spec[spec.rindex("bot:"):]
    meta = read_json_file(shipped_bots()[name])
    return meta["game"], int(meta["num_players"])


def measure(spec: str, decisions: int, seed: int = 0, warmup: int = 20) -> Latency:
    """Time `decisions` calls of `act` of the agent `spec` playing every seat of seeded hands."""
    game, players = table_of(spec)
    spec = spec.partition("@")[0]
    env = make_env(game, num_players=players)
    agents = [make_agent(spec, env.game, seed=seed + seat) for seat in range(players)]
    times: list[float] = []
    forced: list[bool] = []
    worlds: list[int] = []
    cpu = 0.0
    hand = 0
    while len(times) < warmup + decisions:
        env.reset(seed=seed + hand)
        hand += 1
        for agent in agents:
            agent.reset()
        for name, seat, observation in live_turns(env):
            agent = agents[seat]
            show_table(agent, env, name)
            start, processor = time.perf_counter(), time.process_time()
            action = agent.act(observation)
            times.append((time.perf_counter() - start) * 1000)
            spent = time.process_time() - processor
            forced.append(int(observation["action_mask"].sum()) == 1)
            decision = agent.last_decision if isinstance(agent, SearchAgent) else None
            if decision is not None and len(times) > warmup:
                worlds.append(decision.worlds)
                cpu += spent
            env.step(action)
    searched = any(isinstance(agent, SearchAgent) for agent in agents)
    timed = slice(warmup, warmup + decisions)
    choice = [t for t, one in zip(times[timed], forced[timed], strict=True) if not one]
    return Latency(spec, game, players, times[timed], choice, float(np.mean(forced[timed])),
                   float(np.median(worlds)) if searched and worlds else None,
                   sum(worlds) / cpu if searched and worlds and cpu > 0 else None)


def level_rows(decisions: int, seed: int, warmup: int, belief: bool = False,
               levels: tuple[str, ...] = tuple(LEVELS), tables: tuple[str, ...] = LEVEL_TABLES) -> list[str]:
    """One row per level, table and search (`LEVEL_SPEC`, with `belief` also `BELIEF_SPECS`): the choice
    decisions' median and p99 against the level's bound."""
    rows = []
    for level, table, template in itertools.product(levels, tables,
                                                    (LEVEL_SPEC, *(BELIEF_SPECS if belief else ()))):
        spec = template.format(level=level)
        found = measure(f"{spec}@{table}", decisions, seed, warmup)
        chosen = np.asarray(found.choice_ms) if found.choice_ms else np.zeros(1)
        p99, bound = float(np.percentile(chosen, 99)), LEVEL_BOUNDS_MS[level]
        worlds = "-" if found.worlds is None else f"{found.worlds:.0f}"
        pace = "-" if found.worlds_per_cpu_second is None else f"{found.worlds_per_cpu_second:,.0f}"
        rows.append(f"| {level} | `{spec}` | {found.game} {found.players}p | {chosen.size} | "
                    f"{float(np.median(chosen)):.1f} | {p99:.1f} | {worlds} | {pace} | "
                    f"{'yes' if p99 <= bound else 'no'} ({bound:.0f}) |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=400, help="timed decisions per agent (default 400)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed first decisions (default 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", metavar="SPEC",
                        help="the agents (bot:NAME, search options over one, or SPEC@GAME-Np at that table); "
                             "default: every shipped bot, "
                             f"then {' '.join(SEARCHED)}")
    parser.add_argument("--levels", action="store_true",
                        help="measure the search's levels (quick, strong) at each table of LEVEL_TABLES")
    parser.add_argument("--tables", nargs="+", metavar="GAME-Np", choices=LEVEL_TABLES, default=LEVEL_TABLES,
                        help=f"with --levels, only these tables (default: all of {' '.join(LEVEL_TABLES)})")
    parser.add_argument("--belief", action="store_true",
                        help="with --levels: the belief's searches too (BELIEF_SPECS)")
    parser.add_argument("--level", choices=tuple(LEVELS), help="with --levels: this level only")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.levels:
        print("| level | agent | table | choice decisions | choice median ms | choice p99 ms | worlds | "
              "worlds per CPU s | p99 within (ms) |")
        print("|---|---|---|---|---|---|---|---|---|")
        levels = (args.level,) if args.level else tuple(LEVELS)
        for row in level_rows(args.decisions, args.seed, args.warmup, args.belief, levels,
                              tuple(args.tables)):
            print(row, flush=True)
        return
    specs = args.agents or [*shipped_bots(), *SEARCHED]
    print(f"| agent | table | decisions | one legal move | median ms | p99 ms | max ms | choice median ms | "
          f"choice p99 ms | worlds | worlds per CPU s | p99 <= {LIMIT_MS:.0f} ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        print(measure(spec, args.decisions, args.seed, args.warmup).row(), flush=True)


if __name__ == "__main__":
    main()
