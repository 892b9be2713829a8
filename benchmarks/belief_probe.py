"""How much better than uniform a belief places the hidden cards, and how often recognition names the player.

Hands of a table are played by agents (seat 0 `--player`, the other seats
`--field`, any agent specs; experts by default); at each decision
of seat 0 with a choice, W worlds are dealt uniformly from its observation
and the record (`Game.determinization`), played back through the record
(`cardlab.agents.hand_reading.belief.play_back`) and weighed by the model of the other
seats (`--model`, softened by `--eps`). Measured there, against the true
hands:

- `placed right`: the expected share of the other hands' cards a world puts
  in the right hand (the mean over decisions), for the uniform worlds, the
  same worlds weighted by the belief, and the worlds the search would play
  (resampled, or uniform where the belief fell back);
- the weighted minus the uniform share, and at how many decisions it is
  above 0;
- for a hand reader (`--reader`: the table's shipped one by default,
  `cardlab.agents.hand_reading.reader`), the same share for W worlds dealt from it
  (`Determinization.leaning`) beside the uniform worlds of the same
  decisions (``reader_uniform``: the reader's figures include decisions a
  replay cannot follow, A10/B10), its log loss per unseen card and its
  calibration (mean predicted against observed probability of a kind's
  place, by tenth), and its time to read and deal;
- the ESS as a share of W, how often the belief falls back (`--ess`), the
  share of the worlds that fit the record, and the replay's median time (in
  an engine kept across decisions, as a search keeps its own; compiled where
  the model is a Huit heuristic, `--stepped` for the move-by-move loop).

Recognition: a table of seat 0 `expert` and the other seats each played by
one of `--players` (in turn), with the library of `cardlab.agents.hand_reading.belief.LIBRARY`;
the model named for each seat at the last decision of seat 0 in the hand is
counted right when it is the seat's player (``base`` counts as ``expert``,
the searcher's base here).

    python benchmarks/belief_probe.py --game huit --players 2 --hands 40 --worlds 256
    python benchmarks/belief_probe.py --game huit --players 4 --field greedy --recognise '' --json F.json

`--json F` writes the belief probe's figures.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import pathlib
import time
from typing import Any

import numpy as np
import torch

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.hand_reading import belief as B
from cardlab.agents.hand_reading.reader import HandReader, load_reader, shipped_reader, shipped_reader_path
from cardlab.agents.hand_reading.reading import Reading
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.evaluation.episodes import seat_zero_choices
from cardlab.training.data.reader import fit_figures
from cardlab.training.data.reader_data import label


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


def field_agents(args: argparse.Namespace, game: Any) -> list[Any]:
    """Seat 0 `--player`, the other seats `--field` in turn (any spec `make_agent` takes)."""
    field = args.field or [args.player]
    return [make_agent(args.player, game, seed=0)] + [
        make_agent(field[(s - 1) % len(field)], game, seed=s) for s in range(1, args.players)]


def reader_of(args: argparse.Namespace, game: Any) -> HandReader | None:
    """The reader measured: `--reader PATH`, the table's shipped one (``shipped``), or none."""
    if args.reader == "none":
        return None
    if args.reader == "shipped":
        return shipped_reader(game) if shipped_reader_path(game).is_file() else None
    return load_reader(args.reader, game)


