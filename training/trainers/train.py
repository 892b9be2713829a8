"""Train a learner from a config: `train` dispatches to the config's trainer, in one run folder layout.

``train_from_file("configs/huit_quick.yaml")`` returns the run folder.
``trainer: maskable_ppo`` (the default) is sb3-contrib's MaskablePPO in one
seat against a league (`cardlab.training.trainers.sb3`); ``trainer: lean`` is
the lean masked PPO, or DMC, over the batched self-play engine
(`cardlab.training.trainers.lean`). With ``imitation.enabled`` the policy first
copies a teacher agent, is evaluated at step 0, then trains. A run writes
``runs/<name>__<seed>__<YYYYmmdd-HHMMSS>/``: ``config.yaml`` (every key
resolved), TensorBoard events (``charts/``, ``losses/``, ``eval/``,
``imitation/``), checkpoints recorded with their sha256 in
``checkpoints/SHA256SUMS`` (only recorded ones are loaded), the league's
snapshots, ``eval.csv`` (`EVAL_FIELDS`) and the bot file; docs/training.md
lists them. Evaluations play the same deals each time (a fixed seed), so
successive win rates differ by the learner's play, not by the cards.

`train(cfg, resume=RUN_DIR)` continues a run from its last recorded
checkpoint with the same config (only `total_timesteps`, `max_minutes`,
`actors`, `device` and `ray.address` may change). Ctrl-C stops a run with
`TrainingInterrupted`, which names the folder and its last checkpoint. With
``vec_env: subproc`` a script that calls `train` needs the usual
``if __name__ == "__main__":`` guard (notebooks and `cardlab` do not).
"""


from __future__ import annotations

from pathlib import Path

from cardlab.training.harness.checkpoints import checkpoint_steps
from cardlab.training.harness.config import TrainConfig, load_config, save_config, validate_config
from cardlab.training.harness.progress import Progress
from cardlab.training.harness.records import EvalReporter
from cardlab.training.harness.runs import (
    TrainingInterrupted,
    new_run_dir,
    pin_equity,
    prepare_resume,
    print_end,
)
from cardlab.training.trainers.actors import PoolFactory, pool_factory
from cardlab.training.trainers.lean import train_lean
from cardlab.training.trainers.sb3 import train_sb3


def train(cfg: TrainConfig, runs_dir: str | Path = "runs", resume: str | Path | None = None,
          progress: bool = True, reporter: EvalReporter | None = None,
          remote: PoolFactory | None = None) -> Path:
    """Train as `cfg` says (or continue the run folder `resume`); returns the run folder.

    `progress`: show how the run goes (a bar on a terminal, else lines; see
    the module doc). The run folder is printed when the run starts, the final
    evaluation at the end. Ctrl-C raises `TrainingInterrupted`. `reporter` gets every evaluation's
    results (see `EvalReporter`). `remote` starts the actors of a config with ``ray.address``
    (`cardlab.cluster.lean_actors.RayActors`, which ``cardlab train --ray-address`` gives).
    """
    show = Progress(progress)
    cfg = validate_config(cfg)
    if cfg.actors:
        pool_factory(cfg, remote)  # a Ray address without the Ray actors is refused before the run folder
    if resume is not None:
        run_dir = Path(resume)
        cfg, checkpoint = prepare_resume(cfg, run_dir)
        print(f"resuming the run folder {run_dir} from {checkpoint.name} ({checkpoint_steps(checkpoint):,} "
              "steps)", flush=True)
    else:
        run_dir, checkpoint = new_run_dir(Path(runs_dir), cfg), None
        save_config(cfg, run_dir / "config.yaml")
        pin_equity(cfg, run_dir)
        print(f"run folder: {run_dir}", flush=True)
    try:
        with show.watched():
            if cfg.trainer == "lean":
                steps, results = train_lean(cfg, run_dir, checkpoint, show, reporter, remote)
            else:
                steps, results = train_sb3(cfg, run_dir, checkpoint, show, reporter)
    except KeyboardInterrupt:
        raise TrainingInterrupted.of(run_dir) from None
    print_end(cfg, run_dir, steps, results)
    if reporter is not None and results:
        reporter(steps, results, True)
    return run_dir


def train_from_file(path: str | Path, resume: str | Path | None = None, runs_dir: str | Path = "runs",
                    progress: bool = True) -> Path:
    """`train` with the config read from a YAML file."""
    return train(load_config(path), runs_dir=runs_dir, resume=resume, progress=progress)
