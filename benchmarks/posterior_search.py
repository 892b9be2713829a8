"""The search on the exact posterior's worlds beside the reader's and the cheat's, valued in the true deal.

At each replayable decision of seat 0 (A10/B10 refills cannot be replayed)
in the hands of `benchmarks/posterior_probe.py` (the same seeds and rounds;
the expert in every seat), three searches decide from the same seed:

- `reader`: ``search:belief=learned`` (worlds the table's shipped hand reader deals);
- `posterior`: ``search:belief=posterior`` (worlds drawn from the exact
  posterior, the expert assumed in every other seat; the reader's worlds
  where none is kept), `--worlds` each;
- `cheat`: ``search:cheat=1`` (the true hands): the ceiling.

Where their moves differ, each move is valued in the true deal (`true_values`:
the other hands as they are, the face-down pile's order drawn, `--playouts`
play-outs with the expert in every seat after the move, the same worlds for
every move): seat 0's hand win probability. Each decision gives the paired
gain of the posterior's (and the cheat's) move over the reader's, 0 where
they agree; the mean per decision and per hand (the sum of a hand's gains:
the first-order change in its win probability), 95% intervals over hands
(bootstrap). The posterior's worlds are also checked against the probe's
(`--probe`): the share of the other hands' cards they place right, beside
the probe's at the same decisions.

Rounds of `--round` hands append their decisions to `--json` (resumed where
it stopped, only by a run of the same `SAME` arguments and `LAYOUT`) and
print the table so far. Bad arguments, a `--probe` that is not the probe's,
or a `--json` of another run are refused in one line before anything is
played or written.

    python benchmarks/posterior_search.py --hands 100 --json benchmarks/results/huit-4p-posterior-search.json
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.rollouts import Rollouts
from cardlab.agents.search import SearchAgent
from cardlab.agents.search_options import MOST_WORLDS
from cardlab.cli.common import check_output
from cardlab.envs import make_env
from cardlab.envs.declared import RANGE, refusal
from cardlab.envs.game_spec import Game
from cardlab.envs.world_sampling import Determinization, revealed
from cardlab.evaluation.episodes import Choice, seat_zero_choices

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from belief_probe import placed
from posterior_probe import interval, saved_run

BELIEFS = {"reader": "belief=learned", "posterior": "belief=posterior", "cheat": "cheat=1"}
"""each search's options beside ``worlds=W:ms=0``, over the expert"""
PROBE = pathlib.Path("benchmarks/results/huit-4p-posterior.json")
GAINS = ("posterior_minus_reader", "cheat_minus_reader", "cheat_minus_posterior")
SAME = ("players", "worlds", "playouts", "seed")
"""the arguments a resumed `--json` must have been written with (--hands, --round and --probe may change)"""
LAYOUT = 2
"""the `--json` layout: 2, the posterior's worlds drawn from a generator of its own (where it keeps none the
search plays the reader search's very worlds); layout 1 (no ``layout`` key) drew them from the decision's"""
MOST_PLAYOUTS = 1 << 20
"""the most play-outs valuing a move (they are held in memory at once)"""


def searches(game: Game, worlds: int) -> dict[str, SearchAgent]:
    """The three searches of the module doc, by name."""
    out = {}
    for name, option in BELIEFS.items():
        agent = make_agent(f"search:{option}:worlds={worlds}:ms=0:expert", game, seed=0)
        assert isinstance(agent, SearchAgent)
        out[name] = agent
    return out


def won(_engine: Any, rows: np.ndarray, wins: np.ndarray) -> np.ndarray:
    """1 where the searcher won the hand, else 0 (a hand C1 cuts is no win)."""
    return (wins[rows] > 0).astype(np.float64)


def true_values(game: Game, known: Determinization, state: Any, moves: list[int], playouts: int, seed: int,
                policy: Agent) -> np.ndarray:
    """(len(moves),) seat 0's hand win probability after each of `moves` in the true deal: the other hands
    as `state` holds them, the face-down pile's order drawn (no seat knows it), `policy` in every seat
    after the move (its tie-breaks from `seed`); the same `playouts` worlds for every move (paired), the
    same figures for one `seed`."""
    policy.seed(seed)
    truth = revealed(known, state, 0)
    worlds = truth.deal(np.random.default_rng(seed), playouts)
    results = Rollouts(game, policy, seed).play(truth, worlds, np.asarray(moves, dtype=np.int64), None, won)
    return np.asarray(results.mean(axis=1))


def decide(agents: Mapping[str, SearchAgent], choice: Choice, seed: int) -> dict[str, int]:
    """Each search's move at `choice`, every one seeded with `seed` and shown the record and the state."""
    moves = {}
    for name, agent in agents.items():
        agent.seed(seed)
        agent.show({"record": choice.record, "state": choice.raw.game_state})
        moves[name] = int(agent.act(choice.obs))
    return moves


