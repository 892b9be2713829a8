"""The MaskablePPO trainer (sb3-contrib): one learner seat against a league, in single-seat envs.

`cardlab.training.trainers.train.train` dispatches here for ``trainer: maskable_ppo``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from cardlab.agents.bot import ACTIVATIONS, export_bot
from cardlab.training.arena.league import (
    list_snapshots,
    publish_snapshot,
    save_snapshot,
)
from cardlab.training.harness.checkpoints import (
    checkpoint_path,
    load_checkpoint,
    save_checkpoint,
)
from cardlab.training.harness.config import (
    TrainConfig,
)
from cardlab.training.harness.progress import CheckpointClock, Deadline, Progress, TrainingBar, next_multiple
from cardlab.training.harness.records import (
    EvalHistory,
    EvalReporter,
    LearnerEval,
    evaluate_policy,
    format_rate,
    make_logger,
    record_results,
    tag,
)
from cardlab.training.harness.runs import and_matches, bot_summary, finish_run, league_folder
from cardlab.training.trainers.imitation import imitate
from cardlab.training.trainers.policy import PrivilegedCriticPolicy
from cardlab.training.trainers.vec_env import make_vec_env, stop_workers


def new_model(cfg: TrainConfig, env: VecEnv) -> MaskablePPO:
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


class RunCallback(BaseCallback):
    """Progress bar, training win rate, and the periodic evaluation, snapshots and checkpoints."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, progress: Progress,
                 reporter: EvalReporter | None = None) -> None:
        super().__init__()
        self.reporter = reporter
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        self.history = EvalHistory(run_dir / "eval.csv")
        self.league_dir = league_folder(run_dir)
        self.bar: TrainingBar | None = None
        self.hands: list[tuple[bool, bool, int]] = []  # (won, truncated, hand points) since the last dump

    def _on_training_start(self) -> None:
        steps = self.model.num_timesteps
        self.next_eval = next_multiple(steps, self.cfg.eval.every_steps)
        self.next_snapshot = next_multiple(steps, self.cfg.self_play.snapshot_every)
        self.checkpoints = CheckpointClock(steps, self.cfg.checkpoint_every, self.cfg.checkpoint_minutes)
        if self.cfg.self_play.enabled and not list_snapshots(self.league_dir):
            self.snapshot()
        if steps == 0 and self.cfg.imitation.enabled:  # what imitation alone achieved
            self.evaluate(self.cfg.eval.hands)
            self.model.logger.dump(0)
        self.deadline = Deadline(self.cfg.max_minutes)
        # The bar starts when training does, after the work above: its ETA is the rate of training alone.
        self.bar = TrainingBar(self.progress, self.cfg.total_timesteps, steps, self.deadline, self.cfg.name)
        rows = self.history.rows()
        if rows:
            last = int(rows[-1]["steps"])
            shown = ", ".join(f"{tag(r['opponent'])} {float(r['win_rate']):.3f}" for r in rows
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
            self.bar.update(steps)
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
                self.next_snapshot = next_multiple(steps, self.cfg.self_play.snapshot_every)
            logger.record("charts/league_snapshots", len(list_snapshots(self.league_dir)))
        last = steps >= self.cfg.total_timesteps or self.deadline.passed()
        final_eval_here = last and self.cfg.eval.final_hands > 0
        if steps >= self.next_eval and not final_eval_here:
            self.evaluate(self.cfg.eval.hands)
            self.next_eval = next_multiple(steps, self.cfg.eval.every_steps)
        if self.checkpoints.due(steps) and not last:  # the last rollout's update comes before the final one
            self.checkpoint()
            self.checkpoints.reset(steps)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.finish()
            self.bar = None

    def snapshot(self) -> None:
        path = save_snapshot(self.model.policy, self.league_dir, self.model.num_timesteps, game=self.cfg.game,
                             rules=self.cfg.rules, num_players=self.cfg.num_players)
        if self.cfg.population.dir:  # shared with the other learners of a population
            publish_snapshot(path, Path(self.cfg.population.dir), self.run_dir.name)

    def checkpoint(self, final: bool = False) -> Path:
        """Save the model, its sha256 recorded in checkpoints/SHA256SUMS (only recorded ones are loaded)."""
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
            self.progress.say(f"{what}: {hands:,} hands{and_matches(self.cfg)} against each of "
                              f"{', '.join(self.cfg.eval.opponents)}")
        # The final evaluation (1000 hands per opponent, minutes) shows how it goes, opponent by opponent.
        results = evaluate_policy(self.model.policy, self.cfg, hands, steps,
                                  self.progress if final and self.progress.enabled else None,
                                  matches=self.cfg.eval.final_matches if final else self.cfg.eval.matches,
                                  beat=self.progress)
        self.history.append(results)
        record_results(self.model.logger, results, "final_" if final else "")
        self._show(f"last eval ({steps:,} steps): "
                   + ", ".join(f"{tag(r.opponent)} {r.win_rate:.3f}" for r in results))
        if not final:
            self.progress.say(f"{what}: " + ", ".join(f"{r.opponent} {format_rate(r)}" for r in results))
        if self.reporter is not None and not final:  # the final results are reported once the bot is written
            self.reporter(steps, results, False)
        return results


def train_sb3(cfg: TrainConfig, run_dir: Path, checkpoint: Path | None, progress: Progress,
              reporter: EvalReporter | None = None) -> tuple[int, list[LearnerEval]]:
    """Run (or continue from `checkpoint`) a MaskablePPO run in `run_dir`; returns (steps, final evaluation).

    Ctrl-C stops the env workers at once and goes on up (`train` names the run folder).
    """
    threads = torch.get_num_threads()
    env: VecEnv | None = None
    callback: RunCallback | None = None
    try:
        env = make_vec_env(cfg, league_folder(run_dir))
        torch.set_num_threads(cfg.torch_threads)
        if checkpoint is None:
            model = new_model(cfg, env)
            model.set_logger(make_logger(run_dir))
            if cfg.imitation.enabled:
                imitate(model, env, cfg, league_folder(run_dir), progress)
        else:
            model = load_checkpoint(checkpoint, run_dir, env=env, device=cfg.device)
            model.set_random_seed(cfg.seed + model.num_timesteps)
            model.set_logger(make_logger(run_dir))
        callback = run = RunCallback(cfg, run_dir, progress, reporter)
        loaded = None if checkpoint is None else model.num_timesteps
        remaining = max(0, cfg.total_timesteps - model.num_timesteps)
        model.learn(remaining, callback=run, reset_num_timesteps=checkpoint is None)

        def write_bot(results: list[LearnerEval]) -> None:
            export_bot(model.policy, run_dir / "bot", game=cfg.game, rules=cfg.rules,
                       num_players=cfg.num_players, summary=bot_summary(cfg, run_dir, model.num_timesteps,
                                                                        results))

        def final_evaluation() -> list[LearnerEval]:
            return run.evaluate(cfg.eval.final_hands, final=True) if cfg.eval.final_hands else []

        untrained = model.num_timesteps == loaded  # resumed at its end: the loaded checkpoint is the last
        results = finish_run(write_bot, None if untrained else lambda: run.checkpoint(final=True),
                             final_evaluation)
        model.logger.dump(model.num_timesteps)
        model.logger.close()
    except KeyboardInterrupt:
        if env is not None:
            stop_workers(env)
        trained = getattr(callback, "model", None)
        if callback is not None and trained is not None and trained.num_timesteps > 0:  # what Ctrl-C leaves
            callback.close_bar()
            callback.checkpoint()
        raise
    finally:
        if callback is not None:
            callback.close_bar()
        if env is not None:
            env.close()
        torch.set_num_threads(threads)
    return model.num_timesteps, results
