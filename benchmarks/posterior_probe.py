"""The share of hidden cards the exact posterior places right, beside uniform, the reader and the likelihood.

At each decision of seat 0 with a choice whose record can be played back
(A10/B10 refills cannot), in hands of `--player` against `--field` (experts
by default), the expected share of the other hands' cards a world puts in
the right hand (`belief_probe.placed`) for:

- `uniform`: worlds dealt uniformly (`Determinization.deal`);
- `reader`: worlds dealt from the table's shipped hand reader;
- `likelihood`: the uniform worlds weighed by the likelihood belief (model
  `--model` softened by `--eps`, `--likelihood-worlds` of them), resampled,
  or uniform where its ESS falls under 1% of them, as the search's belief
  does; `weighted`: the same weights' mean however small the ESS (as
  `belief_probe.py`'s `weighted`);
- `exact`: `--count` worlds from the exact posterior (`cardlab.agents.hand_reading.posterior`:
  rejection up to `--budget` uniform worlds, else Metropolis chains), the
  model at eps 0.

Checks of the sampler, per decision: the true world's replay is kept at
least once in 256 tries (`truth_kept`: the field plays as the model says), the
spread of the exact share between four groups of chains; where rejection
alone gave the worlds, the same share from chains started there
(`mcmc_check`: the chains keep the posterior), and where chains gave them,
in every `--truth-every`-th hand, the share from chains that all start at
the true world (`from_truth`: a chain that mixes too slowly stays near it
and places too many right).

Rounds of `--round` hands append their decisions to `--json` (resumed where
it stopped, only by a run of the same measurement: `SAME`) and print the
table so far, intervals over hands (bootstrap). Bad arguments or a `--json`
of another run are refused in one line before anything is played or written.

    python benchmarks/posterior_probe.py --players 4 --hands 140 --round 4 \\
        --json benchmarks/results/huit-4p-posterior.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import sys
import time
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.hand_reading import belief as B
from cardlab.agents.hand_reading import posterior as P
from cardlab.cli.common import check_output
from cardlab.envs import make_env
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import refusal
from cardlab.envs.world_sampling import revealed
from cardlab.evaluation.episodes import seat_zero_choices

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from belief_probe import field_agents, placed, reader_of

COLUMNS = ("uniform", "reader", "likelihood", "weighted", "exact")
STUCK = 0.02
"""chains that take fewer of their proposals than this are reported apart (they barely move)"""
SAME = ("game", "players", "player", "field", "model", "reader", "eps", "likelihood_worlds", "count", "block",
        "budget", "chains", "burn", "thin", "truth_every", "seed")
"""the arguments a resumed `--json` must have been written with (--hands, --round may grow or change)"""


def decisions(args: argparse.Namespace, hand: int, tools: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one hand's replayable decisions of seat 0 (see the module doc)."""
    game, engine, reader, rng = tools["game"], tools["engine"], tools["reader"], tools["rng"]
    exact_model = B.Model(args.model, tools["model"], 0.0)
    soft_model = B.Model(args.model, tools["model"], args.eps)
    sampling = tools["sampling"]
    rows = []
    for k, choice in enumerate(seat_zero_choices(tools["env"], tools["agents"], seed=10_000 + hand)):
        if choice.unreplayable is not None:
            continue
        state, known, record = choice.raw.game_state, choice.determinization(), choice.record
        true = [state.hands[s] for s in range(args.players)]
        start = time.perf_counter()
        worlds = known.deal(rng, args.likelihood_worlds)
        row: dict[str, Any] = {"hand": hand, "decision": k,
                               "uniform": float(placed(known, worlds, true).mean())}
        if reader is not None:
            leaning = reader.leaning(known, choice.obs["observation"], record)
            dealt = dataclasses.replace(known, leaning=leaning).deal(rng, args.count)
            row["reader"] = float(placed(known, dealt, true).mean())
        replayed = B.play_back(game, known, worlds, record, [soft_model], rng, engine)
        weighed = B.weigh(worlds, replayed, [0] * args.players, 0.01, rng)
        row["likelihood"] = float(placed(known, weighed.worlds, true).mean())
        row["weighted"] = float(placed(known, worlds, true) @ weighed.weights) if replayed.ok.any() else \
            row["uniform"]
        row["likelihood_fell_back"] = bool(weighed.uniform)
        drawn = P.sample(game, known, record, exact_model, rng, sampling, engine)
        cheat = revealed(known, state, 0)  # the true world, for the checks
        row |= {"method": drawn.method, "proposed": drawn.proposed, "kept": drawn.kept, "moved": drawn.moved}
        if drawn.worlds.count:
            share = placed(known, drawn.worlds, true)
            row["exact"] = float(share.mean())
            groups = [share[drawn.chain % 4 == g].mean() for g in range(4)] if drawn.method == "mcmc" else []
            row["chain_spread"] = float(np.ptp(groups)) if groups else None
            first = drawn.worlds if drawn.method == "rejection" else cheat.deal(rng, 1)
            if drawn.method == "rejection" or hand % args.truth_every == 0:
                chained = P.chained(game, known, record, exact_model, rng, sampling, engine, first, 0)
                key = "mcmc_check" if drawn.method == "rejection" else "from_truth"
                row[key] = float(placed(known, chained.worlds, true).mean())
        row["truth_kept"] = float(P.consistent(game, known, cheat.deal(rng, 256), record, exact_model, rng,
                                               engine).mean())
        row["seconds"] = time.perf_counter() - start
        rows.append(row)
    return rows


