"""How much better than uniform a belief places the hidden cards, and how often recognition names the player.

Hands of a table are played by agents (experts by default); at each decision
of seat 0 with a choice, W worlds are dealt uniformly from its observation
and the record (`Game.determinization`), played back through the record
(`cardlab.agents.belief.play_back`) and weighed by the model of the other
seats (`--model`, softened by `--eps`). Measured there, against the true
hands:

- `placed right`: the expected share of the other hands' cards a world puts
  in the right hand (the mean over decisions), for the uniform worlds, the
  same worlds weighted by the belief, and the worlds the search would play
  (resampled, or uniform where the belief fell back);
- the weighted minus the uniform share, and at how many decisions it is
  above 0;
- the ESS as a share of W, how often the belief falls back (`--ess`), the
  share of the worlds that fit the record, and the replay's median time (in
  an engine kept across decisions, as a search keeps its own; compiled where
  the model is a Huit heuristic, `--stepped` for the move-by-move loop).

Recognition: a table of seat 0 `expert` and the other seats each played by
one of `--players` (in turn), with the library of `cardlab.agents.belief.LIBRARY`;
the model named for each seat at the last decision of seat 0 in the hand is
counted right when it is the seat's player (``base`` counts as ``expert``,
the searcher's base here).

    python benchmarks/belief_probe.py --game huit --players 2 --hands 40 --worlds 256
"""

from __future__ import annotations

import argparse
import collections
import time
from typing import Any

import numpy as np

from cardlab.agents import belief as B
from cardlab.agents.base import make_agent
from cardlab.agents.reading import Reading
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.evaluation.episodes import seat_zero_choices


def placed(known: Any, worlds: Any, true_hands: list[np.ndarray]) -> np.ndarray:
    """(W,) the share of the other hands' cards each world puts in the right hand."""
    spans, _ = known.spans
    right = np.zeros(worlds.count)
    total = 0
    for seat, start, stop in spans:
        counts = np.zeros((worlds.count, C.NUM_KINDS), dtype=np.int64)
        rows = np.repeat(np.arange(worlds.count), stop - start)
        np.add.at(counts, (rows, worlds.hidden[:, start:stop].ravel()), 1)
        right += np.minimum(counts, true_hands[seat][None, :]).sum(axis=1)
        total += stop - start
    return right / max(total, 1)


def probe_belief(args: argparse.Namespace) -> None:
    env = make_env(args.game, num_players=args.players)
    game = env.unwrapped.game
    agents = [make_agent(args.player, game, seed=s) for s in range(args.players)]
    model = B.Model(args.model, make_agent(args.model, game, seed=99), args.eps)
    engine = game.spec.batched_engine()(game.rules, args.worlds, seed=0)  # kept, as a search keeps its own
    rng = np.random.default_rng(args.seed)
    rows: dict[str, list[float]] = collections.defaultdict(list)
    skipped: collections.Counter[str] = collections.Counter()
    took = []
    for hand in range(args.hands):
        for choice in seat_zero_choices(env, agents, seed=10_000 + hand):
            if choice.unreplayable is not None:
                skipped[choice.unreplayable] += 1
                continue
            known = choice.determinization()
            worlds = known.deal(rng, args.worlds)
            start = time.perf_counter()
            replayed = B.play_back(game, known, worlds, choice.record, [model], rng, engine, not args.stepped)
            weighed = B.weigh(worlds, replayed, [0] * args.players, args.ess, rng)
            took.append(time.perf_counter() - start)
            state = choice.raw.game_state
            true = [state.hands[(0 + s) % args.players] for s in range(args.players)]
            share = placed(known, worlds, true)
            rows["uniform"].append(float(share.mean()))
            rows["weighted"].append(float(share @ weighed.weights) if replayed.ok.any() else
                                    float(share.mean()))
            rows["searched"].append(float(placed(known, weighed.worlds, true).mean()))
            rows["ess"].append(weighed.ess / args.worlds)
            rows["fallback"].append(float(weighed.uniform))
            rows["ok"].append(float(replayed.ok.mean()))
    n = len(rows["uniform"])
    print(f"{args.game} {args.players}p, {args.hands} hands of {args.player}, model {args.model} "
          f"eps {args.eps}, "
          f"{args.worlds} worlds, ESS fallback under {args.ess}: {n} decisions replayed, not replayed: "
          f"{dict(skipped)}")
    if not n:
        return
    for key in ("uniform", "weighted", "searched"):
        values = np.array(rows[key])
        se = values.std(ddof=1) / np.sqrt(n)
        print(f"  placed right, {key:9s}: mean {values.mean():.4f} (se {se:.4f})")
    gain = np.array(rows["weighted"]) - np.array(rows["uniform"])
    print(f"  weighted - uniform: mean {gain.mean():+.4f} (se {gain.std(ddof=1) / np.sqrt(n):.4f}), "
          f"better at {np.mean(gain > 0):.3f} of the decisions")
    print(f"  ESS/W median {np.median(rows['ess']):.3f}, fell back at {np.mean(rows['fallback']):.3f}, "
          f"worlds fitting the record {np.mean(rows['ok']):.3f}; replay median "
          f"{np.median(took) * 1000:.1f} ms, p99 {np.percentile(took, 99) * 1000:.1f} ms")


def probe_recognition(args: argparse.Namespace) -> None:
    env = make_env(args.game, num_players=args.players)
    game = env.unwrapped.game
    names = args.recognise.split(",")
    base = make_agent("expert", game, seed=0)
    rng = np.random.default_rng(args.seed)
    named_as: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for hand in range(args.hands):
        cast = [names[(hand + s) % len(names)] for s in range(args.players - 1)]
        agents = [base] + [make_agent(c, game, seed=hand * 10 + s) for s, c in enumerate(cast)]
        reading = Reading(game, base, "uniform", True, args.ess, seed=hand)
        reading.recognizer.new_match()
        best: dict[int, str] = {}
        for choice in seat_zero_choices(env, agents, seed=20_000 + hand):
            if choice.unreplayable is None:
                reading.read(choice.determinization(), args.worlds, choice.record, rng)
                best = reading.recognizer.best()
        for s, c in enumerate(cast, start=1):
            if s in best:
                named_as[c]["expert" if best[s] == "base" else best[s]] += 1
    print(f"{args.game} {args.players}p recognition, {args.hands} hands, one hand each (library "
          f"{', '.join(B.LIBRARY)}):")
    for c in names:
        seen = sum(named_as[c].values())
        print(f"  {c:7s}: named right in {named_as[c][c] / max(seen, 1):.3f} of {seen} seat-hands; named "
              f"{dict(named_as[c].most_common())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="huit")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--worlds", type=int, default=256)
    parser.add_argument("--player", default="expert", help="who plays every seat in the belief probe")
    parser.add_argument("--model", default="expert", help="the other seats' model of the belief")
    parser.add_argument("--eps", type=float, default=B.EPS)
    parser.add_argument("--ess", type=float, default=0.01)
    parser.add_argument("--recognise", default="random,greedy,expert",
                        help="the players of the other seats in the recognition probe ('' for none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stepped", action="store_true",
                        help="replay move by move even where a compiled replay exists (as before it did)")
    args = parser.parse_args()
    probe_belief(args)
    if args.recognise:
        probe_recognition(args)


if __name__ == "__main__":
    main()
