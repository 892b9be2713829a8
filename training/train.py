"""Train a MaskablePPO learner in one seat of a card game, against a league.

(With ``trainer: lean`` the run is the lean masked PPO over the batched
self-play engine, `cardlab.training.ppo`, in the same run folder layout.)

```python
from cardlab.training.train import train_from_file
run_dir = train_from_file("configs/huit_quick.yaml")
```

With ``imitation.enabled`` the policy first copies a teacher agent (behaviour
cloning on its moves, the critic on their outcomes; see `imitate`), is
evaluated at step 0, then PPO trains it. A run writes
``runs/<name>__<seed>__<YYYYmmdd-HHMMSS>/``:

- ``config.yaml``: the resolved config (every key, defaults filled in);
- TensorBoard events: ``charts/`` (training win rate, episode return and
  length, steps/s, learning rate), ``losses/`` (SB3's ``train/*`` renamed),
  ``eval/`` (win rate, Wilson bounds and mean points per eval opponent),
  ``imitation/`` (per epoch of the warm start);
- ``checkpoints/model_<steps>.zip``: MaskablePPO checkpoints, every
  `checkpoint_every` steps and at the end, each recorded with its sha256 in
  ``checkpoints/SHA256SUMS``: checkpoints are pickles, so only recorded ones
  are loaded (`cardlab.training.checkpoints`); ``checkpoints/league/``: the
  self-play snapshots (bot files);
- ``eval.csv``: the evaluation history (`EVAL_FIELDS`: steps, opponent, hands,
  win_rate, ci_low, ci_high, mean_points, and the match columns, filled when
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
config (only `total_timesteps` and `max_minutes` may change), step counter, league
snapshots and eval history; TensorBoard curves continue at the restored step.

With ``vec_env: subproc`` the envs run in worker processes started by
multiprocessing (forkserver): a script that calls `train` needs the usual
``if __name__ == "__main__":`` guard (notebooks and the `cardlab` command do not).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor
from tqdm import tqdm

from cardlab.agents.bot import ACTIVATIONS, export_bot
from cardlab.evaluation.evaluate import evaluate
from cardlab.training.checkpoints import (
    CHECKPOINT_PREFIX,
    checkpoint_path,
    checkpoint_steps,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
    verify_checkpoint,
)
from cardlab.training.config import (
    TrainConfig,
    config_to_dict,
    load_config,
    save_config,
    validate_config,
)
from cardlab.training.league import (
    LeagueSettings,
    list_snapshots,
    publish_snapshot,
    save_snapshot,
    snapshot_steps,
)
from cardlab.training.policy import PrivilegedCriticPolicy
from cardlab.training.single_seat import SingleSeatEnv

EvalReporter = Callable[[int, Sequence["LearnerEval"], bool], object]
"""Called with (steps, results, final) after each evaluation; the final one comes after the bot file is
written. A sweep (`cardlab.cluster.sweep`) passes them to Ray Tune, whose scheduler may stop the run there."""
EVAL_SEED_OFFSET = 1_000_003
RESUMABLE = ("total_timesteps", "max_minutes")
"""the config keys a resumed run may change"""
IMITATION_SEED_OFFSET = 2_000_003
# SB3's logger keys -> this project's TensorBoard names (None: not written).
RENAMES: tuple[tuple[str, str | None], ...] = (
    ("train/learning_rate", "charts/learning_rate"),
    ("train/", "losses/"),
    ("rollout/", "charts/"),
    ("time/fps", "charts/SPS"),
    ("time/", None),
)


# ---------------------------------------------------------------- evaluation
@dataclasses.dataclass(frozen=True)
class LearnerEval:
    """The learner's results against one opponent spec (a row of eval.csv)."""

    steps: int
    opponent: str
    hands: int
    win_rate: float
    ci_low: float
    ci_high: float
    mean_points: float
    """the learner's mean hand points (cards left when another seat wins; lower is better)"""
    matches: int = 0
    """matches played to the target score (0: none; the final evaluation plays `eval.final_matches`)"""
    match_win_rate: float = 0.0
    match_ci_low: float = 0.0
    match_ci_high: float = 0.0

    def row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


