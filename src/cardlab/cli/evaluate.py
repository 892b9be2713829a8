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
    table_default,
    whole,
    write_outputs,
)
from cardlab.evaluation.request import EvalRequest

DEFAULT_OPPONENT = "expert"
"""without --agents: the shipped bot against this heuristic in every other seat"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, the agents, hands and matches, seed, rules, result files, threads and Ray options."""
    add_game(p, option=True)
    p.add_argument("--agents", nargs="+", metavar="SPEC",
                   help=f"{agents_help()}; one seat each, or repeated in order to fill --rule num_players=N "
                        f"(default: the shipped bot of the table's size in one seat, {DEFAULT_OPPONENT} in "
                        "every other; without num_players the smallest table with a bot)")
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
    """`evaluate`, or its Ray twin with the command's workers and address (same arguments, same result).

    Serially, when stderr is not a terminal (a log: no bar is drawn), a line of how far the run is goes to
    stdout at least every `HEARTBEAT_SECONDS`, flushed, so a log is never silent for long.
    """
    if not on_ray(args):
        from cardlab.evaluation.evaluate import evaluate

        if sys.stderr.isatty():
            return evaluate
        from cardlab.training.harness.progress import Progress

        log = Progress(True)

        def played(done: int, total: int) -> None:
            log.heartbeat(lambda: f"cardlab {args.command}: {done:,} of {total:,} episodes played")

        return functools.partial(evaluate, on_played=played)
    from cardlab.cluster.parallel_evaluation import evaluate_parallel

    return functools.partial(evaluate_parallel, workers=args.workers, address=args.ray_address)


def table_agents(args: argparse.Namespace, rules: dict[str, Any]) -> list[str]:
    """``--agents``; without it the table's shipped bot in one seat, `DEFAULT_OPPONENT` in every other.

    The default is printed, and `rules` gets its num_players.
    """
    if args.agents is not None:
        agents = agent_list(args.agents, "--agents")
        say_filled(agents, args.game, rules)
        return agents
    spec, players = table_default(args.game, rules, f"--agents bot:PATH {DEFAULT_OPPONENT}")
    rules["num_players"] = players
    print(f"no --agents: {spec} (the shipped bot of a {players}-player {args.game} table) against "
          f"{players - 1} x {DEFAULT_OPPONENT}", flush=True)
    return [spec] + [DEFAULT_OPPONENT] * (players - 1)


def say_filled(agents: list[str], game_id: str, rules: dict[str, Any]) -> None:
    """Print how the seats were filled when fewer agents than seats were given (they repeat in order, so
    ``--agents bot:huit-4p expert`` at four seats seats the bot twice): nothing is seated unsaid. One agent
    alone, in every seat, needs no word."""
    from cardlab.evaluation.episodes import players_for, seat_slots

    try:
        seats = players_for(game_id, rules, agents)
    except ValueError:
        return  # the evaluation refuses this table itself, saying why
    if len(agents) >= seats or len(set(agents)) == 1:
        return
    slots = ", ".join(f"{seat}: {spec}" for seat, spec in enumerate(seat_slots(agents, seats)))
    print(f"{len(agents)} agents for {seats} seats, repeated in order: {slots} (give {seats} to choose every "
          "seat)", flush=True)


def run(args: argparse.Namespace) -> int:
    """Evaluate serially or on Ray, then print the table and write the result files."""
    evaluate = evaluator(args)
    rules = rule_options(args.rule)
    check_outputs(args)
    agents = table_agents(args, rules)
    with bot_threads(agents):
        request = EvalRequest(args.game, agents, hands=args.hands, matches=args.matches, seed=args.seed,
                              rules=rules)
        result = evaluate(request, progress=sys.stderr.isatty())
    write_outputs(result, args)
    return 0


COMMAND = Command("eval", "win rates of agents over seeded hands, seats rotated", add_arguments, run)
