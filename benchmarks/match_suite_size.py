"""How many deals a match suite needs: the paired variance of a match win rate, measured, and its time.

Plays each agent on the first ``--deals`` deals of a match suite against the
expert, as `cardlab bench` does (every deal in each seat rotation), and
prints per agent: seconds a match, the match win rate, the design effect of
its deal clusters (`cardlab.evaluation.paired.design_effect`: the variance of
the per-deal win counts over the binomial one) and the deals the suite needs
for a paired 95% interval of +-``--half`` at that rate and design effect,
with the deals at the worst rate of the table (p = 0.5 or the fair share's
neighbourhood: the largest p(1-p) of the agents measured) beside it.

    python benchmarks/match_suite_size.py --suite huit-4p-match --deals 60 --agents expert greedy bot:huit-4p
"""

from __future__ import annotations

import argparse
import math
import time

from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_game
from cardlab.envs.declared import RANGE, check_that, check_whole
from cardlab.evaluation.bench import bench
from cardlab.evaluation.episodes import MATCH
from cardlab.evaluation.paired import design_effect
from cardlab.evaluation.suites import Suite, load_suite, suite_names


def deals_needed(rate: float, deff: float, seats: int, half: float, z: float = 1.96) -> int:
    """Deals whose seats x rotations matches give a 95% half-width of `half` at `rate` and `deff`."""
    return math.ceil(rate * (1 - rate) * deff * (z / half) ** 2 / seats)


def checked(name: str, deals: int, agents: list[str], half: float) -> Suite:
    """The suite `name`, where it is a match suite, and the arguments, before any match: a hand suite would
    be measured as if its hands were matches, a half-width <= 0 or NaN divided by zero or gave 1 deal, a
    bad agent spec stopped the run after the agents before it. A `ValueError` in one line otherwise."""
    suite = load_suite(name)
    check_that(suite.kind == MATCH, "--suite", name, "a suite of hands, not of matches",
               ", ".join(n for n in suite_names() if n.endswith("-match")) + " (or a match suite's .json)")
    check_whole("--deals", deals, 1, suite.deals,
                f"a whole number from 1 to the suite's {suite.deals:,} deals")
    check_that(0 < half <= 0.5, "--half", half, RANGE, "a half-width of the interval > 0 and <= 0.5")
    table = make_game(suite.game, suite.rules)
    for agent in agents:
        make_agent(agent, table)
    return suite


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="huit-4p-match")
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--agents", nargs="+", default=["expert", "greedy"])
    parser.add_argument("--half", type=float, default=0.02, help="the wanted half-width of the interval")
    args = parser.parse_args(argv)
    try:
        suite = checked(args.suite, args.deals, args.agents, args.half)
    except ValueError as err:
        parser.error(str(err))
    n = suite.num_players
    print(f"{suite.name}: first {args.deals} deals x {n} rotations, against the expert")
    print(f"{'agent':<28}{'s/match':>9}{'win rate':>10}{'deff':>7}{'deals for +-' + str(args.half):>18}")
    for agent in args.agents:
        started = time.perf_counter()
        result = bench(agent, suite, deals=args.deals)
        seconds = (time.perf_counter() - started) / (args.deals * n)
        rate = result.rate
        deff = design_effect(rate.deal_wins, rate.deal_episodes)
        print(f"{agent:<28}{seconds:>9.3f}{rate.rate:>10.3f}{deff:>7.2f}"
              f"{deals_needed(rate.rate, deff, n, args.half):>18,}")


if __name__ == "__main__":
    main()
