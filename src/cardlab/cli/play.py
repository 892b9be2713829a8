"""`cardlab play GAME`: a person against agents in the terminal (the app is `cardlab.terminal`)."""

from __future__ import annotations

import argparse

from cardlab.cli.common import (
    Command,
    add_game,
    add_rule,
    add_seed,
    add_threads,
    agent_list,
    bot_threads,
    rule_options,
    specs_text,
    table_default,
    whole,
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, the opponents, hands, seed, the person's seat, rules and threads."""
    add_game(p)
    p.add_argument("--opponents", nargs="+", metavar="SPEC",
                   help=f"the other players, space- or comma-separated: {specs_text()}; one seat each, or "
                        "repeated in order to fill --rule num_players=N (default: the shipped bot of the "
                        "table's size, bot:GAME-Np, in every other seat; without num_players the smallest "
                        "table with a bot)")
    p.add_argument("--hands", type=whole(1), default=1, metavar="N",
                   help="hands to play, one match (default 1)")
    add_seed(p, "the deals and the opponents")
    p.add_argument("--seat", type=whole(0), default=0, metavar="K",
                   help="your seat (0 plays first; default 0)")
    add_rule(p)
    add_threads(p)


def run(args: argparse.Namespace) -> int:
    """Play on stdin/stdout until the hands are played or the input ends."""
    from cardlab.terminal import play

    rules = rule_options(args.rule)
    if args.opponents is None:
        spec, players = table_default(args.game, rules, "--opponents expert")
        rules["num_players"] = players
        opponents = [spec] * (players - 1)
    else:
        opponents = agent_list(args.opponents, "--opponents")
    with bot_threads(opponents):
        return play(args.game, opponents, seed=args.seed, rule_options=rules, hands=args.hands,
                    seat=args.seat)


COMMAND = Command("play", "play against agents in the terminal", add_arguments, run)
