"""PPO against DouZero's deep Monte Carlo (``algorithm: dmc``) at equal steps, Huit 4p from scratch.

Each row trains the table bots' recipe at Huit 4p (configs/tables/base.yaml) with
imitation off, for the same number of learner steps (``--steps``; no
wall-clock limit), then its final evaluation plays ``--hands`` hands
against three experts (the learner's seat rotating; the intervals are
eval.csv's, clustered by deal, and Wilson's). The rows differ only in the
learner: PPO as the recipe has it, DMC with the same network, and DMC with
a wider one.

A row is written to the results file (JSON) as soon as its run ends, and a
row already there is skipped, so the benchmark runs in rounds: one row per
call with ``--only LABEL`` (each a run of minutes) and the table printed at
the end of each call.

Run: ``python benchmarks/dmc_vs_ppo.py [--steps 12000000] [--hands 2000] [--only ppo]
[--out benchmarks/results/dmc-vs-ppo-<steps>.json] [--runs-dir runs/dmc_vs_ppo]`` (the default results
file is named by the steps, e.g. ``dmc-vs-ppo-12m.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from cardlab.cli.common import check_output, write_text_output
from cardlab.envs.declared import RANGE, check_that, check_value, declarations, unknown
from cardlab.training.harness.config import TrainConfig, validate_config
from cardlab.training.harness.records import EvalHistory
from cardlab.training.trainers.train import train

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from learning_curve import OPPONENT, REPO, table_recipe


def recipe(steps: int, hands: int) -> TrainConfig:
    """The Huit 4p recipe from scratch for `steps` learner steps; the final evaluation: `hands` vs experts."""
    return table_recipe("huit", 4, "ppo", False, name="huit_4p_scratch", steps=steps, checkpoint_every=steps,
                        every_steps=max(steps // 4, 1), hands=200, final_hands=hands)


def rows(steps: int, hands: int) -> dict[str, TrainConfig]:
    """The compared configs by label: PPO as the recipe has it, DMC with its network, DMC wider."""
    ppo = recipe(steps, hands)
    dmc = dataclasses.replace(ppo, algorithm="dmc")
    wide = dataclasses.replace(dmc, policy=dataclasses.replace(dmc.policy, net_arch=[512, 512]))
    return {"ppo": ppo, "dmc": dmc, "dmc-512x512": wide}


def final_row(run_dir: Path) -> dict[str, str]:
    """The run's final evaluation against `OPPONENT` (the last eval.csv row for it)."""
    return [r for r in EvalHistory(run_dir / "eval.csv").rows() if r["opponent"] == OPPONENT][-1]


ROW_KEYS = ("label", "algorithm", "net_arch", "steps", "hands", "win_rate", "paired_ci", "wilson_ci",
            "minutes", "run")
"""the keys of a results file's row (`measure`)"""


def read_results(path: Path) -> list[dict[str, Any]]:
    """The rows of the results file `path` (none where it does not exist yet); a file that is not one this
    benchmark wrote (not JSON, damaged, another's) is refused in one line before any run: the rows of the
    runs to come are added to it."""
    if not path.exists():
        return []
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"--out {path}: not a JSON ({type(err).__name__}: {err}); accepted: "
                         f"{RESULTS}") from None
    if not (isinstance(done, list) and all(isinstance(r, dict) and set(r) == set(ROW_KEYS)
                                           and isinstance(r["label"], str) and isinstance(r["steps"], int)
                                           for r in done)):
        raise ValueError(f"--out {path}: not a results file of this benchmark (a damaged file, or "
                         f"another's); accepted: {RESULTS}")
    return done


def measure(label: str, cfg: TrainConfig, runs_dir: Path) -> dict[str, Any]:
    start = time.perf_counter()
    run_dir = train(validate_config(dataclasses.replace(cfg, name=f"{cfg.name}_{label}")), runs_dir=runs_dir)
    minutes = (time.perf_counter() - start) / 60
    final = final_row(run_dir)
    return {"label": label, "algorithm": cfg.algorithm, "net_arch": cfg.policy.net_arch,
            "steps": int(final["steps"]), "hands": int(final["hands"]), "win_rate": float(final["win_rate"]),
            "paired_ci": [float(final["paired_ci_low"]), float(final["paired_ci_high"])],
            "wilson_ci": [float(final["ci_low"]), float(final["ci_high"])], "minutes": round(minutes, 1),
            "run": str(run_dir)}


RESULTS = f"a JSON list of this benchmark's rows, each with {', '.join(ROW_KEYS)}, or a new file name"
"""what a results file may be, as its refusals say"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12_000_000)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--only", nargs="*", default=None, help="labels to run (default: every row)")
    parser.add_argument("--out", type=Path, default=None, help="results file (default: by the steps)")
    parser.add_argument("--runs-dir", type=Path, default=REPO / "runs" / "dmc_vs_ppo")
    args = parser.parse_args(argv)
    out = args.out or REPO / "benchmarks" / "results" / f"dmc-vs-ppo-{args.steps / 1e6:g}m.json"
    try:  # the flags first, named as typed: the config keys they set are checked again in each run's config
        check_value("--steps", declarations(TrainConfig)["total_timesteps"], args.steps)
        check_that(args.hands >= 1, "--hands", args.hands, RANGE, "a whole number of hands >= 1 (a row is "
                   "its run's final evaluation)")
        table = rows(args.steps, args.hands)
        for cfg in table.values():
            validate_config(cfg)
        with contextlib.suppress(OSError):  # a new folder for the results, as the rows' writes made it
            out.parent.mkdir(parents=True, exist_ok=True)
        check_output("--out", out)  # before the first run, not after it
        done = read_results(out)
    except ValueError as err:
        parser.error(str(err))
    strangers = set(args.only or ()) - set(table)
    if strangers:
        parser.error(str(unknown("row", strangers, ", ".join(table), "for --only")))
    for label, cfg in table.items():
        if (args.only is not None and label not in args.only) or any(
                r["label"] == label and r["steps"] >= args.steps for r in done):
            continue
        done = [r for r in done if r["label"] != label] + [measure(label, cfg, args.runs_dir)]
        write_text_output(out, json.dumps(done, indent=1) + "\n")
    print(f"Huit 4p from scratch, {args.steps:,} steps each, final evaluation against three experts:")
    print("| learner | network | steps | hands | vs expert | 95% CI (paired) | Wilson | minutes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in done:
        arch = "x".join(map(str, r["net_arch"]))
        print(f"| {r['algorithm']} | {arch} | {r['steps']:,} | {r['hands']:,} | {r['win_rate']:.3f} | "
              f"[{r['paired_ci'][0]:.3f}, {r['paired_ci'][1]:.3f}] | [{r['wilson_ci'][0]:.3f}, "
              f"{r['wilson_ci'][1]:.3f}] | {r['minutes']} |")


if __name__ == "__main__":
    main()
