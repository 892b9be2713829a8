"""`cardlab compare A B`: is A stronger than B? A sequential test on paired deals that stops once it knows."""

from __future__ import annotations

import argparse
import contextlib
import json
import pathlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from cardlab.cli.common import (
    Command,
    add_game,
    add_ray_options,
    add_rule,
    add_seed,
    add_threads,
    bot_threads,
    check_output,
    on_ray,
    rule_options,
    whole,
    write_text_output,
)

if TYPE_CHECKING:
    from cardlab.evaluation.compare import Contest, PlayDeals

DEFAULT_DELTA = 0.02
"""H1 without --elo or --delta: A wins 2 points more than its fair share (about 14 Elo at 2 players)."""

DESCRIPTION = """\
A plays in one seat and B in every other seat (B's copies), on deals played
once in every seat rotation, so A's fair share is 1/players. After each batch
of deals a GSPRT (the sequential test of chess engines' test farms) on A's wins
per deal asks: is A's share fair + delta (H1) rather than fair (H0)? And the
mirror test for B. Each test answers yes (its LLR reached the upper bound),
no (it reached the lower bound) or is still open; the progress lines say
which. The command stops as soon as the answers decide:

  A          A's test says yes: A is stronger (wrongly said of equals with probability about alpha)
  B          B's test says yes: B is stronger
  equal      both say no: neither is stronger by delta (missing a real delta with probability about beta)
  undecided  --max-hands were played first (one test may already say no while the other is open)
"""


def probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The game, A and B, hypotheses, error rates, budget, batch, seats, seed, rules, JSON, threads, Ray."""
    p.description = DESCRIPTION
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    add_game(p, option=True)
    p.add_argument("a", metavar="A", help="the agent in one seat (an agent spec, as eval's --agents)")
    p.add_argument("b", metavar="B", help="the agent in every other seat")
    hypotheses = p.add_mutually_exclusive_group()
    hypotheses.add_argument("--delta", type=float, metavar="D",
                            help=f"H1: A's share of hands is fair + D, H0: fair (default {DEFAULT_DELTA})")
    hypotheses.add_argument("--elo1", type=float, metavar="E",
                            help="2 players: H1 A is E Elo stronger (H0: --elo0), as cutechess-cli's -sprt")
    p.add_argument("--elo0", type=float, default=0.0, metavar="E",
                   help="2 players, with --elo1: H0 A is E Elo stronger (default 0)")
    p.add_argument("--alpha", type=probability, default=0.05, metavar="P",
                   help="chance of deciding A (or B) between equals (default 0.05)")
    p.add_argument("--beta", type=probability, default=0.05, metavar="P",
                   help="chance of deciding 'equal' when one is better by delta (default 0.05)")
    p.add_argument("--max-hands", type=whole(1), default=20_000, metavar="N",
                   help="stop 'undecided' after N hands (default 20000)")
    p.add_argument("--batch", type=whole(1), default=50, metavar="DEALS",
                   help="deals per round between looks at the test (each deal: one hand per seat rotation; "
                        "default 50)")
    p.add_argument("--players", type=whole(2), metavar="N",
                   help="players at the table: A and N - 1 copies of B (default: --rule num_players, else 2)")
    add_seed(p, "the deals and the agents (the deals of `cardlab eval` with the same seed)")
    add_rule(p)
    p.add_argument("--json", type=pathlib.Path, metavar="F",
                   help="also write the outcome as JSON to F (decision, hands, llr, bounds, score, "
                        "paired_ci_low/high, ...)")
    add_threads(p)
    add_ray_options(p)


def run(args: argparse.Namespace) -> int:
    """Seat A and B, play batches (here or on Ray) printing the test's progress, then the decision."""
    from cardlab.evaluation.compare import Contest, compare_agents
    from cardlab.evaluation.sequential import Hypotheses

    ray = on_ray(args)
    check_output("--json", args.json)
    contest = Contest.seat(args.game, args.a.strip(), args.b.strip(), args.players, rule_options(args.rule),
                           args.seed)
    n = contest.num_players
    if args.elo1 is not None:
        if n != 2:
            raise ValueError(f"--elo0/--elo1 are for 2 players (fair score 0.5); at {n} players give "
                             f"--delta D (A's share of hands above the fair {1 / n:.3f})")
        hypotheses = Hypotheses.from_elo(args.elo0, args.elo1)
    elif args.elo0 != 0.0:
        raise ValueError("--elo0 needs --elo1 (the Elo of H1); or give --delta D alone")
    else:
        delta = DEFAULT_DELTA if args.delta is None else args.delta
        if not 0.0 < 1 / n + delta < 1.0 or delta == 0:
            raise ValueError(f"--delta {delta}: give a number other than 0 with 0 < 1/{n} + delta < 1")
        hypotheses = Hypotheses.from_delta(delta, fair=1 / n)
    print(f"{args.game}, {n} players: A = {contest.a} in one seat, B = {contest.b} in "
          f"{'the other' if n == 2 else f'the {n - 1} others'}; H0 A scores {hypotheses.s0:.3f}, "
          f"H1 {hypotheses.s1:.3f}, alpha {args.alpha}, beta {args.beta}, at most {args.max_hands} hands")
    with bot_threads([contest.a, contest.b]), player(contest, args, ray) as play:
        result = compare_agents(contest, hypotheses, args.alpha, args.beta, args.max_hands, args.batch,
                                play=play, on_batch=lambda r: print(r.progress(), flush=True))
    outcome = result.as_dict()
    (low, high), c = result.paired_interval, result.comparison
    print(f"decision: {c.decision} after {c.episodes} hands: A ({contest.a}) scores {c.score:.3f} "
          f"[{low:.3f}, {high:.3f}] (95%, clustered by deal); a fixed-size test of the same hypotheses would "
          f"need about {outcome['fixed_hands']['paired']} hands")
    print(f"what it means: {c.meaning()}")
    if args.json is not None:
        write_text_output(args.json, json.dumps(outcome, indent=2))
        print(f"wrote {args.json}")
    return 0


def player(contest: Contest, args: argparse.Namespace, ray: bool) -> AbstractContextManager[PlayDeals | None]:
    """The Ray `PlayDeals` of the command's workers and address for the whole comparison; None: play here."""
    if not ray:
        return contextlib.nullcontext()
    from cardlab.cluster.parallel_evaluation import deal_player

    return deal_player(contest, workers=args.workers, address=args.ray_address)


COMMAND = Command("compare", "is A stronger than B? a sequential test on paired deals, stops once it knows",
                  add_arguments, run, lists_specs=True)
