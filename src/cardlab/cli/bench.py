"""`cardlab bench AGENT [--suite NAME]`: an agent on a fixed deal suite in duplicate, against a field."""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
                   help=f"the reference agents of the other seats, at most one each, repeated in order "
                        f"(default: {' '.join(DEFAULT_FIELD)} in every one)")
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
    check_table(args.agent, suite)
    field = agent_list(args.field, "--field") if args.field is not None else list(DEFAULT_FIELD)
    argv = ["cardlab", "bench", args.agent, "--suite", args.suite]
    if args.field is not None:
        argv += ["--field", *field]
    with bot_threads([args.agent, *field]):
        result = bench(args.agent, suite, field, play=play, progress=sys.stderr.isatty(), command=argv)
    write_outputs(result, args)
    return 0


def check_table(agent: str, suite: Any) -> None:
    """Refuse a bot made for another table than the suite's, naming the suites of its own table: bench plays
    the suite's table and has no players option. Agents other than bot files, and bot files that cannot be
    read, are left to the agent's own loading, which says what is wrong."""
    from cardlab.agents.agent_spec import bot_source
    from cardlab.agents.bot import bot_paths
    from cardlab.envs.checked_json import read_json_file

    if not agent.strip().startswith("bot:"):
        return
    try:
        meta = read_json_file(bot_paths(bot_source(agent))[0])
        game, players = str(meta["game"]), int(meta["num_players"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if (game, players) == (suite.game, suite.num_players):
        return
    fitting = [name for name in suite_names() if name.startswith(f"{game}-{players}p")]
    hint = (f"choose a suite of its table: {' or '.join(f'--suite {name}' for name in fitting)}" if fitting
            else "no shipped suite is of that table: make one (docs/leaderboard.md) and give its .json")
    raise ValueError(f"{agent} plays {game} at {players} players, suite {suite.name} is {suite.game} at "
                     f"{suite.num_players}: bench plays the suite's table, so {hint}")


COMMAND = Command("bench", "an agent on a fixed deal suite in duplicate: win rate, points, a leaderboard row",
                  add_arguments, run, lists_specs=True)
