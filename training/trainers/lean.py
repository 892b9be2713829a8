"""A lean masked PPO over the batched self-play engine: the CleanRL-style loop (rollout, GAE, update) in
torch, on cardlab's shared run machinery (config, run folder, records, checkpoints, league, bot export).

Chosen with ``trainer: lean`` (`cardlab.training.trainers.train.train`
dispatches here); it reads the same keys as the MaskablePPO trainer and
writes the same run folder. Why a trainer of our own: sb3-contrib's
MaskablePPO tops out at a few thousand steps/s even with an env that costs
nothing (Python work per step and per minibatch); here a rollout is (T, B)
tensors filled by one forward pass per move over the games where the
learner is to move, and the update is plain torch over them.

A rollout is `ppo.n_steps` calls of `SelfPlayBatch.step` over `num_envs`
games; rewards and terminal flags come from `selfplay.credit` (``reward:
win``, ``points`` or ``match``), advantages from `ppo.advantages` (GAE along
each seat's chain), and the update minimises `ppo.ppo_loss`; a truncated hand
ends its chains with reward 0. Illegal actions get the logit
`ppo.ILLEGAL_LOGIT` (probability exactly 0, entropy finite). The actor is
an `nn.Sequential` exported as a bot file. Options that change the network
(``policy.privileged_critic``: a critic over every seat's observation;
``policy.read_hands``: a hand-predicting head) are checked against a
checkpoint's, which is refused naming both when they differ. ``actors: N``
plays the rollouts in actor processes (`cardlab.training.trainers.actors`).
With ``algorithm: dmc`` the same loop trains DouZero's deep Monte Carlo
learner instead (`cardlab.training.trainers.dmc`); docs/training.md has the rest.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import pickle
import time
from pathlib import Path

import torch
from torch import nn

from cardlab.agents.bot import export_bot
from cardlab.training.arena.league import list_snapshots, publish_snapshot, save_snapshot
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.checkpoints import (
    checkpoint_path,
    checkpoint_steps,
    save_checkpoint,
    verify_checkpoint,
)
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.config_tables import header_game
from cardlab.training.harness.placement import learner_device
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
from cardlab.training.harness.runs import and_matches, bot_summary, finish_run, league_folder, league_settings
from cardlab.training.trainers.actors import ActorPool, PoolFactory, pool_factory
from cardlab.training.trainers.dmc import ALGORITHM as DMC_ALGORITHM
from cardlab.training.trainers.dmc import DMCLearner
from cardlab.training.trainers.dmc_model import QLearner, build_model
from cardlab.training.trainers.hand_head import HEAD_WEIGHT, read_loss
from cardlab.training.trainers.lean_imitation import imitate
from cardlab.training.trainers.lean_model import ActorCritic, inputs
from cardlab.training.trainers.ppo import ppo_loss
from cardlab.training.trainers.rollouts import Rollout, play, score

ALGORITHM = "lean masked PPO"
ALGORITHMS = {"ppo": ALGORITHM, "dmc": DMC_ALGORITHM}
"""the bot file summary's name of each learner (``algorithm``)"""
Q_FEATURES = "features"
"""the state-dict key of DMC's move features, which only its Q network holds"""
CRITIC_WEIGHT = "critic.0.weight"
"""the state-dict key of the critic's first layer, whose width tells a privileged critic from a plain one"""


@dataclasses.dataclass
class _Checkpoint:
    """What a lean checkpoint holds; `save` is what `save_checkpoint` calls."""

    model: ActorCritic | QLearner
    optimizer: torch.optim.Optimizer
    steps: int

    def save(self, path: Path) -> None:
        # torch.save writes a zip archive, so the checkpoints keep the ``model_<steps>.zip`` names.
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "steps": self.steps}, path)


