"""`cardlab advise GAME`: what an agent would play in a saved state, with its probabilities."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_game, add_seed, add_threads, specs_text, whole
from cardlab.envs.checked_json import read_json_file


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, the saved state, the advisor, how many moves to list, seed and threads."""
    add_game(p)
    p.add_argument("--state", required=True, type=pathlib.Path, metavar="STATE.json",
                   help="env.unwrapped.state_dict() as JSON (it holds the hand's record, which "
                        "search:belief=learned reads), or a position saved by the web app")
    p.add_argument("--agent", required=True, metavar="SPEC", help=f"the advisor: {specs_text()}")
    p.add_argument("--top", type=whole(1), default=3, metavar="N", help="moves to list (default 3)")
    add_seed(p, "the advisor (heuristics break ties with it)")
    add_threads(p)


def run(args: argparse.Namespace) -> int:
    """Read the position (checked like the web app's), then list the advisor's best moves."""
    from cardlab.agents.agent_spec import make_agent
    from cardlab.agents.base import advise, show_table
    from cardlab.serve.view import read_position

    data = read_json_file(args.state, f"the state file {args.state}")
    game, seat, observation, env = read_position(args.game, data)
    agent = make_agent(args.agent, game, seed=args.seed)
    if agent.sees and env is None:
        raise ValueError(f"--agent {args.agent} must be shown the hand's record, which a web app position "
                         f"does not hold; accepted: a saved state (env.unwrapped.state_dict() as JSON) for "
                         f"it, or an advisor that plays from the observation (e.g. search:worlds=128:expert)")
    if env is not None:
        show_table(agent, env, env.possible_agents[seat])  # as a game shows a search that reads the hand
    print(f"{game.spec.title}, {game.num_players} players: player_{seat} to move; advisor {args.agent}")
    for rank, move in enumerate(advise(agent, observation, args.top), 1):
        print(f"  {rank}. {move.text:<28} {move.probability:.3f}")
    return 0


COMMAND = Command("advise", "what an agent would play in a saved state, with probabilities", add_arguments,
                  run, lists_specs=True)
