"""Hands per second of `cardlab bench` on a deal suite: one core, and Ray workers; and that they agree.

Plays the agent on the suite (all its deals, or the first ``--deals``) as
`cardlab bench` does, serially in this process and then with ``--workers``
Ray workers (a local Ray started and stopped inside the timing), ``--runs``
times each, and prints the medians in hands (or matches) per second, how
busy the machine was (`os.getloadavg`) beside them, and whether both runs gave the same
result file.

    python benchmarks/suite_throughput.py                          # expert on huit-2p, 1 run each
    python benchmarks/suite_throughput.py --suite switch-4p --deals 500 --runs 3

Needs the ray extra for the workers' figure:

    pip install torch==2.13.0 -e ".[ray]"
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import statistics
import time

from cardlab.evaluation.bench import bench
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.suites import DEFAULT_SUITE, load_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default=DEFAULT_SUITE)
    parser.add_argument("--agent", default="expert")
    parser.add_argument("--deals", type=int, default=0, help="the first N deals only (0: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1, help="runs of each (medians are reported)")
    args = parser.parse_args()

    from cardlab.cluster.parallel_evaluation import evaluate_parallel

    suite = load_suite(args.suite)
    if args.deals:
        suite = dataclasses.replace(suite, deals=min(args.deals, suite.deals))
    players = {"serial": None, f"{args.workers} Ray workers": args.workers}
    times: dict[str, list[float]] = {name: [] for name in players}
    outputs: dict[str, str] = {}
    for run in range(args.runs):
        for name, workers in players.items():
            play = functools.partial(evaluate_parallel, workers=workers) if workers else evaluate
            start = time.perf_counter()
            result = bench(args.agent, suite, play=play)
            times[name].append(time.perf_counter() - start)
            outputs[name] = result.to_json()
            print(f"run {run + 1}: {name:<16} {times[name][-1]:7.1f} s, load {os.getloadavg()[0]:.2f}",
                  flush=True)
    episodes = suite.episodes
    what = "matches" if suite.episode == "match" else "hands"
    print(f"\n{args.agent} on {suite.name} ({suite.deals:,} deals, {episodes:,} {what}; "
          f"{os.cpu_count()} cores, medians of {args.runs} run(s))")
    for name, values in times.items():
        seconds = statistics.median(values)
        print(f"{name:<16} {seconds:7.1f} s  {episodes / seconds:7.1f} {what}/s")
    print(f"same result file: {len(set(outputs.values())) == 1}")


if __name__ == "__main__":
    main()
