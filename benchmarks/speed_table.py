"""Every seat at engine speed, side by side: one run on one core measures each row of the speed table.

The rows (`speed_rows.ROWS`, with their targets) come from the measuring
functions of the other benchmarks, called here in one process pinned to one
CPU (`NUMBA_NUM_THREADS=1`, torch on one thread):

- lean training, Huit 4p (configs/tables/huit_4p.yaml on one torch thread):
  the learner alone against three experts and pure self-play, whole `train`
  calls (`selfplay_throughput.whole_run`), and their ratio;
- the search's worlds per decision at its default budget, Huit 2p and 4p,
  over the shipped bot and over the expert: the worlds it plays per CPU
  second over the timed decisions with a choice (`decision_latency.measure`)
  times the default cap (`speed_rows.BUDGET_MS`), what a core of its own
  lets through;
- the Gymnasium vector env at 256 games with `random` and `expert`
  opponents beside the raw batched engine (`vector_throughput.vector_loop`,
  `engine_loop`), and vector over engine;
- the batched heuristics' decisions per second, both games at 4 players,
  with the agents' one-move `act` beside (`heuristic_throughput.measure`).

Rates are per CPU second of this process (on a shared machine the steadier
clock; the JSON file keeps the wall-clock medians too), medians of
`--repeats` runs, the runs of different measures interleaved so that a
change of the machine's load falls on both sides of a ratio. The worlds the
search's wall-clock cap lets through on a busy machine fall with its load
and the process's niceness (which the report records); its worlds per CPU
second do not, so the table shows those at the cap. It prints the
machine and `os.getloadavg()` once, then the table; ``--json PATH`` writes
the figures, which ``python docs/update_tables.py`` puts into
docs/results.md from docs/speed_table.json. ``--quick`` measures everything
at a tiny size (a test that the command works, not figures).

Run: ``python benchmarks/speed_table.py [--repeats 3] [--json docs/speed_table.json] [--quick]``
(about six minutes on a busy 2-core machine; under a minute with ``--quick``).
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decision_latency
import heuristic_throughput
import selfplay_throughput
import speed_rows
import vector_throughput

LEAN_CONFIG = "tables/huit_4p"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How much each measure plays."""

    lean_steps: int = 300_000
    """env steps of each pure self-play run"""
    expert_steps: int = 50_000
    """env steps of each run against the experts"""
    decisions: int = 200
    """timed decisions of each search"""
    warmup: int = 20
    vector_steps: int = 1_000_000
    """steps of each engine and vector run with `random` opponents"""
    vector_expert_steps: int = 200_000
    heuristic_rows: int = 4096
    act_rows: int = 1024
    repeats: int = 3


QUICK = Sizes(lean_steps=1, expert_steps=1, decisions=24, warmup=10, vector_steps=4 * speed_rows.NUM_ENVS,
              vector_expert_steps=2 * speed_rows.NUM_ENVS, heuristic_rows=64, act_rows=16, repeats=1)
"""one lean iteration each, a few decisions and batches: every code path, in well under a minute"""


