"""What the first run after an install costs: commands with an empty numba kernel cache, then again warm.

numba compiles cardlab's kernels the first time a process needs them and
keeps them in its cache (`NUMBA_CACHE_DIR`, else ``__pycache__`` beside the
sources); later processes load them. Each command here runs twice in a
fresh process with `NUMBA_CACHE_DIR` pointing at a new empty folder: cold
(it compiles what it uses), then warm (it loads what the cold run left).
One run each, wall seconds: a cold run cannot be repeated without compiling
again, so these are single figures, not medians.

The commands: the first decision of the web app's quick search (its time and
the worlds it played, beside a second decision on the same position, which
plays with everything loaded), `cardlab eval` of the expert against itself,
and `cardlab train` of the quick config; with ``--main`` the README's main
job too (minutes). ``--json`` writes the report, which docs/update_tables.py
renders on the results page (`speed_rows.cold_markdown`).

    python benchmarks/cold_start.py --main --json docs/cold_start.json
    python benchmarks/cold_start.py --only search --spec search:level=quick:belief=learned:expert
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speed_rows

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIRST_DECISION = """
import json, sys, time
import numpy as np
from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_env
env = make_env("huit", num_players=int(sys.argv[2]))
env.reset(seed=1)
agent = make_agent(sys.argv[1], env.game, seed=0)
while np.count_nonzero(env.observe(env.agent_selection)["action_mask"]) < 2:
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
observation, out = env.observe(env.agent_selection), {}
for name in ("first", "again"):
    if "record" in agent.sees:
        agent.show({"record": env.unwrapped.public_record(env.agent_selection)})
    started = time.perf_counter()
    agent.act(observation)
    out[name + "_ms"] = 1000 * (time.perf_counter() - started)
    out[name + "_worlds"] = agent.last_decision.worlds
print(json.dumps(out))
"""
"""a process's first decision of search `argv[1]` at a Huit `argv[2]`-player table, then the same again"""


def commands(spec: str, players: int, runs: pathlib.Path, main: bool) -> dict[str, list[str]]:
    """name -> argv, each run from the repository's root."""
    out = {"search": [sys.executable, "-c", FIRST_DECISION, spec, str(players)],
           "eval": ["cardlab", "eval", "--game", "huit", "--agents", "expert", "expert", "--hands", "200"],
           "train quick": ["cardlab", "train", "configs/huit_quick.yaml", "--runs-dir", str(runs)]}
    if main:
        out["main job"] = ["cardlab", "train", "configs/huit_ppo.yaml", "--runs-dir", str(runs)]
    return out


def timed(argv: list[str], cache: pathlib.Path) -> tuple[float, str]:
    """Wall seconds of `argv` with this kernel cache, and its last line of output."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    lines = done.stdout.strip().splitlines()
    return seconds, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="search:level=quick:expert",
                        help="the search of the first decision (default: the web app's quick search)")
    parser.add_argument("--players", type=int, default=4, help="its Huit table's players (default 4)")
    parser.add_argument("--only", nargs="+", choices=list(speed_rows.COLD_COMMANDS),
                        help="measure only these commands")
    parser.add_argument("--main", action="store_true", help="the README's main job too (minutes)")
    parser.add_argument("--json", type=pathlib.Path,
                        help="write the report to this file (docs/cold_start.json: docs/update_tables.py "
                             "renders it on the results page)")
    args = parser.parse_args(argv)
    start = speed_rows.load_now()
    rows: list[dict[str, Any]] = []
    report = {"machine": speed_rows.machine(), "loadavg": {"start": start, "end": start}, "spec": args.spec,
              "players": args.players, "rows": rows}
    with tempfile.TemporaryDirectory(prefix="cardlab-cold-") as tmp:
        for name, command in commands(args.spec, args.players, pathlib.Path(tmp) / "runs", args.main).items():
            if args.only and name not in args.only:
                continue
            cache = pathlib.Path(tmp) / f"kernels-{len(rows)}"
            cache.mkdir()
            (cold, cold_out), (warm, warm_out) = timed(command, cache), timed(command, cache)
            row: dict[str, Any] = {"command": name, "cold_s": round(cold, 2), "warm_s": round(warm, 2)}
            if name == "search":
                row["first"] = {"cold": json.loads(cold_out), "warm": json.loads(warm_out)}
            rows.append(row)
            report["loadavg"] = {"start": start, "end": speed_rows.load_now()}
            print(f"{name}: cold {cold:.1f} s, warm {warm:.1f} s", flush=True)
            if args.json:
                args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print()
    print(speed_rows.cold_markdown(report))


if __name__ == "__main__":
    main()
