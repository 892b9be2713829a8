"""`cardlab tournament`: a round robin of agents, a cross-table of win rates and TrueSkill ratings."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any

from cardlab.cli.common import (
    Command,
    add_game,
    add_outputs,
    add_ray_options,
    add_rule,
    add_seed,
    add_threads,
    agent_list,
    agents_help,
    bot_threads,
    check_outputs,
    on_ray,
    rule_options,
    whole,
    write_outputs,
)
from cardlab.evaluation.request import EvalRequest


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, the agents, hands per pairing, seed, rules, result files, threads and Ray options."""
    add_game(p, option=True)
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC",
                   help=f"{agents_help()}; at least 2, each entered once")
    p.add_argument("--hands", required=True, type=whole(1), metavar="N",
                   help="hands per pairing (rounded up to whole seat rotations)")
    add_seed(p, "the deals and the agents")
    add_rule(p)
    add_outputs(p)
    add_threads(p)
    add_ray_options(p)


def tournament_runner(args: argparse.Namespace) -> Callable[..., Any]:
    """`tournament`, or its Ray twin with the command's workers and address."""
    if not on_ray(args):
        from cardlab.evaluation.tournament import tournament

        return tournament
    from cardlab.cluster.parallel_evaluation import tournament_parallel

    return functools.partial(tournament_parallel, workers=args.workers, address=args.ray_address)


def run(args: argparse.Namespace) -> int:
    """Play the round robin serially or on Ray, then print the table and write the result files."""
    tournament = tournament_runner(args)
    agents = agent_list(args.agents, "--agents")
    check_outputs(args)
    with bot_threads(agents):
        request = EvalRequest(args.game, agents, hands=args.hands, seed=args.seed,
                              rules=rule_options(args.rule))
        result = tournament(request, progress=sys.stderr.isatty())
    write_outputs(result, args)
    return 0


COMMAND = Command("tournament", "round robin: cross-table of win rates and TrueSkill ratings",
                  add_arguments, run)
