"""Whole-run training throughput: the lean self-play trainer beside the MaskablePPO pipeline.

Each figure is a whole `train` call (run folder, numba cache load, rollouts,
updates, snapshots, the final checkpoint and bot file; no evaluation, whose
cost is the evaluation's, not training's) divided into the env steps PPO
consumed (learner decisions):

- lean on configs/huit_selfplay.yaml (Huit 2p) and configs/switch_selfplay.yaml
  (Switch 4p): as shipped (the league: learner seats, snapshots, a few
  heuristic seats; two torch threads, so both cores work on the update), the
  same on one torch thread (what the second core adds), and pure self-play
  (every seat the learner's);
- lean with the learner alone against the expert in every other seat: what
  heuristic opponents cost (they play move by move in Python);
- MaskablePPO on configs/huit_ppo.yaml with imitation off, as shipped
  otherwise: the pipeline the issue's 10x target compares with.

Each figure is the median of `--repeats` runs. Run:
``python benchmarks/selfplay_throughput.py [--lean-steps 300000] [--sb3-steps 30000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from cardlab.agents.bot import load_bot
from cardlab.training.config import OpponentConfig, TrainConfig, load_config
from cardlab.training.train import train

REPO = Path(__file__).resolve().parents[1]
NEVER = 10**12


def whole_run(cfg: TrainConfig, steps: int) -> tuple[int, float]:
    """(env steps, seconds) of a whole training run of `cfg` for `steps` steps, evaluation off."""
    cfg = dataclasses.replace(
        cfg, total_timesteps=steps, checkpoint_every=NEVER,
        eval=dataclasses.replace(cfg.eval, every_steps=NEVER, final_hands=0),
        imitation=dataclasses.replace(cfg.imitation, enabled=False),
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_dir = train(cfg, runs_dir=tmp, progress=False)
        seconds = time.perf_counter() - start
        return int(load_bot(run_dir).metadata["summary"]["steps"]), seconds


def _lean_variants(name: str) -> dict[str, TrainConfig]:
    cfg = load_config(REPO / "configs" / f"{name}.yaml")
    sp = cfg.self_play
    return {
        f"lean {name} (as shipped, {cfg.torch_threads} torch threads)": cfg,
        f"lean {name} (as shipped, 1 torch thread)": dataclasses.replace(cfg, torch_threads=1),
        f"lean {name} (pure self-play)": dataclasses.replace(
            cfg, self_play=dataclasses.replace(sp, learner_share=1.0)),
        f"lean {name} (learner vs expert)": dataclasses.replace(
            cfg, opponents=[OpponentConfig("expert")],
            self_play=dataclasses.replace(sp, enabled=False, learner_share=0.0)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lean-steps", type=int, default=300_000, help="env steps of each lean run")
    parser.add_argument("--heuristic-steps", type=int, default=50_000,
                        help="env steps of the lean runs against the expert")
    parser.add_argument("--sb3-steps", type=int, default=30_000, help="env steps of the MaskablePPO run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each variant (the median is shown)")
    args = parser.parse_args()

    sb3 = load_config(REPO / "configs" / "huit_ppo.yaml")
    runs: list[tuple[str, TrainConfig, int]] = [("MaskablePPO huit_ppo (imitation off)", sb3, args.sb3_steps)]
    for name in ("huit_selfplay", "switch_selfplay"):
        for label, cfg in _lean_variants(name).items():
            budget = args.heuristic_steps if label.endswith("vs expert)") else args.lean_steps
            runs.append((label, cfg, budget))
    rows: list[tuple[str, int, float]] = []
    for label, cfg, budget in runs:
        measured = [whole_run(cfg, budget) for _ in range(args.repeats)]
        rate = statistics.median(steps / seconds for steps, seconds in measured)
        rows.append((label, measured[0][0], rate))
        each = ", ".join(f"{steps / seconds:,.0f}" for steps, seconds in measured)
        print(f"  {label}: {each} steps/s", flush=True)
    base = rows[0][2]
    print(f"{'run':<52}{'steps':>10}{'steps/s':>10}{'vs MaskablePPO':>16}")
    for label, steps, rate in rows:
        print(f"{label:<52}{steps:>10,}{rate:>10,.0f}{rate / base:>15.1f}x")


if __name__ == "__main__":
    main()