def decisions(args: argparse.Namespace, hand: int, tools: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one hand's replayable decisions of seat 0 (see the module doc)."""
    game, agents, expert = tools["game"], tools["searches"], tools["expert"]
    rows = []
    for k, choice in enumerate(seat_zero_choices(tools["env"], tools["agents"], seed=10_000 + hand)):
        if choice.unreplayable is not None:
            continue
        for agent in agents.values():
            agent.reset()
        start = time.perf_counter()
        seed = int(np.random.SeedSequence([args.seed, hand, k]).generate_state(1)[0])
        moves = decide(agents, choice, seed)
        drawn = agents["posterior"].posterior
        last = None if drawn is None else drawn.last
        state, known = choice.raw.game_state, choice.determinization()
        row: dict[str, Any] = {"hand": hand, "decision": k, "moves": moves,
                               "method": "unreplayable" if last is None else last.method}
        if last is not None and last.worlds.count:
            true = [state.hands[s] for s in range(args.players)]
            row["placed"] = float(placed(known, last.worlds, true).mean())
        distinct = sorted(set(moves.values()))
        win = dict.fromkeys(moves, float("nan"))
        if len(distinct) > 1:
            values = true_values(game, known, state, distinct, args.playouts, seed, expert)
            win = {name: float(values[distinct.index(move)]) for name, move in moves.items()}
        row["win"] = win
        for key in GAINS:
            better, worse = key.split("_minus_")
            row[key] = 0.0 if moves[better] == moves[worse] else win[better] - win[worse]
        row["seconds"] = time.perf_counter() - start
        rows.append(row)
    return rows


def per_hand(rows: list[dict[str, Any]], key: str, rng: np.random.Generator) -> tuple[float, float, float]:
    """(mean, low, high) over hands of the sum of a hand's `key`, 95% bootstrap over hands."""
    sums: dict[int, float] = {}
    for row in rows:
        sums[row["hand"]] = sums.get(row["hand"], 0.0) + row[key]
    values = np.array(list(sums.values()))
    means = values[rng.integers(values.size, size=(2000, values.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(values.mean()), float(low), float(high)


def probe_rows(probe: pathlib.Path | None) -> list[dict[str, Any]]:
    """The decisions of the probe's `--json` (`--probe`; None: `PROBE` where it exists, else none), or a
    `ValueError` in one line where the file is missing, not JSON or not the probe's."""
    if probe is None:
        if not PROBE.is_file():
            return []
        probe = PROBE
    try:
        rows = json.loads(probe.read_text(encoding="utf-8"))["rows"]
        ok = isinstance(rows, list) and all(isinstance(r, dict) and isinstance(r.get("hand"), int)
                                            and isinstance(r.get("decision"), int) for r in rows)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"--probe {probe}: not a JSON benchmarks/posterior_probe.py wrote "
                         f"({type(err).__name__}: {err}); give one it wrote, or leave --probe out") from None
    if not ok:
        raise ValueError(f"--probe {probe}: its rows are not the probe's decisions (each with a hand and a "
                         "decision); give a JSON benchmarks/posterior_probe.py wrote, or leave --probe out")
    return rows


def probe_check(rows: list[dict[str, Any]], probe: list[dict[str, Any]]) -> dict[str, Any]:
    """The posterior's placed share beside the probe's exact share at the same decisions (`probe`: the
    probe's rows), by the probe's method (a check that the search's cheaper sampling keeps the probe's
    figures)."""
    theirs = {(r["hand"], r["decision"]): r for r in probe}
    out: dict[str, Any] = {}
    for row in rows:
        other = theirs.get((row["hand"], row["decision"]))
        if other is not None and "exact" in other and "placed" in row:
            out.setdefault(other["method"], []).append((row["placed"], other["exact"]))
    return {method: {"decisions": len(pairs), "search": float(np.mean([a for a, _ in pairs])),
                     "probe": float(np.mean([b for _, b in pairs]))} for method, pairs in out.items()}


def report(rows: list[dict[str, Any]], probe: list[dict[str, Any]]) -> dict[str, Any]:
    """The table so far (printed), as a dict."""
    rng = np.random.default_rng(0)
    hands = len({row["hand"] for row in rows})
    out: dict[str, Any] = {"hands": hands, "decisions": len(rows)}
    print(f"{hands} hands, {len(rows)} replayable decisions of seat 0")
    for key in GAINS:
        better, worse = key.split("_minus_")
        differ = float(np.mean([row["moves"][better] != row["moves"][worse] for row in rows]))
        mean, low, high, _ = interval(rows, key, rng)
        hand_mean, hand_low, hand_high = per_hand(rows, key, rng)
        out[key] = {"differ": differ, "per_decision": [mean, low, high],
                    "per_hand": [hand_mean, hand_low, hand_high]}
        print(f"  {key:22s}: moves differ at {differ:.3f}; {mean:+.4f} [{low:+.4f}, {high:+.4f}] a decision, "
              f"{hand_mean:+.4f} [{hand_low:+.4f}, {hand_high:+.4f}] a hand")
    methods = [row["method"] for row in rows]
    out["methods"] = {m: methods.count(m) for m in sorted(set(methods))}
    out["by_method"] = {}
    for method in out["methods"]:
        these = [row for row in rows if row["method"] == method]
        gains = {key: interval(these, key, rng)[:3] for key in GAINS[:2]}
        differs = {key: float(np.mean([row["moves"][key.split("_minus_")[0]] != row["moves"]["reader"]
                                       for row in these])) for key in gains}
        out["by_method"][method] = {"gains": gains, "differ": differs}
        print(f"  where the posterior's worlds came by {method} ({len(these)}): " + ", ".join(
            f"{key} differ at {differs[key]:.3f}, {mean:+.4f} [{low:+.4f}, {high:+.4f}]"
            for key, (mean, low, high) in gains.items()))
    out["probe_check"] = probe_check(rows, probe)
    out["seconds_median"] = float(np.median([row["seconds"] for row in rows]))
    print(f"  posterior methods {out['methods']}; {out['seconds_median']:.1f} s a decision (median)")
    for method, check in out["probe_check"].items():
        print(f"  placed right where the probe used {method} ({check['decisions']}): search's worlds "
              f"{check['search']:.4f}, probe's {check['probe']:.4f}")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--round", type=int, default=4, help="hands between writes of --json (the probe's)")
    parser.add_argument("--worlds", type=int, default=128, help="each search's worlds")
    parser.add_argument("--playouts", type=int, default=4096, help="play-outs valuing a move, true deal")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probe", type=pathlib.Path,
                        help=f"the probe's decisions (a check; default {PROBE} where it exists)")
    parser.add_argument("--json", type=pathlib.Path, required=True, help="decisions so far (resumed)")
    args = parser.parse_args(argv)
    try:
        parts = checked(args)
    except ValueError as err:
        parser.error(str(err))
    run(args, parts)


Checked = tuple[Any, dict[str, SearchAgent], list[dict[str, Any]], dict[str, Any]]
"""what `checked` returns: the env, the searches, the probe's rows and the saved run"""


def checked(args: argparse.Namespace) -> Checked:
    """The env, the searches, the probe's rows and the `--json` to resume, each checked before a hand is
    played (a `ValueError` in one line that says what is accepted)."""
    for key, value, least, most in (("--hands", args.hands, 1, None), ("--round", args.round, 1, None),
                                    ("--worlds", args.worlds, 1, MOST_WORLDS),
                                    ("--playouts", args.playouts, 1, MOST_PLAYOUTS),
                                    ("--seed", args.seed, 0, None)):
        if value < least or (most is not None and value > most):
            accepted = f"a whole number >= {least}" + ("" if most is None else f" and <= {most:,}")
            raise ValueError(refusal(key, value, RANGE, accepted))
    try:
        env = make_env("huit", num_players=args.players)
        agents = searches(env.unwrapped.game, args.worlds)
    except ValueError as err:
        raise ValueError(f"--players {args.players} --worlds {args.worlds}: {err}") from None
    probe = probe_rows(args.probe)
    check_output("--json", args.json)
    return env, agents, probe, saved_run(args, SAME, "benchmark", LAYOUT)


def run(args: argparse.Namespace, parts: Checked | None = None) -> dict[str, Any]:
    """Play the rounds left (module doc), writing `args.json` after each; the last table (`parts`: what
    `checked` returned for `args`, else checked here)."""
    env, agents, probe, saved = checked(args) if parts is None else parts
    game = env.unwrapped.game
    rows: list[dict[str, Any]] = saved["rows"]
    done = saved.get("next_hand", 0)
    summary = report(rows, probe) if rows else {}
    if done >= args.hands and rows:  # nothing left to play: the table of the saved decisions, rewritten
        args.json.write_text(json.dumps(saved | {"summary": summary}, indent=1) + "\n", encoding="utf-8")
    for first in range(done, args.hands, args.round):
        field = [make_agent("expert", game, seed=s) for s in range(args.players)]  # as the probe's field
        tools = {"env": env, "game": game, "agents": field, "searches": agents,
                 "expert": make_agent("expert", game, seed=first)}
        for hand in range(first, min(first + args.round, args.hands)):
            rows.extend(decisions(args, hand, tools))
        summary = report(rows, probe)
        saved = {"args": {k: str(v) for k, v in vars(args).items()}, "layout": LAYOUT,
                 "next_hand": min(first + args.round, args.hands), "summary": summary, "rows": rows}
        args.json.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
    return summary


if __name__ == "__main__":
    main()
