"""How much faster `cardlab eval --workers 2` is than the serial `cardlab eval`, and that it agrees.

Times the command as a user runs it (a fresh process each time, so the Ray
run includes starting and stopping its local Ray), serial and parallel runs
taking turns, and prints each time, the medians and the speed-up. Then it
checks that the two give the same records, hand by hand (`evaluate` against
`evaluate_parallel` in this process, on the same hands and seed).

On a shared machine the cores actually free change from minute to minute, so
it also measures them: before each pair of runs, a pure-Python loop in one
process and then in two at once (two free cores run both in the time of
one); during each serial run, the machine's busy cores from /proc/stat
(the serial run itself keeps one busy, so anything above 1 is other work).

    python benchmarks/eval_workers.py                      # 20,000 Huit hands, expert vs greedy, 3 runs each
    python benchmarks/eval_workers.py --hands 4000 --runs 1

Needs the ray extra (pip install torch==2.13.0 -e ".[ray]").
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


def _spin(_: int) -> int:
    total = 0
    for i in range(5_000_000):
        total += i
    return total


def free_cores() -> float:
    """How many cores two CPU-bound processes get here now (2.0 on an idle 2-core machine)."""
    import multiprocessing

    with multiprocessing.Pool(2) as pool:
        pool.map(_spin, [0, 0])  # start-up
        start = time.perf_counter()
        pool.map(_spin, [0])
        one = time.perf_counter() - start
        start = time.perf_counter()
        pool.map(_spin, [0, 1])
        two = time.perf_counter() - start
    return 2 * one / two


def busy_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat (Linux)."""
    fields = [int(x) for x in pathlib.Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)


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
        cores, busy = [], []
        for run in range(args.runs):
            cores.append(free_cores())
            print(f"run {run + 1}: free cores {cores[-1]:.2f}", flush=True)
            for name, workers in (("serial", None), ("ray", args.workers)):
                before = busy_jiffies()
                times[name].append(cardlab_eval(args, outputs[name], workers))
                after = busy_jiffies()
                used = (after[0] - before[0]) / max(1, after[1] - before[1]) * (os.cpu_count() or 1)
                if name == "serial":
                    busy.append(used)
                print(f"run {run + 1}: {name:<6} {times[name][-1]:7.1f} s, machine's busy cores {used:.2f}",
                      flush=True)
        same_json = json.loads(outputs["serial"].read_text()) == json.loads(outputs["ray"].read_text())

    from cardlab.cluster.parallel_evaluation import evaluate_parallel
    from cardlab.evaluation.evaluate import evaluate
    from cardlab.evaluation.request import EvalRequest

    request = EvalRequest("huit", args.agents, hands=args.hands, seed=args.seed)
    serial = evaluate(request)
    parallel = evaluate_parallel(request, workers=args.workers)
    same_records = serial.hand_records == parallel.hand_records

    serial_s, ray_s = statistics.median(times["serial"]), statistics.median(times["ray"])
    print(f"\ncardlab eval --game huit --agents {' '.join(args.agents)} --hands {args.hands:,} "
          f"({os.cpu_count()} cores, {args.runs} run(s) each, medians)")
    print(f"free cores:        {statistics.median(cores):7.2f} (before each pair: "
          f"{', '.join(f'{c:.2f}' for c in cores)})")
    print(f"other work:        {statistics.median(busy) - 1:7.2f} cores busy during the serial runs")
    print(f"serial:            {serial_s:7.1f} s")
    print(f"--workers {args.workers}:       {ray_s:7.1f} s (Ray start and stop included)")
    print(f"speed-up:          {serial_s / ray_s:7.2f}x")
    print(f"same JSON output:  {same_json}")
    print(f"same records:      {same_records} ({len(serial.hand_records):,} hands compared one by one)")


if __name__ == "__main__":
    main()