EVAL_FIELDS = tuple(f.name for f in dataclasses.fields(LearnerEval))
"""the columns of eval.csv"""


def evaluate_bot(
    bot_path: Path, cfg: TrainConfig, spec: str, hands: int, seed: int, steps: int = 0, bar: bool = False,
    matches: int = 0,
) -> LearnerEval:
    """`evaluate` a bot (masked argmax) in one seat against `spec` in all the others, seats rotating.

    `bar`: draw a progress bar on stderr; `matches`: also play this many matches.
    """
    n = cfg.num_players
    result = evaluate(cfg.game, [f"bot:{bot_path}"] + [spec] * (n - 1), hands, seed=seed,
                      rule_options={**cfg.rules, "num_players": n}, matches=matches, progress=bar,
                      desc=f"eval vs {spec}")
    learner = result.stats[0]
    low, high = learner.hands.interval
    match_low, match_high = learner.matches.interval if learner.matches.n else (0.0, 0.0)
    return LearnerEval(steps, spec, learner.hands.n, learner.hands.rate, low, high, learner.mean_points,
                       learner.matches.n, learner.matches.rate if learner.matches.n else 0.0,
                       match_low, match_high)


def evaluate_policy(policy: Any, cfg: TrainConfig, hands: int, steps: int,
                    progress: Progress | None = None, matches: int = 0) -> list[LearnerEval]:
    """Evaluate an SB3 policy against every eval opponent (through a temporary bot export).

    With `progress`, each opponent's evaluation draws a bar (on a terminal) or
    ends with a line: no long silence.
    """
    seed = cfg.seed + EVAL_SEED_OFFSET
    results = []
    with tempfile.TemporaryDirectory(prefix="cardlab-eval-") as tmp:
        path = export_bot(policy, Path(tmp) / "learner", game=cfg.game, rules=cfg.rules,
                          num_players=cfg.num_players, summary={})
        for spec in cfg.eval.opponents:
            bar = progress is not None and progress.bars
            results.append(evaluate_bot(path, cfg, spec, hands, seed, steps, bar=bar, matches=matches))
            if progress is not None and not bar:
                progress.say(f"  against {spec}: {format_rate(results[-1])}")
    return results


def format_rate(r: LearnerEval) -> str:
    """A win rate with its 95% interval, as fractions (as `cardlab eval` prints them); matches beside."""
    text = f"{r.win_rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
    if r.matches:
        text += f", matches {r.match_win_rate:.3f} [{r.match_ci_low:.3f}, {r.match_ci_high:.3f}]"
    return text


def format_results(results: Sequence[LearnerEval]) -> str:
    """The evaluation table printed at the end of a run (fractions, as `cardlab eval` prints them)."""
    with_matches = any(r.matches for r in results)
    head = f"{'opponent':<24}{'hands':>7}  {'win rate':>8}  {'95% CI (Wilson)':<17}{'mean points':>11}"
    if with_matches:
        head += f"{'matches':>9}  {'match rate':>10}  95% CI (Wilson)"
    lines = [head]
    for r in results:
        ci = f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
        line = f"{r.opponent:<24}{r.hands:>7}  {r.win_rate:>8.3f}  {ci:<17}{r.mean_points:>11.2f}"
        if with_matches:
            match_ci = f"[{r.match_ci_low:.3f}, {r.match_ci_high:.3f}]"
            line += f"{r.matches:>9}  {r.match_win_rate:>10.3f}  {match_ci}"
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------- what a run shows
class Progress:
    """What a run shows as it goes (see the module doc): bars on a terminal, lines in a log, or nothing.

    Lines go to stdout, above any bar; bars go to stderr, and only when stderr
    is a terminal (as `cardlab eval` does), so a redirected log gets a line per
    event instead of thousands of bar updates.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bars = enabled and sys.stderr.isatty()

    def say(self, text: str) -> None:
        if self.enabled:
            tqdm.write(text, file=sys.stdout)
            sys.stdout.flush()

    def bar(self, **kwargs: Any) -> tqdm:
        """A bar on stderr when on a terminal; its rate and ETA average over all the time since it began."""
        return tqdm(disable=not self.bars, file=sys.stderr, dynamic_ncols=True, smoothing=0, **kwargs)


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped `train`: the run folder, and the steps of its last checkpoint (None: none yet)."""

    def __init__(self, run_dir: Path, checkpoint_steps: int | None) -> None:
        super().__init__(f"training interrupted: run folder {run_dir}")
        self.run_dir = run_dir
        self.checkpoint_steps = checkpoint_steps

    @classmethod
    def of(cls, run_dir: Path) -> TrainingInterrupted:
        """The interruption of the run in `run_dir`, with the steps of its newest checkpoint."""
        saved = list_checkpoints(run_dir)
        return cls(run_dir, checkpoint_steps(saved[-1]) if saved else None)