def probe_belief(args: argparse.Namespace) -> dict[str, Any]:
    env = make_env(args.game, num_players=args.players)
    game = env.unwrapped.game
    agents = field_agents(args, game)
    reader = reader_of(args, game)
    model = B.Model(args.model, make_agent(args.model, game, seed=99), args.eps)
    engine = game.spec.batched_engine()(game.rules, args.worlds, seed=0)  # kept, as a search keeps its own
    rng = np.random.default_rng(args.seed)
    rows: dict[str, list[float]] = collections.defaultdict(list)
    skipped: collections.Counter[str] = collections.Counter()
    took: list[float] = []
    read_took: list[float] = []
    labels: list[np.ndarray] = []
    leanings: list[np.ndarray] = []
    for hand in range(args.hands):
        for choice in seat_zero_choices(env, agents, seed=10_000 + hand):
            state = choice.raw.game_state
            true = [state.hands[(0 + s) % args.players] for s in range(args.players)]
            known = choice.determinization()
            worlds = known.deal(rng, args.worlds)
            if reader is not None:
                start = time.perf_counter()
                leaning = reader.leaning(known, choice.obs["observation"], choice.record)
                learned = dataclasses.replace(known, leaning=leaning).deal(rng, args.worlds)
                read_took.append(time.perf_counter() - start)
                rows["reader"].append(float(placed(known, learned, true).mean()))
                rows["reader_uniform"].append(float(placed(known, worlds, true).mean()))
                labels.append(label(known, state, reader.kinds, reader.places))
                leanings.append(leaning[reader.kinds])
            if choice.unreplayable is not None:
                skipped[choice.unreplayable] += 1
                continue
            start = time.perf_counter()
            replayed = B.play_back(game, known, worlds, choice.record, [model], rng, engine, not args.stepped)
            weighed = B.weigh(worlds, replayed, [0] * args.players, args.ess, rng)
            took.append(time.perf_counter() - start)
            share = placed(known, worlds, true)
            rows["uniform"].append(float(share.mean()))
            rows["weighted"].append(float(share @ weighed.weights) if replayed.ok.any() else
                                    float(share.mean()))
            rows["searched"].append(float(placed(known, weighed.worlds, true).mean()))
            rows["ess"].append(weighed.ess / args.worlds)
            rows["fallback"].append(float(weighed.uniform))
            rows["ok"].append(float(replayed.ok.mean()))
    n = len(rows["uniform"])
    field = args.field or [args.player]
    print(f"{args.game} {args.players}p, {args.hands} hands, seat 0 {args.player}, field {' '.join(field)}; "
          f"likelihood model {args.model} eps {args.eps}, {args.worlds} worlds, ESS fallback under "
          f"{args.ess}: "
          f"{n} decisions replayed, not replayed: {dict(skipped)}")
    out: dict[str, Any] = {"game": args.game, "players": args.players, "hands": args.hands,
                           "player": args.player, "field": field, "model": args.model, "worlds": args.worlds,
                           "decisions": n, "not_replayed": dict(skipped)}
    for key in ("uniform", "weighted", "searched", "reader", "reader_uniform"):
        values = np.array(rows[key])
        if values.size > 1:
            se = values.std(ddof=1) / np.sqrt(values.size)
            out[f"placed_{key}"] = [float(values.mean()), float(se), int(values.size)]
            print(f"  placed right, {key:14s}: mean {values.mean():.4f} (se {se:.4f}, {values.size} "
                  "decisions)")
    if n > 1:
        gain = np.array(rows["weighted"]) - np.array(rows["uniform"])
        print(f"  weighted - uniform: mean {gain.mean():+.4f} (se {gain.std(ddof=1) / np.sqrt(n):.4f}), "
              f"better at {np.mean(gain > 0):.3f} of the decisions")
        print(f"  ESS/W median {np.median(rows['ess']):.3f}, fell back at {np.mean(rows['fallback']):.3f}, "
              f"worlds fitting the record {np.mean(rows['ok']):.3f}; replay median "
              f"{np.median(took) * 1000:.1f} ms, p99 {np.percentile(took, 99) * 1000:.1f} ms")
    if reader is not None and labels:
        probs = torch.as_tensor(np.stack(leanings)).clamp(min=1e-12)
        figures = fit_figures(probs.log(), torch.as_tensor(np.stack(labels), dtype=probs.dtype))
        out |= {"reader_log_loss": figures["log_loss"], "reader_calibration": figures["calibration"],
                "reader_ms_median": float(np.median(read_took) * 1000)}
        print(f"  reader: log loss {figures['log_loss']:.4f} per unseen card; read and dealt in "
              f"{np.median(read_took) * 1000:.1f} ms (median); calibration (predicted, observed, count): "
              f"{figures['calibration']}")
    return out


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
    parser.add_argument("--player", default="expert",
                        help="who plays seat 0 (and the others without --field)")
    parser.add_argument("--field", nargs="+", metavar="SPEC",
                        help="who plays the other seats, in turn (any agent spec, MODULE:FACTORY included)")
    parser.add_argument("--reader", default="shipped",
                        help="the hand reader measured: a reader's NAME.json, 'shipped' (the table's, if "
                             "any) "
                             "or 'none'")
    parser.add_argument("--json", type=pathlib.Path, metavar="F",
                        help="write the belief probe's figures here")
    parser.add_argument("--model", default="expert", help="the other seats' model of the belief")
    parser.add_argument("--eps", type=float, default=B.EPS)
    parser.add_argument("--ess", type=float, default=0.01)
    parser.add_argument("--recognise", default="random,greedy,expert",
                        help="the players of the other seats in the recognition probe ('' for none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stepped", action="store_true",
                        help="replay move by move even where a compiled replay exists (as before it did)")
    args = parser.parse_args()
    figures = probe_belief(args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.recognise:
        probe_recognition(args)


if __name__ == "__main__":
    main()
