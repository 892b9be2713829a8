"""`cardlab eval`: win rates of agents over seeded hands (and matches), seats rotated."""

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


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, the agents, hands and matches, seed, rules, result files, threads and Ray options."""
    add_game(p, option=True)
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC",
                   help=f"{agents_help()}; one seat each, or repeated in order to fill --rule num_players=N")
    p.add_argument("--hands", required=True, type=whole(0), metavar="N",
                   help="hands to play (rounded up to whole seat rotations; 0 with --matches)")
    p.add_argument("--matches", type=whole(0), default=0, metavar="N",
                   help="also play N matches to the target score (rounded up to whole seat rotations)")
    add_seed(p, "the deals and the agents")
    add_rule(p)
    add_outputs(p)
    add_threads(p)
    add_ray_options(p)


def evaluator(args: argparse.Namespace) -> Callable[..., Any]:
    """`evaluate`, or its Ray twin with the command's workers and address (same arguments, same result)."""
    if not on_ray(args):
        from cardlab.evaluation.evaluate import evaluate

        return evaluate
    from cardlab.cluster.evaluate import evaluate_parallel

    return functools.partial(evaluate_parallel, workers=args.workers, address=args.ray_address)


def run(args: argparse.Namespace) -> int:
    """Evaluate serially or on Ray, then print the table and write the result files."""
    evaluate = evaluator(args)
    agents = agent_list(args.agents, "--agents")
    check_outputs(args)
    with bot_threads(agents):
        result = evaluate(args.game, agents, args.hands, seed=args.seed, rule_options=rule_options(args.rule),
                          matches=args.matches, progress=sys.stderr.isatty())
    write_outputs(result, args)
    return 0


COMMAND = Command("eval", "win rates of agents over seeded hands, seats rotated", add_arguments, run)