def _tag(spec: str) -> str:
    """A TensorBoard-friendly name for an agent spec (bot paths have slashes)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)


def _record_results(logger: Logger, results: Sequence[LearnerEval], prefix: str = "") -> None:
    for r in results:
        name = _tag(r.opponent)
        logger.record(f"eval/{prefix}win_rate_{name}", r.win_rate)
        logger.record(f"eval/{prefix}ci_low_{name}", r.ci_low)
        logger.record(f"eval/{prefix}mean_points_{name}", r.mean_points)
        if r.matches:
            logger.record(f"eval/{prefix}match_win_rate_{name}", r.match_win_rate)
            logger.record(f"eval/{prefix}match_ci_low_{name}", r.match_ci_low)


class EvalHistory:
    """``eval.csv``: one row per evaluation and opponent."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def rows(self) -> list[dict[str, str]]:
        if not self.path.exists():
            return []
        with self.path.open(newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))

    def append(self, results: Sequence[LearnerEval]) -> None:
        self._write([r.row() for r in results], "a")

    def truncate(self, steps: int) -> None:
        """Drop rows after `steps` (evaluations a resumed run will redo)."""
        kept = [r for r in self.rows() if int(r["steps"]) <= steps]
        self.path.unlink(missing_ok=True)
        self._write(kept, "w")

    def _write(self, rows: Sequence[dict[str, Any]], mode: str) -> None:
        if not rows:
            return
        header = mode == "w" or not self.path.exists()
        with self.path.open(mode, newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
            if header:
                writer.writeheader()
            writer.writerows(rows)


# ---------------------------------------------------------------- logging
class _RenamingWriter(KVWriter):
    """Writes SB3's logger values under this project's names (`RENAMES`)."""

    def __init__(self, inner: KVWriter) -> None:
        self.inner = inner

    @staticmethod
    def rename(key: str) -> str | None:
        """The written name of `key` (a prefix rule renames the prefix), or None to drop it."""
        for source, target in RENAMES:
            if key == source:
                return target
            if source.endswith("/") and key.startswith(source):
                return None if target is None else target + key[len(source):]
        return key

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        values, excluded = {}, {}
        for key, value in key_values.items():
            name = self.rename(key)
            if name is not None:
                values[name], excluded[name] = value, key_excluded.get(key, ())
        self.inner.write(values, excluded, step)

    def close(self) -> None:
        self.inner.close()


def _make_logger(run_dir: Path) -> Logger:
    return Logger(str(run_dir), [_RenamingWriter(TensorBoardOutputFormat(str(run_dir)))])


# ---------------------------------------------------------------- envs
def _league_dir(run_dir: Path) -> Path:
    """Where a run keeps the learner's frozen snapshots (the self-play part of the league)."""
    return run_dir / "checkpoints" / "league"


def _league_settings(cfg: TrainConfig, league_dir: Path) -> LeagueSettings:
    sp, pop = cfg.self_play, cfg.population
    return LeagueSettings(
        opponents=tuple((o.spec, o.weight) for o in cfg.opponents),
        snapshot_dir=str(league_dir.resolve()) if sp.enabled else None,
        snapshot_share=sp.share if sp.enabled else 0.0,
        pool_size=sp.pool_size,
        snapshot_deterministic=sp.deterministic,
        population_dir=str(Path(pop.dir).resolve()) if pop.dir else None,
        population_share=pop.share,
        population_size=pop.pool_size,
        learner=league_dir.parent.parent.name,  # the run folder's name
    )


class _EnvFactory:
    """Builds one training env (picklable, for SubprocVecEnv's worker processes)."""

    def __init__(self, cfg: TrainConfig, league: LeagueSettings, worker: bool) -> None:
        self.game, self.num_players, self.rules = cfg.game, cfg.num_players, dict(cfg.rules)
        self.reward = cfg.reward
        self.privileged, self.skip_forced = cfg.policy.privileged_critic, cfg.skip_forced_moves
        self.league = league
        self.worker = worker

    def __call__(self) -> SingleSeatEnv:
        if self.worker:
            torch.set_num_threads(1)  # one core per worker; snapshots play small nets
            # Ctrl-C reaches every process of the terminal: the trainer stops the workers itself, so they
            # neither print a traceback each nor die while the trainer still talks to them.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return SingleSeatEnv(self.game, self.num_players, self.rules, opponents=self.league,
                             reward=self.reward, privileged=self.privileged, skip_forced=self.skip_forced)