class Figures:
    """The figures of a run: CPU-time medians, wall-clock medians and every run's CPU figure, by key."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.runs: dict[str, list[float]] = {}

    def add(self, key: str, cpu: list[float], wall: list[float] | None = None) -> None:
        self.cpu[key], self.runs[key] = statistics.median(cpu), cpu
        if wall is not None:
            self.wall[key] = statistics.median(wall)
        each = " / ".join(f"{value:,.2f}" if value < 10 else f"{value:,.0f}" for value in cpu)
        print(f"  {key}: {each}", flush=True)

    def ratio(self, key: str, over: str, under: str) -> None:
        """`over` / `under`, of their medians (the runs: of each repeat's pair)."""
        runs = [a / b for a, b in zip(self.runs[over], self.runs[under], strict=True)]
        self.cpu[key], self.runs[key] = self.cpu[over] / self.cpu[under], runs
        if over in self.wall and under in self.wall:
            self.wall[key] = self.wall[over] / self.wall[under]


def interleaved(loops: dict[str, Callable[[int], tuple[float, float]]], repeats: int,
                figures: Figures) -> None:
    """Run each loop (seed -> (wall, CPU) rate) `repeats` times, one of each in turn, and add the medians."""
    runs: dict[str, list[tuple[float, float]]] = {key: [] for key in loops}
    for seed in range(repeats):
        for key, loop in loops.items():
            runs[key].append(loop(seed))
    for key, rates in runs.items():
        figures.add(key, [cpu for _, cpu in rates], [wall for wall, _ in rates])


def lean(sizes: Sizes, figures: Figures) -> None:
    variants = selfplay_throughput.lean_variants(LEAN_CONFIG)
    name = Path(LEAN_CONFIG).name

    def run(label: str, steps: int) -> Callable[[int], tuple[float, float]]:
        cfg = dataclasses.replace(variants[f"lean {name} {label}"], torch_threads=1)

        def one(_seed: int) -> tuple[float, float]:
            played, seconds, cpu = selfplay_throughput.whole_run(cfg, steps)
            return played / seconds, played / cpu
        return one

    interleaved({"lean vs expert": run(selfplay_throughput.VS_EXPERT, sizes.expert_steps),
                 "lean self-play": run(selfplay_throughput.PURE, sizes.lean_steps)}, sizes.repeats, figures)
    figures.ratio("lean ratio", "lean vs expert", "lean self-play")


def search(sizes: Sizes, figures: Figures) -> None:
    for spec, _players in speed_rows.SEARCHES:
        found = decision_latency.measure(spec, sizes.decisions, warmup=sizes.warmup)
        if found.worlds_per_cpu_second is None:
            raise RuntimeError(f"{spec}: none of its {sizes.decisions} timed decisions had a choice: "
                               "give it more decisions")
        figures.add(speed_rows.search_key(spec), [found.worlds_per_cpu_second * speed_rows.BUDGET_MS / 1000])


def vector(sizes: Sizes, figures: Figures) -> None:
    size = speed_rows.NUM_ENVS
    for opponent in ("random", "expert"):
        vector_throughput.vector_loop(2, 2, 0, opponent)  # compile or load numba caches outside the timings
    interleaved({
        "engine": lambda seed: vector_throughput.engine_loop(size, sizes.vector_steps, seed),
        "vector random": lambda seed: vector_throughput.vector_loop(size, sizes.vector_steps, seed, "random"),
        "vector expert": lambda seed: vector_throughput.vector_loop(size, sizes.vector_expert_steps, seed,
                                                                    "expert"),
    }, sizes.repeats, figures)
    figures.ratio("vector ratio", "vector random", "engine")


def heuristics(sizes: Sizes, figures: Figures) -> None:
    rows = heuristic_throughput.measure(list(speed_rows.GAMES), [speed_rows.HEURISTIC_PLAYERS],
                                        sizes.heuristic_rows, min(sizes.act_rows, sizes.heuristic_rows),
                                        sizes.repeats, seed=0)
    for row in rows:
        batched, act = speed_rows.heuristic_keys(row.game, row.agent)
        figures.add(batched, [row.batched])  # already the median of its repeats
        figures.add(act, [row.act])


MEASURES = (lean, search, vector, heuristics)


def run(sizes: Sizes, quick: bool = False) -> dict[str, Any]:
    """Measure every row; the report the JSON file holds (`speed_rows.markdown` renders it)."""
    start = speed_rows.load_now()
    found = speed_rows.machine()
    print(f"machine: {found['cpu']}, {found['cores']} cores; os.getloadavg(): "
          f"{', '.join(f'{x:.2f}' for x in start)}; nice {os.nice(0)}; measuring on one core", flush=True)
    figures = Figures()
    for measure in MEASURES:
        print(f"{measure.__name__}:", flush=True)
        began = time.perf_counter()
        measure(sizes, figures)
        print(f"  ({time.perf_counter() - began:.0f} s)", flush=True)
    return {"machine": found, "loadavg": {"start": start, "end": speed_rows.load_now()},
            "nice": os.nice(0), "quick": quick, "repeats": sizes.repeats, "sizes": dataclasses.asdict(sizes),
            "figures": figures.cpu, "wall": figures.wall, "runs": figures.runs}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, help="runs per measure, the median shown (default 3; 1 quick)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the report here")
    parser.add_argument("--quick", action="store_true", help="every measure at a tiny size (a test)")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.json is not None and not args.json.parent.is_dir():
        parser.error(f"--json {args.json}: its folder {args.json.parent} does not exist")
    sizes = QUICK if args.quick else Sizes()
    if args.repeats is not None:
        sizes = dataclasses.replace(sizes, repeats=args.repeats)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    torch.set_num_threads(1)
    report = run(sizes, args.quick)
    print()
    print(speed_rows.table(report["figures"]), end="")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
