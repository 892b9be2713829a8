"""`cardlab rules GAME`: a game's rule options, observation layout and action table, generated from code."""

from __future__ import annotations

import argparse

from cardlab.cli.common import Command, add_game, add_rule, rule_options


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, rule options (the tables depend on them) and ``--markdown``."""
    add_game(p)
    add_rule(p)
    p.add_argument("--markdown", action="store_true",
                   help="print only the generated Markdown tables (what the README and the env doc pages "
                        "show)")


def run(args: argparse.Namespace) -> int:
    """Print the game's title and options, then its tables (only the tables with ``--markdown``)."""
    from cardlab.envs import make_game

    game = make_game(args.game, rule_options(args.rule))
    if args.markdown:
        print(game.markdown(level=3))
        return 0
    print(f"# {game.spec.title} ({game.spec.env_name})\n\n{game.spec.summary}\n\n"
          f"rule options: {game.describe()}\n")
    print(game.markdown(level=2))
    return 0


COMMAND = Command("rules", "print the rule options, observation layout and action table of a game",
                  add_arguments, run)