def _stop_workers(vec: VecEnv) -> None:
    """After Ctrl-C: end a SubprocVecEnv's workers at once (a worker busy sending a result would keep
    `close` waiting for ever); a no-op for other envs."""
    inner = getattr(vec, "venv", vec)
    if isinstance(inner, SubprocVecEnv) and not inner.closed:
        for process in inner.processes:
            process.terminate()
        for process in inner.processes:
            process.join(timeout=10)
        inner.closed = True


def make_vec_env(cfg: TrainConfig, league_dir: Path) -> VecEnv:
    """`num_envs` single-seat envs (SubprocVecEnv or DummyVecEnv, per `vec_env`), with episode stats."""
    league = _league_settings(cfg, league_dir)
    subproc = cfg.vec_env == "subproc"
    # Typed as SB3 asks (its parameter is a list, which is invariant in its element type).
    factories: list[Callable[[], gymnasium.Env]] = [
        _EnvFactory(cfg, league, worker=subproc) for _ in range(cfg.num_envs)
    ]
    vec: VecEnv = SubprocVecEnv(factories) if subproc else DummyVecEnv(factories)
    return VecMonitor(vec)


# ---------------------------------------------------------------- runs
def _new_run_dir(runs_dir: Path, cfg: TrainConfig) -> Path:
    base = f"{cfg.name}__{cfg.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    for k in range(1000):
        run_dir = runs_dir / (base if k == 0 else f"{base}-{k}")
        try:
            run_dir.mkdir(parents=True)
            return run_dir
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a fresh run folder {runs_dir / base}")


def _flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict) and data and prefix != "rules":
        for key, value in data.items():
            yield from _flatten(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, data


def _resumed_config(cfg: TrainConfig, run_dir: Path) -> TrainConfig:
    """The run's own config; `cfg` may only change `RESUMABLE` keys."""
    saved = load_config(run_dir / "config.yaml")
    mine, theirs = dict(_flatten(config_to_dict(cfg))), dict(_flatten(config_to_dict(saved)))
    diffs = [f"{k} (run: {theirs.get(k)!r}, given: {mine.get(k)!r})" for k in sorted(set(mine) | set(theirs))
             if k not in RESUMABLE and mine.get(k) != theirs.get(k)]
    if diffs:
        raise ValueError(f"--resume continues {run_dir} with its own config.yaml; the given config differs "
                         f"in {', '.join(diffs)}: only {' and '.join(RESUMABLE)} may change")
    return dataclasses.replace(saved, total_timesteps=cfg.total_timesteps, max_minutes=cfg.max_minutes)


def _prepare_resume(cfg: TrainConfig, run_dir: Path) -> tuple[TrainConfig, Path]:
    """Config and last checkpoint of a run; drops snapshots and eval rows after that checkpoint.

    The checkpoint is checked against the run's record (`verify_checkpoint`)
    before anything in the run folder changes.
    """
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"cannot resume {run_dir}: it has no config.yaml (is it a run folder?)")
    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        raise ValueError(f"cannot resume {run_dir}: no checkpoints/{CHECKPOINT_PREFIX}<steps>.zip in it")
    last = checkpoints[-1]
    verify_checkpoint(last, run_dir)
    cfg = _resumed_config(cfg, run_dir)
    steps = checkpoint_steps(last)
    for meta in list_snapshots(_league_dir(run_dir)):
        if snapshot_steps(meta) > steps:
            meta.unlink()
            meta.with_suffix(".safetensors").unlink(missing_ok=True)
    EvalHistory(run_dir / "eval.csv").truncate(steps)
    save_config(cfg, run_dir / "config.yaml")
    return cfg, last


