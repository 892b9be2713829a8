"""How much faster `cardlab eval --workers 2` is than the serial `cardlab eval`, and that it agrees.

Times the command as a user runs it (a fresh process each time, so the Ray
run includes starting and stopping its local Ray), serial and parallel runs
taking turns, and prints each time, the medians and the speed-up. Then it
checks that the two give the same records, hand by hand (`evaluate` against
`evaluate_parallel` in this process, on the same hands and seed).

    python benchmarks/eval_workers.py                      # 20,000 Huit hands, expert vs greedy, 3 runs each
    python benchmarks/eval_workers.py --hands 4000 --runs 1

Needs the ray extra (pip install -e ".[ray]").
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cardlab_eval(args: argparse.Namespace, out: pathlib.Path, workers: int | None) -> float:
    """Seconds one `cardlab eval` takes (its JSON goes to `out`)."""
    exe = shutil.which("cardlab", path=os.path.dirname(sys.executable)) or "cardlab"
    cmd = [exe, "eval", "--game", "huit", "--agents", *args.agents, "--hands", str(args.hands),
           "--seed", str(args.seed), "--json", str(out)]
    if workers:
        cmd += ["--workers", str(workers)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--agents", nargs="+", default=["expert", "greedy"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="runs of each (medians are reported)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    times: dict[str, list[float]] = {"serial": [], "ray": []}
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {name: pathlib.Path(tmp) / f"{name}.json" for name in times}
        for run in range(args.runs):
            for name, workers in (("serial", None), ("ray", args.workers)):
                times[name].append(cardlab_eval(args, outputs[name], workers))
                print(f"run {run + 1}: {name:<6} {times[name][-1]:7.1f} s", flush=True)
        same_json = json.loads(outputs["serial"].read_text()) == json.loads(outputs["ray"].read_text())

    from cardlab.cluster.evaluate import evaluate_parallel
    from cardlab.training.evaluate import evaluate

    serial = evaluate("huit", args.agents, args.hands, seed=args.seed)
    parallel = evaluate_parallel("huit", args.agents, args.hands, seed=args.seed, workers=args.workers)
    same_records = serial.hand_records == parallel.hand_records

    serial_s, ray_s = statistics.median(times["serial"]), statistics.median(times["ray"])
    print(f"\ncardlab eval --game huit --agents {' '.join(args.agents)} --hands {args.hands:,} "
          f"({os.cpu_count()} cores, {args.runs} run(s) each, medians)")
    print(f"serial:            {serial_s:7.1f} s")
    print(f"--workers {args.workers}:       {ray_s:7.1f} s (Ray start and stop included)")
    print(f"speed-up:          {serial_s / ray_s:7.2f}x")
    print(f"same JSON output:  {same_json}")
    print(f"same records:      {same_records} ({len(serial.hand_records):,} hands compared one by one)")


if __name__ == "__main__":
    main()
