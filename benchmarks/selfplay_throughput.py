"""Whole-run training throughput: the lean self-play trainer beside the MaskablePPO pipeline.

Each figure is a whole `train` call (run folder, numba cache load, rollouts,
updates, snapshots, the final checkpoint and bot file; no evaluation, whose
cost is the evaluation's, not training's) divided into the env steps PPO
consumed (learner decisions):

- lean on configs/huit_selfplay.yaml (Huit 2p) and configs/switch_selfplay.yaml
  (Switch 4p): as shipped (the league: learner seats, snapshots, a few
  heuristic seats) and pure self-play (every seat the learner's);
- lean with the learner alone against the expert in every other seat: what
  heuristic opponents cost (they play move by move in Python);
- MaskablePPO on configs/huit_ppo.yaml with imitation off, as shipped
  otherwise: the pipeline the issue's 10x target compares with.

Run: ``python benchmarks/selfplay_throughput.py [--lean-steps 200000] [--sb3-steps 30000]``.
"""

from __future__ import annotations

import argparse
import dataclasses
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
        f"lean {name} (as shipped)": cfg,
        f"lean {name} (pure self-play)": dataclasses.replace(
            cfg, self_play=dataclasses.replace(sp, learner_share=1.0)),
        f"lean {name} (learner vs expert)": dataclasses.replace(
            cfg, opponents=[OpponentConfig("expert")],
            self_play=dataclasses.replace(sp, enabled=False, learner_share=0.0)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lean-steps", type=int, default=200_000, help="env steps of each lean run")
    parser.add_argument("--heuristic-steps", type=int, default=50_000,
                        help="env steps of the lean runs against the expert")
    parser.add_argument("--sb3-steps", type=int, default=30_000, help="env steps of the MaskablePPO run")
    args = parser.parse_args()

    rows: list[tuple[str, int, float]] = []
    sb3_cfg = load_config(REPO / "configs" / "huit_ppo.yaml")
    steps, seconds = whole_run(sb3_cfg, args.sb3_steps)
    rows.append(("MaskablePPO huit_ppo (imitation off)", steps, seconds))
    for name in ("huit_selfplay", "switch_selfplay"):
        for label, cfg in _lean_variants(name).items():
            budget = args.heuristic_steps if label.endswith("vs expert)") else args.lean_steps
            steps, seconds = whole_run(cfg, budget)
            rows.append((label, steps, seconds))
    base = rows[0][1] / rows[0][2]
    print(f"{'run':<44}{'steps':>10}{'seconds':>9}{'steps/s':>10}{'vs MaskablePPO':>16}")
    for label, steps, seconds in rows:
        rate = steps / seconds
        print(f"{label:<44}{steps:>10,}{seconds:>9.1f}{rate:>10,.0f}{rate / base:>15.1f}x")


if __name__ == "__main__":
    main()