def _new_model(cfg: TrainConfig, env: VecEnv) -> MaskablePPO:
    ppo = cfg.ppo
    arch = list(cfg.policy.net_arch)
    policy_kwargs: dict[str, Any] = {"net_arch": {"pi": arch, "vf": list(arch)},
                                     "activation_fn": ACTIVATIONS[cfg.policy.activation]}
    policy: str | type = "MlpPolicy"
    if cfg.policy.privileged_critic:
        policy = PrivilegedCriticPolicy
        policy_kwargs["public_size"] = env.get_attr("public_size", [0])[0]
    return MaskablePPO(
        policy,
        env,
        learning_rate=ppo.learning_rate,
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs=policy_kwargs,
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
    )


def imitate(model: MaskablePPO, env: VecEnv, cfg: TrainConfig, league_dir: Path, progress: Progress) -> None:
    """Behaviour cloning of `cfg.imitation.teacher` into the actor (and its outcomes into the critic).

    The demonstrations are collected by env processes in parallel
    (`SingleSeatEnv.demonstrate`); the losses and the share of teacher moves
    the policy's argmax matches go to TensorBoard under ``imitation/``, per epoch.
    """
    im = cfg.imitation
    data = _demonstrations(env, cfg, league_dir, progress)
    size = len(data["actions"])
    optimizer = torch.optim.Adam(model.policy.parameters(), lr=im.learning_rate)
    rng = np.random.default_rng(cfg.seed)
    model.policy.set_training_mode(True)
    for epoch in progress.bar(iterable=range(im.epochs), desc=f"imitating {im.teacher} ({size:,} moves)",
                              unit="epoch"):
        totals = np.zeros(3)
        for idx in np.array_split(rng.permutation(size), max(1, size // im.batch_size)):
            batch = {key: value[torch.as_tensor(idx)] for key, value in data.items()}
            totals += len(idx) * np.array(_imitation_step(model, optimizer, batch, cfg))
        for name, value in zip(("policy_loss", "value_loss", "accuracy"), totals / size, strict=True):
            model.logger.record(f"imitation/{name}", value)
        model.logger.dump(epoch)
        if not progress.bars:
            progress.say(f"imitation epoch {epoch + 1}/{im.epochs}: the policy's argmax matches "
                         f"{totals[2] / size:.3f} of the teacher's moves")
    model.policy.set_training_mode(False)


DEMONSTRATION_CHUNKS = 10
"""demonstrations are collected in this many steps, to show progress (the data is the same as in one)"""


def _demonstrations(env: VecEnv, cfg: TrainConfig, league_dir: Path,
                    progress: Progress) -> dict[str, torch.Tensor]:
    """The teacher's demonstrations, collected in worker processes even when training runs in one."""
    im = cfg.imitation
    per_env = math.ceil(im.hands / cfg.num_envs)
    total = per_env * cfg.num_envs
    progress.say(f"imitation: collecting {total:,} hands of {im.teacher} play in {cfg.num_envs} env(s)")
    sizes = [len(part) for part in np.array_split(np.arange(per_env), min(DEMONSTRATION_CHUNKS, per_env))]
    workers = env
    if cfg.vec_env == "dummy" and cfg.num_envs > 1:
        workers = make_vec_env(dataclasses.replace(cfg, vec_env="subproc"), league_dir)
    chunks: list[list[dict[str, np.ndarray]]] = []  # chunks[k][e]: chunk k of env e
    try:
        workers.seed(cfg.seed + IMITATION_SEED_OFFSET)
        workers.reset()
        done, quarters = 0, 0
        with progress.bar(total=total, desc=f"collecting {im.teacher} hands", unit="hand") as bar:
            for k, size in enumerate(sizes):
                # Later chunks keep each env's teacher: the data is what one call of `per_env` hands gives.
                chunks.append(workers.env_method("demonstrate", im.teacher, size, cfg.ppo.gamma, k > 0))
                done += size * cfg.num_envs
                bar.update(size * cfg.num_envs)
                if not progress.bars and 4 * done // total > quarters:
                    quarters = 4 * done // total
                    progress.say(f"imitation: {done:,} of {total:,} hands collected")
    except KeyboardInterrupt:
        if workers is not env:
            _stop_workers(workers)
        raise
    finally:
        if workers is not env:
            workers.close()
    parts = [chunk[e] for e in range(cfg.num_envs) for chunk in chunks]  # env by env, as one call each
    return {key: torch.as_tensor(np.concatenate([part[key] for part in parts])) for key in parts[0]}


def _imitation_step(model: MaskablePPO, optimizer: torch.optim.Optimizer, batch: dict[str, torch.Tensor],
                    cfg: TrainConfig) -> tuple[float, float, float]:
    """One gradient step on a minibatch of demonstrations: (policy loss, value loss, argmax accuracy)."""
    policy = model.policy
    obs, actions, masks = batch["observations"], batch["actions"], batch["masks"]
    values, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=masks)
    policy_loss = -log_prob.mean()
    value_loss = torch.nn.functional.mse_loss(values.flatten(), batch["returns"])
    optimizer.zero_grad()
    (policy_loss + cfg.ppo.vf_coef * value_loss).backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.ppo.max_grad_norm)
    optimizer.step()
    with torch.no_grad():
        chosen = policy.get_distribution(obs, action_masks=masks.numpy()).mode()  # the masked argmax
        accuracy = (chosen == actions).float().mean()
    return policy_loss.item(), value_loss.item(), accuracy.item()


