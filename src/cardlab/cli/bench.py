"""`cardlab bench AGENT [--suite NAME]`: an agent on a fixed deal suite in duplicate, against a field."""

from __future__ import annotations

import argparse
import sys

from cardlab.cli.common import (
    Command,
    add_outputs,
    add_ray_options,
    add_threads,
    agent_list,
    bot_threads,
    check_outputs,
    write_outputs,
)
from cardlab.cli.evaluate import evaluator
from cardlab.evaluation.bench import DEFAULT_FIELD
from cardlab.evaluation.suites import DEFAULT_SUITE, suite_names


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The agent, the suite, the field, result files, threads and Ray options."""
    p.add_argument("agent", metavar="AGENT",
                   help="the agent spec to measure (a shipped agent, bot:PATH, or MODULE:FACTORY: your own)")
    p.add_argument("--suite", default=DEFAULT_SUITE, metavar="NAME",
                   help=f"the deal suite: {', '.join(suite_names())}, or a suite's .json "
                        f"(default {DEFAULT_SUITE})")
    p.add_argument("--field", nargs="+", metavar="SPEC",
                   help=f"the reference agents of the other seats, repeated in order (default: "
                        f"{' '.join(DEFAULT_FIELD)} in every one)")
    add_outputs(p)
    add_threads(p)
    add_ray_options(p)
    p.epilog = ("Each deal is played once per seat rotation with the agent in that seat; the numbers depend "
                "on the agent, suite and field only. The JSON is a leaderboard row (docs/leaderboard.md).")


def run(args: argparse.Namespace) -> int:
    """Load and check the suite, play it (serially or on Ray), print the table and write the files."""
    from cardlab.evaluation.bench import bench
    from cardlab.evaluation.suites import load_suite

    play = evaluator(args)
    check_outputs(args)
    suite = load_suite(args.suite)
    field = agent_list(args.field, "--field") if args.field is not None else list(DEFAULT_FIELD)
    argv = ["cardlab", "bench", args.agent, "--suite", args.suite]
    if args.field is not None:
        argv += ["--field", *field]
    with bot_threads([args.agent, *field]):
        result = bench(args.agent, suite, field, play=play, progress=sys.stderr.isatty(), command=argv)
    write_outputs(result, args)
    return 0


COMMAND = Command("bench", "an agent on a fixed deal suite in duplicate: win rate, points, a leaderboard row",
                  add_arguments, run, lists_specs=True)