def _load(path: Path, run_dir: Path, model: ActorCritic | QLearner, optimizer: torch.optim.Optimizer | None,
          num_players: int) -> int:
    """Restore a recorded lean checkpoint (checked by `verify_checkpoint`); returns its steps."""
    try:
        data = torch.load(io.BytesIO(verify_checkpoint(path, run_dir)), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(f"checkpoint {path} holds Python objects beyond tensors and numbers, so it is not "
                         "one of cardlab's lean checkpoints and is refused (it is never unpickled)") from None
    if not isinstance(data, dict) or set(data) != {"model", "optimizer", "steps"}:
        raise ValueError(f"checkpoint {path} is not a lean PPO checkpoint (trainer: lean); was the run "
                         "trained with trainer: maskable_ppo?")
    _check_algorithm(path, data["model"], model)
    if isinstance(model, ActorCritic):
        _check_critic(path, data["model"], model, num_players)
        _check_head(path, data["model"], model)
    model.load_state_dict(data["model"])
    if optimizer is not None:
        optimizer.load_state_dict(data["optimizer"])
    return int(data["steps"])


def _check_algorithm(path: Path, state: object, model: ActorCritic | QLearner) -> None:
    """Refuse a checkpoint of the other learner (PPO's actor-critic, DMC's Q network) than the config's."""
    held = isinstance(state, dict) and Q_FEATURES in state
    if held == isinstance(model, QLearner):
        return
    kinds = {True: "DMC's Q network (algorithm: dmc)", False: "PPO's actor-critic (algorithm: ppo)"}
    raise ValueError(f"checkpoint {path} holds {kinds[held]}, but the config asks for {kinds[not held]}: "
                     "load it with the config it was trained with (the run's config.yaml)")


def _check_critic(path: Path, state: object, model: ActorCritic, num_players: int) -> None:
    """Refuse a checkpoint whose critic is of the other kind (privileged or not) than the model's."""
    weight = state.get(CRITIC_WEIGHT) if isinstance(state, dict) else None
    wanted = inputs(model.critic)
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2 or weight.shape[1] == wanted:
        return  # anything else wrong is load_state_dict's to report
    obs_size = inputs(model.actor)
    kinds = {obs_size: "a critic reading the observation (policy.privileged_critic: false)",
             obs_size * num_players: "a privileged critic reading every seat's observation "
                                     "(policy.privileged_critic: true)"}
    found = kinds.get(weight.shape[1], f"a critic reading {weight.shape[1]} numbers")
    raise ValueError(f"checkpoint {path} holds {found}, but the config asks for {kinds[wanted]}: load it "
                     "with the config it was trained with (the run's config.yaml)")


def _check_head(path: Path, state: object, model: ActorCritic) -> None:
    """Refuse a checkpoint with the hand head when the config has none, or the reverse."""
    held = isinstance(state, dict) and HEAD_WEIGHT in state
    if held == (model.hands is not None):
        return
    kinds = {True: "an actor with the hand head (policy.read_hands > 0)",
             False: "an actor without the hand head (policy.read_hands: 0)"}
    raise ValueError(f"checkpoint {path} holds {kinds[held]}, but the config asks for "
                     f"{kinds[model.hands is not None]}: load it with the config it was trained with (the "
                     "run's config.yaml)")


def load_actor(path: Path, run_dir: Path, cfg: TrainConfig) -> tuple[nn.Sequential, int]:
    """(actor, steps) of a lean run's recorded checkpoint, for `cardlab export`."""
    model = build_model(cfg)
    return model.actor, _load(path, run_dir, model, None, cfg.num_players)


class LeanRun:
    """One lean PPO run in its folder: rollouts, updates, evaluations, snapshots and checkpoints."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, checkpoint: Path | None, progress: Progress,
                 reporter: EvalReporter | None = None, remote: PoolFactory | None = None) -> None:
        self.cfg, self.run_dir, self.progress, self.reporter = cfg, run_dir, progress, reporter
        self.remote = remote
        """what starts the actors on a Ray cluster (``ray.address``): cluster.lean_actors.RayActors"""
        self.game = header_game(cfg)
        self.device = learner_device(cfg.device)
        torch.manual_seed(cfg.seed)  # the first weights are the seed's, whatever ran before in this process
        self.model = build_model(cfg).to(self.device)
        rate = cfg.dmc.learning_rate if isinstance(self.model, QLearner) else cfg.ppo.learning_rate
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=rate, eps=1e-5)
        q = self.model if isinstance(self.model, QLearner) else None
        self.dmc = None if q is None else DMCLearner(cfg, q, self.optimizer, self.device)
        """the steps of ``algorithm: dmc`` (None: PPO's, this class's own)"""
        self.steps = 0 if checkpoint is None else _load(checkpoint, run_dir, self.model, self.optimizer,
                                                               cfg.num_players)
        self.saved_steps = None if checkpoint is None else self.steps
        """the steps of the checkpoint of the model as it is now (None: none): not saved twice"""
        torch.manual_seed(cfg.seed + self.steps)
        self.league_dir = league_folder(run_dir)
        self.history = EvalHistory(run_dir / "eval.csv")
        done = self.history.rows() if checkpoint is not None else []
        self.minutes_before = float(done[-1].get("minutes") or 0.0) if done else 0.0  # a resume goes on
        self.started = time.perf_counter()
        self.logger = make_logger(run_dir)
        self.player = self.model if self.device.type == "cpu" else copy.deepcopy(self.model).cpu()
        """the model on the CPU, which plays this process's games and makes the bot files (a copy of the
        learner's after each update where that is on a GPU)"""
        self.version = 0
        """updates made since this process started (what the actors' rollouts are dated by)"""
        self.dropped = 0
        """rollouts from the actors dropped as older than max_policy_lag"""
        self.table = None if cfg.actors else SelfPlayBatch(
            self.game, cfg.num_envs, league_settings(cfg, self.league_dir),
            learner_share=cfg.self_play.learner_share, seed=cfg.seed + self.steps, reward=cfg.reward,
            episode=cfg.episode, equity=cfg.equity)

    # ------------------------------------------------------------ the loop
    def learn(self) -> list[LearnerEval]:
        """Train to `total_timesteps`, then the final checkpoint, evaluation and bot file."""
        cfg = self.cfg
        next_eval = next_multiple(self.steps, cfg.eval.every_steps)
        next_snapshot = next_multiple(self.steps, cfg.self_play.snapshot_every)
        checkpoints = CheckpointClock(self.steps, cfg.checkpoint_every, cfg.checkpoint_minutes)
        if self.steps == 0 and cfg.imitation.enabled and isinstance(self.player, ActorCritic):
            imitate(self.player.actor, self.player.critic, self.player.masked_logits, cfg, self.game,
                    self.progress, self.logger)
            if self.player is not self.model:
                self.model.load_state_dict(self.player.state_dict())
            self.started = time.perf_counter()
            self.evaluate(cfg.eval.hands)  # what imitation alone achieved (0 steps)
            self.logger.dump(0)
        if cfg.self_play.enabled and not list_snapshots(self.league_dir):
            self.snapshot()
        deadline = Deadline(cfg.max_minutes)
        self.started = time.perf_counter()
        bar = TrainingBar(self.progress, cfg.total_timesteps, self.steps, deadline, cfg.name)
        actors = self.start_actors()
        try:
            while self.steps < cfg.total_timesteps and not deadline.passed():
                start, before = time.perf_counter(), self.steps
                batch, stats = self.rollout() if actors is None else self.collect(actors)
                stats.update(self.update(batch))
                if actors is not None:
                    actors.publish(self.model.actor, self.version)
                stats["charts/SPS"] = (self.steps - before) / (time.perf_counter() - start)
                for key, value in stats.items():
                    self.logger.record(key, value)
                bar.update(self.steps)
                if cfg.self_play.enabled and self.steps >= next_snapshot:
                    self.snapshot()
                    next_snapshot = next_multiple(self.steps, cfg.self_play.snapshot_every)
                last = self.steps >= cfg.total_timesteps or deadline.passed()
                final_here = last and cfg.eval.final_hands > 0
                if self.steps >= next_eval and not final_here:
                    results = self.evaluate(cfg.eval.hands)
                    bar.set_postfix_str(f"last eval ({self.steps:,} steps): "
                                        + ", ".join(f"{tag(r.opponent)} {r.win_rate:.3f}" for r in results))
                    next_eval = next_multiple(self.steps, cfg.eval.every_steps)
                if checkpoints.due(self.steps) and not last:  # the last one is the final checkpoint
                    self.checkpoint()
                    checkpoints.reset(self.steps)
                self.logger.dump(self.steps)
        except BaseException as err:
            bar.close()
            if isinstance(err, KeyboardInterrupt) and self.steps > 0:  # what Ctrl-C leaves to resume from
                self.checkpoint()
            raise
        finally:
            if actors is not None:
                actors.close()
        bar.finish()

        def write_bot(results: list[LearnerEval]) -> None:
            summary = {**bot_summary(cfg, self.run_dir, self.steps, results),
                       "algorithm": ALGORITHMS[cfg.algorithm]}
            export_bot(self.player.actor, self.run_dir / "bot", game=self.game, summary=summary)

        def final_evaluation() -> list[LearnerEval]:
            return self.evaluate(cfg.eval.final_hands, final=True) if cfg.eval.final_hands else []

        results = finish_run(write_bot, lambda: self.checkpoint(final=True), final_evaluation)
        self.logger.dump(self.steps)
        self.logger.close()
        return results

    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """`ppo.n_steps` moves in every game of this process's table, as PPO's batch of the learner's."""
        if self.table is None:
            raise RuntimeError("a run with actors plays in its actors: use collect")
        if self.dmc is not None:
            played = play(self.player, self.table, self.cfg, values=False)
            return self._score(self.dmc.monte_carlo.finish(played))
        return self._score(play(self.player, self.table, self.cfg, values=self.player is self.model))

    def _score(self, played: Rollout) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        if self.dmc is not None:
            batch, stats, steps = self.dmc.score(played)
        else:
            assert isinstance(self.model, ActorCritic)
            batch, stats, steps = score(played, self.cfg, self.model, self.device)
        self.steps += steps
        return batch, stats

    def start_actors(self) -> ActorPool | None:
        """The actors of `cfg.actors` (processes here, or Ray actors), playing the current weights."""
        cfg = self.cfg
        if not cfg.actors:
            return None
        pool = pool_factory(cfg, self.remote)(cfg, self.league_dir, self.steps, self.progress.say)
        pool.publish(self.model.actor, self.version)
        return pool

    def collect(self, actors: ActorPool) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """The next rollout the actors send that is at most `max_policy_lag` updates old, as PPO's batch."""
        while True:
            played = actors.next_rollout()
            lag = self.version - played.version
            if lag <= self.cfg.max_policy_lag:
                break
            self.dropped += 1
        batch, stats = self._score(played)
        stats.update({"charts/policy_lag": float(lag), "charts/dropped_rollouts": float(self.dropped),
                      "charts/actor_restarts": float(actors.restarts)})
        return batch, stats

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """One learning step on a rollout's batch (PPO's, or DMC's: `DMCLearner.update`); then the copy that
        plays is brought up to date."""
        stats = self._ppo_update(batch) if self.dmc is None else self.dmc.update(batch)
        self.version += 1
        if self.player is not self.model:
            self.player.load_state_dict(self.model.state_dict())  # back to the CPU, for play and bot files
        return stats

    def _ppo_update(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """`ppo.n_epochs` passes of clipped-objective minibatch steps over the rollout's transitions."""
        ppo, model = self.cfg.ppo, self.model
        assert isinstance(model, ActorCritic)
        size = len(batch["actions"])
        totals = dict.fromkeys(("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction"), 0.0)
        weight, read_total = self.cfg.policy.read_hands, 0.0
        count = 0
        for _ in range(ppo.n_epochs):
            order = torch.randperm(size)
            for begin in range(0, size, ppo.batch_size):
                idx = order[begin:begin + ppo.batch_size]
                if len(idx) < 2:
                    continue
                logits = model.masked_logits(batch["obs"][idx], batch["mask"][idx])
                terms = ppo_loss(logits, batch["actions"][idx], batch["logp"][idx], batch["advantages"][idx],
                                 model.value(batch["critic"][idx]), batch["returns"][idx], ppo)
                loss = terms.loss
                if "hands" in batch:
                    read = read_loss(model.read(batch["obs"][idx]), batch["hands"][idx])
                    loss = loss + weight * read
                    read_total += read.item()
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), ppo.max_grad_norm)
                self.optimizer.step()
                for key in totals:
                    totals[key] += getattr(terms, key).item()
                count += 1
        stats = {f"losses/{k}": v / max(count, 1) for k, v in totals.items()}
        if "hands" in batch:
            stats["losses/read_hands"] = read_total / max(count, 1)
        stats["charts/learning_rate"] = ppo.learning_rate
        return stats

    # ------------------------------------------------------------ run folder
    def snapshot(self) -> None:
        path = save_snapshot(self.player.actor, self.league_dir, self.steps, game=self.cfg.game,
                             rules=self.cfg.rules, num_players=self.cfg.num_players)
        if self.cfg.population.dir:  # shared with the other learners of a population, as the SB3 trainer does
            publish_snapshot(path, Path(self.cfg.population.dir), self.run_dir.name)

    def checkpoint(self, final: bool = False) -> Path:
        """Save the model at its steps, unless that checkpoint is of the model as it is now already."""
        path = checkpoint_path(self.run_dir, self.steps)
        if self.saved_steps == self.steps:
            return path
        save_checkpoint(_Checkpoint(self.model, self.optimizer, self.steps), path)
        self.saved_steps = self.steps
        self.progress.say(f"{'final checkpoint' if final else 'checkpoint'} at {self.steps:,} steps: {path}")
        return path

    def evaluate(self, hands: int, final: bool = False) -> list[LearnerEval]:
        """The actor (masked argmax, as a temporary bot file) against each eval opponent."""
        if final:
            self.progress.say(f"final evaluation: {hands:,} hands{and_matches(self.cfg)} against each of "
                              f"{', '.join(self.cfg.eval.opponents)}")
        shown = self.progress if final and self.progress.enabled else None
        results = evaluate_policy(self.player.actor, self.cfg, hands, self.steps, shown,
                                  matches=self.cfg.eval.final_matches if final else self.cfg.eval.matches,
                                  beat=self.progress)
        minutes = self.minutes_before + (time.perf_counter() - self.started) / 60
        results = [dataclasses.replace(r, minutes=round(minutes, 3)) for r in results]
        self.history.append(results)
        record_results(self.logger, results, "final_" if final else "")
        if not final:
            self.progress.say(f"evaluation at {self.steps:,} steps: "
                              + ", ".join(f"{r.opponent} {format_rate(r)}" for r in results))
        if self.reporter is not None and not final:  # the final results are reported once the bot is written
            self.reporter(self.steps, results, False)
        return results


def train_lean(cfg: TrainConfig, run_dir: Path, checkpoint: Path | None, progress: Progress,
               reporter: EvalReporter | None = None,
               remote: PoolFactory | None = None) -> tuple[int, list[LearnerEval]]:
    """Run (or continue from `checkpoint`) a lean PPO run in `run_dir`; returns (steps, final evaluation).

    `reporter` gets each evaluation before the final one (see `EvalReporter`); `remote` starts the
    actors of a config with ``ray.address`` (`LeanRun.remote`).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    try:
        run = LeanRun(cfg, run_dir, checkpoint, progress, reporter, remote)
        if checkpoint is not None:
            progress.say(f"continuing at {checkpoint_steps(checkpoint):,} steps")
        results = run.learn()
    finally:
        torch.set_num_threads(threads)
    return run.steps, results