class Deadline:
    """`max_minutes` of wall clock from now (0: never out of time)."""

    def __init__(self, minutes: float) -> None:
        self.end = time.monotonic() + minutes * 60.0 if minutes > 0 else None

    def passed(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end


def _next_multiple(steps: int, every: int) -> int:
    return (steps // every + 1) * every


class _RunCallback(BaseCallback):
    """Progress bar, training win rate, and the periodic evaluation, snapshots and checkpoints."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, progress: Progress,
                 reporter: EvalReporter | None = None) -> None:
        super().__init__()
        self.reporter = reporter
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        self.history = EvalHistory(run_dir / "eval.csv")
        self.league_dir = _league_dir(run_dir)
        self.bar: tqdm | None = None
        self.hands: list[tuple[bool, bool, int]] = []  # (won, truncated, hand points) since the last dump

    def _on_training_start(self) -> None:
        steps = self.model.num_timesteps
        self.last_steps = steps
        self.next_eval = _next_multiple(steps, self.cfg.eval.every_steps)
        self.next_snapshot = _next_multiple(steps, self.cfg.self_play.snapshot_every)
        self.next_checkpoint = _next_multiple(steps, self.cfg.checkpoint_every)
        if self.cfg.self_play.enabled and not list_snapshots(self.league_dir):
            self.snapshot()
        if steps == 0 and self.cfg.imitation.enabled:  # what imitation alone achieved
            self.evaluate(self.cfg.eval.hands)
            self.model.logger.dump(0)
        self.deadline = Deadline(self.cfg.max_minutes)
        # The bar starts when training does, after the work above: its ETA is the rate of training alone.
        self.bar = self.progress.bar(total=self.cfg.total_timesteps, initial=steps, unit="step",
                                     unit_scale=True, desc=self.cfg.name)
        rows = self.history.rows()
        if rows:
            last = int(rows[-1]["steps"])
            shown = ", ".join(f"{_tag(r['opponent'])} {float(r['win_rate']):.3f}" for r in rows
                              if int(r["steps"]) == last)
            self._show(f"last eval ({last:,} steps): {shown}")

    def _show(self, text: str, refresh: bool = False) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=refresh)

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _on_step(self) -> bool:
        steps = self.model.num_timesteps
        if self.bar is not None:
            self.bar.update(steps - self.last_steps)
        self.last_steps = steps
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done and "won" in info:
                self.hands.append((info["won"], info["truncated"], info["hand_points"]))
        return not self.deadline.passed()  # False ends model.learn: max_minutes is up

    def _on_rollout_end(self) -> None:
        steps = self.model.num_timesteps
        logger = self.model.logger
        if self.hands:
            won, truncated, points = (np.array(x, dtype=np.float64) for x in zip(*self.hands, strict=True))
            logger.record("charts/win_rate", won.mean())
            logger.record("charts/truncated_rate", truncated.mean())
            logger.record("charts/hand_points", points.mean())
            self.hands = []
        if self.cfg.self_play.enabled:
            if steps >= self.next_snapshot:
                self.snapshot()
                self.next_snapshot = _next_multiple(steps, self.cfg.self_play.snapshot_every)
            logger.record("charts/league_snapshots", len(list_snapshots(self.league_dir)))
        last = steps >= self.cfg.total_timesteps or self.deadline.passed()
        final_eval_here = last and self.cfg.eval.final_hands > 0
        if steps >= self.next_eval and not final_eval_here:
            self.evaluate(self.cfg.eval.hands)
            self.next_eval = _next_multiple(steps, self.cfg.eval.every_steps)
        if steps >= self.next_checkpoint:
            self.checkpoint()
            self.next_checkpoint = _next_multiple(steps, self.cfg.checkpoint_every)

    def _on_training_end(self) -> None:
        self.close_bar()

    def snapshot(self) -> None:
        path = save_snapshot(self.model.policy, self.league_dir, self.model.num_timesteps, game=self.cfg.game,
                             rules=self.cfg.rules, num_players=self.cfg.num_players)
        if self.cfg.population.dir:  # shared with the other learners of a population
            publish_snapshot(path, Path(self.cfg.population.dir), self.run_dir.name)

    def checkpoint(self, final: bool = False) -> Path:
        """Save the model, its sha256 recorded in checkpoints/SHA256SUMS (only recorded ones are loaded).

        The final one (after the last update) replaces the one taken before that update at the same step.
        """
        path = checkpoint_path(self.run_dir, self.model.num_timesteps)
        save_checkpoint(self.model, path)
        what = "final checkpoint" if final else "checkpoint"
        self.progress.say(f"{what} at {self.model.num_timesteps:,} steps: {path}")
        return path

    def evaluate(self, hands: int, final: bool = False) -> list[LearnerEval]:
        steps = self.model.num_timesteps
        what = "final evaluation" if final else f"evaluation at {steps:,} steps"
        if steps == 0 and not final:
            what += " (after imitation)"
        self._show(f"evaluating at {steps:,} steps ...", refresh=True)
        if final:
            self.progress.say(f"{what}: {hands:,} hands{_and_matches(self.cfg)} against each of "
                              f"{', '.join(self.cfg.eval.opponents)}")
        # The final evaluation (1000 hands per opponent, minutes) shows how it goes, opponent by opponent.
        results = evaluate_policy(self.model.policy, self.cfg, hands, steps,
                                  self.progress if final and self.progress.enabled else None,
                                  matches=self.cfg.eval.final_matches if final else 0)
        self.history.append(results)
        _record_results(self.model.logger, results, "final_" if final else "")
        self._show(f"last eval ({steps:,} steps): "
                   + ", ".join(f"{_tag(r.opponent)} {r.win_rate:.3f}" for r in results))
        if not final:
            self.progress.say(f"{what}: " + ", ".join(f"{r.opponent} {format_rate(r)}" for r in results))
        if self.reporter is not None and not final:  # the final results are reported once the bot is written
            self.reporter(steps, results, False)
        return results


def train(cfg: TrainConfig, runs_dir: str | Path = "runs", resume: str | Path | None = None,
          progress: bool = True, reporter: EvalReporter | None = None) -> Path:
    """Train as `cfg` says (or continue the run folder `resume`); returns the run folder.

    `progress`: show how the run goes (a bar on a terminal, else lines; see
    the module doc). The run folder is printed when the run starts, the final
    evaluation at the end. Ctrl-C raises `TrainingInterrupted`. `reporter` gets every evaluation's
    results (see `EvalReporter`).
    """
    show = Progress(progress)
    cfg = validate_config(cfg)
    if resume is not None:
        run_dir = Path(resume)
        cfg, checkpoint = _prepare_resume(cfg, run_dir)
        print(f"resuming the run folder {run_dir} from {checkpoint.name} ({checkpoint_steps(checkpoint):,} "
              "steps)", flush=True)
    else:
        run_dir, checkpoint = _new_run_dir(Path(runs_dir), cfg), None
        save_config(cfg, run_dir / "config.yaml")
        print(f"run folder: {run_dir}", flush=True)
    if cfg.trainer == "lean":
        from cardlab.training.ppo import train_lean  # it imports this module

        try:
            steps, results = train_lean(cfg, run_dir, checkpoint, show)
        except KeyboardInterrupt:
            raise TrainingInterrupted.of(run_dir) from None
        _print_end(cfg, run_dir, steps, results)
        if reporter is not None and results:
            reporter(steps, results, True)
        return run_dir
    threads = torch.get_num_threads()
    env: VecEnv | None = None
    callback: _RunCallback | None = None
    try:
        env = make_vec_env(cfg, _league_dir(run_dir))
        torch.set_num_threads(cfg.torch_threads)
        if checkpoint is None:
            model = _new_model(cfg, env)
            model.set_logger(_make_logger(run_dir))
            if cfg.imitation.enabled:
                imitate(model, env, cfg, _league_dir(run_dir), show)
        else:
            model = load_checkpoint(checkpoint, run_dir, env=env, device=cfg.device)
            model.set_random_seed(cfg.seed + model.num_timesteps)
            model.set_logger(_make_logger(run_dir))
        callback = _RunCallback(cfg, run_dir, show, reporter)
        remaining = max(0, cfg.total_timesteps - model.num_timesteps)
        model.learn(remaining, callback=callback, reset_num_timesteps=checkpoint is None)
        callback.checkpoint(final=True)
        results = callback.evaluate(cfg.eval.final_hands, final=True) if cfg.eval.final_hands else []
        model.logger.dump(model.num_timesteps)
        export_bot(model.policy, run_dir / "bot", game=cfg.game, rules=cfg.rules, num_players=cfg.num_players,
                   summary=_summary(cfg, run_dir, model.num_timesteps, results))
        model.logger.close()
    except KeyboardInterrupt:
        if env is not None:
            _stop_workers(env)
        raise TrainingInterrupted.of(run_dir) from None
    finally:
        if callback is not None:
            callback.close_bar()
        if env is not None:
            env.close()
        torch.set_num_threads(threads)
    _print_end(cfg, run_dir, model.num_timesteps, results)
    if reporter is not None and results:
        reporter(model.num_timesteps, results, True)
    return run_dir


def _print_end(cfg: TrainConfig, run_dir: Path, steps: int, results: Sequence[LearnerEval]) -> None:
    """The final evaluation table, the run folder and the bot file."""
    if results:
        print(f"\nFinal evaluation of {run_dir.name} after {steps:,} steps "
              f"({cfg.eval.final_hands} hands{_and_matches(cfg)} per opponent, seats rotating):")
        print(format_results(results))
    print(f"run folder: {run_dir}\nbot: {run_dir / 'bot.json'}")


def _and_matches(cfg: TrainConfig) -> str:
    return f" and {cfg.eval.final_matches} matches" if cfg.eval.final_matches else ""


def _summary(cfg: TrainConfig, run_dir: Path, steps: int, results: Sequence[LearnerEval]) -> dict[str, Any]:
    """What the bot file says about its training."""
    return {
        "algorithm": "MaskablePPO",
        "run": run_dir.name,
        "config": cfg.name,
        "seed": cfg.seed,
        "steps": steps,
        "opponents": [dataclasses.asdict(o) for o in cfg.opponents],
        "self_play": cfg.self_play.enabled,
        "final_eval": {r.opponent: {k: v for k, v in r.row().items() if k not in ("opponent", "steps")}
                       for r in results},
    }


def train_from_file(path: str | Path, resume: str | Path | None = None, runs_dir: str | Path = "runs",
                    progress: bool = True) -> Path:
    """`train` with the config read from a YAML file."""
    return train(load_config(path), runs_dir=runs_dir, resume=resume, progress=progress)
