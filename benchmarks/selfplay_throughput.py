"""Whole-run training throughput: the lean self-play trainer beside the MaskablePPO pipeline.

Each figure is a whole `train` call (run folder, numba cache load, rollouts,
updates, snapshots, the final checkpoint and bot file; no evaluation, whose
cost is the evaluation's, not training's) divided into the env steps PPO
consumed (learner decisions):

- lean on configs/huit_selfplay.yaml (Huit 2p), configs/switch_selfplay.yaml
  (Switch 4p) and configs/tables/huit_4p.yaml (Huit 4p, the table bot's
  recipe): as shipped (the league: learner seats, snapshots, a few
  heuristic seats), the same on one torch thread (what a second core adds),
  and pure self-play (every seat the learner's);
- lean with the learner alone against the expert in every other seat
  (three experts at 4 players): what heuristic opponents cost. The expert
  of each game is one agent for all its seats, asked once per move of the
  batch (`Agent.act_batch`), so this is as fast as the expert's batch is;
  the last column gives it over pure self-play of the same config;
- MaskablePPO on configs/huit_ppo.yaml with imitation off, as shipped
  otherwise: the pipeline the lean trainer's 10x target compares with.

Each figure is the median of `--repeats` runs. Run:
``python benchmarks/selfplay_throughput.py [--lean-steps 300000] [--sb3-steps 30000] [--repeats 3]``;
``--only huit_4p`` runs only the runs whose label holds that text (the
MaskablePPO baseline is kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

from cardlab.agents.bot import load_bot
from cardlab.training.harness.config import OpponentConfig, TrainConfig, load_config
from cardlab.training.harness.config_bounds import STEPS
from cardlab.training.trainers.train import train

REPO = Path(__file__).resolve().parents[1]
NEVER = STEPS
"""a step count no run reaches (the most a config accepts)"""


def whole_run(cfg: TrainConfig, steps: int) -> tuple[int, float, float]:
    """(env steps, wall-clock seconds, CPU seconds of this process) of a whole training run of `cfg` for
    `steps` steps, evaluation off (on a shared machine the CPU time is the steadier figure)."""
    cfg = dataclasses.replace(
        cfg, total_timesteps=steps, checkpoint_every=NEVER,
        eval=dataclasses.replace(cfg.eval, every_steps=NEVER, final_hands=0),
        imitation=dataclasses.replace(cfg.imitation, enabled=False),
    )
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), time.process_time()
        run_dir = train(cfg, runs_dir=tmp, progress=False)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        return int(load_bot(run_dir).metadata["summary"]["steps"]), seconds, cpu


LEAN_CONFIGS = ("huit_selfplay", "switch_selfplay", "tables/huit_4p")
"""the lean configs measured (under configs/)"""
PURE, VS_EXPERT = "(pure self-play)", "(learner vs expert)"


def lean_variants(path: str) -> dict[str, TrainConfig]:
    """The lean runs measured of configs/`path`.yaml by label: as shipped (and on one torch thread), pure
    self-play (the label ends with `PURE`) and the learner alone against the expert (`VS_EXPERT`)."""
    cfg = load_config(REPO / "configs" / f"{path}.yaml")
    name = Path(path).name
    sp = cfg.self_play
    one_thread = {} if cfg.torch_threads == 1 else {
        f"lean {name} (as shipped, 1 torch thread)": dataclasses.replace(cfg, torch_threads=1)}
    return {
        f"lean {name} (as shipped, {cfg.torch_threads} torch thread{'s' * (cfg.torch_threads > 1)})": cfg,
        **one_thread,
        f"lean {name} {PURE}": dataclasses.replace(
            cfg, self_play=dataclasses.replace(sp, learner_share=1.0)),
        f"lean {name} {VS_EXPERT}": dataclasses.replace(
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
    parser.add_argument("--only", default="", help="run only the lean runs whose label holds this text")
    args = parser.parse_args()

    sb3 = load_config(REPO / "configs" / "huit_ppo.yaml")
    runs: list[tuple[str, TrainConfig, int]] = [("MaskablePPO huit_ppo (imitation off)", sb3, args.sb3_steps)]
    for path in LEAN_CONFIGS:
        for label, cfg in lean_variants(path).items():
            budget = args.heuristic_steps if label.endswith(VS_EXPERT) else args.lean_steps
            if args.only in label:
                runs.append((label, cfg, budget))
    rows: list[tuple[str, int, float, float]] = []
    for label, cfg, budget in runs:
        measured = [whole_run(cfg, budget) for _ in range(args.repeats)]
        rate = statistics.median(steps / seconds for steps, seconds, _ in measured)
        cpu_rate = statistics.median(steps / cpu for steps, _, cpu in measured)
        rows.append((label, measured[0][0], rate, cpu_rate))
        each = ", ".join(f"{steps / seconds:,.0f}" for steps, seconds, _ in measured)
        print(f"  {label}: {each} steps/s", flush=True)
    base = rows[0][2]
    pure = {label.removesuffix(PURE): (rate, cpu) for label, _, rate, cpu in rows if label.endswith(PURE)}
    print(f"{'run':<52}{'steps':>10}{'steps/s':>10}{'CPU steps/s':>12}{'vs MaskablePPO':>16}"
          f"{'vs pure self-play (CPU)':>25}")
    for label, steps, rate, cpu_rate in rows:
        versus = pure.get(label.removesuffix(VS_EXPERT)) if label.endswith(VS_EXPERT) else None
        shown = f"{rate / versus[0]:>17.2f}x ({cpu_rate / versus[1]:.2f}x)" if versus else ""
        print(f"{label:<52}{steps:>10,}{rate:>10,.0f}{cpu_rate:>12,.0f}{rate / base:>15.1f}x{shown}")


if __name__ == "__main__":
    main()