def interval(rows: list[dict[str, Any]], key: str,
             rng: np.random.Generator) -> tuple[float, float, float, int]:
    """(mean, low, high, decisions) of `key` over the rows that have it, 95% bootstrap over hands."""
    by_hand: dict[int, list[float]] = {}
    for row in rows:
        if row.get(key) is not None:
            by_hand.setdefault(row["hand"], []).append(row[key])
    if not by_hand:
        return float("nan"), float("nan"), float("nan"), 0
    sums = np.array([sum(v) for v in by_hand.values()])
    counts = np.array([len(v) for v in by_hand.values()])
    picks = rng.integers(len(sums), size=(2000, len(sums)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(sums.sum() / counts.sum()), float(low), float(high), int(counts.sum())


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The table so far (printed), as a dict."""
    rng = np.random.default_rng(0)
    hands = len({row["hand"] for row in rows})
    out: dict[str, Any] = {"hands": hands, "decisions": len(rows)}
    print(f"{hands} hands, {len(rows)} replayable decisions of seat 0")
    for key in COLUMNS:
        mean, low, high, n = interval(rows, key, rng)
        out[key] = [mean, low, high, n]
        print(f"  placed right, {key:10s}: {mean:.4f} [{low:.4f}, {high:.4f}] over {n} decisions")
    for row in rows:
        row["exact_minus_likelihood"] = row["exact"] - row["likelihood"] if "exact" in row else None
        row["check_minus_exact"] = row["mcmc_check"] - row["exact"] if "mcmc_check" in row else None
        row["truth_minus_exact"] = row["from_truth"] - row["exact"] if "from_truth" in row else None
    for key in ("exact_minus_likelihood", "check_minus_exact", "truth_minus_exact", "chain_spread"):
        mean, low, high, n = interval(rows, key, rng)
        out[key] = [mean, low, high, n]
        print(f"  {key:22s}: {mean:+.4f} [{low:+.4f}, {high:+.4f}] over {n} decisions")
    methods = [row["method"] for row in rows]
    out["methods"] = {m: methods.count(m) for m in sorted(set(methods))}
    out["by_method"] = {}
    for method in ("reached", *out["methods"], "mcmc moving", "mcmc stuck"):
        these = [row for row in rows if "exact" in row] if method == "reached" else [
            row for row in rows if row["method"] == method.split()[0]
            and (method != "mcmc moving" or row["moved"] >= STUCK)
            and (method != "mcmc stuck" or row["moved"] < STUCK)]
        if not these:
            continue
        out["by_method"][method] = {key: interval(these, key, rng) for key in (*COLUMNS, "from_truth")}
        print(f"  {method} decisions ({len(these)}): " + ", ".join(
            f"{key} {mean:.4f} [{low:.4f}, {high:.4f}]" + (f" ({n})" if n != len(these) else "")
            for key, (mean, low, high, n) in out["by_method"][method].items() if n))
    out["likelihood_fell_back"] = float(np.mean([row["likelihood_fell_back"] for row in rows]))
    out["truth_never_kept"] = sum(row["truth_kept"] == 0 for row in rows)
    out["seconds_median"] = float(np.median([row["seconds"] for row in rows]))
    print(f"  methods {out['methods']}; likelihood fell back at {out['likelihood_fell_back']:.3f}; "
          f"true world never kept at {out['truth_never_kept']} decisions; {out['seconds_median']:.1f} s a "
          "decision (median)")
    return out


def saved_run(args: argparse.Namespace, same: tuple[str, ...] = SAME, what: str = "probe",
              layout: int | None = None) -> dict[str, Any]:
    """What `--json` holds for this run to resume (no rows where it does not exist yet); a `ValueError`
    naming what is wrong where it is not JSON, not this `what`'s (the probe's, or another benchmark's that
    writes the same ``args``, ``next_hand`` and ``rows``: benchmarks/posterior_search.py), of another
    ``layout`` where one is given, or was written with other `same` arguments (its decisions would be
    merged with another measurement's)."""
    if not args.json.is_file():
        return {"rows": []}
    try:
        saved = json.loads(args.json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"--json {args.json}: not a JSON ({type(err).__name__}: {err}); give a JSON this "
                         f"{what} wrote, or a new file") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("rows"), list) or not isinstance(
            saved.get("args"), dict) or not isinstance(saved.get("next_hand"), int):
        raise ValueError(f"--json {args.json}: not a JSON this {what} wrote (no args, next_hand and rows); "
                         "give one it wrote, or a new file")
    if layout is not None and saved.get("layout", 1) != layout:
        raise ValueError(f"--json {args.json} is of layout {excerpt(saved.get('layout', 1))}, this {what}'s "
                         f"is {layout} (its decisions were measured otherwise): give a new file")
    for key in same:
        theirs, mine = saved["args"].get(key), str(getattr(args, key))
        if theirs != mine:
            raise ValueError(f"--json {args.json} was written with --{key.replace('_', '-')} "
                             f"{excerpt(theirs)}, this run's is {excerpt(mine)}: resume with the same "
                             "arguments (all but --hands and --round), or give a new file")
    return saved


def checked(args: argparse.Namespace) -> tuple[Any, P.Sampling, dict[str, Any]]:
    """The env and sampling of the arguments and the `--json` to resume, each checked before a hand is
    played (a `ValueError` in one line that says what is accepted)."""
    for key, value, least in (("--hands", args.hands, 1), ("--round", args.round, 1),
                              ("--truth-every", args.truth_every, 1), ("--likelihood-worlds",
                                                                        args.likelihood_worlds, 1)):
        if value < least:
            raise ValueError(refusal(key, value, "out of range", f"a whole number >= {least}"))
    if not 0 <= args.eps <= 1:
        raise ValueError(refusal("--eps", args.eps, "out of range", "a number from 0 to 1"))
    try:
        env = make_env(args.game, num_players=args.players)
        game = env.unwrapped.game
        field_agents(args, game)
        make_agent(args.model, game, seed=0)
        reader_of(args, game)
    except (ValueError, KeyError, OSError) as err:
        field = " ".join(args.field or [args.player])
        raise ValueError(f"--game {args.game} --players {args.players} --player {args.player} --field "
                         f"{field} --model {args.model} --reader {args.reader}: {err}") from None
    sampling = P.Sampling(count=args.count, block=args.block, budget=args.budget, chains=args.chains,
                          burn=args.burn, thin=args.thin)
    check_output("--json", args.json)
    return env, sampling, saved_run(args)


def round_tools(args: argparse.Namespace, env: Any, sampling: P.Sampling, first: int) -> dict[str, Any]:
    """What `decisions` plays a round from hand `first` with: agents, model and engine seeded by `first`."""
    game = env.unwrapped.game
    size = max(args.likelihood_worlds, args.block, args.chains)
    return {"env": env, "game": game, "agents": field_agents(args, game), "reader": reader_of(args, game),
            "sampling": sampling, "model": make_agent(args.model, game, seed=99 + first),
            "engine": game.spec.batched_engine()(game.rules, size, seed=first),
            "rng": np.random.default_rng([args.seed, first])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="huit")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--round", type=int, default=5, help="hands between writes of --json")
    parser.add_argument("--player", default="expert")
    parser.add_argument("--field", nargs="+", metavar="SPEC")
    parser.add_argument("--model", default="expert", help="the other seats' model (a heuristic)")
    parser.add_argument("--reader", default="shipped")
    parser.add_argument("--eps", type=float, default=0.03, help="the likelihood belief's softening")
    parser.add_argument("--likelihood-worlds", type=int, default=16384)
    parser.add_argument("--count", type=int, default=512, help="worlds drawn from the exact posterior")
    parser.add_argument("--block", type=int, default=4096)
    parser.add_argument("--budget", type=int, default=65536)
    parser.add_argument("--chains", type=int, default=128)
    parser.add_argument("--burn", type=int, default=500)
    parser.add_argument("--thin", type=int, default=10)
    parser.add_argument("--truth-every", type=int, default=4, help="hands between checks from the true world")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=pathlib.Path, required=True, help="decisions so far (resumed)")
    args = parser.parse_args(argv)
    try:
        env, sampling, saved = checked(args)
    except ValueError as err:
        parser.error(str(err))
    rows: list[dict[str, Any]] = saved["rows"]
    done = saved.get("next_hand", 0)
    if done >= args.hands and rows:  # nothing left to play: the table of the saved decisions, rewritten
        args.json.write_text(json.dumps(saved | {"summary": report(rows)}, indent=1) + "\n", encoding="utf-8")
    for first in range(done, args.hands, args.round):
        tools = round_tools(args, env, sampling, first)
        for hand in range(first, min(first + args.round, args.hands)):
            rows.extend(decisions(args, hand, tools))
        summary = report(rows)
        saved = {"args": {k: str(v) for k, v in vars(args).items()},
                 "next_hand": min(first + args.round, args.hands), "summary": summary, "rows": rows}
        args.json.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
