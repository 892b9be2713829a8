"""Train a MaskablePPO learner in one seat of a card game, against a league.

(With ``trainer: lean`` the run is the lean masked PPO over the batched
self-play engine, `cardlab.training.trainers.lean`, in the same run folder layout; the
MaskablePPO trainer is `cardlab.training.trainers.sb3`.)

```python
from cardlab.training.trainers.train import train_from_file
run_dir = train_from_file("configs/huit_quick.yaml")
```

With ``imitation.enabled`` the policy first copies a teacher agent (behaviour
cloning on its moves, the critic on their outcomes; see `imitate`), is
evaluated at step 0, then PPO trains it. A run writes
``runs/<name>__<seed>__<YYYYmmdd-HHMMSS>/``:

- ``config.yaml``: the resolved config (every key, defaults filled in);
- TensorBoard events: ``charts/`` (training win rate, episode return and
  length, steps/s, learning rate), ``losses/`` (SB3's ``train/*`` renamed),
  ``eval/`` (win rate, Wilson and paired bounds and mean points per eval opponent),
  ``imitation/`` (per epoch of the warm start);
- ``checkpoints/model_<steps>.zip``: MaskablePPO checkpoints, every
  `checkpoint_every` steps and at the end, each recorded with its sha256 in
  ``checkpoints/SHA256SUMS``: checkpoints are pickles, so only recorded ones
  are loaded (`cardlab.training.harness.checkpoints`); ``checkpoints/league/``: the
  self-play snapshots (bot files);
- ``eval.csv``: the evaluation history (`EVAL_FIELDS`: steps, opponent, hands,
  win_rate, ci_low, ci_high (Wilson), paired_ci_low, paired_ci_high (clustered
  by deal), mean_points, and the match columns, filled when
  the final evaluation plays `eval.final_matches`), the final evaluation last;
- ``bot.json`` + ``bot.safetensors``: the trained bot (`cardlab.agents.bot`).

An evaluation plays `hands` hands of the learner (masked argmax) against each
eval opponent spec, which fills every other seat, with
`cardlab.evaluation.evaluate.evaluate`: each deal is played once per seat of the
learner. The deals are the same at every evaluation (a fixed seed), so
successive win rates differ by the learner's play, not by the cards.

What a run shows (`Progress`): its folder when it starts; with ``progress``,
on a terminal a bar on stderr (its ETA the average rate since training
started, its postfix the last evaluation and its step), otherwise one line on
stdout per evaluation, checkpoint and imitation stage, so a redirected log
stays short; at the end the final evaluation table. Win rates are fractions
(0.475 [0.444, 0.506]) everywhere, as `cardlab eval` prints them. Ctrl-C
stops the run with `TrainingInterrupted`, which names the run folder and its
last checkpoint (what ``--resume`` continues from).

`train(cfg, resume=RUN_DIR)` continues a run from its last checkpoint (refused
unless the run recorded it, unchanged, in checkpoints/SHA256SUMS): same
config (only `total_timesteps`, `max_minutes`, `actors`, `device` and `ray.address` may change),
step counter, league snapshots and eval history; TensorBoard curves continue at the restored step.

With ``vec_env: subproc`` the envs run in worker processes started by
multiprocessing (forkserver): a script that calls `train` needs the usual
``if __name__ == "__main__":`` guard (notebooks and the `cardlab` command do not).
"""


from __future__ import annotations

from pathlib import Path

from cardlab.training.harness.checkpoints import checkpoint_steps
from cardlab.training.harness.config import TrainConfig, load_config, save_config, validate_config
from cardlab.training.harness.progress import Progress
from cardlab.training.harness.records import EvalReporter
from cardlab.training.harness.runs import TrainingInterrupted, new_run_dir, prepare_resume, print_end
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
